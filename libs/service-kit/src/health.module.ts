import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { HostApiConfig } from './config.js';
import { hostApiReadiness, hostKubeConfig, redisReadiness } from './dependencies.js';
import { HealthController, READINESS_CHECKS } from './health.js';
import { REDIS, type RedisClient } from './redis.module.js';

/**
 * `/healthz` and `/readyz`; ready means the host API server answers and, for services that use it
 * (`redis: true`, with RedisModule imported), Redis answers too.
 */
@Module({})
export class HealthModule {
  static forRoot(options: { host: HostApiConfig; redis?: boolean }): DynamicModule {
    const host = hostKubeConfig(options.host);
    return {
      module: HealthModule,
      imports: [TerminusModule],
      controllers: [HealthController],
      providers: [
        {
          provide: READINESS_CHECKS,
          inject: options.redis ? [REDIS] : [],
          useFactory: (redis?: RedisClient) => [
            hostApiReadiness(host),
            ...(redis ? [redisReadiness(redis)] : []),
          ],
        },
      ],
    };
  }
}
