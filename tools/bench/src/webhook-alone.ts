import { randomUUID } from 'node:crypto';
import type { KarmadaQuota, ResourceBinding } from '#api';
import { startServices, type ApiEndpoint, type RunningService } from '../../federation/src/index.js';
import {
  awaitAdmissionOwner,
  byNamespace,
  hardForPods,
  LoadResult,
  meanBatchSize,
  metricsText,
  PER_REPLICA,
  postReview,
  runClients,
  withMetricDeltas,
  type LoadFigures,
} from './admission-load.js';
import { admissionReview, realisticBinding, scheduledClusters } from './bodies.js';
import { CorrectnessError, profiling, type BenchContext } from './context.js';
import { auditHotQuota, auditPassed, mergeAudits, type HotQuotaAudit } from './hot-quota-audit.js';
import { describeAuditFailure } from './hot-quota.js';
import { createNamespaces, createQuota, inParallel, ownerModeEnv, readQuota } from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { metricValue, summarizeLatencies } from './stats.js';

/** Bindings each client creates and then scales up, in turn. */
const BINDINGS_PER_CLIENT = 2;
/** Every this many turns a client asks for more than the whole quota: denied (the rest fit). */
const OVERSIZED_EVERY = 20;
/** Pods each quota holds: far more than a run admits, so only the oversized requests are denied. */
const HARD_PODS = 1_000_000n;
const OVERSIZED_REPLICAS = 2 * Number(HARD_PODS);
const QUOTA = 'alone';
const PATH = '/validate/resourcebindings';
/** No reconciler settles the claims: they must outlive the run, so nothing lapses before the audit. */
const RESERVATION_TTL_SECONDS = 3_600;
const WARM_UP_SECONDS = 2;
/** The resourceVersion the next object admitted is given, as if stored. */
let storedVersion = 1_000;

/** One part of the scenario: the clients over one quota, or spread over many namespaces. */
export interface WebhookAloneRun extends LoadFigures {
  quotas: number;
  bindings: number;
  /** Admissions per status write (the webhook's batch-size histogram). */
  meanBatchSize: number;
  /**
   * The webhook's CPU (process_cpu_seconds_total) per review, in µs: its claims' status writes
   * included. Absent in runs from before it was measured.
   */
  cpuUsPerReview?: number;
  audit: HotQuotaAudit;
}

export interface WebhookAloneFigures {
  clients: number;
  /** Seconds of load per part. */
  seconds: number;
  /** Both parts together: every request over both parts' time, and their latencies pooled. */
  admissionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  oneQuota: WebhookAloneRun;
  manyQuotas: WebhookAloneRun;
  /**
   * The one-quota part again with ADMISSION_MODE=owner (experimental, docs/concepts/admission-owner.md):
   * decisions from memory, nothing written. Absent in runs from before it was measured.
   */
  owner?: OwnerAloneRun;
  /**
   * The same again through a second owner-mode replica that forwards every change to the owner: the
   * forwarding hop (CPU per review is both processes'). Absent in runs from before it was measured.
   */
  forwarded?: OwnerAloneRun;
}

/** The owner's run: its claims are in its memory, so the audit counts them there. */
export interface OwnerAloneRun extends LoadFigures {
  bindings: number;
  cpuUsPerReview: number;
  /** Oversized requests admitted: must be 0. */
  oversizedAdmitted: number;
  /** Bindings the clients had admitted at least once, and those the owner holds claims for: equal. */
  bindingsAdmitted: number;
  ownerClaims: number;
}

/**
 * Our webhook alone, with no stores and no reconciler: N clients post AdmissionReviews straight to
 * it (it still writes the claims to the host), each creating its bindings (a realistic
 * ResourceBinding CREATE) and then scaling them up one replica at a time (UPDATEs from the object it
 * last had admitted), every OVERSIZED_EVERY-th request asking for more than the quota holds. Once
 * over one quota, once over `manyQuotaNamespaces` namespaces with a quota each. Nothing settles a
 * claim, so afterwards each quota read back from the API server must reserve exactly the charges
 * admitted (each binding its last, largest one) with used + reserved <= hard.
 */
export async function runWebhookAlone(ctx: BenchContext): Promise<WebhookAloneFigures> {
  const { federation, sizes } = ctx;
  const host = federation.info.host;
  const clients = sizes.webhookAloneClients;
  const warmUp = Array<string>(clients).fill('alone-warm-up');
  const oneQuota = Array<string>(clients).fill('alone-one');
  const manyQuotas = Array.from({ length: clients }, (_, c) => `alone-many-${c % sizes.manyQuotaNamespaces}`);
  const namespaces = [...new Set([...warmUp, ...oneQuota, ...manyQuotas])];
  ctx.log(`webhook-alone: ${namespaces.length} namespaces with a quota each, and a webhook`);
  await createNamespaces(host, namespaces);
  await inParallel(namespaces, 8, (namespace) => createQuota(host, namespace, QUOTA, hardForPods(HARD_PODS)));
  const { webhook, client } = await startAloneWebhook(ctx, 'alone', clients);
  try {
    ctx.log(`webhook-alone: warming up for ${WARM_UP_SECONDS} s`);
    await runPart(client, warmUp, WARM_UP_SECONDS);
    const part = async (name: string, clientNamespaces: readonly string[]) => {
      ctx.log(`webhook-alone (${name}): ${clients} clients for ${sizes.webhookAloneSeconds} s`);
      const {
        result: { load, bindings },
        delta,
      } = await withMetricDeltas([client], () =>
        runPart(client, clientNamespaces, sizes.webhookAloneSeconds),
      );
      ctx.log(`webhook-alone (${name}): ${load.summary()}; auditing the quotas`);
      const run: WebhookAloneRun = {
        ...load.figures(),
        quotas: new Set(clientNamespaces).size,
        bindings: bindings.length,
        meanBatchSize: meanBatchSize(delta),
        cpuUsPerReview: Math.round((delta('process_cpu_seconds_total') * 1e6) / load.latenciesMs.length),
        audit: await auditQuotas(host, bindings),
      };
      return { load, run };
    };
    const one = await part('one quota', oneQuota);
    const many = await part(`${sizes.manyQuotaNamespaces} quotas`, manyQuotas);
    client.close();
    await webhook.process.stop();
    const { owner, forwarded } = await runOwner(ctx, clients);
    const pooled = summarizeLatencies([...one.load.latenciesMs, ...many.load.latenciesMs]);
    const figures: WebhookAloneFigures = {
      clients,
      seconds: sizes.webhookAloneSeconds,
      admissionsPerSec: Math.round(
        (one.run.requests + many.run.requests) / (one.load.seconds + many.load.seconds),
      ),
      p50Ms: pooled.p50Ms,
      p99Ms: pooled.p99Ms,
      oneQuota: one.run,
      manyQuotas: many.run,
      owner,
      forwarded,
    };
    const problems = [one.run, many.run]
      .filter((run) => !auditPassed(run.audit))
      .map((run) => `webhook-alone (${run.quotas} quotas): ${describeAuditFailure(run.audit, [])}`);
    for (const [name, run] of [
      ['owner', owner],
      ['owner, forwarded', forwarded],
    ] as const)
      if (run.oversizedAdmitted > 0 || run.ownerClaims !== run.bindingsAdmitted)
        problems.push(
          `webhook-alone (${name}): ${run.oversizedAdmitted} oversized requests admitted; ` +
            `${run.bindingsAdmitted} bindings admitted, the owner holds claims for ${run.ownerClaims}`,
        );
    if (problems.length > 0) throw new CorrectnessError(problems.join('\n'), figures);
    return figures;
  } finally {
    client.close();
    await webhook.process.stop();
  }
}

/** An unregistered webhook (the clients post to it) with the scenario's settings, and a client of it. */
async function startAloneWebhook(
  ctx: BenchContext,
  instance: string,
  clients: number,
  env: NodeJS.ProcessEnv = {},
): Promise<{ webhook: RunningService; client: HttpsJsonClient }> {
  const [webhook] = await startServices(ctx.federation, {
    redisUrl: ctx.redisUrl,
    services: ['webhook'],
    instance,
    register: false,
    ...profiling(ctx.profileDir, `webhook-${instance}`),
    env: { RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS), LOG_LEVEL: 'warn', ...env },
  });
  const client = new HttpsJsonClient(webhook!.url, {
    ca: webhook!.caPem!,
    clientCertificate: webhook!.clientCertificate,
    maxSockets: clients,
  });
  return { webhook: webhook!, client };
}

/**
 * The one-quota part with a webhook in ADMISSION_MODE=owner: once it holds the admission Lease, the
 * same clients for the same time on a quota of its own; then again on another quota through a
 * second owner-mode replica, which forwards every change to it. Its claims never leave (no
 * reconciler counts, and the run is shorter than the landing window), so it must hold one per
 * binding ever admitted.
 */
async function runOwner(
  ctx: BenchContext,
  clients: number,
): Promise<{ owner: OwnerAloneRun; forwarded: OwnerAloneRun }> {
  const { federation, sizes } = ctx;
  const host = federation.info.host;
  const [namespace, forwardedNamespace] = ['alone-owner', 'alone-forwarded'];
  await createNamespaces(host, [namespace, forwardedNamespace]);
  await inParallel([namespace, forwardedNamespace], 2, (ns) =>
    createQuota(host, ns, QUOTA, hardForPods(HARD_PODS)),
  );
  const ownerEnv = await ownerModeEnv(host, 'alone-owner-lease');
  const { webhook, client } = await startAloneWebhook(ctx, 'alone-owner', clients, ownerEnv);
  const metric = async (name: string) => metricValue(await metricsText(client), name);
  let forwarder: Awaited<ReturnType<typeof startAloneWebhook>> | undefined;
  try {
    await awaitAdmissionOwner(client, () => webhook.process.logTail());
    const warmUp = Array<string>(clients).fill(namespace);
    await runPart(client, warmUp, WARM_UP_SECONDS);
    const claimsBefore = await metric(OWNER_CLAIMS);
    ctx.log(`webhook-alone (owner, one quota): ${clients} clients for ${sizes.webhookAloneSeconds} s`);
    const {
      result: { load, bindings, oversizedAdmitted },
      delta,
    } = await withMetricDeltas([client], () =>
      runPart(client, Array<string>(clients).fill(namespace), sizes.webhookAloneSeconds),
    );
    ctx.log(`webhook-alone (owner, one quota): ${load.summary()}`);
    const owner: OwnerAloneRun = {
      ...load.figures(),
      bindings: bindings.length,
      cpuUsPerReview: Math.round((delta('process_cpu_seconds_total') * 1e6) / load.latenciesMs.length),
      oversizedAdmitted,
      bindingsAdmitted: bindings.filter((b) => b.admitted !== undefined).length,
      ownerClaims: (await metric(OWNER_CLAIMS)) - claimsBefore,
    };

    forwarder = await startAloneWebhook(ctx, 'alone-forwarder', clients, ownerEnv);
    const through = forwarder.client;
    await runPart(through, Array<string>(clients).fill(forwardedNamespace), WARM_UP_SECONDS);
    const claimsBeforeForwarded = await metric(OWNER_CLAIMS);
    ctx.log(`webhook-alone (owner, forwarded): ${clients} clients for ${sizes.webhookAloneSeconds} s`);
    const forwardedRun = await withMetricDeltas([client, through], () =>
      runPart(through, Array<string>(clients).fill(forwardedNamespace), sizes.webhookAloneSeconds),
    );
    const { result } = forwardedRun;
    ctx.log(`webhook-alone (owner, forwarded): ${result.load.summary()}`);
    if (forwardedRun.delta('karmada_quota_admission_forwarded_total') === 0)
      throw new Error('webhook-alone (owner, forwarded): the second replica forwarded nothing');
    const forwarded: OwnerAloneRun = {
      ...result.load.figures(),
      bindings: result.bindings.length,
      cpuUsPerReview: Math.round(
        (forwardedRun.delta('process_cpu_seconds_total') * 1e6) / result.load.latenciesMs.length,
      ),
      oversizedAdmitted: result.oversizedAdmitted,
      bindingsAdmitted: result.bindings.filter((b) => b.admitted !== undefined).length,
      ownerClaims: (await metric(OWNER_CLAIMS)) - claimsBeforeForwarded,
    };
    return { owner, forwarded };
  } finally {
    client.close();
    forwarder?.client.close();
    await Promise.all([webhook.process.stop(), forwarder?.webhook.process.stop()]);
  }
}

const OWNER_CLAIMS = 'karmada_quota_admission_owner_claims';

/**
 * A binding a client creates and then scales up, never stored: the object it last had admitted, and
 * the replica counts its quota may hold for it (BindingRecord: no reconciler settles a claim, so
 * that is the largest count admitted).
 */
class GrowingBinding {
  /** What its create asks for (1 to 4 replicas): the same object when a create is retried. */
  private readonly created: ResourceBinding;
  admitted?: ResourceBinding;
  possibleReplicas = new Set([0]);

  constructor(namespace: string, workload: string) {
    this.created = realisticBinding(namespace, workload, 1 + Math.floor(Math.random() * 4));
    // The API server gives an object its uid before admission.
    this.created.metadata!.uid = randomUUID();
  }

  get name(): string {
    return this.created.metadata!.name!;
  }

  get namespace(): string {
    return this.created.metadata!.namespace!;
  }

  /** The next review: its create until admitted, then a scale-up by one (or an oversized one). */
  next(oversized: boolean): { object: ResourceBinding; review: string; replicas: number } {
    const old = this.admitted;
    if (old === undefined)
      return {
        object: this.created,
        review: admissionReview(this.created),
        replicas: this.created.spec!.replicas!,
      };
    const replicas = old.spec!.replicas! + (oversized ? OVERSIZED_REPLICAS : 1);
    const object = { ...old, spec: { ...old.spec!, replicas, clusters: scheduledClusters(replicas) } };
    return { object, review: admissionReview(object, old), replicas };
  }
}

/**
 * One client per entry of `clientNamespaces`, each driving BINDINGS_PER_CLIENT bindings of its
 * own in that namespace, in turn, for `seconds`.
 */
export async function runPart(
  client: HttpsJsonClient,
  clientNamespaces: readonly string[],
  seconds: number,
): Promise<{ load: LoadResult; bindings: GrowingBinding[]; oversizedAdmitted: number }> {
  const run = randomUUID().slice(0, 8);
  let oversizedAdmitted = 0;
  const driven = clientNamespaces.map((namespace, c) =>
    Array.from(
      { length: BINDINGS_PER_CLIENT },
      (_, j) => new GrowingBinding(namespace, `alone-${run}-${c}-${j}`),
    ),
  );
  const load = new LoadResult();
  load.seconds = await runClients(driven.length, seconds, async (c, turn) => {
    const b = driven[c]![turn % BINDINGS_PER_CLIENT]!;
    const { object, review, replicas } = b.next(turn % OVERSIZED_EVERY === OVERSIZED_EVERY - 1);
    const verdict = await postReview(client, PATH, review, load);
    if (verdict === 'allowed') {
      if (replicas > Number(HARD_PODS)) oversizedAdmitted++;
      // As if stored: an UPDATE's old object carries the stored resourceVersion.
      b.admitted = { ...object, metadata: { ...object.metadata, resourceVersion: String(++storedVersion) } };
      b.possibleReplicas = new Set([replicas]);
    } else if (verdict === 'error') {
      // The claim may have been written before the answer was lost.
      b.possibleReplicas.add(replicas);
    }
  });
  return { load, bindings: driven.flat(), oversizedAdmitted };
}

/** Audits the quota of each namespace the bindings are in, read back from the API server. */
async function auditQuotas(host: ApiEndpoint, bindings: readonly GrowingBinding[]): Promise<HotQuotaAudit> {
  const audits: { namespace: string; audit: HotQuotaAudit }[] = [];
  for (const [namespace, mine] of byNamespace(bindings)) {
    const quota: KarmadaQuota = await readQuota(host, namespace, QUOTA);
    // Nothing is stored in this scenario: every admitted binding holds its claim.
    audits.push({ namespace, audit: auditHotQuota(quota, mine, PER_REPLICA, new Map()) });
  }
  return mergeAudits(audits);
}
