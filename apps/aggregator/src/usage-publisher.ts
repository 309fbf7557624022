import type { Queue } from 'bullmq';
import type { Logger } from '@nestjs/common';
import { closeQueue, type RedisClient } from '#service-kit';
import {
  CLUSTERS_KEY,
  clusterNamespacesKey,
  clusterRemovedKey,
  clusterRepublishKey,
  clusterStateKey,
  decodeHealth,
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
 * One namespace's snapshot, in the namespace's slot. KEYS: its usage key and index; ARGV: the
 * cluster, the snapshot, '1' when this writer wrote it before in this epoch. Returns 0, writing
 * nothing, when such a snapshot is gone: Redis lost it.
 */
const SNAPSHOT_SCRIPT = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 1`;

/**
 * The cluster's state, in the cluster's slot, after its snapshots. KEYS: its state key, namespaces,
 * republish request and removed marker; ARGV: the epoch, the encoded health, '1' for a full publish
 * (the namespaces are all of them), '1' when the state key must exist, then the namespaces just
 * written. Returns 0, writing nothing, when the state key is lost or a reader asked for a republish
 * of this epoch.
 */
const STATE_SCRIPT = `
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('GET', KEYS[3]) == ARGV[1] then return 0 end
if ARGV[3] == '1' then redis.call('DEL', KEYS[2]) end
for i = 5, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[3], KEYS[4])
return 1`;

/** What this writer publishes of a cluster (epochs: libs/usage snapshot-layout.ts). */
interface Publication {
  epoch: number;
  /** The next publish writes every namespace and starts the epoch (no state key expected yet). */
  full: boolean;
  /** Namespaces written in this epoch by this writer: their snapshot going missing is a loss. */
  written: Set<string>;
}

/**
 * Writes what changed in a member's ledger to Redis (layout: libs/usage snapshot-layout.ts), each
 * write within one Redis Cluster slot, and enqueues one deduplicated reconcile job per changed
 * namespace.
 */
export class UsagePublisher {
  private readonly generations = new Map<string, number>();
  private readonly publications = new Map<string, Publication>();
  private readonly lastHealth = new Map<string, { state: string; writtenAt: number }>();
  /** Namespaces whose publish failed (Redis down): published again next time, never dropped. */
  private readonly unpublished = new Map<string, Set<string>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly queue: Queue<ReconcileJob>,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** Publishes the member's changed namespaces and its health (on change, else every 5 s). */
  async publish(watcher: MemberWatcher, now = new Date()): Promise<number> {
    const cluster = watcher.name;
    const health = watcher.currentHealth(now.getTime());
    const pending = this.unpublished.get(cluster) ?? new Set<string>();
    let namespaces = [...new Set([...pending, ...watcher.takeChanges()])];
    this.unpublished.set(cluster, new Set(namespaces)); // until the writes below succeeded
    const previous = this.lastHealth.get(cluster);
    const healthChanged = previous?.state !== health.state;
    const refreshDue = previous === undefined || now.getTime() - previous.writtenAt >= HEALTH_REFRESH_MS;
    if (namespaces.length === 0 && !healthChanged && !refreshDue) return 0;

    const publication = this.publications.get(cluster) ?? (await this.carryOn(cluster, now));
    if (publication.full) {
      namespaces = [...new Set([...namespaces, ...watcher.ledger.namespaces()])];
      this.unpublished.set(cluster, new Set(namespaces));
    }
    const { epoch } = publication;
    const written = await Promise.all(
      namespaces.map((namespace) => {
        const key = usageKey(namespace, cluster);
        const generation = nextGeneration(this.generations.get(key), now.getTime());
        this.generations.set(key, generation);
        const usage = watcher.ledger.snapshot(namespace);
        const snapshot = { cluster, namespace, ...usage, observedAt: now.toISOString(), generation, epoch };
        const before = publication.written.has(namespace) ? '1' : '0';
        return this.redis.eval(
          SNAPSHOT_SCRIPT,
          2,
          key,
          usageIndexKey(namespace),
          cluster,
          encodeSnapshot(snapshot),
          before,
        );
      }),
    );
    const encodedHealth = encodeHealth({
      cluster,
      state: health.state,
      lastSyncTime: (health.lastSyncTime ?? new Date(0)).toISOString(),
      ...(health.message ? { message: health.message } : {}),
      epoch,
    });
    const flag = (on: boolean) => (on ? '1' : '0');
    const stateWritten =
      !written.includes(0) &&
      (await this.redis.eval(
        STATE_SCRIPT,
        4,
        ...[clusterStateKey, clusterNamespacesKey, clusterRepublishKey, clusterRemovedKey].map((key) =>
          key(cluster),
        ),
        String(epoch),
        encodedHealth,
        flag(publication.full),
        flag(!publication.full),
        ...namespaces,
      )) === 1;
    if (!stateWritten) {
      // Redis lost some of the cluster's snapshots (restarted empty, flushed, a Redis Cluster node
      // lost its data): publish all of them again in a new epoch, before anyone reads their absence
      // as "nothing".
      this.logger.warn({ cluster }, "Redis lost the cluster's published usage: publishing all of it again");
      this.publications.set(cluster, {
        epoch: nextGeneration(epoch, now.getTime()),
        full: true,
        written: new Set(),
      });
      this.lastHealth.delete(cluster);
      return this.publish(watcher, now);
    }
    publication.full = false;
    namespaces.forEach((namespace) => publication.written.add(namespace));
    this.lastHealth.set(cluster, { state: health.state, writtenAt: now.getTime() });
    await this.redis.sadd(CLUSTERS_KEY, cluster);

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

  /**
   * A cluster this writer has not published yet: carry on in the epoch of its state key (another
   * replica or an earlier run published it), or start one with a full publish when there is none.
   */
  private async carryOn(cluster: string, now: Date): Promise<Publication> {
    const raw = await this.redis.get(clusterStateKey(cluster));
    const state = raw === null ? undefined : decodeHealth(raw, { cluster });
    const publication = state?.ok
      ? { epoch: state.value.epoch, full: false, written: new Set<string>() }
      : { epoch: nextGeneration(undefined, now.getTime()), full: true, written: new Set<string>() };
    this.publications.set(cluster, publication);
    return publication;
  }

  /** Closes the queue connection (after the last publish). */
  async close(): Promise<void> {
    await closeQueue(this.queue);
  }

  /** Every cluster some writer published and nobody withdrew (CLUSTERS_KEY). */
  async publishedClusters(): Promise<string[]> {
    return this.redis.smembers(CLUSTERS_KEY);
  }

  /**
   * Withdraws a cluster no writer watches any more (see withdraw) from the namespaces its state lists
   * and `counted` (those whose statuses still count it), unless it is withdrawn already (removed
   * marker, no state key, not in CLUSTERS_KEY: readers count it nowhere, and its reconciles were
   * queued). Returns whether it withdrew it now.
   */
  async withdrawUnwatched(cluster: string, counted: readonly string[]): Promise<boolean> {
    // CLUSTERS_KEY lies in another slot than the cluster's keys (Redis Cluster): beside the MULTI, at once.
    const [slot, member] = await Promise.all([
      this.redis
        .multi()
        .exists(clusterStateKey(cluster))
        .exists(clusterRemovedKey(cluster))
        .smembers(clusterNamespacesKey(cluster))
        .exec(),
      this.redis.sismember(CLUSTERS_KEY, cluster),
    ]);
    const [state, removed, listed] = slot!.map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [number, number, string[]];
    const published = member === 1;
    if (state === 0 && removed === 1 && !published) return false;
    await this.withdraw(cluster, [...new Set([...listed, ...counted])]);
    return true;
  }

  /**
   * A cluster left the federation: withdraw its usage and have its namespaces reconciled. Idempotent:
   * withdrawing it again changes nothing but queues the reconciles again.
   */
  async withdraw(cluster: string, namespaces: string[]): Promise<void> {
    // Its slot first: from then on readers take its missing snapshots as withdrawn, not lost.
    await this.redis
      .multi()
      .del(clusterStateKey(cluster), clusterNamespacesKey(cluster), clusterRepublishKey(cluster))
      .set(clusterRemovedKey(cluster), '1')
      .exec();
    await Promise.all(
      namespaces.map((namespace) => {
        this.generations.delete(usageKey(namespace, cluster));
        return this.redis
          .multi()
          .del(usageKey(namespace, cluster))
          .srem(usageIndexKey(namespace), cluster)
          .exec();
      }),
    );
    await this.redis.srem(CLUSTERS_KEY, cluster);
    this.publications.delete(cluster);
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
