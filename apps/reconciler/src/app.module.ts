import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule, MetricsModule, RedisModule } from '#service-kit';
import type { ReconcilerConfig } from './config.js';

@Module({})
export class ReconcilerModule {
  static forRoot(config: ReconcilerConfig): DynamicModule {
    return {
      module: ReconcilerModule,
      imports: [
        RedisModule.forRoot(config.REDIS_URL),
        HealthModule.forRoot({ kubeconfig: config.KUBECONFIG, redis: true }),
        MetricsModule.forRoot('reconciler'),
      ],
    };
  }
}
