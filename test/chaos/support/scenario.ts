import type { RunningService, ServiceName } from '../../../tools/federation/src/index.js';
import { ChaosFederation } from './chaos-federation.js';
import { StatusRecorder } from './recorder.js';
import { Tenant } from './tenant.js';

/**
 * The world most chaos scenarios share, built by a beforeAll and stopped by an afterAll: a
 * federation of its own with the webhook, aggregator and reconciler, one tenant with `quotas`, and a
 * recorder of every status its quotas go through. Its fields are set once the beforeAll has run.
 */
export class ChaosScenario {
  chaos!: ChaosFederation;
  tenant!: Tenant;
  recorder!: StatusRecorder;
  private readonly running = new Map<ServiceName, RunningService>();

  static setUp(
    label: string,
    options: {
      members: number;
      quotas: Record<string, Record<string, string>>;
      /** Settings of one service beyond the chaos timings (CHAOS_SERVICE_ENV). */
      env?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
    },
  ): ChaosScenario {
    const scenario = new ChaosScenario();
    beforeAll(async () => {
      scenario.chaos = await ChaosFederation.start(label, { members: options.members });
      const services = ['webhook', 'aggregator', 'reconciler'] as const;
      const started = await Promise.all(
        services.map((name) => scenario.chaos.startService(name, { env: options.env?.[name] ?? {} })),
      );
      for (const service of started) scenario.running.set(service.name, service);
      scenario.tenant = await Tenant.create(scenario.chaos, label, options.quotas);
      scenario.recorder = new StatusRecorder(scenario.tenant);
      await scenario.recorder.start();
    }, 300_000);
    afterAll(async () => {
      scenario.recorder?.stop();
      await scenario.chaos?.stop();
    });
    return scenario;
  }

  service(name: ServiceName): RunningService {
    return this.running.get(name)!;
  }

  /** Starts a killed service again (ChaosFederation.restart); service(name) is then the new one. */
  async restart(name: ServiceName): Promise<RunningService> {
    const restarted = await this.chaos.restart(this.service(name));
    this.running.set(name, restarted);
    return restarted;
  }
}
