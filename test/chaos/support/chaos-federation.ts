import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Federation,
  kubeConfigFor,
  probe,
  startServices,
  waitFor,
  type ApiEndpoint,
  type RedisServer,
  type RunningService,
  type ServiceName,
} from '../../../tools/federation/src/index.js';

/**
 * Timings short enough for a test to see expiry, staleness and re-watches within seconds. The
 * periodic resync keeps its production default (300 s): recovery must not depend on it.
 */
export const CHAOS_SERVICE_ENV = {
  RESERVATION_TTL_SECONDS: '5',
  ADMISSION_LANDING_WINDOW_SECONDS: '2',
  EXPIRY_SWEEP_SECONDS: '1',
  UNREACHABLE_AFTER_MS: '3000',
  MAX_RETRY_BACKOFF_MS: '1000',
  LOG_LEVEL: 'log',
};

/**
 * One chaos scenario's world: a federation of its own, a private redis-server that may be killed
 * or flushed (never the shared one), and the product services on them.
 */
export class ChaosFederation {
  private constructor(
    readonly federation: Federation,
    readonly redis: RedisServer,
    readonly stateDir: string,
  ) {}

  static async start(label: string, options: { members: number }): Promise<ChaosFederation> {
    const stateDir = mkdtempSync(join(tmpdir(), `karmada-quota-chaos-${label}-`));
    const federation = await Federation.start({ stateDir, members: options.members });
    try {
      return new ChaosFederation(federation, await federation.startRedis(), stateDir);
    } catch (err) {
      await federation.stop();
      throw err;
    }
  }

  /** Starts the services (each waits for /readyz; the webhook is registered on the host). */
  async startServices(
    services: readonly ServiceName[],
    options: { instance?: string; env?: NodeJS.ProcessEnv; register?: boolean } = {},
  ): Promise<RunningService[]> {
    return startServices(this.federation, {
      redisUrl: this.redis.url(),
      services,
      instance: options.instance,
      register: options.register,
      env: { ...CHAOS_SERVICE_ENV, ...options.env },
    });
  }

  async startService(
    service: ServiceName,
    options: { instance?: string; env?: NodeJS.ProcessEnv } = {},
  ): Promise<RunningService> {
    const [running] = await this.startServices([service], options);
    return running!;
  }

  /**
   * Starts a stopped or killed service again exactly as it was (same port and certificate, so the
   * webhook registration stays valid, like a pod restarted behind its Service), with `envChanges`
   * (a new version of its pod), and waits until ready.
   */
  async restart(service: RunningService, envChanges: NodeJS.ProcessEnv = {}): Promise<RunningService> {
    const proc = this.federation.relaunch(service.process, envChanges);
    await waitFor(
      `${service.name} to become ready again at ${service.url}/readyz`,
      async () => {
        if (!proc.running)
          throw new Error(`${service.name} exited during start-up; its log:\n${proc.logTail()}`);
        return (await probe(`${service.url}/readyz`)) === 200;
      },
      { timeoutMs: 60_000, describe: () => proc.logTail() },
    );
    return { ...service, process: proc };
  }

  get host(): ApiEndpoint {
    return this.federation.info.host;
  }

  get members(): ApiEndpoint[] {
    return this.federation.info.members;
  }

  member(name: string): ApiEndpoint {
    const found = this.members.find((m) => m.name === name);
    if (!found) throw new Error(`no member cluster named ${name}`);
    return found;
  }

  hostApi<T extends k8s.ApiType>(api: k8s.ApiConstructor<T>): T {
    return kubeConfigFor(this.host).makeApiClient(api);
  }

  memberApi<T extends k8s.ApiType>(name: string, api: k8s.ApiConstructor<T>): T {
    return kubeConfigFor(this.member(name)).makeApiClient(api);
  }

  /** Stops every process; KEEP_TEST_STATE=1 keeps logs and data for a post-mortem. */
  async stop(): Promise<void> {
    await this.federation.stop();
    if (process.env.KEEP_TEST_STATE === '1') process.stderr.write(`chaos state kept in ${this.stateDir}\n`);
    else rmSync(this.stateDir, { recursive: true, force: true });
  }
}
