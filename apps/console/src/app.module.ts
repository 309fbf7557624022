import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import type { Registry } from 'prom-client';
import { HealthModule, karmadaKubeConfig, METRICS, MetricsModule } from '#service-kit';
import { Authorizer } from './authorizer.js';
import type { ConsoleConfig } from './config.js';
import { ConsoleController } from './console.controller.js';
import { LiveUpdates } from './live-updates.js';
import { BindingCache, QuotaCache } from './watched-objects.js';
import { PrometheusTrends } from './prometheus-trends.js';
import { QuotaReader } from './quota-reader.js';
import { UsageHistory } from './usage-history.js';
import { UsageRecords } from './usage-records.js';

@Module({})
export class ConsoleModule {
  static forRoot(config: ConsoleConfig): DynamicModule {
    const karmada = karmadaKubeConfig(config);
    return {
      module: ConsoleModule,
      imports: [
        HealthModule.forRoot({ karmada: config }),
        MetricsModule.forRoot('console'),
        ScheduleModule.forRoot(),
      ],
      controllers: [ConsoleController],
      providers: [
        { provide: QuotaCache, useValue: new QuotaCache(karmada) },
        { provide: BindingCache, useValue: new BindingCache(karmada) },
        {
          provide: UsageHistory,
          inject: [QuotaCache, SchedulerRegistry],
          useFactory: (quotas: QuotaCache, scheduler: SchedulerRegistry) =>
            new UsageHistory(quotas, config.TREND_SAMPLE_SECONDS, scheduler),
        },
        {
          provide: Authorizer,
          inject: [METRICS],
          useFactory: (metrics: Registry) =>
            new Authorizer(
              karmada,
              { ttlSeconds: config.AUTH_CACHE_TTL_SECONDS, maxEntries: config.AUTH_CACHE_MAX_ENTRIES },
              metrics,
            ),
        },
        {
          provide: QuotaReader,
          inject: [Authorizer, QuotaCache, BindingCache, UsageHistory],
          useFactory: (
            authorizer: Authorizer,
            quotas: QuotaCache,
            bindings: BindingCache,
            history: UsageHistory,
          ) =>
            new QuotaReader(
              authorizer,
              quotas,
              bindings,
              config.PROMETHEUS_URL ? new PrometheusTrends(config.PROMETHEUS_URL, history) : history,
              new UsageRecords(karmada),
            ),
        },
        {
          provide: LiveUpdates,
          inject: [QuotaReader, QuotaCache, METRICS, SchedulerRegistry],
          useFactory: (
            reader: QuotaReader,
            quotas: QuotaCache,
            metrics: Registry,
            scheduler: SchedulerRegistry,
          ) =>
            new LiveUpdates(
              reader,
              quotas,
              { refreshSeconds: config.LIVE_REFRESH_SECONDS, maxStreams: config.MAX_LIVE_STREAMS },
              metrics,
              scheduler,
            ),
        },
      ],
    };
  }
}
