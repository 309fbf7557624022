import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule, RedisModule } from '#service-kit';
import type { AggregatorConfig } from './config.js';

@Module({})
export class AggregatorModule {
  static forRoot(config: AggregatorConfig): DynamicModule {
    return {
      module: AggregatorModule,
      imports: [
        RedisModule.forRoot(config.REDIS_URL),
        HealthModule.forRoot({ kubeconfig: config.KUBECONFIG, redis: true }),
      ],
    };
  }
}
