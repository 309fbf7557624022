import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import type { Logger } from '@nestjs/common';
import {
  CLUSTERS_KEY,
  clusterStateKey,
  encodeHealth,
  encodeSnapshot,
  nextGeneration,
  RECONCILE_JOB_NAME,
  reconcileJobOptions,
  REMOVED_CLUSTERS_KEY,
  usageIndexKey,
  usageKey,
  type ReconcileJob,
} from '#usage';
import type { MemberWatcher } from './member-watcher.js';

/** A Ready cluster's lastSyncTime is rewritten this often even when nothing else changed. */
const HEALTH_REFRESH_MS = 5_000;

/**
 * One publish, atomic. KEYS: the cluster's state key, CLUSTERS_KEY, REMOVED_CLUSTERS_KEY, then a
 * usage key and an index key per namespace; ARGV: the cluster, its encoded health, '1' when this
 * writer published the cluster before, then one snapshot per namespace. Returns 0, writing
 * nothing, when a cluster published before has lost its state key: Redis lost its data.
 */
const PUBLISH_SCRIPT = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 4, #ARGV do
  redis.call('SET', KEYS[2 * i - 4], ARGV[i])
  redis.call('SADD', KEYS[2 * i - 3], ARGV[1])
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return 1`;

/**
 * Writes what changed in a member's ledger to Redis (layout: libs/usage snapshot-layout.ts) and
 * enqueues one deduplicated reconcile job per changed namespace.
 */
export class UsagePublisher {
  private readonly generations = new Map<string, number>();
  private readonly lastHealth = new Map<string, { state: string; writtenAt: number }>();
  /** Namespaces whose publish failed (Redis down): published again next time, never dropped. */
  private readonly unpublished = new Map<string, Set<string>>();

  constructor(
    private readonly redis: Redis,
    private readonly queue: Queue<ReconcileJob>,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** Publishes the member's changed namespaces and its health (on change, else every 5 s). */
  async publish(watcher: MemberWatcher, now = new Date()): Promise<number> {
    const cluster = watcher.name;
    const health = watcher.currentHealth(now.getTime());
    const pending = this.unpublished.get(cluster) ?? new Set<string>();
    const namespaces = [...new Set([...pending, ...watcher.takeChanges()])];
    this.unpublished.set(cluster, new Set(namespaces)); // until the write below succeeded
    const previous = this.lastHealth.get(cluster);
    const healthChanged = previous?.state !== health.state;
    const refreshDue = previous === undefined || now.getTime() - previous.writtenAt >= HEALTH_REFRESH_MS;
    if (namespaces.length === 0 && !healthChanged && !refreshDue) return 0;

    const keys = [clusterStateKey(cluster), CLUSTERS_KEY, REMOVED_CLUSTERS_KEY];
    const snapshots: string[] = [];
    for (const namespace of namespaces) {
      const key = usageKey(namespace, cluster);
      const generation = nextGeneration(this.generations.get(key), now.getTime());
      this.generations.set(key, generation);
      const usage = watcher.ledger.snapshot(namespace);
      keys.push(key, usageIndexKey(namespace));
      snapshots.push(
        encodeSnapshot({ cluster, namespace, ...usage, observedAt: now.toISOString(), generation }),
      );
    }
    const encodedHealth = encodeHealth({
      cluster,
      state: health.state,
      lastSyncTime: (health.lastSyncTime ?? new Date(0)).toISOString(),
      ...(health.message ? { message: health.message } : {}),
    });
    const known = previous === undefined ? '0' : '1';
    const args = [cluster, encodedHealth, known, ...snapshots];
    if ((await this.redis.eval(PUBLISH_SCRIPT, keys.length, ...keys, ...args)) === 0) {
      // Redis restarted empty or was flushed: every snapshot of the cluster is gone, not only the
      // changed ones. Publish all of them again, before anyone reads their absence as "nothing".
      this.logger.warn(`Redis lost the published usage of cluster ${cluster}: publishing all of it again`);
      this.unpublished.set(cluster, new Set([...namespaces, ...watcher.ledger.namespaces()]));
      this.lastHealth.delete(cluster);
      return this.publish(watcher, now);
    }
    this.lastHealth.set(cluster, { state: health.state, writtenAt: now.getTime() });

    // A health change matters to every namespace the cluster has usage in (status.clusters, conditions).
    const affected = new Set(healthChanged ? [...watcher.ledger.namespaces(), ...namespaces] : namespaces);
    const reason = healthChanged ? `cluster ${cluster} is ${health.state}` : `usage changed in ${cluster}`;
    await Promise.all(
      [...affected].map((namespace) =>
        this.queue.add(RECONCILE_JOB_NAME, { namespace, reason }, reconcileJobOptions(namespace)),
      ),
    );
    this.unpublished.delete(cluster); // written and queued: a failure before here retries it all
    return namespaces.length;
  }

  /** Closes the queue connection (after the last publish). */
  async close(): Promise<void> {
    await this.queue.close();
  }

  /** A cluster left the federation: withdraw its usage and have its namespaces reconciled. */
  async withdraw(cluster: string, namespaces: string[]): Promise<void> {
    const tx = this.redis.multi();
    for (const namespace of namespaces) {
      tx.del(usageKey(namespace, cluster)).srem(usageIndexKey(namespace), cluster);
      this.generations.delete(usageKey(namespace, cluster));
    }
    tx.del(clusterStateKey(cluster)).srem(CLUSTERS_KEY, cluster).sadd(REMOVED_CLUSTERS_KEY, cluster);
    await tx.exec();
    this.lastHealth.delete(cluster);
    this.unpublished.delete(cluster);
    await Promise.all(
      namespaces.map((namespace) =>
        this.queue.add(
          RECONCILE_JOB_NAME,
          { namespace, reason: `cluster ${cluster} was removed` },
          reconcileJobOptions(namespace),
        ),
      ),
    );
  }
}
