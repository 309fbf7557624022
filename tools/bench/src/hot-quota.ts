import * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import { Quantity } from '#quantity';
import {
  describeError,
  isJsonObject,
  RESOURCE_BINDING,
  type KarmadaQuota,
  type ResourceBinding,
  type ResourceList,
} from '#api';
import { kubeConfigFor, sleep, startServices, type ApiEndpoint } from '../../federation/src/index.js';
import { admissionReview, realisticBinding, REPLICA_REQUEST, scheduledClusters } from './bodies.js';
import { CorrectnessError, type BenchContext } from './context.js';
import { auditHotQuota, auditPassed, type HotQuotaAudit } from './hot-quota-audit.js';
import { createNamespaces, createQuota, readQuota } from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { openReconcileQueue, waitForIdleQueue } from './reconcile-queue.js';
import { metricValue, ratio, summarizeLatencies } from './stats.js';

export const ADMISSION_MODES = ['batched', 'cas-per-admission'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];

/** Bindings each client drives in turn (each only by its client: their outcomes are known). */
const BINDINGS_PER_CLIENT = 2;
/** Replica counts a client scales its bindings between. */
const MAX_REPLICAS = 8;
/** hard.pods per binding: below the average wanted (4.5), so the quota is full and denials happen. */
const PODS_PER_BINDING = 3;
const QUOTA = 'hot';
const RESERVATION_TTL_SECONDS = 10;
const PER_REPLICA = {
  cpu: Quantity.parse(REPLICA_REQUEST.cpu),
  memory: Quantity.parse(REPLICA_REQUEST.memory),
  pods: Quantity.parse('1'),
};
/** Offending bindings a failure lists; the figures keep them all. */
const OFFENDERS_SHOWN = 20;

export interface HotQuotaModeFigures {
  requests: number;
  admissionsPerSec: number;
  allowed: number;
  denied: number;
  /** Answers that were neither an allow nor a quota denial: 5xx, fail-closed, no answer. */
  errors: number;
  errorSamples: string[];
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Quota keys where used + reserved > hard after the run, recounted from the API server. */
  overAdmitted: number;
  /** Admitted charges lost or counted twice, reservations nobody was admitted for, a wrong sum. */
  accountingErrors: number;
  /** Admissions per status write (the webhook's batch-size histogram). */
  meanBatchSize: number;
  statusConflicts: number;
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

export interface HotQuotaFigures {
  clients: number;
  seconds: number;
  bindings: number;
  hard: Record<string, string>;
  batched: HotQuotaModeFigures;
  casPerAdmission: HotQuotaModeFigures;
  /** batched admissions/s over cas-per-admission admissions/s. */
  speedup: number;
}

const namespaceOf = (mode: AdmissionMode) => `hot-${mode}`;

/**
 * 64 clients send AdmissionReviews (realistic ResourceBinding UPDATEs scaling between 1 and 8
 * replicas) for one quota straight to the webhook, which writes the reservations to the host; once
 * with the batching webhook and once with the one-CAS-write-per-admission mode. Each client then
 * does what the API server does with an admitted change: it stores the binding (unmeasured; no
 * webhook is registered yet, so nothing else admits it), and a reconciler releases what stored
 * scale-downs give back (admission never releases, spec §6), writing the same quota concurrently.
 * Before the timed run every binding is stored at 0 replicas and scaled once, one at a time (which
 * also warms the webhook up): the quota holds fewer pods than the clients want, so it is full from
 * the start, scale-ups compete for what scale-downs free and denials really happen. Afterwards, once
 * the reconciler is idle, the quota is read back from the API server and audited (hot-quota-audit.ts).
 */
export async function runHotQuota(ctx: BenchContext): Promise<HotQuotaFigures> {
  const { federation, sizes } = ctx;
  const host = federation.info.host;
  const bindings = sizes.hotQuotaClients * BINDINGS_PER_CLIENT;
  const hard = hardFor(bindings);
  // Before any webhook is registered: quota objects are admitted by the webhook too.
  const namespaces = ADMISSION_MODES.map(namespaceOf);
  await createNamespaces(host, namespaces);
  for (const namespace of namespaces) await createQuota(host, namespace, QUOTA, hard);

  const figures: Partial<Record<AdmissionMode, HotQuotaModeFigures>> = {};
  for (const mode of ADMISSION_MODES) {
    ctx.log(`hot-quota (${mode}): starting a webhook in this mode and a reconciler`);
    const services = await startServices(federation, {
      redisUrl: ctx.redisUrl,
      services: ['webhook', 'reconciler'],
      instance: `hot-${mode}`,
      // A scale-down stored before the reconciler has settled the scale-up it follows holds the
      // larger charge until that reservation's expiration: 10 s, so the audit can see it settle.
      env: {
        ADMISSION_MODE: mode,
        RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS),
        ADMISSION_LANDING_WINDOW_SECONDS: String(RESERVATION_TTL_SECONDS / 2),
        LOG_LEVEL: 'warn',
      },
      register: false,
    });
    const webhook = services.find((s) => s.name === 'webhook')!;
    const client = new HttpsJsonClient(webhook.url, {
      ca: webhook.caPem!,
      maxSockets: sizes.hotQuotaClients,
    });
    const reconcileQueue = openReconcileQueue(ctx.redisUrl);
    try {
      const driven = await storedBindings(host, namespaceOf(mode), sizes.hotQuotaClients);
      ctx.log(`hot-quota (${mode}): scaling the ${bindings} bindings once, one at a time`);
      for (const b of driven.flat()) await drive(client, b, new LoadResult());
      const before = await metricsText(client);
      ctx.log(`hot-quota (${mode}): ${sizes.hotQuotaClients} clients for ${sizes.hotQuotaSeconds} s`);
      const load = await runLoad(client, driven, sizes.hotQuotaSeconds);
      const after = await metricsText(client);
      ctx.log(`hot-quota (${mode}): waiting for the reconciler to settle, then auditing the quota`);
      await waitForIdleQueue(reconcileQueue.queue, 120_000);
      const { audit, quota } = await settledAudit(host, namespaceOf(mode), driven.flat());
      const delta = (name: string) => metricValue(after, name) - metricValue(before, name);
      const requests = load.latenciesMs.length;
      const latency = summarizeLatencies(load.latenciesMs);
      figures[mode] = {
        requests,
        admissionsPerSec: Math.round(requests / load.seconds),
        allowed: load.allowed,
        denied: load.denied,
        errors: load.errors,
        errorSamples: load.errorSamples,
        p50Ms: latency.p50Ms,
        p95Ms: latency.p95Ms,
        p99Ms: latency.p99Ms,
        maxMs: latency.maxMs,
        overAdmitted: audit.overAdmittedKeys.length,
        accountingErrors:
          audit.mismatchedBindings.length +
          audit.unknownReservations.length +
          (audit.reservedSumMismatch ? 1 : 0) +
          audit.problems.length,
        meanBatchSize:
          Math.round(
            (delta('karmada_quota_admission_batch_size_sum') /
              Math.max(1, delta('karmada_quota_admission_batch_size_count'))) *
              10,
          ) / 10,
        statusConflicts: delta('karmada_quota_status_conflicts_total'),
        audit,
        offendingBindings: auditPassed(audit) ? [] : offendingBindings(quota, audit, driven.flat()),
      };
      ctx.log(
        `hot-quota (${mode}): ${figures[mode].admissionsPerSec} admissions/s, p99 ${latency.p99Ms} ms, ` +
          `${load.allowed} allowed, ${load.denied} denied, ${load.errors} errors`,
      );
    } finally {
      client.close();
      await reconcileQueue.close();
      for (const service of services) await service.process.stop();
    }
  }
  const batched = figures.batched!;
  const casPerAdmission = figures['cas-per-admission']!;
  const result: HotQuotaFigures = {
    clients: sizes.hotQuotaClients,
    seconds: sizes.hotQuotaSeconds,
    bindings,
    hard,
    batched,
    casPerAdmission,
    speedup: ratio(batched.admissionsPerSec, casPerAdmission.admissionsPerSec),
  };
  const problems = ADMISSION_MODES.flatMap((mode) => modeProblems(mode, figures[mode]!));
  if (problems.length > 0) throw new CorrectnessError(problems.join('\n'), result);
  return result;
}

function hardFor(bindings: number): Record<string, string> {
  const pods = BigInt(bindings * PODS_PER_BINDING);
  return {
    cpu: Quantity.parse(REPLICA_REQUEST.cpu).mul(pods).toString(),
    memory: Quantity.parse(REPLICA_REQUEST.memory).mul(pods).toString(),
    pods: pods.toString(),
  };
}

/** Why a mode's run fails the scenario's correctness condition (none: it passes). */
function modeProblems(mode: AdmissionMode, figures: HotQuotaModeFigures): string[] {
  const problems: string[] = [];
  if (!auditPassed(figures.audit)) {
    problems.push(`hot-quota (${mode}): ${describeAuditFailure(figures.audit, figures.offendingBindings)}`);
  }
  if (figures.denied === 0) {
    problems.push(
      `hot-quota (${mode}): no request was denied, so the quota never ran full and over-admission could not show; ` +
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
  driven: readonly { name: string; replicas: number; possibleReplicas: ReadonlySet<number> }[],
): OffendingBinding[] {
  const asStored = auditHotQuota(
    quota,
    driven.map((b) => ({ name: b.name, possibleReplicas: new Set([b.replicas]) })),
    PER_REPLICA,
  );
  const names = new Set([
    ...audit.mismatchedBindings,
    ...audit.unknownReservations,
    ...asStored.mismatchedBindings,
  ]);
  const bindings = new Map(driven.map((b) => [b.name, b]));
  const reservations = new Map((quota.status?.reservations ?? []).map((r) => [r.reservedBy.name, r]));
  return [...names].sort().map((name) => {
    const r = reservations.get(name);
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
      storedReplicas: b?.replicas,
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

async function metricsText(client: HttpsJsonClient): Promise<string> {
  const res = await client.get('/metrics');
  if (res.status !== 200 || typeof res.body !== 'string')
    throw new Error(`the webhook's /metrics answered ${res.status}`);
  return res.body;
}

/** A binding one client drives: the object the API server holds, and what the quota may hold for it. */
class DrivenBinding {
  /** The replica counts the quota may hold for it (see BindingRecord). */
  possibleReplicas = new Set([0]);

  constructor(
    private readonly bindings: k8s.CustomObjectsApi,
    public stored: ResourceBinding,
  ) {}

  get name(): string {
    return this.stored.metadata!.name!;
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
      namespace: object.metadata!.namespace!,
      name: this.name,
      body: object,
    })) as ResourceBinding;
  }
}

/** Stores each client's bindings at 0 replicas (holding nothing), with no webhook registered. */
async function storedBindings(
  host: ApiEndpoint,
  namespace: string,
  clients: number,
): Promise<DrivenBinding[][]> {
  const bindings = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  return Promise.all(
    Array.from({ length: clients }, (_, c) =>
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
 * pending once it has seen the stored bindings); the last audit when it never passes, with the
 * quota it audited.
 */
async function settledAudit(
  host: ApiEndpoint,
  namespace: string,
  driven: readonly DrivenBinding[],
): Promise<{ audit: HotQuotaAudit; quota: KarmadaQuota }> {
  const records = driven.map((b) => ({ name: b.name, possibleReplicas: b.possibleReplicas }));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const quota = await readQuota(host, namespace, QUOTA);
    const audit = auditHotQuota(quota, records, PER_REPLICA);
    if (auditPassed(audit) || Date.now() > deadline) return { audit, quota };
    await sleep(500);
  }
}

class LoadResult {
  latenciesMs: number[] = [];
  allowed = 0;
  denied = 0;
  errors = 0;
  errorSamples: string[] = [];
  seconds = 0;

  error(message: string): void {
    this.errors++;
    if (this.errorSamples.length < 5) this.errorSamples.push(message);
  }
}

/**
 * One admission for `b`: an UPDATE of the stored object to another count between 1 and MAX_REPLICAS,
 * stored when admitted.
 */
async function drive(client: HttpsJsonClient, b: DrivenBinding, result: LoadResult): Promise<void> {
  let target = 1 + Math.floor(Math.random() * MAX_REPLICAS);
  if (target === b.replicas) target = (target % MAX_REPLICAS) + 1;
  const before = b.replicas;
  const object = b.scaled(target);
  const body = admissionReview(object, b.stored);
  const sent = performance.now();
  let answer: { allowed: boolean; code?: number; reason?: string; message?: string } | undefined;
  let failure = '';
  try {
    const res = await client.post('/validate/resourcebindings', body);
    const response = isJsonObject(res.body) ? res.body.response : undefined;
    if (res.status === 200 && isJsonObject(response)) {
      const status = isJsonObject(response.status) ? response.status : {};
      answer = {
        allowed: response.allowed === true,
        code: typeof status.code === 'number' ? status.code : undefined,
        reason: typeof status.reason === 'string' ? status.reason : undefined,
        message: typeof status.message === 'string' ? status.message : undefined,
      };
    } else {
      failure = `HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
    }
  } catch (err) {
    failure = `no answer: ${(err as Error).message}`;
  }
  result.latenciesMs.push(performance.now() - sent);
  if (answer?.allowed) {
    result.allowed++;
    try {
      await b.store(object);
      b.possibleReplicas = new Set([target]);
    } catch (err) {
      // Not stored: the admitted increase lapses at its expiration, or is still pending.
      b.possibleReplicas = new Set([before, target]);
      result.error(`storing the admitted binding failed: ${describeError(err)}`);
    }
  } else if (answer?.code === 403 && answer.reason === 'QuotaExceeded') {
    result.denied++;
  } else {
    // The status write may have landed before the answer was lost.
    b.possibleReplicas.add(target);
    result.error(failure || `${answer?.code} ${answer?.reason}: ${answer?.message}`);
  }
}

/** One loop per client for `seconds`, each driving its own bindings in turn. */
async function runLoad(
  client: HttpsJsonClient,
  driven: DrivenBinding[][],
  seconds: number,
): Promise<LoadResult> {
  const result = new LoadResult();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    driven.map(async (mine) => {
      for (let turn = 0; performance.now() < deadline; turn++)
        await drive(client, mine[turn % mine.length]!, result);
    }),
  );
  result.seconds = (performance.now() - start) / 1000;
  return result;
}
