import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import { AdmissionLease, OwnerAdmission, selectionOf } from '#accounting';
import { describeError, RESOURCE_BINDING, type ResourceBinding } from '#api';
import {
  admissionLeaseInformer,
  admissionLeaseStateOf,
  closeQueue,
  customObjectInformer,
  ResilientInformer,
  stopIntervals,
  type LeaseApi,
} from '#service-kit';
import { requestCount, type ReconcileJob, type ReconcileTarget } from '#usage';
import { loggedLeaseApi } from './logged-lease-api.js';
import type { StoredBindings } from './stored-bindings.js';
import type { WatchedQuotaStore } from './watched-quota-store.js';

export interface AdmissionOwnerOptions {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  ttlSeconds: number;
  landingWindowSeconds: number;
  /** Where this process answers forwarded decisions (host:port, written in the Lease record). */
  address: string;
  /** Where the Lease is (LEASE_NAMESPACE): watched, so a renew counts from when it lands. */
  leaseNamespace: string;
}

const TICK = 'admission-owner';

/**
 * The webhook's side of ADMISSION_MODE=owner (experimental; docs/concepts/admission-owner.md): the
 * OwnerAdmission (libs/accounting) fed by the quota watches and a watch of every ResourceBinding,
 * its Lease run every retry period, and the Lease handed over on a graceful stop.
 */
export class AdmissionOwner implements OnApplicationBootstrap, OnModuleDestroy {
  readonly admission: OwnerAdmission;
  private readonly logger = new Logger('admission-owner');
  private readonly bindings: ResilientInformer<ResourceBinding>;
  private readonly leaseWatch: ResilientInformer<k8s.V1Lease>;
  /** The round of the Lease running now, if any: one at a time. */
  private ticking?: Promise<void>;

  constructor(
    karmada: k8s.KubeConfig,
    leaseApi: LeaseApi,
    quotas: WatchedQuotaStore,
    stored: StoredBindings,
    private readonly reconciles: Queue<ReconcileJob>,
    private readonly scheduler: SchedulerRegistry,
    private readonly options: AdmissionOwnerOptions,
    registry: Registry,
  ) {
    // One identity per process: a container restarted in its pod must not take the Lease as its own.
    const identity = `${hostname()}.${randomBytes(4).toString('hex')}`;
    const lease = new AdmissionLease(
      loggedLeaseApi(leaseApi, this.logger),
      {
        identity,
        address: options.address,
        durationMs: options.leaseDurationSeconds * 1000,
        renewDeadlineMs: options.renewDeadlineSeconds * 1000,
      },
      () => performance.now(),
    );
    this.admission = new OwnerAdmission(
      lease,
      {
        watchedIn: (ns) => quotas.watchedIn(ns),
        allWatched: () => quotas.allWatched(),
        selection: selectionOf(quotas),
      },
      {
        consistentVersion: () =>
          stored.consistentVersion({ deadline: Date.now() + options.renewDeadlineSeconds * 1000 }),
        requestCount: (target: ReconcileTarget) =>
          requestCount(reconciles, target, 'the admission owner waits for a count'),
      },
      {
        ttlSeconds: options.ttlSeconds,
        landingWindowSeconds: options.landingWindowSeconds,
        clock: Date.now,
        monotonic: () => performance.now(),
      },
      (message) => this.logger.warn(message),
    );
    const admission = this.admission;
    new Gauge({
      name: 'karmada_quota_admission_owner',
      help: 'Whether this webhook process holds the admission Lease and may decide (ADMISSION_MODE=owner)',
      registers: [registry],
      collect() {
        this.set(admission.deciding ? 1 : 0);
      },
    });
    new Gauge({
      name: 'karmada_quota_admission_owner_claims',
      help: 'Bindings with changes the admission owner admitted that no count holds yet',
      registers: [registry],
      collect() {
        this.set(admission.claimsInFlight);
      },
    });
    quotas.onQuota((quota, deleted) => this.admission.quotaObserved(quota, deleted));
    this.bindings = new ResilientInformer<ResourceBinding>(
      customObjectInformer<ResourceBinding>(karmada, RESOURCE_BINDING),
      {
        upsert: (binding) => this.admission.bindingObserved(binding, false),
        remove: (binding) => this.admission.bindingObserved(binding, true),
        synced: () => this.logger.log('watching ResourceBindings'),
        failed: (err) =>
          this.logger.warn(
            { error: describeError(err) },
            'the watch of ResourceBindings failed: claims are decided by reads after the landing window until it is back',
          ),
      },
      10_000,
    );
    const leaseSeen = (lease: k8s.V1Lease | undefined) => {
      this.admission.leaseObserved(lease && admissionLeaseStateOf(lease));
      this.armExpiryRound();
    };
    this.leaseWatch = new ResilientInformer<k8s.V1Lease>(
      admissionLeaseInformer(karmada, options.leaseNamespace),
      {
        upsert: leaseSeen,
        remove: () => leaseSeen(undefined),
        synced: () => this.logger.log('watching the admission Lease'),
        failed: (err) =>
          this.logger.warn(
            { error: describeError(err) },
            `the watch of the admission Lease failed (it needs list and watch on leases in ${options.leaseNamespace}): the Lease is read each retry period meanwhile, so a takeover after a crash may wait up to a retry period longer`,
          ),
      },
      10_000,
    );
    this.logger.warn(
      `ADMISSION_MODE=owner is experimental; identity ${identity}, answering forwarded decisions at ${options.address}`,
    );
  }

  onApplicationBootstrap(): void {
    void this.bindings.start();
    void this.leaseWatch.start();
    this.scheduler.addInterval(
      TICK,
      setInterval(() => void this.tick(), this.options.retryPeriodSeconds * 1000),
    );
    void this.tick();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    stopIntervals(this.scheduler, TICK);
    // A renew still running would make the handover's compare-and-swap fail.
    await this.ticking;
    clearTimeout(this.expiryRound); // after the round: it may have set one
    const holding = this.admission.deciding;
    const handedOver = await this.admission.release().catch(() => false);
    if (handedOver) this.logger.log('handed the admission Lease over with the claims in flight');
    else if (holding)
      this.logger.warn(
        'could not hand the admission Lease over: the next owner takes it once it expires and refuses increases until the counts hold what this one admitted',
      );
    await Promise.all([this.bindings.stop(), this.leaseWatch.stop(), closeQueue(this.reconciles)]);
  }

  /** A round due at the moment the holder's Lease would expire, when before the next retry. */
  private expiryRound?: NodeJS.Timeout;

  private stopping = false;

  /**
   * Taken over the moment the Lease held elsewhere expires, not up to a retry period later: increases
   * fail closed meanwhile. Not when it has expired already: a takeover that failed waits the retry period.
   */
  private armExpiryRound(): void {
    const expiresIn = this.admission.leaseExpiresInMs;
    if (this.stopping || expiresIn === undefined || expiresIn <= 0) return;
    clearTimeout(this.expiryRound);
    this.expiryRound = setTimeout(() => void this.tick(), expiresIn + 1).unref();
  }

  private tick(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.ticking ??= this.round().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async round(): Promise<void> {
    try {
      const step = await this.admission.tick();
      if (step === 'acquired')
        this.logger.log(
          this.admission.refusesAfterTakeover
            ? 'took the admission Lease with what is in flight unknown (from the batched webhooks, or from an owner of an older version that stopped without handing over): increases wait until the counts hold what they admitted'
            : 'took the admission Lease: deciding',
        );
      if (step === 'lost')
        this.logger.warn('lost the admission Lease to another process: deciding nothing more');
      if (step === 'held elsewhere') this.armExpiryRound();
    } catch (err) {
      this.logger.warn({ error: describeError(err) }, 'a round of the admission Lease failed');
    }
  }
}
