import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import {
  CLUSTERS_KEY,
  clusterStateKey,
  encodeHealth,
  encodeSnapshot,
  nextGeneration,
  RECONCILE_JOB_NAME,
  reconcileJobOptions,
  usageIndexKey,
  usageKey,
  type ReconcileJob,
} from '#usage';
import type { MemberWatcher } from './member-watcher.js';

/** A Ready cluster's lastSyncTime is rewritten this often even when nothing else changed. */
const HEALTH_REFRESH_MS = 5_000;

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

    const tx = this.redis.multi();
    for (const namespace of namespaces) {
      const key = usageKey(namespace, cluster);
      const generation = nextGeneration(this.generations.get(key), now.getTime());
      this.generations.set(key, generation);
      const usage = watcher.ledger.snapshot(namespace);
      tx.set(
        key,
        encodeSnapshot({ cluster, namespace, ...usage, observedAt: now.toISOString(), generation }),
      );
      tx.sadd(usageIndexKey(namespace), cluster);
    }
    const encodedHealth = encodeHealth({
      cluster,
      state: health.state,
      lastSyncTime: (health.lastSyncTime ?? new Date(0)).toISOString(),
      ...(health.message ? { message: health.message } : {}),
    });
    tx.set(clusterStateKey(cluster), encodedHealth).sadd(CLUSTERS_KEY, cluster);
    await tx.exec();
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
    tx.del(clusterStateKey(cluster)).srem(CLUSTERS_KEY, cluster);
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
