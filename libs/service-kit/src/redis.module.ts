import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { describeError } from '#api';
import type { RedisConfig } from './config.js';

/** Injection token of the shared ioredis connection. */
export const REDIS = Symbol('REDIS');

/** One Redis, or a Redis Cluster (REDIS_CLUSTER_NODES): the product's keys work on both. */
export type RedisClient = Redis | Cluster;

/**
 * One Redis connection per service, retried in the background. Closed in the last shutdown phase,
 * after every onModuleDestroy hook had its chance to flush through it.
 */
@Module({})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  static forRoot(config: RedisConfig, options: ConnectOptions = {}): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [{ provide: REDIS, useFactory: () => connectRedis(config, options) }],
      exports: [REDIS],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export interface ConnectOptions {
  /**
   * Send the commands issued in one turn of the event loop in one write (ioredis auto-pipelining):
   * for a connection many requests use at once, as the webhook's waiting records are.
   */
  autoPipelining?: boolean;
}

/**
 * The service's connection: commands fail at once while Redis is unreachable (the callers retry),
 * and outages are logged once. With REDIS_CLUSTER_NODES, a Redis Cluster client that starts from
 * those nodes and uses REDIS_URL's user, password and TLS on every node.
 */
export function connectRedis(config: RedisConfig, connect: ConnectOptions = {}): RedisClient {
  const options = { maxRetriesPerRequest: 1 };
  const enableAutoPipelining = connect.autoPipelining ?? false;
  if (config.REDIS_CLUSTER_NODES === undefined) {
    const redis = new Redis(config.REDIS_URL, {
      ...options,
      enableOfflineQueue: false,
      enableAutoPipelining,
    });
    return reportingOutages(redis, `${redis.options.host}:${redis.options.port}`);
  }
  const url = new URL(config.REDIS_URL);
  const nodes = config.REDIS_CLUSTER_NODES;
  const cluster = new Cluster(nodes, {
    enableOfflineQueue: false,
    enableAutoPipelining,
    redisOptions: {
      ...options,
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
  return reportingOutages(cluster, nodes.map((n) => `${n.host}:${n.port}`).join(','));
}

/**
 * Another connection to the same Redis (BullMQ wants its own, it blocks on them); `blocking` for a
 * BullMQ Worker's, which must retry for ever. Never auto-pipelined: BullMQ's users report jobs lost
 * with it (taskforcesh/bullmq#457).
 */
/**
 * Closes a BullMQ Queue or Worker made on a connection of its own (duplicateRedis): BullMQ never
 * closes a connection it was given (it may be shared), so it is disconnected here once the queue is
 * closed, and a service's shutdown leaves no socket open.
 */
export async function closeQueue(queue: {
  close(): Promise<void>;
  opts: { connection?: unknown };
}): Promise<void> {
  await queue.close();
  const given = queue.opts.connection;
  if (given instanceof Redis || given instanceof Cluster) given.disconnect();
}

export function duplicateRedis(redis: RedisClient, options: { blocking?: boolean } = {}): RedisClient {
  const enableAutoPipelining = false;
  if (redis instanceof Cluster) {
    return options.blocking
      ? redis.duplicate([], {
          enableOfflineQueue: true,
          enableAutoPipelining,
          redisOptions: { ...redis.options.redisOptions, maxRetriesPerRequest: null },
        })
      : redis.duplicate([], { enableAutoPipelining });
  }
  return options.blocking
    ? redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, enableAutoPipelining })
    : redis.duplicate({ enableAutoPipelining });
}

/**
 * One log line when Redis becomes unreachable and one when it is back, instead of ioredis printing
 * a stack trace for every reconnect attempt (it does so for a client without an 'error' listener).
 */
function reportingOutages<Client extends RedisClient>(redis: Client, address: string): Client {
  const logger = new Logger('redis');
  let down = false;
  redis.on('error', (err: unknown) => {
    if (down) return;
    down = true;
    logger.error({ redis: address, error: describeError(err) }, 'Redis is unreachable, reconnecting');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log({ redis: address }, 'Redis is reachable again');
  });
  return redis;
}
