import { Controller, Get, Header, Inject, Module, type DynamicModule } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** The service's Prometheus registry: inject it to register the service's own metrics. */
export const METRICS = Symbol('METRICS');

@Controller()
class MetricsController {
  constructor(@Inject(METRICS) private readonly registry: Registry) {}

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Prometheus `/metrics` (prom-client): process and Node.js metrics plus whatever the service adds. */
@Module({})
export class MetricsModule {
  static forRoot(service: string): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: registry, prefix: 'karmada_quota_' });
    return {
      module: MetricsModule,
      global: true,
      controllers: [MetricsController],
      providers: [{ provide: METRICS, useValue: registry }],
      exports: [METRICS],
    };
  }
}
