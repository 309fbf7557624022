import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule, hostKubeConfig } from '#service-kit';
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
      imports: [HealthModule.forRoot({ kubeconfig: config.KUBECONFIG })],
      controllers: [AdmissionController],
      providers: [
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
