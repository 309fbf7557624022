import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { describeError } from '#api';

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
          useFactory: () =>
            reportingOutages(new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false })),
        },
      ],
      exports: [REDIS],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * One log line when Redis becomes unreachable and one when it is back, instead of ioredis printing
 * a stack trace for every reconnect attempt (it does so for a client without an 'error' listener).
 */
function reportingOutages(redis: Redis): Redis {
  const logger = new Logger('redis');
  const where = `${redis.options.host}:${redis.options.port}`;
  let down = false;
  redis.on('error', (err: unknown) => {
    if (down) return;
    down = true;
    logger.error(`Redis at ${where} is unreachable, reconnecting: ${describeError(err)}`);
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log(`Redis at ${where} is reachable again`);
  });
  return redis;
}
