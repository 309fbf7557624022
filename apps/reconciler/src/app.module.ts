import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import {
  ClockCheckModule,
  HealthModule,
  KARMADA_KUBECONFIG,
  karmadaKubeConfig,
  MetricsModule,
  RedisModule,
} from '#service-kit';
import { AppliedClusterQuotas } from './applied-cluster-quotas.js';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { FederatedQuotas } from './federated-quotas.js';
import { EstimatorServices } from './estimator-services.js';
import { NamespaceCache } from './namespace-cache.js';
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
        HealthModule.forRoot({ karmada: config, redis: true }),
        MetricsModule.forRoot('reconciler'),
        ClockCheckModule.forRoot({
          karmada: config,
          landingWindowSeconds: config.ADMISSION_LANDING_WINDOW_SECONDS,
        }),
        ScheduleModule.forRoot(),
      ],
      providers: [
        { provide: RECONCILER_CONFIG, useValue: config },
        { provide: KARMADA_KUBECONFIG, useValue: karmadaKubeConfig(config) },
        NamespaceCache,
        ReconcileService,
        ReconcileWorker,
        TriggersService,
        FederatedQuotas,
        EstimatorServices,
        UsageRecorder,
        AppliedClusterQuotas,
      ],
    };
  }
}
