import type { Redis } from 'ioredis';
import { isJsonObject, type KarmadaQuota } from '#api';
import { parseResourceList } from '#quantity';
import type { ObservedCluster } from '#quota';
import {
  clusterStateKey,
  decodeHealth,
  decodeSnapshot,
  REMOVED_CLUSTERS_KEY,
  unknownUsageClusters,
  usageIndexKey,
  usageKey,
} from '#usage';

/**
 * Reads what the aggregators published for one namespace (layout: libs/usage snapshot-layout.ts):
 * each cluster's usage, per workload, and its health. Malformed entries are reported, not thrown.
 */
export async function readObservedUsage(
  redis: Redis,
  namespace: string,
): Promise<{ clusters: ObservedCluster[]; errors: string[] }> {
  const names = (await redis.smembers(usageIndexKey(namespace))).sort();
  if (names.length === 0) return { clusters: [], errors: [] };
  const [snapshots, healths] = await Promise.all([
    redis.mget(names.map((c) => usageKey(namespace, c))),
    redis.mget(names.map((c) => clusterStateKey(c))),
  ]);
  const errors: string[] = [];
  const clusters: ObservedCluster[] = [];
  names.forEach((name, i) => {
    const raw = snapshots[i];
    if (raw === null || raw === undefined) return; // withdrawn meanwhile
    const snapshot = decodeSnapshot(raw, { cluster: name, namespace });
    if (!snapshot.ok) return void errors.push(`usage of ${name}: ${snapshot.error}`);
    const health = healths[i] ? decodeHealth(healths[i], { cluster: name }) : undefined;
    if (health && !health.ok) errors.push(`health of ${name}: ${health.error}`);
    const list = (raw: Record<string, string>, field: string) => {
      const parsed = parseResourceList(raw, field);
      errors.push(...parsed.errors.map((e) => `${name}: ${e.field}: ${e.message}`));
      return parsed.list;
    };
    clusters.push({
      name,
      state: health?.ok ? health.value.state : 'Unreachable',
      lastSyncTime: health?.ok ? health.value.lastSyncTime : snapshot.value.observedAt,
      ...(health?.ok && health.value.message ? { message: health.value.message } : {}),
      used: list(snapshot.value.used, 'used'),
      workloads: snapshot.value.workloads.map((w) => ({
        kind: w.kind,
        name: w.name,
        used: list(w.used, `workloads[${w.kind}/${w.name}]`),
      })),
    });
  });
  return { clusters, errors };
}

/**
 * The clusters whose usage of the namespace the quotas' statuses count but Redis no longer has,
 * unpublished since Redis lost its data (see unknownUsageClusters): reconciling now would count
 * their usage as zero.
 */
export async function clustersWithUnknownUsage(
  redis: Redis,
  quotas: readonly KarmadaQuota[],
  observed: readonly ObservedCluster[],
): Promise<string[]> {
  const published = new Set(observed.map((c) => c.name));
  const counted = new Set<string>();
  for (const quota of quotas) {
    for (const slice of Array.isArray(quota.status?.clusters) ? quota.status.clusters : []) {
      if (!isJsonObject(slice) || typeof slice.name !== 'string' || published.has(slice.name)) continue;
      const used = parseResourceList(slice.used, 'used').list;
      if (Object.values(used).some((amount) => !amount.isZero())) counted.add(slice.name);
    }
  }
  const candidates = [...counted].filter((name) => {
    try {
      clusterStateKey(name);
      return true;
    } catch {
      return false; // not a cluster name the aggregator could have published
    }
  });
  if (candidates.length === 0) return [];
  const [states, removed] = await Promise.all([
    redis.mget(candidates.map((c) => clusterStateKey(c))),
    redis.smismember(REMOVED_CLUSTERS_KEY, ...candidates),
  ]);
  return unknownUsageClusters(candidates, {
    published,
    withState: new Set(candidates.filter((_, i) => states[i] !== null)),
    removed: new Set(candidates.filter((_, i) => removed[i] === 1)),
  });
}
