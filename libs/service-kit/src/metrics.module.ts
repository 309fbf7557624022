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

/**
 * Prometheus `/metrics` (prom-client): process and Node.js metrics plus whatever the service adds,
 * every series labelled `component` (the service). The default collectors keep their standard names
 * (`process_cpu_seconds_total`, ...) so stock Node.js dashboards work; `component` rather than
 * `service`, which the Prometheus Operator sets to the Kubernetes Service.
 */
@Module({})
export class MetricsModule {
  static forRoot(component: string): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ component });
    collectDefaultMetrics({ register: registry });
    return {
      module: MetricsModule,
      global: true,
      controllers: [MetricsController],
      providers: [{ provide: METRICS, useValue: registry }],
      exports: [METRICS],
    };
  }
}
