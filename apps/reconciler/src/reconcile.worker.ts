import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Histogram, type Registry } from 'prom-client';
import { METRICS, REDIS } from '#service-kit';
import { decodeReconcileJob, RECONCILE_QUEUE, type ReconcileJob } from '#usage';
import type { ReconcilerConfig } from './config.js';
import { RECONCILER_CONFIG, ReconcileService } from './reconcile.service.js';

/** The BullMQ worker: one job reconciles one namespace; any number of replicas may run. */
@Injectable()
export class ReconcileWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('worker');
  private readonly duration: Histogram<'result'>;
  private worker?: Worker<ReconcileJob>;

  constructor(
    private readonly reconcile: ReconcileService,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(METRICS) metrics: Registry,
  ) {
    this.duration = new Histogram({
      name: 'karmada_quota_reconcile_duration_seconds',
      help: 'Time to reconcile one namespace, by result',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics],
    });
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<ReconcileJob>(RECONCILE_QUEUE, (job) => this.process(job), {
      // Workers block on Redis: BullMQ wants a connection of their own that retries for ever.
      connection: this.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true }),
      concurrency: this.config.WORKER_CONCURRENCY,
    });
    this.worker.on('failed', (job, err) =>
      this.logger.warn(
        `reconcile of ${job?.data?.namespace} failed (attempt ${job?.attemptsMade}): ${err.message}`,
      ),
    );
    this.worker.on('error', (err) => this.logger.error(`worker: ${err.message}`));
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close(); // lets running jobs finish; others stay queued for another worker
  }

  private async process(job: Job<ReconcileJob>): Promise<void> {
    const decoded = decodeReconcileJob(job.data);
    // A malformed job never gets better: fail it for good instead of retrying.
    if (!decoded.ok) throw new UnrecoverableError(decoded.error);
    const end = this.duration.startTimer();
    try {
      const outcome = await this.reconcile.reconcileNamespace(decoded.value.namespace);
      end({ result: 'ok' });
      if (outcome.written > 0) {
        this.logger.debug(
          `${decoded.value.namespace}: ${outcome.written} status written (${decoded.value.reason})`,
        );
      }
    } catch (err) {
      end({ result: 'error' });
      throw err;
    }
  }
}
