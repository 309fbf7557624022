import { Module, type DynamicModule } from '@nestjs/common';
import type { Registry } from 'prom-client';
import {
  HealthModule,
  hostKubeConfig,
  KubeQuotaStore,
  METRICS,
  MetricsModule,
  QuotaEventWriter,
} from '#service-kit';
import { AdmissionBatcher } from './admission-batcher.js';
import type { AdmissionStrategy } from './admission-strategy.js';
import { ADMISSION_STRATEGY, AdmissionController, WEBHOOK_CONFIG } from './admission.controller.js';
import { WatchedQuotaStore } from './cached-quota-store.js';
import { CasPerAdmission } from './cas-per-admission.js';
import type { WebhookConfig } from './config.js';
import { DenialEventRecorder } from './denial-events.js';
import { reuseConnections } from './reuse-connections.js';
import { WebhookMetrics } from './webhook-metrics.js';

@Module({})
export class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    // Reads and status writes are on every admission's path: no TLS handshake for each.
    const host = reuseConnections(hostKubeConfig(config.KUBECONFIG));
    // One clock for deadlines and claim expirations.
    const claimTiming = {
      ttlSeconds: config.RESERVATION_TTL_SECONDS,
      landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
      clock: Date.now,
    };
    return {
      module: WebhookModule,
      imports: [HealthModule.forRoot({ kubeconfig: config.KUBECONFIG }), MetricsModule.forRoot('webhook')],
      controllers: [AdmissionController],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: DenialEventRecorder,
          inject: [WatchedQuotaStore],
          useFactory: (quotas: WatchedQuotaStore) =>
            new DenialEventRecorder(new QuotaEventWriter(host, 'karmada-quota-webhook'), (namespace, name) =>
              quotas.uidOf(namespace, name),
            ),
        },
        {
          provide: WebhookMetrics,
          inject: [METRICS],
          useFactory: (registry: Registry) => new WebhookMetrics(registry),
        },
        {
          // Batches read a namespace's quotas from this cache, kept by a watch (CachedQuotaStore).
          provide: WatchedQuotaStore,
          useFactory: () => new WatchedQuotaStore(host, new KubeQuotaStore(host)),
        },
        {
          provide: ADMISSION_STRATEGY,
          inject: [WebhookMetrics, WatchedQuotaStore],
          useFactory: (metrics: WebhookMetrics, quotas: WatchedQuotaStore): AdmissionStrategy =>
            config.ADMISSION_MODE === 'cas-per-admission'
              ? new CasPerAdmission(new KubeQuotaStore(host), claimTiming, metrics)
              : new AdmissionBatcher(
                  quotas,
                  { ...claimTiming, maxConflictRetries: config.MAX_CONFLICT_RETRIES },
                  metrics,
                ),
        },
      ],
    };
  }
}
