import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { HealthModule, MetricsModule, hostKubeConfig, REDIS, RedisModule } from '#service-kit';
import { RECONCILE_QUEUE, type ReconcileJob } from '#usage';
import { AGGREGATOR_CONFIG, AggregatorService, HOST_KUBECONFIG } from './aggregator.service.js';
import type { AggregatorConfig } from './config.js';
import { UsagePublisher } from './usage-publisher.js';

const RECONCILE_QUEUE_TOKEN = Symbol('RECONCILE_QUEUE');

@Module({})
export class AggregatorModule {
  static forRoot(config: AggregatorConfig): DynamicModule {
    return {
      module: AggregatorModule,
      imports: [
        RedisModule.forRoot(config.REDIS_URL),
        HealthModule.forRoot({ kubeconfig: config.KUBECONFIG, redis: true }),
        MetricsModule.forRoot('aggregator'),
      ],
      providers: [
        { provide: AGGREGATOR_CONFIG, useValue: config },
        { provide: HOST_KUBECONFIG, useValue: hostKubeConfig(config.KUBECONFIG) },
        {
          provide: RECONCILE_QUEUE_TOKEN,
          inject: [REDIS],
          // BullMQ wants its own connection (it uses blocking commands on others).
          useFactory: (redis: Redis) =>
            new Queue<ReconcileJob>(RECONCILE_QUEUE, { connection: redis.duplicate() }),
        },
        {
          provide: UsagePublisher,
          inject: [REDIS, RECONCILE_QUEUE_TOKEN],
          useFactory: (redis: Redis, queue: Queue<ReconcileJob>) =>
            new UsagePublisher(redis, queue, new Logger('publisher')),
        },
        AggregatorService,
      ],
    };
  }
}
