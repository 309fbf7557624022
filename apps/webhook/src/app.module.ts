import { Module, type DynamicModule } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { HealthModule, hostKubeConfig, KubeQuotaStore, METRICS, MetricsModule } from '#service-kit';
import { AdmissionBatcher } from './admission-batcher.js';
import { AdmissionController, WEBHOOK_CONFIG } from './admission.controller.js';
import type { WebhookConfig } from './config.js';
import { WebhookMetrics } from './webhook-metrics.js';

@Module({})
export class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    const host = hostKubeConfig(config.KUBECONFIG);
    return {
      module: WebhookModule,
      imports: [HealthModule.forRoot({ kubeconfig: config.KUBECONFIG }), MetricsModule.forRoot('webhook')],
      controllers: [AdmissionController],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: WebhookMetrics,
          inject: [METRICS],
          useFactory: (registry: Registry) => new WebhookMetrics(registry),
        },
        {
          provide: AdmissionBatcher,
          inject: [WebhookMetrics],
          useFactory: (metrics: WebhookMetrics) =>
            new AdmissionBatcher(
              new KubeQuotaStore(host),
              { ttlSeconds: config.RESERVATION_TTL_SECONDS, maxConflictRetries: config.MAX_CONFLICT_RETRIES },
              metrics,
            ),
        },
      ],
    };
  }
}
