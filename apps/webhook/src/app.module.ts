import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import type { Registry } from 'prom-client';
import {
  ClockCheckModule,
  duplicateRedis,
  HealthModule,
  karmadaKubeConfig,
  KubeAdmissionLeaseApi,
  KubeQuotaStore,
  METRICS,
  MetricsModule,
  QuotaEventWriter,
  REDIS,
  RedisModule,
  type RedisClient,
} from '#service-kit';
import { Queue } from 'bullmq';
import { RECONCILE_QUEUE, RECONCILE_QUEUE_PREFIX, type ReconcileJob } from '#usage';
import { AdmissionBatcher, CasPerAdmission, type AdmissionStrategy } from '#accounting';
import { ADMISSION_STRATEGY, AdmissionController, WEBHOOK_CONFIG } from './admission.controller.js';
import { WatchedQuotaStore } from './watched-quota-store.js';
import { NamespaceLabels } from './namespace-labels.js';
import { TemplateWarnings } from './template-warnings.js';
import { peerAddress, type WebhookConfig } from './config.js';
import { DenialEventRecorder } from './denial-events.js';
import { StoredBindings } from './stored-bindings.js';
import { BindingOverrides, TemplateClasses } from '#service-kit';
import { QuotaAdminRight } from './quota-admin-right.js';
import { WaitingRecorder } from './waiting-recorder.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { SchedulerEstimator } from './scheduler-estimator.js';
import { AdmissionOwner } from './admission-owner.js';
import { AdmissionPeer } from './admission-peer.js';
import { AdmissionFence } from './admission-fence.js';

type LeaseUserDependencies = [WatchedQuotaStore, StoredBindings, RedisClient, SchedulerRegistry, Registry];

@Module({})
export class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    const karmada = karmadaKubeConfig(config);
    const estimatorPort = config.SCHEDULER_ESTIMATOR_PORT;
    // One clock for deadlines and claim expirations.
    const claimTiming = {
      ttlSeconds: config.RESERVATION_TTL_SECONDS,
      landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
      clock: Date.now,
    };
    // What the admission owner and the fence are made of (the order of LeaseUserDependencies).
    const LEASE_USER_DEPENDENCIES = [WatchedQuotaStore, StoredBindings, REDIS, SchedulerRegistry, METRICS];
    // The admission Lease, read in every mode (the owner's, or the batched modes' fence).
    const admissionLeaseApi = () => new KubeAdmissionLeaseApi(karmada, { namespace: config.LEASE_NAMESPACE });
    const leaseTiming = {
      leaseDurationSeconds: config.ADMISSION_LEASE_DURATION_SECONDS,
      renewDeadlineSeconds: config.ADMISSION_LEASE_RENEW_DEADLINE_SECONDS,
      retryPeriodSeconds: config.ADMISSION_LEASE_RETRY_SECONDS,
      landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
    };
    // BullMQ wants its own connection (it uses blocking commands on others).
    const reconcileQueue = (redis: RedisClient) =>
      new Queue<ReconcileJob>(RECONCILE_QUEUE, {
        connection: duplicateRedis(redis),
        prefix: RECONCILE_QUEUE_PREFIX,
      });
    return {
      module: WebhookModule,
      imports: [
        HealthModule.forRoot({ karmada: config }),
        MetricsModule.forRoot('webhook'),
        ClockCheckModule.forRoot({
          karmada: config,
          landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
        }),
        // Waiting records are written by many requests at once: their commands share writes.
        RedisModule.forRoot(config, { autoPipelining: true }),
        ScheduleModule.forRoot(),
      ],
      controllers: [AdmissionController],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: DenialEventRecorder,
          inject: [WatchedQuotaStore, SchedulerRegistry],
          useFactory: (quotas: WatchedQuotaStore, scheduler: SchedulerRegistry) =>
            new DenialEventRecorder(
              new QuotaEventWriter(karmada, 'karmada-quota-webhook'),
              (namespace, quota) => quotas.refOf(namespace, quota),
              scheduler,
            ),
        },
        { provide: StoredBindings, useValue: new StoredBindings(karmada) },
        { provide: QuotaAdminRight, useValue: new QuotaAdminRight(karmada) },
        {
          provide: TemplateClasses,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new TemplateClasses(karmada, redis),
        },
        { provide: BindingOverrides, useValue: new BindingOverrides(karmada) },
        {
          provide: TemplateWarnings,
          inject: [WatchedQuotaStore, StoredBindings],
          useFactory: (quotas: WatchedQuotaStore, stored: StoredBindings) =>
            new TemplateWarnings(quotas, stored, claimTiming),
        },
        {
          provide: WaitingRecorder,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new WaitingRecorder(redis, reconcileQueue(redis)),
        },
        {
          provide: WebhookMetrics,
          inject: [METRICS],
          useFactory: (registry: Registry) => new WebhookMetrics(registry),
        },
        {
          // Batches read a namespace's quotas from this cache, kept by a watch (CachedQuotaStore).
          provide: WatchedQuotaStore,
          inject: [NamespaceLabels],
          useFactory: (namespaces: NamespaceLabels) => new WatchedQuotaStore(karmada, namespaces),
        },
        { provide: NamespaceLabels, useValue: new NamespaceLabels(karmada) },
        ...(estimatorPort === undefined
          ? []
          : [
              {
                provide: SchedulerEstimator,
                inject: [WatchedQuotaStore, BindingOverrides, METRICS],
                useFactory: (quotas: WatchedQuotaStore, overrides: BindingOverrides, registry: Registry) =>
                  new SchedulerEstimator(
                    quotas,
                    overrides,
                    {
                      host: config.BIND_ADDRESS,
                      port: estimatorPort,
                      forwardTo: config.SCHEDULER_ESTIMATOR_FORWARD_TO,
                    },
                    registry,
                  ),
              },
            ]),
        ...(config.ADMISSION_MODE === 'owner'
          ? [
              {
                provide: AdmissionOwner,
                inject: LEASE_USER_DEPENDENCIES,
                useFactory: (...[quotas, stored, redis, scheduler, registry]: LeaseUserDependencies) =>
                  new AdmissionOwner(
                    karmada,
                    admissionLeaseApi(),
                    quotas,
                    stored,
                    reconcileQueue(redis),
                    scheduler,
                    {
                      ...leaseTiming,
                      ttlSeconds: config.RESERVATION_TTL_SECONDS,
                      address: peerAddress(config),
                      leaseNamespace: config.LEASE_NAMESPACE,
                    },
                    registry,
                  ),
              },
              {
                provide: AdmissionPeer,
                inject: [AdmissionOwner, METRICS],
                useFactory: (owner: AdmissionOwner, registry: Registry) =>
                  new AdmissionPeer(
                    owner.admission,
                    {
                      bindAddress: config.BIND_ADDRESS,
                      port: config.ADMISSION_PEER_PORT,
                      certFile: config.TLS_CERT_FILE,
                      keyFile: config.TLS_KEY_FILE,
                      peerCaFile: config.ADMISSION_PEER_CA_FILE!,
                      reloadSeconds: config.TLS_RELOAD_SECONDS,
                    },
                    registry,
                  ),
              },
            ]
          : [
              {
                provide: AdmissionFence,
                inject: LEASE_USER_DEPENDENCIES,
                useFactory: (...[quotas, stored, redis, scheduler, registry]: LeaseUserDependencies) =>
                  new AdmissionFence(
                    admissionLeaseApi(),
                    quotas,
                    stored,
                    reconcileQueue(redis),
                    scheduler,
                    leaseTiming,
                    registry,
                  ),
              },
            ]),
        {
          provide: ADMISSION_STRATEGY,
          inject: [
            WebhookMetrics,
            WatchedQuotaStore,
            NamespaceLabels,
            { token: AdmissionPeer, optional: true },
            { token: AdmissionFence, optional: true },
          ],
          useFactory: (
            metrics: WebhookMetrics,
            quotas: WatchedQuotaStore,
            namespaces: NamespaceLabels,
            peer: AdmissionPeer | undefined,
            fence: AdmissionFence | undefined,
          ): AdmissionStrategy => {
            if (peer) return peer.strategy;
            const batched =
              config.ADMISSION_MODE === 'cas-per-admission'
                ? new CasPerAdmission(new KubeQuotaStore(karmada, namespaces), claimTiming, metrics)
                : new AdmissionBatcher(
                    quotas,
                    { ...claimTiming, maxConflictRetries: config.MAX_CONFLICT_RETRIES },
                    metrics,
                  );
            return fence!.fenced(batched);
          },
        },
      ],
    };
  }
}
