import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { KarmadaApiConfig } from './config.js';
import { karmadaApiReadiness, karmadaKubeConfig, redisReadiness } from './dependencies.js';
import { HealthController, READINESS_CHECKS } from './health.js';
import { REDIS, type RedisClient } from './redis.module.js';

/**
 * `/healthz` and `/readyz`; ready means the Karmada API server answers and, for services that use it
 * (`redis: true`, with RedisModule imported), Redis answers too.
 */
@Module({})
export class HealthModule {
  static forRoot(options: { karmada: KarmadaApiConfig; redis?: boolean }): DynamicModule {
    const karmada = karmadaKubeConfig(options.karmada);
    return {
      module: HealthModule,
      imports: [TerminusModule],
      controllers: [HealthController],
      providers: [
        {
          provide: READINESS_CHECKS,
          inject: options.redis ? [REDIS] : [],
          useFactory: (redis?: RedisClient) => [
            karmadaApiReadiness(karmada),
            ...(redis ? [redisReadiness(redis)] : []),
          ],
        },
      ],
    };
  }
}
