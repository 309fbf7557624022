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
import type { ReconcilerConfig } from './config.js';

@Module({})
export class ReconcilerModule {
  static forRoot(config: ReconcilerConfig): DynamicModule {
    const host = hostKubeConfig(config.KUBECONFIG);
    return {
      module: ReconcilerModule,
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
