import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { Redis } from 'ioredis';
import {
  HealthController,
  hostApiReadiness,
  hostKubeConfig,
  READINESS_CHECKS,
  REDIS,
  RedisModule,
  redisReadiness,
} from '#service-kit';
import type { AggregatorConfig } from './config.js';

@Module({})
export class AggregatorModule {
  static forRoot(config: AggregatorConfig): DynamicModule {
    const host = hostKubeConfig(config.KUBECONFIG);
    return {
      module: AggregatorModule,
      imports: [TerminusModule, RedisModule.forRoot(config.REDIS_URL)],
      controllers: [HealthController],
      providers: [
        {
          provide: READINESS_CHECKS,
          inject: [REDIS],
          useFactory: (redis: Redis) => [hostApiReadiness(host), redisReadiness(redis)],
        },
      ],
    };
  }
}
