import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { Quantity } from '#quantity';
import { computeQuotaStatus } from '#quota';
import { RECONCILE_JOB_NAME, reconcileJobOptions } from '#usage';
import { kubeConfigFor, sleep } from '../../federation/src/index.js';
import { CorrectnessError, type BenchContext } from './context.js';
import { admittedNamespace, RESYNC_LABEL, TEAM_QUOTA, type AdmittedBindings } from './end-to-end.js';
import { metricValue } from './stats.js';
import { openReconcileQueue, waitForIdleQueue } from './reconcile-queue.js';

export interface ResyncFigures {
  quotas: number;
  bindings: number;
  /** The reconciler's full resync: a job per namespace queued until the queue is drained (what an operator waits). */
  seconds: number;
  /** Of which pure computation: computeQuotaStatus over the listed quotas and bindings, in this process. */
  computeSeconds: number;
  /** Status writes the resync made (0 when the statuses were already current). */
  statusWrites: number;
}

const SETTLE_TIMEOUT_MS = 180_000;
const RECONCILE_OK = 'karmada_quota_reconcile_duration_seconds_count';

/**
 * A full resync of the namespaces the end-to-end scenario filled through the webhook: once every
 * reservation is settled (the reconciler has seen each binding persisted), the jobs the periodic
 * resync would queue are queued at once and timed until the reconciler has drained them. Then the
 * pure part is timed alone, and must agree with what the reconciler wrote.
 */
export async function runResync(ctx: BenchContext, admitted: AdmittedBindings): Promise<ResyncFigures> {
  const { sizes } = ctx;
  const host = ctx.federation.info.host;
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  const namespaces = Array.from({ length: sizes.resyncQuotas }, (_, i) => admittedNamespace(i));
  const listQuotas = async () =>
    (
      (await objects.listClusterCustomObject({
        ...KARMADA_QUOTA,
        labelSelector: `${RESYNC_LABEL}=true`,
      })) as { items: KarmadaQuota[] }
    ).items;

  ctx.log(`resync: waiting for the reconciler to settle ${namespaces.length} quotas' reservations`);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const unsettled = (await listQuotas()).flatMap((q) => settlementProblems(q, admitted));
    if (unsettled.length === 0) break;
    if (Date.now() > deadline) {
      throw new CorrectnessError(
        `resync: after ${SETTLE_TIMEOUT_MS / 1000} s the admitted bindings' reservations are still not what ` +
          `they were admitted for: ${unsettled.slice(0, 5).join('; ')}`,
      );
    }
    await sleep(1_000);
  }

  const reconciler = ctx.services.find((s) => s.name === 'reconciler')!;
  const { queue, close } = openReconcileQueue(ctx.redisUrl);
  try {
    await waitForIdleQueue(queue, 60_000, ctx.log);
    const okBefore = metricValue(await text(`${reconciler.url}/metrics`), RECONCILE_OK);
    const failedBefore = (await queue.getJobCounts('failed')).failed ?? 0;
    const versionsBefore = new Map(
      (await listQuotas()).map((q) => [q.metadata!.namespace!, q.metadata!.resourceVersion]),
    );
    ctx.log(`resync: ${namespaces.length} reconcile jobs queued (as the periodic resync queues them)`);
    const started = performance.now();
    await queue.addBulk(
      namespaces.map((namespace) => ({
        name: RECONCILE_JOB_NAME,
        data: { namespace, reason: 'periodic resync' },
        opts: reconcileJobOptions(namespace),
      })),
    );
    await waitForIdleQueue(queue, 120_000, ctx.log);
    const seconds = (performance.now() - started) / 1000;
    const failed = ((await queue.getJobCounts('failed')).failed ?? 0) - failedBefore;
    const reconciled = metricValue(await text(`${reconciler.url}/metrics`), RECONCILE_OK) - okBefore;
    if (failed > 0 || reconciled < namespaces.length) {
      throw new CorrectnessError(
        `resync: ${reconciled} of ${namespaces.length} namespaces reconciled, ${failed} jobs failed ` +
          `(see the reconciler log ${reconciler.process.logFile})`,
      );
    }
    const quotas = await listQuotas();
    const statusWrites = quotas.filter(
      (q) => versionsBefore.get(q.metadata!.namespace!) !== q.metadata!.resourceVersion,
    ).length;

    ctx.log('resync: timing the pure recompute over the same objects');
    const bindings = new Map<string, ResourceBinding[]>();
    for (const namespace of namespaces) {
      const list = (await objects.listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace })) as {
        items: ResourceBinding[];
      };
      bindings.set(namespace, list.items);
    }
    const now = new Date();
    const computeStarted = performance.now();
    const results = quotas.map((quota) =>
      computeQuotaStatus({
        quota,
        bindings: bindings.get(quota.metadata!.namespace!) ?? [],
        clusters: [],
        now,
      }),
    );
    const computeSeconds = (performance.now() - computeStarted) / 1000;
    const disagreeing = results
      .map((r, i) => (r.changed || r.errors.length > 0 ? quotas[i]!.metadata!.namespace! : undefined))
      .filter((n) => n !== undefined);
    if (disagreeing.length > 0) {
      throw new CorrectnessError(
        `resync: the status the reconciler wrote differs from computeQuotaStatus over the same objects in ` +
          `${disagreeing.length} namespaces, e.g. ${disagreeing.slice(0, 5).join(', ')}`,
      );
    }
    const total = [...bindings.values()].reduce((sum, list) => sum + list.length, 0);
    ctx.log(`resync: ${total} bindings across ${quotas.length} quotas in ${seconds.toFixed(2)} s`);
    return {
      quotas: quotas.length,
      bindings: total,
      seconds: Math.round(seconds * 1000) / 1000,
      computeSeconds: Math.round(computeSeconds * 1000) / 1000,
      statusWrites,
    };
  } finally {
    await close();
  }
}

/**
 * Why a quota does not (yet) hold exactly the admitted bindings' charges, settled: no claim left in
 * flight (each retires once the reconciler sees its binding stored; a stored binding is its own
 * record), and reserved is their whole charge (nothing runs for them in the members).
 */
function settlementProblems(quota: KarmadaQuota, admitted: AdmittedBindings): string[] {
  const namespace = quota.metadata!.namespace!;
  const replicas = admitted.replicas.get(namespace) ?? [];
  const claims = quota.status?.reservations ?? [];
  const problems: string[] = [];
  if (quota.metadata?.name !== TEAM_QUOTA) return problems;
  if (claims.length > 0) problems.push(`${namespace}: ${claims.length} claims still in flight`);
  const expectedPods = replicas.reduce((sum, r) => sum + r, 0);
  const reservedPods = Quantity.parse(String(quota.status?.reserved?.pods ?? '0'));
  if (reservedPods.cmp(Quantity.fromInt(BigInt(expectedPods))) !== 0)
    problems.push(`${namespace}: reserved pods ${reservedPods.toString()}, admitted ${expectedPods}`);
  return problems;
}

async function text(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}
