import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { kubeConfigFor, sleep, type ApiEndpoint } from '../../federation/src/index.js';
import { quotasPath } from './bodies.js';
import { CorrectnessError, type BenchContext } from './context.js';
import { waveDelays, type Observation, type Wave } from './convergence-delays.js';
import { RESYNC_LABEL } from './end-to-end.js';
import { createNamespaces, createQuota, inParallel } from './host.js';
import { openReconcileQueue, waitForIdleQueue } from './reconcile-queue.js';
import { HttpsJsonClient } from './https-client.js';
import { summarizeLatencies } from './stats.js';

export interface ConvergenceFigures {
  pods: number;
  members: number;
  waves: number;
  samples: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

const NAMESPACE = 'converge';
const QUOTA = 'team';
/** Writes in flight per member. */
const CONCURRENCY = 8;
const REFLECT_TIMEOUT_MS = 60_000;

/** Time for the reconciler's expiry sweep to queue and reconcile what has expired. */
const SWEEP_MARGIN_MS = 20_000;

/**
 * Waits until no quota end-to-end drove lists a claim (the reconciler retired them as their bindings
 * landed), or until the last one listed has expired and the sweep has had time to drop it (the
 * scenarios before end-to-end had their quotas deleted).
 */
async function untilEarlierClaimsGone(ctx: BenchContext, host: ApiEndpoint): Promise<void> {
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  const claims = async () =>
    (
      (await objects.listClusterCustomObject({
        ...KARMADA_QUOTA,
        labelSelector: `${RESYNC_LABEL}=true`,
      })) as {
        items: KarmadaQuota[];
      }
    ).items.flatMap((q) => q.status?.reservations ?? []);
  const listed = await claims();
  if (listed.length === 0) return;
  const lastExpiry = Math.max(0, ...listed.map((r) => Date.parse(r.expirationTime ?? '') || 0));
  const deadline = lastExpiry + SWEEP_MARGIN_MS;
  ctx.log(
    `convergence: waiting for earlier scenarios' ${listed.length} claims to be retired, or expired and ` +
      `swept (at most ${Math.max(0, Math.ceil((deadline - Date.now()) / 1000))} s)`,
  );
  const started = Date.now();
  while (Date.now() < deadline && (await claims()).length > 0) await sleep(1_000);
  ctx.log(`convergence: waited ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Pods created and deleted directly in the members (bare pods: each is its own workload and counts
 * in the namespace's unscoped quota) while the aggregator and reconciler run; a watch on the host
 * quota records when each member's `status.clusters[].used.pods` changes. Each member first fills
 * to its share of the pods, then churns in waves (delete some, create as many). A wave's writes run
 * concurrently; waves are awaited until reflected, so counts move one way within a wave and each
 * write's delay can be read off them (convergence-delays.ts).
 */
export async function runConvergence(ctx: BenchContext): Promise<ConvergenceFigures> {
  const { federation, sizes } = ctx;
  const { host, members } = federation.info;
  await createNamespaces(host, [NAMESPACE]);
  for (const member of members) await createNamespaces(member, [NAMESPACE]);
  await Promise.all(members.map(defaultServiceAccount));
  await createQuota(host, NAMESPACE, QUOTA, { pods: '100k', cpu: '10k' });

  // Pod churn alone: not behind the reconciles an earlier scenario (end-to-end) left, queued or due:
  // a claim still listed expires up to RESERVATION_TTL_SECONDS (120 s) after it ends, and the expiry
  // sweep (every 15 s) queues each namespace holding an expired one; a retired claim queues nothing.
  await untilEarlierClaimsGone(ctx, host);
  const reconcileQueue = openReconcileQueue(ctx.redisUrl);
  try {
    ctx.log('convergence: waiting until the reconciler has no job queued');
    await waitForIdleQueue(reconcileQueue.queue, 300_000, ctx.log);
  } finally {
    await reconcileQueue.close();
  }

  const observations = new Map<string, Observation[]>(members.map((m) => [m.name, []]));
  const latest = new Map<string, number>();
  let watchError: unknown;
  const watch = await new k8s.Watch(kubeConfigFor(host)).watch(
    quotasPath(NAMESPACE),
    { fieldSelector: `metadata.name=${QUOTA}` },
    (_phase, quota: KarmadaQuota) => {
      const at = performance.now();
      for (const cluster of quota.status?.clusters ?? []) {
        const count = Number(Quantity.parse(String(cluster.used?.pods ?? '0')).value());
        if (latest.get(cluster.name) === count) continue;
        latest.set(cluster.name, count);
        observations.get(cluster.name)?.push({ at, count });
      }
    },
    (err: unknown) => {
      if (err) watchError = err;
    },
  );

  const delays: number[] = [];
  const perMember = Math.floor(sizes.convergencePods / members.length);
  try {
    ctx.log(
      `convergence: ${perMember} pods per member, then ${sizes.convergenceWaves} waves of ` +
        `${sizes.convergenceWavePods} deletes and creates, ${CONCURRENCY} writes at once per member`,
    );
    await Promise.all(
      members.map(async (member) => {
        const churn = new MemberChurn(member, observations.get(member.name)!, () => watchError);
        try {
          delays.push(...(await churn.wave(1, perMember)));
          for (let w = 0; w < sizes.convergenceWaves; w++) {
            delays.push(...(await churn.wave(-1, sizes.convergenceWavePods)));
            delays.push(...(await churn.wave(1, sizes.convergenceWavePods)));
          }
          await churn.checkFinalCount();
        } finally {
          churn.close();
        }
      }),
    );
  } finally {
    watch.abort();
  }
  const summary = summarizeLatencies(delays);
  ctx.log(`convergence: ${summary.samples} changes, p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms`);
  return {
    pods: perMember * members.length,
    members: members.length,
    waves: sizes.convergenceWaves,
    samples: summary.samples,
    p50Ms: summary.p50Ms,
    p95Ms: summary.p95Ms,
    p99Ms: summary.p99Ms,
    maxMs: summary.maxMs,
  };
}

/** Pods in a namespace need its default ServiceAccount, which the member's controller creates. */
async function defaultServiceAccount(member: ApiEndpoint): Promise<void> {
  const core = kubeConfigFor(member).makeApiClient(k8s.CoreV1Api);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await core.readNamespacedServiceAccount({ namespace: NAMESPACE, name: 'default' });
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`${member.name}: no default ServiceAccount in ${NAMESPACE}`, { cause: err });
      await sleep(200);
    }
  }
}

/** One member's pods and what the host status has shown of them. */
class MemberChurn {
  private readonly client: HttpsJsonClient;
  private readonly pods: string[] = [];
  private created = 0;
  private expected = 0;

  constructor(
    private readonly member: ApiEndpoint,
    private readonly observations: Observation[],
    private readonly watchError: () => unknown,
  ) {
    this.client = HttpsJsonClient.forApiServer(member, CONCURRENCY);
  }

  private get podsPath(): string {
    return `/api/v1/namespaces/${NAMESPACE}/pods`;
  }

  /** Creates (+1) or deletes (-1) `count` pods, waits until the status shows it, returns the delays. */
  async wave(direction: 1 | -1, count: number): Promise<number[]> {
    const wave: Wave = { since: performance.now(), baseline: this.expected, direction, completedAt: [] };
    const targets =
      direction > 0
        ? Array.from({ length: count }, () => `churn-${this.member.name}-${this.created++}`)
        : this.pods.splice(0, count);
    await inParallel(targets, CONCURRENCY, async (name) => {
      const res =
        direction > 0
          ? await this.client.post(this.podsPath, JSON.stringify(pod(name)))
          : await this.client.delete(`${this.podsPath}/${name}?gracePeriodSeconds=0`);
      if (res.status !== (direction > 0 ? 201 : 200))
        throw new Error(
          `${this.member.name}: ${direction > 0 ? 'create' : 'delete'} of pod ${name} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      wave.completedAt.push(performance.now());
      if (direction > 0) this.pods.push(name);
    });
    this.expected += direction * count;
    await this.reflected();
    const { delaysMs, unobserved } = waveDelays(wave, this.observations);
    if (unobserved > 0)
      throw new CorrectnessError(
        `convergence: ${unobserved} changes in ${this.member.name} never showed in the status`,
      );
    return delaysMs;
  }

  /** Waits until the host status shows this member's expected pod count. */
  private async reflected(): Promise<void> {
    const deadline = Date.now() + REFLECT_TIMEOUT_MS;
    for (;;) {
      const last = this.observations.at(-1)?.count;
      if (last === this.expected) return;
      const failed = this.watchError();
      if (failed || Date.now() > deadline) {
        throw new CorrectnessError(
          `convergence: ${this.member.name} holds ${this.expected} pods but after ${REFLECT_TIMEOUT_MS / 1000} s the host ` +
            `status shows ${last ?? 'none'}${failed ? ` (the watch on the quota failed: ${String(failed)})` : ''}`,
        );
      }
      await sleep(20);
    }
  }

  /** The member's own count, against the last the host showed. */
  async checkFinalCount(): Promise<void> {
    const res = await this.client.get(this.podsPath);
    const items = (res.body as { items?: unknown[] })?.items;
    if (res.status !== 200 || !Array.isArray(items))
      throw new Error(`${this.member.name}: listing pods answered ${res.status}`);
    const shown = this.observations.at(-1)?.count;
    if (items.length !== this.expected || shown !== items.length) {
      throw new CorrectnessError(
        `convergence: ${this.member.name} has ${items.length} pods, the bench made ${this.expected}, the host status shows ${shown}`,
      );
    }
  }

  close(): void {
    this.client.close();
  }
}

/** A bare pod (no controller: its own workload), Pending for ever since members have no nodes. */
function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'churn' } },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
    },
  };
}
