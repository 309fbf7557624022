import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ClockCheckModule, HealthModule, hostKubeConfig, MetricsModule, RedisModule } from '#service-kit';
import { HOST_KUBECONFIG, RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { FederatedQuotas } from './federated-quotas.js';
import { HostCache } from './host-cache.js';
import { ReconcileService } from './reconcile.service.js';
import { ReconcileWorker } from './reconcile.worker.js';
import { TriggersService } from './triggers.service.js';
import { UsageRecorder } from './usage-recorder.js';

@Module({})
export class ReconcilerModule {
  static forRoot(config: ReconcilerConfig): DynamicModule {
    return {
      module: ReconcilerModule,
      imports: [
        RedisModule.forRoot(config),
        HealthModule.forRoot({ host: config, redis: true }),
        MetricsModule.forRoot('reconciler'),
        ClockCheckModule.forRoot({
          host: config,
          landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
        }),
        ScheduleModule.forRoot(),
      ],
      providers: [
        { provide: RECONCILER_CONFIG, useValue: config },
        { provide: HOST_KUBECONFIG, useValue: hostKubeConfig(config) },
        HostCache,
        ReconcileService,
        ReconcileWorker,
        TriggersService,
        FederatedQuotas,
        UsageRecorder,
      ],
    };
  }
}
