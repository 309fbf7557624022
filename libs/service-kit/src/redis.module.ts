import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';

/** Injection token of the shared ioredis connection. */
export const REDIS = Symbol('REDIS');

/**
 * One Redis connection per service, retried in the background. Closed in the last shutdown phase,
 * after every onModuleDestroy hook had its chance to flush through it.
 */
@Module({})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  static forRoot(url: string): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [
        {
          provide: REDIS,
          useFactory: () => new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
        },
      ],
      exports: [REDIS],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
