import { performance } from 'node:perf_hooks';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import { BatchedFence, CountRequests, type AdmissionStrategy, type FenceView } from '#accounting';
import { closeQueue, stopIntervals, type LeaseApi } from '#service-kit';
import { requestCount, type ReconcileJob } from '#usage';
import { loggedLeaseApi } from './logged-lease-api.js';
import type { StoredBindings } from './stored-bindings.js';
import type { WatchedQuotaStore } from './watched-quota-store.js';

export interface AdmissionFenceOptions {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  landingWindowSeconds: number;
}

const TICK = 'admission-fence';

/**
 * The webhook's side of the fence in the batched modes (docs/concepts/admission-owner.md#switching-modes):
 * the admission Lease read every retry period (BatchedFence, libs/accounting), increases refused while
 * an owner decides or until what it admitted is counted, and counts asked for meanwhile.
 */
export class AdmissionFence implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly fence: BatchedFence;
  private readonly countRequests: CountRequests;
  private readonly logger = new Logger('admission-fence');
  private ticking?: Promise<void>;
  private lastSaid?: string;

  constructor(
    leaseApi: LeaseApi,
    private readonly quotas: WatchedQuotaStore,
    stored: StoredBindings,
    private readonly reconciles: Queue<ReconcileJob>,
    private readonly scheduler: SchedulerRegistry,
    private readonly options: AdmissionFenceOptions,
    registry: Registry,
  ) {
    this.fence = new BatchedFence(
      loggedLeaseApi(leaseApi, this.logger),
      {
        consistentVersion: () =>
          stored.consistentVersion({ deadline: Date.now() + options.renewDeadlineSeconds * 1000 }),
      },
      {
        durationMs: options.leaseDurationSeconds * 1000,
        renewDeadlineMs: options.renewDeadlineSeconds * 1000,
        landingWindowMs: options.landingWindowSeconds * 1000,
      },
      () => performance.now(),
    );
    this.countRequests = new CountRequests(
      (target) =>
        requestCount(reconciles, target, 'the batched webhooks wait for a count after the admission owner'),
      () => performance.now(),
      (message) => this.logger.warn(message),
    );
    const fence = this.fence;
    new Gauge({
      name: 'karmada_quota_admission_fenced',
      help: 'Whether this webhook (a batched ADMISSION_MODE) refuses every increase now because the admission Lease does not let the batched modes decide (an owner decides, or its tenure has not settled)',
      registers: [registry],
      collect() {
        this.set(fence.refusal([]) === undefined ? 0 : 1);
      },
    });
  }

  /** The strategy, deciding only while the fence lets the batched modes decide on the change's quotas. */
  fenced(strategy: AdmissionStrategy): AdmissionStrategy {
    return this.fence.fenced(strategy, (namespace) => this.quotas.watchedIn(namespace));
  }

  /** The first round is awaited: a webhook that starts serving knows which mode decides. */
  async onApplicationBootstrap(): Promise<void> {
    this.scheduler.addInterval(
      TICK,
      setInterval(() => void this.tick(), this.options.retryPeriodSeconds * 1000),
    );
    await this.tick();
  }

  async onModuleDestroy(): Promise<void> {
    stopIntervals(this.scheduler, TICK);
    await this.ticking;
    await this.countRequests.idle();
    await closeQueue(this.reconciles);
  }

  private tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async round(): Promise<void> {
    const view = await this.fence.step();
    // Logged when it changes: a new mode, or a new problem.
    const said = view.mode === 'unknown' ? view.problem : view.mode;
    if (said !== this.lastSaid) this.logged(view);
    this.lastSaid = said;
    // Not awaited: many quotas or a slow Redis must not hold up the next read of the Lease.
    void this.countRequests.ask(this.fence.awaitingCount(this.quotas.allWatched() ?? []));
  }

  private logged(view: FenceView): void {
    switch (view.mode) {
      case 'batched':
        return this.logger.log(
          view.countedFrom === undefined
            ? 'the admission Lease says the batched modes decide: deciding'
            : `the admission Lease says the batched modes decide: deciding on each quota once it is counted at or past ${view.countedFrom}`,
        );
      case 'owner':
        return this.logger.warn(
          `the admission owner ${view.holder} holds the admission Lease: this webhook (a batched ADMISSION_MODE) refuses increases until the switch of mode is finished`,
        );
      case 'owner ended':
        return this.logger.warn(
          'the admission owner stopped: increases are refused until what it admitted has landed (the landing window)',
        );
      case 'unknown':
        return this.logger.warn(`${view.problem}: increases are refused until it can be read`);
    }
  }
}
