import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Queue } from 'bullmq';
import {
  duplicateRedis,
  HealthModule,
  MetricsModule,
  KARMADA_KUBECONFIG,
  karmadaKubeConfig,
  REDIS,
  RedisModule,
  type RedisClient,
} from '#service-kit';
import { RECONCILE_QUEUE, RECONCILE_QUEUE_PREFIX, type ReconcileJob } from '#usage';
import { AGGREGATOR_CONFIG, AggregatorService } from './aggregator.service.js';
import type { AggregatorConfig } from './config.js';
import { UsagePublisher } from './usage-publisher.js';

const RECONCILE_QUEUE_TOKEN = Symbol('RECONCILE_QUEUE');

@Module({})
export class AggregatorModule {
  static forRoot(config: AggregatorConfig): DynamicModule {
    return {
      module: AggregatorModule,
      imports: [
        RedisModule.forRoot(config),
        HealthModule.forRoot({ karmada: config, redis: true }),
        MetricsModule.forRoot('aggregator'),
        ScheduleModule.forRoot(),
      ],
      providers: [
        { provide: AGGREGATOR_CONFIG, useValue: config },
        { provide: KARMADA_KUBECONFIG, useValue: karmadaKubeConfig(config) },
        {
          provide: RECONCILE_QUEUE_TOKEN,
          inject: [REDIS],
          // BullMQ wants its own connection (it uses blocking commands on others).
          useFactory: (redis: RedisClient) =>
            new Queue<ReconcileJob>(RECONCILE_QUEUE, {
              connection: duplicateRedis(redis),
              prefix: RECONCILE_QUEUE_PREFIX,
            }),
        },
        {
          provide: UsagePublisher,
          inject: [REDIS, RECONCILE_QUEUE_TOKEN],
          useFactory: (redis: RedisClient, queue: Queue<ReconcileJob>) =>
            new UsagePublisher(redis, queue, new Logger('publisher')),
        },
        AggregatorService,
      ],
    };
  }
}
