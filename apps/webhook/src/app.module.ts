import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController, hostApiReadiness, hostKubeConfig, READINESS_CHECKS } from '#service-kit';
import type { WebhookConfig } from './config.js';

@Module({})
export class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    const host = hostKubeConfig(config.KUBECONFIG);
    return {
      module: WebhookModule,
      imports: [TerminusModule],
      controllers: [HealthController],
      providers: [{ provide: READINESS_CHECKS, useValue: [hostApiReadiness(host)] }],
    };
  }
}
