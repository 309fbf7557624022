import * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import {
  karmadaWorkload,
  kubeConfigFor,
  sleep,
  startServices,
  type Federation,
  type RunningService,
} from '../../federation/src/index.js';
import { isApiStatus } from '#api';
import { bindingsPath, realisticBinding } from './bodies.js';
import { profiling, type BenchSizes } from './context.js';
import {
  admissionModeEnv,
  createFederatedResourceQuota,
  createNamespaces,
  createQuota,
  inParallel,
  until,
  withdrawWebhook,
  type BenchAdmissionMode,
} from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { ratio, summarizeLatencies, type LatencySummary } from './stats.js';

/** The quota each mode enforces; what the mode's Deployments need is far below it. */
type Mode = 'noQuota' | 'ours' | 'karmadaFrq';
const MODES: readonly Mode[] = ['noQuota', 'ours', 'karmadaFrq'];
const MODE_NAMES: Record<Mode, string> = {
  noQuota: 'no quota',
  ours: 'ours',
  karmadaFrq: "Karmada's FederatedResourceQuota",
};

/** p50/p99 (and more) of the time from apply to every pod existing, per mode, and ours against no quota. */
export interface UserLatencyRun {
  deployments: number;
  noQuota: LatencySummary;
  ours: LatencySummary;
  karmadaFrq: LatencySummary;
  /** p99 with our quota over p99 with none. */
  p99RatioOurs: number;
  /** p99 with Karmada's FederatedResourceQuota over p99 with none. */
  p99RatioKarmadaFrq: number;
}

/** One Deployment at a time (the steady figures), and a burst of many at once. */
export interface UserLatencyFigures extends UserLatencyRun {
  karmadaVersion: string;
  replicasPerDeployment: number;
  burst: UserLatencyRun;
}

const CLUSTERS = ['member1', 'member2'];
/** 1 pod in each member: Divided by equal static weights. */
const REPLICAS = 2;
const HARD = { cpu: '1k', memory: '10Ti', pods: '10k' };
const QUOTA = 'team';
const PROBE_NAMESPACE = 'ul-probe';
const STEADY_TIMEOUT_MS = 120_000;
const BURST_TIMEOUT_MS = 600_000;

/**
 * What users feel: a Deployment + PropagationPolicy applied to the host, timed until every replica's
 * pod exists in the members, on real Karmada at its default client rates. Three modes in turn, each
 * in a namespace of its own: no quota; ours (webhook, aggregator, reconciler, a KarmadaQuota);
 * Karmada's own (its validating webhook with FederatedQuotaEnforcement, a FederatedResourceQuota).
 * Each mode applies Deployments one at a time, then a burst at once.
 */
export async function runUserLatency(
  federation: Federation,
  options: {
    redisUrl: string;
    sizes: BenchSizes;
    admissionMode: BenchAdmissionMode;
    log: (message: string) => void;
    profileDir?: string;
  },
): Promise<UserLatencyFigures> {
  const { sizes, log } = options;
  const host = federation.info.host;
  const karmada = federation.karmadaControlPlane;
  await createNamespaces(host, [PROBE_NAMESPACE]);
  // Quotas that refuse any binding in the probe namespace: a dry-run there shows whether a quota check runs.
  await createQuota(host, PROBE_NAMESPACE, QUOTA, { cpu: '0', pods: '0' });
  await createFederatedResourceQuota(host, PROBE_NAMESPACE, QUOTA, { cpu: '0' });
  const probe = HttpsJsonClient.forApiServer(host, 1);
  const quotaChecked = async (expected: boolean) => {
    const body = JSON.stringify(realisticBinding(PROBE_NAMESPACE, 'probe', 1));
    const res = await probe.post(`${bindingsPath(PROBE_NAMESPACE)}?dryRun=All`, body);
    return expected ? res.status === 403 : res.status === 201;
  };

  const steady: Partial<Record<Mode, number[]>> = {};
  const burst: Partial<Record<Mode, number[]>> = {};
  try {
    for (const mode of MODES) {
      let services: RunningService[] = [];
      if (mode === 'ours') {
        log(
          `user-latency (ours): starting the webhook (${options.admissionMode}), aggregator and reconciler`,
        );
        services = await startServices(federation, {
          redisUrl: options.redisUrl,
          services: ['webhook', 'aggregator', 'reconciler'],
          env: {
            ...(await admissionModeEnv(host, options.admissionMode, 'user-latency-admission-lease')),
            LOG_LEVEL: 'warn',
          },
          ...profiling(options.profileDir, 'user-latency'),
        });
      }
      if (mode === 'karmadaFrq') await karmada.registerQuotaWebhook();
      await until(`the ${MODE_NAMES[mode]} check to be in force`, () => quotaChecked(mode !== 'noQuota'));
      try {
        const namespace = `ul-${mode.toLowerCase()}`;
        await prepareNamespace(federation, namespace, mode);
        const pods = await PodWatch.start(federation, namespace);
        try {
          log(
            `user-latency (${MODE_NAMES[mode]}): ${sizes.userLatencyDeployments} Deployments, one at a time`,
          );
          steady[mode] = [];
          for (let i = 0; i < sizes.userLatencyDeployments; i++)
            steady[mode].push(await applyAndTime(federation, pods, namespace, `one-${i}`, STEADY_TIMEOUT_MS));
          log(`user-latency (${MODE_NAMES[mode]}): ${sizes.userLatencyBurst} Deployments at once`);
          const times: number[] = [];
          await inParallel(range(sizes.userLatencyBurst), sizes.userLatencyBurst, async (i) => {
            times.push(await applyAndTime(federation, pods, namespace, `burst-${i}`, BURST_TIMEOUT_MS));
          });
          burst[mode] = times;
        } finally {
          pods.stop();
        }
        await removeNamespace(federation, namespace, log);
      } finally {
        // Withdrawn before our services stop: the registration fails closed.
        if (mode === 'ours') await withdrawWebhook(host, quotaChecked);
        if (mode === 'karmadaFrq') {
          await karmada.withdrawQuotaWebhook();
          await until(`Karmada's quota check to be withdrawn`, () => quotaChecked(false));
        }
        await Promise.all(services.map((s) => s.process.stop()));
      }
    }
  } finally {
    probe.close();
  }
  const run = (times: Partial<Record<Mode, number[]>>, deployments: number): UserLatencyRun => {
    const [noQuota, ours, karmadaFrq] = MODES.map((m) => summarizeLatencies(times[m] ?? []));
    return {
      deployments,
      noQuota: noQuota!,
      ours: ours!,
      karmadaFrq: karmadaFrq!,
      p99RatioOurs: ratio(ours!.p99Ms, noQuota!.p99Ms),
      p99RatioKarmadaFrq: ratio(karmadaFrq!.p99Ms, noQuota!.p99Ms),
    };
  };
  const figures: UserLatencyFigures = {
    ...run(steady, sizes.userLatencyDeployments),
    karmadaVersion: karmada.version,
    replicasPerDeployment: REPLICAS,
    burst: run(burst, sizes.userLatencyBurst),
  };
  log(
    `user-latency: p99 one at a time ${MODES.map((m) => `${MODE_NAMES[m]} ${figures[m].p99Ms} ms`).join(', ')}; ` +
      `burst ${MODES.map((m) => `${MODE_NAMES[m]} ${figures.burst[m].p99Ms} ms`).join(', ')}`,
  );
  return figures;
}

/** A namespace on the host, copied to the members by Karmada, with the mode's quota in it. */
async function prepareNamespace(federation: Federation, namespace: string, mode: Mode): Promise<void> {
  const host = federation.info.host;
  await createNamespaces(host, [namespace]);
  if (mode === 'ours') await createQuota(host, namespace, QUOTA, HARD);
  if (mode === 'karmadaFrq') await createFederatedResourceQuota(host, namespace, QUOTA, HARD);
  // Users deploy into namespaces that exist: their propagation is not part of the figure.
  for (const member of federation.info.members) {
    const core = kubeConfigFor(member).makeApiClient(k8s.CoreV1Api);
    await until(`Karmada to create namespace ${namespace} in ${member.name}`, () =>
      core.readNamespace({ name: namespace }).then(
        () => true,
        () => false,
      ),
    );
  }
}

/**
 * Deletes the namespace on the host and waits (up to 5 minutes) until it is gone from the host and
 * every member: the clean-up of a mode's 100-odd Deployments (Karmada's Works, the members' garbage
 * collection) must not load the next mode's figures, so its pods being gone is not enough.
 */
async function removeNamespace(federation: Federation, namespace: string, log: (m: string) => void) {
  await kubeConfigFor(federation.info.host).makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: namespace });
  const deadline = Date.now() + 300_000;
  for (const cluster of [federation.info.host, ...federation.info.members]) {
    const core = kubeConfigFor(cluster).makeApiClient(k8s.CoreV1Api);
    const gone = () =>
      core.readNamespace({ name: namespace }).then(
        () => false,
        (err: unknown) => isApiStatus(err, 404),
      );
    while (!(await gone())) {
      if (Date.now() > deadline) {
        log(`user-latency: namespace ${namespace} still in ${cluster.name} after 5 minutes; going on`);
        return;
      }
      await sleep(500);
    }
  }
}

/** Applies a Deployment + PropagationPolicy as a user does; resolves with ms until all its pods exist. */
async function applyAndTime(
  federation: Federation,
  pods: PodWatch,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<number> {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfigFor(federation.info.host));
  const { policy, workload } = karmadaWorkload({
    name,
    namespace,
    replicas: REPLICAS,
    cpu: '100m',
    clusters: CLUSTERS,
  });
  const started = performance.now();
  const running = pods.whenCount(name, REPLICAS, timeoutMs);
  await objects.create(policy);
  await objects.create(workload);
  return (await running) - started;
}

/** Watches a namespace's pods in every member; tells when a Deployment's pods all exist. */
class PodWatch {
  /** Deployment (its pods' `app` label) -> member/pod names seen and not deleted. */
  private readonly pods = new Map<string, Set<string>>();
  private readonly waiters = new Map<
    string,
    { count: number; resolve: (at: number) => void; reject: (err: Error) => void }
  >();
  /** Why a member's watch ended, if it did: nothing more can be timed. */
  private broken?: string;

  private constructor(private readonly aborts: AbortController[]) {}

  static async start(federation: Federation, namespace: string): Promise<PodWatch> {
    const aborts: AbortController[] = [];
    const watch = new PodWatch(aborts);
    for (const member of federation.info.members) {
      const path = `/api/v1/namespaces/${namespace}/pods`;
      aborts.push(
        await new k8s.Watch(kubeConfigFor(member)).watch(
          path,
          {},
          (type: string, pod: k8s.V1Pod) => watch.observe(member.name, type, pod),
          (err: unknown) => {
            if (!(err instanceof Error && err.name === 'AbortError'))
              watch.fail(`the watch of pods in ${member.name} ended (${String(err ?? 'closed')})`);
          },
        ),
      );
    }
    return watch;
  }

  /** Resolves with performance.now() once `count` pods of `app` exist; rejects after `timeoutMs`. */
  whenCount(app: string, count: number, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.broken) return reject(new Error(this.broken));
      const timer = setTimeout(() => {
        this.waiters.delete(app);
        const seen = this.pods.get(app)?.size ?? 0;
        reject(new Error(`${app}: ${seen} of ${count} pods in the members after ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiters.set(app, {
        count,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this.check(app);
    });
  }

  stop(): void {
    for (const abort of this.aborts) abort.abort();
  }

  private observe(cluster: string, type: string, pod: k8s.V1Pod): void {
    const app = pod.metadata?.labels?.['app'];
    if (!app) return;
    const pods = this.pods.get(app) ?? new Set<string>();
    this.pods.set(app, pods);
    const key = `${cluster}/${pod.metadata!.name!}`;
    if (type === 'DELETED') pods.delete(key);
    else pods.add(key);
    this.check(app);
  }

  private check(app: string): void {
    const waiter = this.waiters.get(app);
    if (waiter && (this.pods.get(app)?.size ?? 0) >= waiter.count) {
      this.waiters.delete(app);
      waiter.resolve(performance.now());
    }
  }

  private fail(reason: string): void {
    this.broken ??= reason;
    for (const waiter of this.waiters.values()) waiter.reject(new Error(reason));
    this.waiters.clear();
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
