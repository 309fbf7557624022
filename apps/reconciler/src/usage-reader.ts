import { describeFieldError, parseResourceList } from '#quantity';
import type { ObservedCluster } from '#quota';
import type { RedisClient } from '#service-kit';
import {
  clusterNamespacesKey,
  clusterRemovedKey,
  clusterRepublishKey,
  clusterStateKey,
  clusterUsageVerdict,
  usageIndexKey,
  usageKey,
  type ClusterRead,
} from '#usage';

/**
 * Reads what the aggregators published for one namespace (layout and rules: libs/usage
 * snapshot-layout.ts): each cluster's usage, per workload, and its health; and which of the
 * `counted` clusters have an unknown usage (Redis lost it and it is not published again yet). Each
 * cluster's slot is read before the namespace's snapshots (one MGET, one slot): read the other way
 * round, a flush and the aggregator's republish could fall between them, and a republished state
 * key beside a snapshot read before it was written would make the cluster's usage zero. A snapshot
 * lost from the namespace's slot alone is reported to the aggregator, which republishes the
 * cluster. Malformed entries are reported, not thrown.
 */
export async function readObservedUsage(
  redis: RedisClient,
  namespace: string,
  counted: readonly string[] = [],
): Promise<{ clusters: ObservedCluster[]; unknown: string[]; errors: string[] }> {
  const indexed = await redis.smembers(usageIndexKey(namespace));
  const names = [...new Set([...indexed, ...counted])].sort();
  if (names.length === 0) return { clusters: [], unknown: [], errors: [] };
  const publications = await Promise.all(
    names.map(async (name) => {
      const [state, listed, removed] = transactionReplies(
        await redis
          .multi()
          .get(clusterStateKey(name))
          .sismember(clusterNamespacesKey(name), namespace)
          .exists(clusterRemovedKey(name))
          .exec(),
      ) as [string | null, number, number];
      return { state, listed: listed === 1, removed: removed === 1 };
    }),
  );
  const snapshots = await redis.mget(names.map((name) => usageKey(namespace, name)));
  const errors: string[] = [];
  const clusters: ObservedCluster[] = [];
  const unknown: string[] = [];
  const republish: [string, number][] = [];
  names.forEach((name, i) => {
    const read: ClusterRead = { ...publications[i]!, snapshot: snapshots[i] };
    const found = clusterUsageVerdict(namespace, name, read, counted.includes(name));
    errors.push(...found.errors);
    if (found.republish !== undefined) republish.push([name, found.republish]);
    if (found.verdict === 'unknown') unknown.push(name);
    if (found.verdict !== 'usage') return;
    const [snapshot, health] = [found.snapshot!, found.health];
    const list = (raw: Record<string, string>, field: string) => {
      const parsed = parseResourceList(raw, field);
      errors.push(...parsed.errors.map((e) => `${name}: ${describeFieldError(e)}`));
      return parsed.list;
    };
    clusters.push({
      name,
      state: health?.state ?? 'Unreachable',
      lastSyncTime: health?.lastSyncTime ?? snapshot.observedAt,
      ...(health?.message ? { message: health.message } : {}),
      used: list(snapshot.used, 'used'),
      workloads: snapshot.workloads.map((w) => ({
        kind: w.kind,
        name: w.name,
        ...(w.terminating ? { terminating: true } : {}),
        used: list(w.used, `workloads[${w.kind}/${w.name}]`),
      })),
    });
  });
  // The aggregator sees the request at its next publish (within 5 s) and republishes the cluster.
  await Promise.all(republish.map(([name, epoch]) => redis.set(clusterRepublishKey(name), String(epoch))));
  return { clusters, unknown, errors };
}

/** The values of a MULTI's replies; throws its first error, or when it was aborted. */
function transactionReplies(replies: [Error | null, unknown][] | null): unknown[] {
  const failed = replies?.find(([err]) => err)?.[0];
  if (!replies || failed) throw failed ?? new Error('the Redis transaction reading usage was aborted');
  return replies.map(([, value]) => value);
}
