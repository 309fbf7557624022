import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { describeError } from '#api';
import { closeQueue, duplicateRedis, METRICS, REDIS, type RedisClient } from '#service-kit';
import { decodeReconcileJob, RECONCILE_QUEUE, RECONCILE_QUEUE_PREFIX, type ReconcileJob } from '#usage';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { ReconcileService } from './reconcile.service.js';
import { TriggersService } from './triggers.service.js';

/**
 * How often a reconcile that has spent the attempts it was queued with is tried again, for as long
 * as it fails: it is idempotent and nothing else brings the namespace's quotas up to date. The
 * jobs' own exponential back-off ends near this, so this caps it.
 */
export const RETRY_EVERY_MS = 30_000;

/**
 * The BullMQ worker: one job reconciles one namespace, or one ClusterKarmadaQuota; any number of replicas may run. A job ends
 * failed only when it is malformed: a failing reconcile is retried until it succeeds, and a job
 * whose worker died or was starved of CPU past its lock (a stall) runs again however often that
 * happens (BullMQ's default fails it at the second stall).
 */
@Injectable()
export class ReconcileWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('worker');
  private readonly duration: Histogram<'result'>;
  private readonly retries: Counter<'cause'>;
  private readonly lastReconcile: Gauge;
  private worker?: Worker<ReconcileJob>;

  constructor(
    private readonly reconcile: ReconcileService,
    private readonly triggers: TriggersService,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(METRICS) metrics: Registry,
  ) {
    this.duration = new Histogram({
      name: 'karmada_quota_reconcile_duration_seconds',
      help: 'Time to reconcile one namespace, by result (ok, current: nothing to write by the cache, error)',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics],
    });
    this.retries = new Counter({
      name: 'karmada_quota_reconcile_retries_total',
      help: 'Reconcile jobs to run again, by cause: the reconcile failed (error) or its worker lost it (stalled)',
      labelNames: ['cause'],
      registers: [metrics],
    });
    // A time rather than an age: Prometheus computes the age (time() - ...) and it survives restarts.
    this.lastReconcile = new Gauge({
      name: 'karmada_quota_last_reconcile_timestamp_seconds',
      help: 'When this replica last reconciled a namespace successfully (seconds since the epoch)',
      registers: [metrics],
    });
  }

  onApplicationBootstrap(): void {
    // Workers block on Redis: BullMQ wants a connection of their own that retries for ever.
    this.worker = new Worker<ReconcileJob>(RECONCILE_QUEUE, (job, token) => this.process(job, token), {
      connection: duplicateRedis(this.redis, { blocking: true }),
      prefix: RECONCILE_QUEUE_PREFIX,
      concurrency: this.config.WORKER_CONCURRENCY,
      maxStalledCount: Number.MAX_SAFE_INTEGER,
    });
    this.worker.on('stalled', (jobId) => {
      this.retries.inc({ cause: 'stalled' });
      this.logger.warn(
        { job: jobId },
        'reconcile job stalled (the worker running it was killed, or starved of CPU for longer than ' +
          'its lock): it runs again',
      );
    });
    // Retried failures are logged by process(); this is a job given up for good.
    this.worker.on('failed', (job, err) => {
      if (job?.finishedOn !== undefined)
        this.logger.error({ job: job.id, error: err.message }, 'reconcile job dropped without retry');
    });
    this.worker.on('error', (err) => this.logger.error({ error: err.message }, 'reconcile worker failed'));
  }

  async onModuleDestroy(): Promise<void> {
    // Lets running jobs finish; others stay queued for another worker.
    if (this.worker) await closeQueue(this.worker);
  }

  private async process(job: Job<ReconcileJob>, token: string | undefined): Promise<void> {
    const decoded = decodeReconcileJob(job.data);
    // A malformed job never gets better: fail it for good instead of retrying.
    if (!decoded.ok) throw new UnrecoverableError(decoded.error);
    const { reason, restamp = false } = decoded.value;
    const subject: { namespace: string } | { clusterQuota: string } =
      'clusterQuota' in decoded.value
        ? { clusterQuota: decoded.value.clusterQuota }
        : { namespace: decoded.value.namespace };
    const end = this.duration.startTimer();
    try {
      const outcome =
        'clusterQuota' in subject
          ? await this.reconcile.reconcileClusterQuota(subject.clusterQuota, { restamp })
          : await this.reconcile.reconcileNamespace(subject.namespace, { restamp });
      end({ result: outcome.skipped ? 'current' : 'ok' });
      this.lastReconcile.setToCurrentTime();
      if (outcome.written > 0)
        this.logger.debug({ ...subject, written: outcome.written, reason }, 'quota statuses written');
      if ('namespace' in subject) await this.triggers.namespaceReconciled(subject.namespace, reason);
      else await this.triggers.waitingOnClusterQuota(outcome.waitingIn ?? [], subject.clusterQuota);
    } catch (err) {
      end({ result: 'error' });
      this.retries.inc({ cause: 'error' });
      await this.retryLater(job, subject, err, token);
    }
  }

  /**
   * BullMQ retries the job with its own back-off while it has attempts left. Past them, BullMQ
   * would fail it: it is delayed instead (its attempts count stays, so every later failure lands
   * here), and keeps its deduplication id, so changes meanwhile are reconciled by its next run.
   */
  private async retryLater(
    job: Job<ReconcileJob>,
    subject: { namespace: string } | { clusterQuota: string },
    err: unknown,
    token: string | undefined,
  ): Promise<never> {
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade + 1 < attempts) {
      this.logger.warn(
        { ...subject, attempt: job.attemptsMade + 1, attempts, error: describeError(err) },
        'reconcile failed, retrying with back-off',
      );
      throw err;
    }
    await job.moveToDelayed(Date.now() + RETRY_EVERY_MS, token);
    this.logger.warn(
      {
        ...subject,
        runs: job.attemptsStarted,
        since: new Date(job.timestamp).toISOString(),
        retryEverySeconds: RETRY_EVERY_MS / 1000,
        error: describeError(err),
      },
      'reconcile still fails, retrying until it succeeds',
    );
    throw new DelayedError();
  }
}
