import {
  registerWebhook,
  type RunningService,
  type ServiceName,
} from '../../../tools/federation/src/index.js';
import { roundRobinProxy } from '../../support/round-robin-proxy.js';
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
  /** The webhook processes (service('webhook') is the first). */
  webhooks!: RunningService[];
  private proxy?: Awaited<ReturnType<typeof roundRobinProxy>>;
  private readonly running = new Map<ServiceName, RunningService>();

  static setUp(
    label: string,
    options: {
      members: number;
      quotas: Record<string, Record<string, string>>;
      /** Settings of one service beyond the chaos timings (CHAOS_SERVICE_ENV). */
      env?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
      /**
       * Webhook processes (1 by default); more are registered behind one round-robin proxy, as pods
       * behind their Service (`webhooks`).
       */
      webhookReplicas?: number;
    },
  ): ChaosScenario {
    const scenario = new ChaosScenario();
    let starting: Promise<void> | undefined;
    const start = async () => {
      scenario.chaos = await ChaosFederation.start(label, { members: options.members });
      const replicas = options.webhookReplicas ?? 1;
      const services = ['aggregator', 'reconciler'] as const;
      const [webhooks, started] = await Promise.all([
        Promise.all(
          Array.from({ length: replicas }, (_, i) =>
            scenario.chaos.startService('webhook', {
              env: options.env?.webhook ?? {},
              ...(replicas > 1 ? { instance: `r${i}`, register: false } : {}),
            }),
          ),
        ),
        Promise.all(
          services.map((name) => scenario.chaos.startService(name, { env: options.env?.[name] ?? {} })),
        ),
      ]);
      scenario.webhooks = webhooks;
      if (replicas > 1) {
        scenario.proxy = await roundRobinProxy(webhooks.map((w) => Number(new URL(w.url).port)));
        await registerWebhook(scenario.chaos.host, scenario.proxy.url, webhooks[0]!.caPem!);
      }
      for (const service of [webhooks[0]!, ...started]) scenario.running.set(service.name, service);
      scenario.tenant = await Tenant.create(scenario.chaos, label, options.quotas);
      scenario.recorder = new StatusRecorder(scenario.tenant);
      await scenario.recorder.start();
    };
    beforeAll(() => (starting = start()), 300_000);
    afterAll(async () => {
      // A start that outlived beforeAll's timeout goes on: wait for it, so that what it started stops.
      await starting?.catch(() => {});
      scenario.recorder?.stop();
      await scenario.proxy?.close();
      await scenario.chaos?.stop();
    }, 300_000);
    return scenario;
  }

  service(name: ServiceName): RunningService {
    return this.running.get(name)!;
  }

  /** Starts a killed service again (ChaosFederation.restart); service(name) is then the new one. */
  async restart(name: ServiceName): Promise<RunningService> {
    const restarted = await this.chaos.restart(this.service(name));
    this.running.set(name, restarted);
    if (name === 'webhook') this.webhooks[0] = restarted;
    return restarted;
  }

  /** Starts a stopped webhook replica again, on its port, with `envChanges`; webhooks[i] is then the new one. */
  async restartWebhook(i: number, envChanges: NodeJS.ProcessEnv = {}): Promise<RunningService> {
    const restarted = await this.chaos.restart(this.webhooks[i]!, envChanges);
    this.webhooks[i] = restarted;
    if (i === 0) this.running.set('webhook', restarted);
    return restarted;
  }
}
