import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import { describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import { claimAdmittedAt, namespacesWaitingOn, RETIREMENT_COALESCE_MS } from '#quota';
import {
  closeQueue,
  duplicateRedis,
  METRICS,
  REDIS,
  registerQuotaMetrics,
  stopIntervals,
  type RedisClient,
} from '#service-kit';
import {
  DELETED_BINDING_RETENTION_MS,
  deletedBindingsKey,
  RECONCILE_JOB_NAME,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_MARKER_KEY,
  RECONCILE_QUEUE_PREFIX,
  reconcileJobOptions,
  clusterQuotaJobOptions,
  type ReconcileJob,
} from '#usage';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { NamespaceCache } from './namespace-cache.js';

const INTERVALS = ['resync', 'expiry-sweep', 'queue-recovery'] as const;

/**
 * What makes a namespace be reconciled besides the aggregator's jobs: ResourceBinding changes and
 * deletions (a deleted binding's reservation is released at once) and KarmadaQuota changes on the
 * Karmada API server (NamespaceCache's watches), the periodic full resync and the reservation-expiry
 * sweep (@nestjs/schedule intervals).
 */
@Injectable()
export class TriggersService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('triggers');
  private readonly queue: Queue<ReconcileJob>;
  /** Reconciles that could not be queued (Redis down), by deduplication id: queued again every second. */
  private readonly unqueued = new Map<string, ReconcileJob>();

  constructor(
    private readonly cache: NamespaceCache,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(METRICS) metrics: Registry,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.queue = new Queue<ReconcileJob>(RECONCILE_QUEUE, {
      connection: duplicateRedis(redis),
      prefix: RECONCILE_QUEUE_PREFIX,
    });
    const queue = this.queue;
    new Gauge({
      name: 'karmada_quota_reconcile_queue_depth',
      help: 'Reconcile jobs waiting, delayed or running',
      labelNames: ['state'],
      registers: [metrics],
      async collect() {
        const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'failed');
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    // The reconciler writes the statuses, so it alone exports them (docs/reference/metrics.md).
    registerQuotaMetrics(metrics, () => [...cache.quotas(), ...cache.clusterQuotas()]);
    cache.onChange({
      // The reconciler's own status writes need no reconcile: the one that wrote read everything before.
      quotaChanged: (q) =>
        cache.isOwnWrite(q)
          ? undefined
          : void this.enqueue(q.metadata?.namespace, `KarmadaQuota ${q.metadata?.name} changed`),
      bindingChanged: (b) =>
        void this.enqueue(b.metadata?.namespace, `ResourceBinding ${b.metadata?.name} changed`),
      bindingDeleted: (b) => void this.bindingDeleted(b),
      clusterQuotaChanged: (q) =>
        cache.isOwnWrite(q)
          ? undefined
          : void this.enqueueClusterQuota(
              q.metadata?.name,
              `ClusterKarmadaQuota ${q.metadata?.name} changed`,
            ),
      namespaceChanged: (namespace) => void this.clusterQuotasMayChange(namespace),
      namespaceUpdated: (namespace) => void this.namespaceReconciled(namespace, 'the namespace changed'),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.cache.start();
    const [resync, sweep, recovery] = INTERVALS;
    this.scheduler.addInterval(
      resync,
      setInterval(() => void this.resync(), this.config.RESYNC_INTERVAL_SECONDS * 1000),
    );
    this.scheduler.addInterval(
      sweep,
      setInterval(() => void this.sweepExpired(), this.config.EXPIRY_SWEEP_SECONDS * 1000),
    );
    this.scheduler.addInterval(
      recovery,
      setInterval(() => void this.recoverQueue(), 1_000),
    );
  }

  async onModuleDestroy(): Promise<void> {
    // Only its own: the registry is the app's.
    stopIntervals(this.scheduler, ...INTERVALS);
    await this.cache.stop();
    await closeQueue(this.queue);
  }

  /** Every namespace with a KarmadaQuota, and every ClusterKarmadaQuota. */
  private async resync(reason = 'periodic resync'): Promise<void> {
    const namespaces = new Set(this.cache.quotas().map((q) => q.metadata?.namespace));
    for (const namespace of namespaces) await this.enqueue(namespace, reason);
    for (const quota of this.cache.clusterQuotas())
      await this.enqueueClusterQuota(quota.metadata?.name, reason);
  }

  /**
   * After a namespace's reconcile, or a change of the namespace: each ClusterKarmadaQuota selecting it
   * counts what that reconcile was queued for (its bindings, its usage) too, or the namespace's new
   * resourceVersion. Their jobs are deduplicated like a namespace's.
   */
  async namespaceReconciled(namespace: string, reason: string): Promise<void> {
    for (const quota of this.cache.clusterQuotasSelecting(namespace) ?? [])
      await this.enqueueClusterQuota(quota.metadata?.name, `namespace ${namespace}: ${reason}`);
  }

  /** After a ClusterKarmadaQuota's status changed: the namespaces with changes waiting on it. */
  async waitingOnClusterQuota(namespaces: readonly string[], quota: string): Promise<void> {
    for (const namespace of namespaces)
      await this.enqueue(namespace, `a change waits on ClusterKarmadaQuota ${quota}, whose status changed`);
  }

  /** A namespace's labels changed: it may have entered or left any ClusterKarmadaQuota. */
  private async clusterQuotasMayChange(namespace: string): Promise<void> {
    for (const quota of this.cache.clusterQuotas())
      await this.enqueueClusterQuota(quota.metadata?.name, `namespace ${namespace} changed`);
  }

  /**
   * Queues again what could not be queued, and redoes everything when Redis lost the queue (it
   * restarted empty or was flushed: the marker key is gone with the queued jobs).
   */
  private async recoverQueue(): Promise<void> {
    for (const job of [...this.unqueued.values()]) await this.add(job);
    try {
      if ((await this.redis.set(RECONCILE_QUEUE_MARKER_KEY, '1', 'NX')) === 'OK') {
        this.logger.log('the reconcile queue has no record of earlier work (a new or emptied Redis): resync');
        await this.resync('Redis lost the queue');
      }
    } catch {
      // Redis is down: the next round tries again.
    }
  }

  /**
   * Namespaces holding a claim whose expirationTime has passed, or one old enough that a write would
   * retire it if its change has landed (a retirement alone waits for a later write: libs/quota
   * RETIREMENT_COALESCE_MS), and those whose status lists a waiting change.
   */
  private async sweepExpired(): Promise<void> {
    const now = Date.now();
    const clusterQuotas: readonly KarmadaQuota[] = this.cache.clusterQuotas();
    for (const quota of [...this.cache.quotas(), ...clusterQuotas]) {
      const due = quota.status?.reservations?.some((r) => {
        const admittedAt = claimAdmittedAt(r, this.config.RESERVATION_TTL_SECONDS);
        return admittedAt !== undefined && now - admittedAt >= RETIREMENT_COALESCE_MS;
      });
      // A waiting change settles or is abandoned with no event to tell (libs/quota liveWaiting).
      const reason = due
        ? 'a claim may be retired or has expired'
        : quota.status?.waiting?.length
          ? 'a waiting change may have settled'
          : undefined;
      if (reason === undefined) continue;
      if (!clusterQuotas.includes(quota)) await this.enqueue(quota.metadata?.namespace, reason);
      else {
        await this.enqueueClusterQuota(quota.metadata?.name, reason);
        // Its waiting changes are settled and requeued by their namespaces' reconciles.
        for (const namespace of namespacesWaitingOn(quota)) await this.enqueue(namespace, reason);
      }
    }
  }

  /** Records the deletion first, so the reconcile it triggers releases the reservation at once. */
  private async bindingDeleted(binding: ResourceBinding): Promise<void> {
    const { namespace, name, uid } = binding.metadata ?? {};
    if (!namespace) return;
    if (uid) {
      const key = deletedBindingsKey(namespace);
      const now = Date.now();
      try {
        await this.redis
          .multi()
          .zadd(key, now, uid)
          .zremrangebyscore(key, '-inf', now - DELETED_BINDING_RETENTION_MS)
          .pexpire(key, DELETED_BINDING_RETENTION_MS)
          .exec();
      } catch (err) {
        // Then the reservation goes at its expiry instead of at once: late, never lost.
        this.logger.warn(
          { namespace, binding: name, error: describeError(err) },
          'could not record the deletion of a ResourceBinding',
        );
      }
    }
    await this.enqueue(namespace, `ResourceBinding ${name} deleted`);
  }

  private async enqueue(namespace: string | undefined, reason: string): Promise<void> {
    if (namespace) await this.add({ namespace, reason });
  }

  private async enqueueClusterQuota(name: string | undefined, reason: string): Promise<void> {
    if (name) await this.add({ clusterQuota: name, reason });
  }

  private async add(job: ReconcileJob): Promise<void> {
    const options =
      'clusterQuota' in job ? clusterQuotaJobOptions(job.clusterQuota) : reconcileJobOptions(job.namespace);
    const id = options.deduplication.id;
    try {
      await this.queue.add(RECONCILE_JOB_NAME, job, options);
      this.unqueued.delete(id);
    } catch (err) {
      if (!this.unqueued.has(id))
        this.logger.warn({ job: id, error: describeError(err) }, 'could not queue a reconcile, retrying');
      this.unqueued.set(id, job);
    }
  }
}
