import * as k8s from '@kubernetes/client-node';
import { Quantity } from '#quantity';
import {
  describeError,
  RESOURCE_BINDING,
  type KarmadaQuota,
  type ResourceBinding,
  type ResourceList,
} from '#api';
import {
  kubeConfigFor,
  sleep,
  startServices,
  type ApiEndpoint,
  type RunningService,
} from '../../federation/src/index.js';
import {
  awaitAdmissionOwner,
  byNamespace,
  hardForPods,
  LoadResult,
  meanBatchSize,
  PER_REPLICA,
  postReview,
  runClients,
  withMetricDeltas,
  type LoadFigures,
  type MetricDelta,
} from './admission-load.js';
import { admissionReview, realisticBinding, scheduledClusters } from './bodies.js';
import { CorrectnessError, profiling, type BenchContext } from './context.js';
import { auditHotQuota, auditPassed, claimKey, mergeAudits, type HotQuotaAudit } from './hot-quota-audit.js';
import {
  admissionModeEnv,
  createClusterQuota,
  createFederatedResourceQuota,
  createNamespaces,
  createQuota,
  deleteClusterQuota,
  FEDERATED_RESOURCE_QUOTA,
  inParallel,
  readClusterQuota,
  readQuota,
} from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { openReconcileQueue, waitForIdleQueue } from './reconcile-queue.js';
import { histogramMeanMs, ratio } from './stats.js';

export const ADMISSION_MODES = ['batched', 'cas-per-admission', 'owner'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];

/** Bindings each client drives in turn (each only by its client: their outcomes are known). */
const BINDINGS_PER_CLIENT = 2;
/** Replica counts a client scales its bindings between. */
const MAX_REPLICAS = 8;
/** hard.pods per binding: below the average wanted (4.5), so the quota is full and denials happen. */
const PODS_PER_BINDING = 3;
const QUOTA = 'hot';
const RESERVATION_TTL_SECONDS = 10;
/** Offending bindings a failure lists; the figures keep them all. */
const OFFENDERS_SHOWN = 20;

export interface HotQuotaModeFigures extends LoadFigures {
  /** Quota keys where used + reserved > hard after the run, recounted from the API server. */
  overAdmitted: number;
  /** Admitted charges lost or counted twice, reservations nobody was admitted for, a wrong sum. */
  accountingErrors: number;
  /** Admissions per status write (the webhook's batch-size histogram). */
  meanBatchSize: number;
  statusConflicts: number;
  /** Refused as they arrived, without waiting for the batch in flight (karmada_quota_admission_refused_on_arrival_total). */
  refusedOnArrival: number;
  /** Mean time from the webhook receiving a review to its answer (its own histogram), ms. */
  webhookMeanMs: number;
  audit: HotQuotaAudit;
  /** When the audit fails: each binding that holds what it should not, or may be what over-admits. */
  offendingBindings: OffendingBinding[];
}

/** What an audit failure shows of a binding, to tell which admission or settlement went wrong. */
export interface OffendingBinding {
  name: string;
  /** Its entry in status.reservations, as stored; none when it holds nothing. */
  reservation?: {
    reserved: ResourceList;
    charge?: ResourceList;
    expirationTime?: string;
    uid?: string;
  };
  /** spec.replicas of the binding as stored; none for a binding no client drove. */
  storedReplicas?: number;
  /** The replica counts its client may have had admitted last (BindingRecord). */
  possibleReplicas: number[];
}

/** Karmada's own enforcement (FederatedResourceQuota) on the same load. */
export interface KarmadaFrqFigures extends LoadFigures {
  karmadaVersion: string;
  /** Keys where the stored bindings' charges sum to more than the limit (recounted, not its status). */
  overAdmitted: number;
  overAdmittedKeys: string[];
  /** Keys where the FederatedResourceQuota's status.overallUsed is not the recount of the stored bindings. */
  statusDrift: string[];
}

/** One system in the side-by-side comparison, as `npm run bench --json` reports it. */
export interface SideBySideFigures {
  admissionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests answered neither allowed nor denied for quota: the writer must retry them. */
  failedClosed: number;
  overAdmitted: number;
}

export interface HotQuotaFigures {
  clients: number;
  seconds: number;
  bindings: number;
  hard: Record<string, string>;
  batched: HotQuotaModeFigures;
  casPerAdmission: HotQuotaModeFigures;
  /**
   * The same load with ADMISSION_MODE=owner (experimental, docs/concepts/admission-owner.md): one
   * process decides from memory, nothing written per admission. Absent from runs before it was measured.
   */
  owner?: HotQuotaModeFigures;
  /**
   * The same load (batched) on one ClusterKarmadaQuota over two namespaces, half the clients in
   * each, with no KarmadaQuota: their batches meet on one object (docs/concepts/cluster-quotas.md).
   * Absent from reports of runs before it was measured.
   */
  clusterQuota?: HotQuotaModeFigures;
  /** batched admissions/s over cas-per-admission admissions/s. */
  speedup: number;
  karmadaFrq: KarmadaFrqFigures;
  /** Ours (batched) and Karmada's FederatedResourceQuota, same load, same run. */
  sideBySide: { ours: SideBySideFigures; karmadaFrq: SideBySideFigures };
}

const sideBySideOf = (f: LoadFigures & { overAdmitted: number }): SideBySideFigures => ({
  admissionsPerSec: f.admissionsPerSec,
  p50Ms: f.p50Ms,
  p99Ms: f.p99Ms,
  failedClosed: f.errors,
  overAdmitted: f.overAdmitted,
});

/** Where each webhook validates ResourceBindings. */
const OUR_PATH = '/validate/resourcebindings';
const KARMADA_FRQ_PATH = '/validate-resourcebinding';
const KARMADA_FRQ_NAMESPACE = 'hot-karmada-frq';

const namespaceOf = (mode: AdmissionMode) => `hot-${mode}`;

/**
 * 64 clients send AdmissionReviews (realistic ResourceBinding UPDATEs scaling between 1 and 8
 * replicas) for one quota straight to the webhook, which writes the reservations to the host; once
 * with the batching webhook and once with the one-CAS-write-per-admission mode. Each client then
 * does what the API server does with an admitted change: it stores the binding (unmeasured; no
 * webhook is registered yet, so nothing else admits it), and a reconciler releases what stored
 * scale-downs give back (admission never releases, docs/concepts/accounting.md), writing the same quota concurrently.
 * Before the timed run every binding is stored at 0 replicas and scaled once, one at a time (which
 * also warms the webhook up): the quota holds fewer pods than the clients want, so it is full from
 * the start, scale-ups compete for what scale-downs free and denials really happen. Afterwards, once
 * the reconciler is idle, the quota is read back from the API server and audited (hot-quota-audit.ts).
 */
export async function runHotQuota(ctx: BenchContext): Promise<HotQuotaFigures> {
  const { federation, sizes } = ctx;
  const host = federation.info.host;
  const bindings = sizes.hotQuotaClients * BINDINGS_PER_CLIENT;
  // Before any webhook is registered: quota objects are admitted by the webhook too.
  const hard = await createContendedQuotas(
    host,
    ADMISSION_MODES.flatMap((mode) => Array<string>(sizes.hotQuotaClients).fill(namespaceOf(mode))),
  );
  const spanningNamespaces = Array.from(
    { length: sizes.hotQuotaClients },
    (_, c) => SPANNING_NAMESPACES[c % SPANNING_NAMESPACES.length]!,
  );
  await createNamespaces(host, SPANNING_NAMESPACES, SPANNING_LABELS);
  await createClusterQuota(
    host,
    QUOTA,
    hardForPods(BigInt(sizes.hotQuotaClients * BINDINGS_PER_CLIENT * PODS_PER_BINDING)),
    { matchLabels: SPANNING_LABELS },
    SPANNING_NAMESPACES,
  );

  const figures: Partial<Record<AdmissionMode, HotQuotaModeFigures>> = {};
  for (const mode of ADMISSION_MODES) {
    const label = `hot-quota (${mode})`;
    ctx.log(`${label}: starting a webhook in this mode and a reconciler`);
    const ours = await startContendedServices(ctx, { mode, replicas: 1, instance: `hot-${mode}` });
    try {
      const clientNamespaces = Array<string>(sizes.hotQuotaClients).fill(namespaceOf(mode));
      ctx.log(`${label}: scaling the ${bindings} bindings once, one at a time`);
      const driven = await preparedBindings(host, ours.webhooks, clientNamespaces);
      ctx.log(`${label}: ${sizes.hotQuotaClients} clients for ${sizes.hotQuotaSeconds} s`);
      const run = await measuredLoad(ours.webhooks, driven, sizes.hotQuotaSeconds);
      ctx.log(
        `${label}: ${run.load.summary()}; waiting for the reconciler to settle, then auditing the quota`,
      );
      await ours.reconcilerIdle();
      figures[mode] = await settledFigures(host, run, driven);
    } finally {
      await ours.stop();
    }
  }
  const clusterQuota = await runClusterQuota(ctx, spanningNamespaces);
  const batched = figures.batched!;
  const casPerAdmission = figures['cas-per-admission']!;
  const karmadaFrq = await runKarmadaFrq(ctx, hard.get(namespaceOf('batched'))!);
  const result: HotQuotaFigures = {
    clients: sizes.hotQuotaClients,
    seconds: sizes.hotQuotaSeconds,
    bindings,
    hard: hard.get(namespaceOf('batched'))!,
    batched,
    casPerAdmission,
    owner: figures.owner!,
    clusterQuota,
    speedup: ratio(batched.admissionsPerSec, casPerAdmission.admissionsPerSec),
    karmadaFrq,
    sideBySide: { ours: sideBySideOf(batched), karmadaFrq: sideBySideOf(karmadaFrq) },
  };
  const problems = [
    ...ADMISSION_MODES.flatMap((mode) => contendedProblems(`hot-quota (${mode})`, figures[mode]!)),
    ...contendedProblems(CLUSTER_QUOTA_LABEL, clusterQuota),
  ];
  if (problems.length > 0) throw new CorrectnessError(problems.join('\n'), result);
  return result;
}

/** The namespaces of the ClusterKarmadaQuota run, and the label its selector picks them by. */
const SPANNING_NAMESPACES = ['hot-cluster-quota-a', 'hot-cluster-quota-b'];
const SPANNING_LABELS = { 'karmada-quota-bench': 'hot-cluster-quota' };
const CLUSTER_QUOTA_LABEL = 'hot-quota (one ClusterKarmadaQuota over two namespaces)';

/**
 * The batched run's load on the ClusterKarmadaQuota over SPANNING_NAMESPACES (client c in
 * `clientNamespaces[c]`), audited as the namespace quotas are, each binding named `namespace/name`.
 * The quota is deleted afterwards: it must not limit the scenarios after this one.
 */
async function runClusterQuota(ctx: BenchContext, clientNamespaces: string[]): Promise<HotQuotaModeFigures> {
  const host = ctx.federation.info.host;
  const { hotQuotaClients: clients, hotQuotaSeconds: seconds } = ctx.sizes;
  ctx.log(`${CLUSTER_QUOTA_LABEL}: starting a batched webhook and a reconciler`);
  const ours = await startContendedServices(ctx, {
    mode: 'batched',
    replicas: 1,
    instance: 'hot-cluster-quota',
  });
  try {
    ctx.log(`${CLUSTER_QUOTA_LABEL}: scaling the bindings once, one at a time`);
    const driven = await preparedBindings(host, ours.webhooks, clientNamespaces);
    ctx.log(`${CLUSTER_QUOTA_LABEL}: ${clients} clients for ${seconds} s`);
    const run = await measuredLoad(ours.webhooks, driven, seconds);
    ctx.log(`${CLUSTER_QUOTA_LABEL}: ${run.load.summary()}; waiting for the reconciler, then auditing`);
    await ours.reconcilerIdle();
    return await settledClusterQuotaFigures(host, run, driven.flat());
  } finally {
    await ours.stop();
    await deleteClusterQuota(host, QUOTA);
  }
}

/** As settledFigures, for the ClusterKarmadaQuota over SPANNING_NAMESPACES. */
async function settledClusterQuotaFigures(
  host: ApiEndpoint,
  run: MeasuredLoad,
  driven: readonly DrivenBinding[],
): Promise<HotQuotaModeFigures> {
  const deadline = Date.now() + 60_000;
  const records = driven.map((b) => ({
    name: `${b.namespace}/${b.name}`,
    possibleReplicas: b.possibleReplicas,
  }));
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  for (;;) {
    const quota = await readClusterQuota(host, QUOTA);
    const stored = new Map<string, number>();
    for (const namespace of SPANNING_NAMESPACES) {
      const list = (await objects.listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace })) as {
        items: ResourceBinding[];
      };
      for (const rb of list.items) stored.set(`${namespace}/${rb.metadata!.name!}`, rb.spec?.replicas ?? 0);
    }
    const audit = auditHotQuota(quota, records, PER_REPLICA, stored);
    if (auditPassed(audit) || Date.now() > deadline) {
      const offenders = auditPassed(audit) ? [] : offendingBindings(quota, audit, records, stored);
      return modeFigures(run, audit, offenders);
    }
    await sleep(500);
  }
}

/**
 * Creates each namespace of `clientNamespaces` (client c's namespace at c) with a quota holding
 * PODS_PER_BINDING pods per binding its clients drive, fewer than they want: it runs full and
 * denies. Returns each namespace's hard.
 */
export async function createContendedQuotas(
  host: ApiEndpoint,
  clientNamespaces: readonly string[],
): Promise<Map<string, Record<string, string>>> {
  const clients = new Map<string, number>();
  for (const namespace of clientNamespaces) clients.set(namespace, (clients.get(namespace) ?? 0) + 1);
  const hard = new Map(
    [...clients].map(([namespace, n]) => [
      namespace,
      hardForPods(BigInt(n * BINDINGS_PER_CLIENT * PODS_PER_BINDING)),
    ]),
  );
  await createNamespaces(host, [...hard.keys()]);
  await inParallel([...hard], 8, ([namespace, limits]) => createQuota(host, namespace, QUOTA, limits));
  return hard;
}

/** Our webhook and reconciler as the contended scenarios run them, and how to reach and stop them. */
export interface ContendedServices {
  /** A client per webhook replica, presenting the API server's client certificate. */
  webhooks: HttpsJsonClient[];
  /** Resolves once the reconcilers have no job left. */
  reconcilerIdle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `replicas` webhooks (unregistered: the clients post to them) and as many reconcilers on
 * the bench's Redis, with the hot-quota settings.
 */
export async function startContendedServices(
  ctx: BenchContext,
  options: { mode: AdmissionMode; replicas: number; instance: string; profileScenario?: string },
): Promise<ContendedServices> {
  const services: RunningService[] = [];
  const webhooks: HttpsJsonClient[] = [];
  const reconcileQueue = openReconcileQueue(ctx.redisUrl);
  const stop = async () => {
    for (const client of webhooks) client.close();
    await reconcileQueue.close();
    for (const service of services) await service.process.stop();
  };
  try {
    for (let replica = 1; replica <= options.replicas; replica++) {
      const started = await startServices(ctx.federation, {
        redisUrl: ctx.redisUrl,
        services: ['webhook', 'reconciler'],
        instance: options.replicas === 1 ? options.instance : `${options.instance}-${replica}`,
        ...profiling(ctx.profileDir, options.profileScenario ?? 'hot-quota'),
        // A scale-down stored before the reconciler has settled the scale-up it follows holds the
        // larger charge until that reservation's expiration: 10 s, so the audit can see it settle.
        env: {
          ...(await admissionModeEnv(ctx.federation.info.host, options.mode, 'hot-quota-owner-lease')),
          RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS),
          ADMISSION_LANDING_WINDOW_SECONDS: String(RESERVATION_TTL_SECONDS / 2),
          LOG_LEVEL: 'warn',
        },
        register: false,
      });
      services.push(...started);
      const webhook = started.find((s) => s.name === 'webhook')!;
      const client = new HttpsJsonClient(webhook.url, {
        ca: webhook.caPem!,
        clientCertificate: webhook.clientCertificate,
        maxSockets: ctx.sizes.hotQuotaClients,
      });
      webhooks.push(client);
      // The first replica takes the Lease; the others forward to it.
      if (options.mode === 'owner' && replica === 1)
        await awaitAdmissionOwner(client, () => webhook.process.logTail());
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { webhooks, reconcilerIdle: () => waitForIdleQueue(reconcileQueue.queue, 120_000, ctx.log), stop };
}

/**
 * Stores each client's bindings at 0 replicas in its namespace (`clientNamespaces[c]`), then scales
 * every binding once (which fills the quotas and warms the webhooks up): one at a time, or
 * `clientsAtOnce` clients at a time, each scaling its own bindings in turn.
 */
export async function preparedBindings(
  host: ApiEndpoint,
  webhooks: readonly HttpsJsonClient[],
  clientNamespaces: readonly string[],
  clientsAtOnce = 1,
): Promise<DrivenBinding[][]> {
  const driven = await storedBindings(host, clientNamespaces);
  await inParallel(driven, clientsAtOnce, async (mine, c) => {
    for (const b of mine) await drive(webhooks[c % webhooks.length]!, OUR_PATH, b, new LoadResult());
  });
  return driven;
}

/** A timed load and what the webhooks' metrics counted during it. */
export interface MeasuredLoad {
  load: LoadResult;
  delta: MetricDelta;
}

/** The timed load: client c drives its bindings through webhook c mod the replicas. */
export async function measuredLoad(
  webhooks: readonly HttpsJsonClient[],
  driven: DrivenBinding[][],
  seconds: number,
): Promise<MeasuredLoad> {
  const { result, delta } = await withMetricDeltas(webhooks, () =>
    runLoad(webhooks, OUR_PATH, driven, seconds),
  );
  return { load: result, delta };
}

/** Audits every quota the clients drove once settled, and the figures of the load with the audit. */
export async function settledFigures(
  host: ApiEndpoint,
  run: MeasuredLoad,
  driven: DrivenBinding[][],
): Promise<HotQuotaModeFigures> {
  // One minute for every quota together: a run whose audits never pass should not wait a minute each.
  const deadline = Date.now() + 60_000;
  const audits: { namespace: string; audit: HotQuotaAudit }[] = [];
  const offenders: OffendingBinding[] = [];
  for (const [namespace, bindings] of byNamespace(driven.flat())) {
    const { audit, quota, stored } = await settledAudit(host, namespace, bindings, deadline);
    audits.push({ namespace, audit });
    if (!auditPassed(audit)) offenders.push(...offendingBindings(quota, audit, bindings, stored));
  }
  return modeFigures(run, mergeAudits(audits), offenders);
}

/** A contended run's figures: its load, what the webhook's metrics counted, and its audit. */
function modeFigures(
  run: MeasuredLoad,
  audit: HotQuotaAudit,
  offenders: OffendingBinding[],
): HotQuotaModeFigures {
  const { delta } = run;
  return {
    ...run.load.figures(),
    overAdmitted: audit.overAdmittedKeys.length,
    accountingErrors:
      audit.mismatchedBindings.length +
      audit.unknownReservations.length +
      (audit.reservedSumMismatch ? 1 : 0) +
      audit.problems.length,
    meanBatchSize: meanBatchSize(delta),
    statusConflicts: delta('karmada_quota_status_conflicts_total'),
    refusedOnArrival: delta('karmada_quota_admission_refused_on_arrival_total'),
    webhookMeanMs: histogramMeanMs(delta, 'karmada_quota_admission_duration_seconds'),
    audit,
    offendingBindings: offenders,
  };
}

/** Why a contended run fails its scenario's correctness condition (none: it passes). */
export function contendedProblems(label: string, figures: HotQuotaModeFigures): string[] {
  const problems: string[] = [];
  if (!auditPassed(figures.audit)) {
    problems.push(`${label}: ${describeAuditFailure(figures.audit, figures.offendingBindings)}`);
  }
  if (figures.denied === 0) {
    problems.push(
      `${label}: no request was denied, so the quota never ran full and over-admission could not show; ` +
        `${figures.allowed} allowed, ${figures.errors} errors (first: ${figures.errorSamples[0] ?? 'none'})`,
    );
  }
  return problems;
}

/**
 * The bindings to look at when the audit fails: those holding a charge their client never saw
 * admitted, reservations of bindings no client drove, and those whose reservation is not the charge
 * of the binding as stored (a client unsure of its last outcome accepts either, yet one of them may
 * be what over-admits).
 */
export function offendingBindings(
  quota: KarmadaQuota,
  audit: HotQuotaAudit,
  driven: readonly { name: string; possibleReplicas: ReadonlySet<number> }[],
  storedReplicas: ReadonlyMap<string, number>,
): OffendingBinding[] {
  const names = new Set([...audit.mismatchedBindings, ...audit.unknownReservations]);
  const bindings = new Map(driven.map((b) => [b.name, b]));
  const claims = new Map((quota.status?.reservations ?? []).map((r) => [claimKey(r), r]));
  return [...names].sort().map((name) => {
    const r = claims.get(name);
    const b = bindings.get(name);
    return {
      name,
      ...(r && {
        reservation: {
          reserved: r.reserved,
          charge: r.charge,
          expirationTime: r.expirationTime,
          uid: r.reservedBy.uid,
        },
      }),
      storedReplicas: storedReplicas.get(name),
      possibleReplicas: [...(b?.possibleReplicas ?? [])].sort((x, y) => x - y),
    };
  });
}

/** One summary line, then one line per offending binding (the first OFFENDERS_SHOWN). */
export function describeAuditFailure(audit: HotQuotaAudit, offenders: readonly OffendingBinding[]): string {
  const list = (l: Record<string, unknown>) =>
    Object.entries(l)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(',');
  const findings = [
    audit.overAdmittedKeys.length > 0 &&
      `over-admitted on ${audit.overAdmittedKeys.join(', ')}: used + reserved ${list(audit.usedPlusReserved)} > hard ${list(audit.hard)}`,
    audit.reservedSumMismatch && 'status.reserved is not the sum of the reservations',
    audit.mismatchedBindings.length > 0 &&
      `${audit.mismatchedBindings.length} bindings hold none of the charges their client may have had admitted`,
    audit.unknownReservations.length > 0 &&
      `${audit.unknownReservations.length} reservations of bindings no client drove`,
    audit.problems.length > 0 && `unreadable status: ${audit.problems.slice(0, 3).join('; ')}`,
  ].filter(Boolean);
  const lines = offenders.slice(0, OFFENDERS_SHOWN).map((o) => {
    const r = o.reservation;
    const held = r
      ? `reserved {${list(r.reserved)}} charge {${r.charge ? list(r.charge) : 'unset'}} ` +
        `expirationTime ${r.expirationTime ?? 'none'} uid ${r.uid ?? 'none'}`
      : 'no reservation';
    const stored =
      o.storedReplicas === undefined ? 'driven by no client' : `stored replicas ${o.storedReplicas}`;
    return `  ${o.name}: ${held}; ${stored}; possible {${o.possibleReplicas.join(', ')}}`;
  });
  if (offenders.length > OFFENDERS_SHOWN) lines.push(`  ... and ${offenders.length - OFFENDERS_SHOWN} more`);
  return [`the quota as stored does not match what was admitted: ${findings.join('; ')}`, ...lines].join(
    '\n',
  );
}

/** A binding one client drives: the object the API server holds, and what the quota may hold for it. */
export class DrivenBinding {
  /** The replica counts the quota may hold for it (see BindingRecord). */
  possibleReplicas = new Set([0]);

  constructor(
    private readonly bindings: k8s.CustomObjectsApi,
    public stored: ResourceBinding,
  ) {}

  get name(): string {
    return this.stored.metadata!.name!;
  }

  get namespace(): string {
    return this.stored.metadata!.namespace!;
  }

  get replicas(): number {
    return this.stored.spec?.replicas ?? 0;
  }

  /** The stored object scaled to `replicas`, as Karmada would update it. */
  scaled(replicas: number): ResourceBinding {
    return {
      ...this.stored,
      spec: { ...this.stored.spec!, replicas, clusters: scheduledClusters(replicas) },
    };
  }

  /** Stores an admitted change, as the API server does after admission. */
  async store(object: ResourceBinding): Promise<void> {
    this.stored = (await this.bindings.replaceNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: this.namespace,
      name: this.name,
      body: object,
    })) as ResourceBinding;
  }
}

/**
 * Stores each client's bindings at 0 replicas (holding nothing) in its namespace
 * (`clientNamespaces[c]`), with no webhook registered.
 */
async function storedBindings(
  host: ApiEndpoint,
  clientNamespaces: readonly string[],
): Promise<DrivenBinding[][]> {
  const bindings = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  return Promise.all(
    clientNamespaces.map((namespace, c) =>
      Promise.all(
        Array.from({ length: BINDINGS_PER_CLIENT }, async (_, j) => {
          const body = realisticBinding(namespace, `web-${c}-${j}`, 0);
          const stored = await bindings.createNamespacedCustomObject({
            ...RESOURCE_BINDING,
            namespace,
            body,
          });
          return new DrivenBinding(bindings, stored as ResourceBinding);
        }),
      ),
    ),
  );
}

/**
 * Audits the quota once the reconciler has settled the last changes (their reservations stop being
 * pending once it has seen the stored bindings); the last audit when it never passes by `deadline`
 * (epoch ms), with the quota it audited.
 */
async function settledAudit(
  host: ApiEndpoint,
  namespace: string,
  driven: readonly DrivenBinding[],
  deadline: number,
): Promise<{ audit: HotQuotaAudit; quota: KarmadaQuota; stored: Map<string, number> }> {
  const records = driven.map((b) => ({ name: b.name, possibleReplicas: b.possibleReplicas }));
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  for (;;) {
    const quota = await readQuota(host, namespace, QUOTA);
    const list = (await objects.listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace })) as {
      items: ResourceBinding[];
    };
    const stored = new Map(list.items.map((rb) => [rb.metadata!.name!, rb.spec?.replicas ?? 0]));
    const audit = auditHotQuota(quota, records, PER_REPLICA, stored);
    if (auditPassed(audit) || Date.now() > deadline) return { audit, quota, stored };
    await sleep(500);
  }
}

/**
 * One admission for `b`: an UPDATE of the stored object to another count between 1 and MAX_REPLICAS,
 * stored when admitted.
 */
async function drive(
  client: HttpsJsonClient,
  path: string,
  b: DrivenBinding,
  result: LoadResult,
): Promise<void> {
  let target = 1 + Math.floor(Math.random() * MAX_REPLICAS);
  if (target === b.replicas) target = (target % MAX_REPLICAS) + 1;
  const before = b.replicas;
  const object = b.scaled(target);
  const verdict = await postReview(client, path, admissionReview(object, b.stored), result);
  if (verdict === 'allowed') {
    try {
      await b.store(object);
      b.possibleReplicas = new Set([target]);
    } catch (err) {
      // Not stored: the admitted increase lapses at its expiration, or is still pending.
      b.possibleReplicas = new Set([before, target]);
      result.error(`storing the admitted binding failed: ${describeError(err)}`);
    }
  } else if (verdict === 'error') {
    // The status write may have landed before the answer was lost.
    b.possibleReplicas.add(target);
  }
}

/** One loop per client for `seconds`, each driving its own bindings in turn through webhook c mod n. */
async function runLoad(
  webhooks: readonly HttpsJsonClient[],
  path: string,
  driven: DrivenBinding[][],
  seconds: number,
): Promise<LoadResult> {
  const result = new LoadResult();
  result.seconds = await runClients(driven.length, seconds, (c, turn) => {
    const mine = driven[c]!;
    return drive(webhooks[c % webhooks.length]!, path, mine[turn % mine.length]!, result);
  });
  return result;
}

/**
 * The same load against Karmada's own enforcement: karmada-webhook with FederatedQuotaEnforcement
 * and a FederatedResourceQuota of the same limits, our webhook not involved. Karmada keeps its
 * usage in the quota's status, updated by each admission: after the run, the stored bindings are
 * recounted against the limits (over-admission) and against that status (drift).
 */
async function runKarmadaFrq(ctx: BenchContext, hard: Record<string, string>): Promise<KarmadaFrqFigures> {
  const { federation, sizes } = ctx;
  const host = federation.info.host;
  ctx.log('hot-quota (karmada-frq): starting karmada-webhook with FederatedQuotaEnforcement');
  const webhook = await federation.startKarmadaQuotaWebhook();
  await createNamespaces(host, [KARMADA_FRQ_NAMESPACE]);
  await createFederatedResourceQuota(host, KARMADA_FRQ_NAMESPACE, QUOTA, hard);
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  const client = new HttpsJsonClient(webhook.url, {
    ca: webhook.caBundle,
    maxSockets: sizes.hotQuotaClients,
  });
  try {
    const driven = await storedBindings(
      host,
      Array<string>(sizes.hotQuotaClients).fill(KARMADA_FRQ_NAMESPACE),
    );
    ctx.log('hot-quota (karmada-frq): scaling the bindings once, one at a time');
    for (const b of driven.flat()) await drive(client, KARMADA_FRQ_PATH, b, new LoadResult());
    ctx.log(`hot-quota (karmada-frq): ${sizes.hotQuotaClients} clients for ${sizes.hotQuotaSeconds} s`);
    const load = await runLoad([client], KARMADA_FRQ_PATH, driven, sizes.hotQuotaSeconds);
    const frq = (await objects.getNamespacedCustomObject({
      ...FEDERATED_RESOURCE_QUOTA,
      namespace: KARMADA_FRQ_NAMESPACE,
      name: QUOTA,
    })) as { status?: { overallUsed?: Record<string, string> } };
    const recount = recountStored(driven.flat());
    const limits = Object.entries(hard).map(([key, value]) => [key, Quantity.parse(value)] as const);
    const overAdmittedKeys = limits
      .filter(([key, limit]) => recount[key]!.cmp(limit) > 0)
      .map(([key]) => key);
    const used = frq.status?.overallUsed ?? {};
    const statusDrift = limits
      .filter(([key]) => !Quantity.parse(used[key] ?? '0').equals(recount[key]!))
      .map(([key]) => key);
    ctx.log(
      `hot-quota (karmada-frq): ${load.summary()}, over-admitted on ${overAdmittedKeys.join(', ') || 'nothing'}`,
    );
    return {
      ...load.figures(),
      karmadaVersion: webhook.version,
      overAdmitted: overAdmittedKeys.length,
      overAdmittedKeys,
      statusDrift,
    };
  } finally {
    client.close();
    await webhook.stop();
  }
}

/** What the stored bindings charge together, per key of PER_REPLICA. */
function recountStored(driven: readonly DrivenBinding[]): Record<string, Quantity> {
  const replicas = BigInt(driven.reduce((sum, b) => sum + b.replicas, 0));
  return Object.fromEntries(
    Object.entries(PER_REPLICA).map(([key, perReplica]) => [key, perReplica.mul(replicas)]),
  );
}
