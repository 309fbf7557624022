import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController, hostApiReadiness, hostKubeConfig, READINESS_CHECKS } from '#service-kit';
import { AdmissionBatcher } from './admission-batcher.js';
import { AdmissionController, WEBHOOK_CONFIG } from './admission.controller.js';
import type { WebhookConfig } from './config.js';
import { KubeQuotaStore } from './kube-quota-store.js';

@Module({})
export class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    const host = hostKubeConfig(config.KUBECONFIG);
    return {
      module: WebhookModule,
      imports: [TerminusModule],
      controllers: [HealthController, AdmissionController],
      providers: [
        { provide: READINESS_CHECKS, useValue: [hostApiReadiness(host)] },
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: AdmissionBatcher,
          useFactory: () =>
            new AdmissionBatcher(new KubeQuotaStore(host), {
              ttlSeconds: config.RESERVATION_TTL_SECONDS,
              maxConflictRetries: config.MAX_CONFLICT_RETRIES,
            }),
        },
      ],
    };
  }
}
