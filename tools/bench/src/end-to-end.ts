import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BINDING_WEBHOOK_NAME } from '../../federation/src/index.js';
import { bindingsPath, realisticBinding } from './bodies.js';
import { CorrectnessError, type BenchContext } from './context.js';
import {
  apiServerCpuSeconds,
  apiServerMetrics,
  createNamespaces,
  createQuota,
  inParallel,
  withdrawWebhook,
} from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { histogramMeanMs, metricValue, ratio, summarizeLatencies } from './stats.js';

export interface CreateFigures {
  creates: number;
  createsPerSec: number;
  /**
   * Creates our webhook refused with its fail-closed answer (HTTP 503) because the host API server did
   * not answer its quota read or write in time: safe, and a speed figure (target 0), not an audit.
   */
  failedClosed: number;
  /** Creates that failed any other way: the audit (the quotas admit every create). */
  errors: number;
  errorSamples: string[];
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** The host API server's own CPU (process_cpu_seconds_total) while the creates ran, per create. */
  apiServerCpuMsPerCreate: number;
}

export interface EndToEndFigures {
  concurrency: number;
  withWebhook: CreateFigures;
  withoutWebhook: CreateFigures;
  /** p99 create latency with the webhook over without. */
  p99Ratio: number;
  p50Ratio: number;
  /** Per create with the webhook, the time the host API server spent calling it, by its own metrics. */
  inWebhook: WebhookTime;
  /** KarmadaQuota status writes the host API server answered while the creates with the webhook ran. */
  quotaStatusWrites: QuotaStatusWrites;
}

export interface QuotaStatusWrites {
  /** Every status write (the webhook's claims, the reconciler's recounts), per create. */
  perCreate: number;
  /** Of those, the ones refused with a conflict (409): retried on a fresher read. */
  conflictsPerCreate: number;
}

export interface WebhookTime {
  calls: number;
  meanMs: number;
  /** Of the mean create latency the client saw. */
  shareOfCreate: number;
}

/** The namespaces whose bindings are created through the webhook (and resynced afterwards). */
export const admittedNamespace = (i: number) => `rs-${i}`;
const plainNamespace = (i: number) => `plain-${i}`;
const PROBE_NAMESPACE = 'e2e-probe';
export const TEAM_QUOTA = 'team';
/** Labels the quotas of the admitted namespaces, so the resync can list just them. */
export const RESYNC_LABEL = 'bench.karmada-quota.io/resync';

/** What the admitted creates left behind, for the resync to check. */
export interface AdmittedBindings {
  /** namespace -> replicas of each binding created there. */
  replicas: Map<string, number[]>;
}

const replicasOf = (k: number) => 1 + (k % 3);

/**
 * ResourceBinding creates through the host API server (32 at once), spread over namespaces with a
 * KarmadaQuota each: first with the webhook's registration withdrawn, then with it registered.
 * The product's three services run meanwhile, as in production.
 */
export async function runEndToEnd(ctx: BenchContext): Promise<{
  figures: EndToEndFigures;
  admitted: AdmittedBindings;
}> {
  const { sizes } = ctx;
  const host = ctx.federation.info.host;
  const quotas = sizes.resyncQuotas;
  const creates = quotas * sizes.resyncBindingsPerQuota;
  const indexes = Array.from({ length: quotas }, (_, i) => i);
  ctx.log(`end-to-end: ${2 * quotas} namespaces with a KarmadaQuota each`);
  await createNamespaces(host, [
    PROBE_NAMESPACE,
    ...indexes.map(admittedNamespace),
    ...indexes.map(plainNamespace),
  ]);
  const hard = { cpu: '10k', memory: '100Ti', pods: '100k' };
  await createQuota(host, PROBE_NAMESPACE, TEAM_QUOTA, { pods: '0' });
  await inParallel(indexes, 8, async (i) => {
    await createQuota(host, admittedNamespace(i), TEAM_QUOTA, hard, { [RESYNC_LABEL]: 'true' });
    await createQuota(host, plainNamespace(i), TEAM_QUOTA, hard);
  });

  const client = HttpsJsonClient.forApiServer(host, sizes.endToEndConcurrency);
  try {
    // A dry-run create the probe namespace's quota (0 pods) refuses exactly when the webhook is called.
    const webhookCalled = async (registered: boolean) => {
      const probe = JSON.stringify(realisticBinding(PROBE_NAMESPACE, 'probe', 1));
      const res = await client.post(`${bindingsPath(PROBE_NAMESPACE)}?dryRun=All`, probe);
      return registered ? res.status === 403 : res.status === 201;
    };
    ctx.log('end-to-end: webhook registration withdrawn');
    const restore = await withdrawWebhook(host, webhookCalled);
    ctx.log(`end-to-end: ${creates} creates without the webhook, ${sizes.endToEndConcurrency} at once`);
    const withoutProfile = profileHost(ctx, client, 'host-apiserver-without-webhook');
    const withoutWebhook = await createBindings(
      client,
      creates,
      sizes.endToEndConcurrency,
      plainNamespace,
      quotas,
    );
    await withoutProfile;
    await restore();
    ctx.log(`end-to-end: ${creates} creates with the webhook, ${sizes.endToEndConcurrency} at once`);
    const metricsBefore = await apiServerMetrics(client);
    const admitted: AdmittedBindings = { replicas: new Map() };
    const withProfile = profileHost(ctx, client, 'host-apiserver-with-webhook');
    const withWebhook = await createBindings(
      client,
      creates,
      sizes.endToEndConcurrency,
      admittedNamespace,
      quotas,
      (namespace, replicas) =>
        admitted.replicas.set(namespace, [...(admitted.replicas.get(namespace) ?? []), replicas]),
    );
    await withProfile;
    const metricsAfter = await apiServerMetrics(client);
    const inWebhook = webhookTime(metricsBefore, metricsAfter, withWebhook.meanMs);
    ctx.log(
      `end-to-end: p99 ${withWebhook.p99Ms} ms with the webhook, ${withoutWebhook.p99Ms} ms without; ` +
        `${inWebhook.meanMs} ms of the mean ${withWebhook.meanMs} ms per create spent in the webhook`,
    );
    const figures: EndToEndFigures = {
      concurrency: sizes.endToEndConcurrency,
      withWebhook,
      withoutWebhook,
      p99Ratio: ratio(withWebhook.p99Ms, withoutWebhook.p99Ms),
      p50Ratio: ratio(withWebhook.p50Ms, withoutWebhook.p50Ms),
      inWebhook,
      quotaStatusWrites: quotaStatusWrites(metricsBefore, metricsAfter, creates),
    };
    // The quotas are far above what the creates ask: every create must be admitted and stored, or
    // refused closed when the host API server is too slow to answer the webhook in time.
    const failed = [withWebhook, withoutWebhook].flatMap((f) => f.errorSamples);
    if (withWebhook.errors + withoutWebhook.errors > 0)
      throw new CorrectnessError(
        `end-to-end: ${withWebhook.errors} creates with the webhook and ${withoutWebhook.errors} without ` +
          `failed, e.g. ${failed.slice(0, 3).join('; ')}`,
        figures,
      );
    return { figures, admitted };
  } finally {
    client.close();
  }
}

async function createBindings(
  client: HttpsJsonClient,
  creates: number,
  concurrency: number,
  namespaceOf: (i: number) => string,
  namespaces: number,
  created: (namespace: string, replicas: number) => void = () => {},
): Promise<CreateFigures> {
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let failedClosed = 0;
  const cpuBefore = await apiServerCpuSeconds(client);
  const start = performance.now();
  await inParallel(
    Array.from({ length: creates }, (_, k) => k),
    concurrency,
    async (k) => {
      // Round robin over the namespaces, so concurrent creates mostly meet different quotas.
      const namespace = namespaceOf(k % namespaces);
      const replicas = replicasOf(k);
      const body = JSON.stringify(realisticBinding(namespace, `app-${k}`, replicas));
      const sent = performance.now();
      let failure = '';
      try {
        const res = await client.post(bindingsPath(namespace), body);
        if (res.status === 201) created(namespace, replicas);
        else if (isFailClosedAnswer(res.status, res.body)) failedClosed++;
        else failure = `HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
      } catch (err) {
        failure = `no answer: ${(err as Error).message}`;
      }
      latencies.push(performance.now() - sent);
      if (failure) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(failure);
      }
    },
  );
  const seconds = (performance.now() - start) / 1000;
  const cpuMs = ((await apiServerCpuSeconds(client)) - cpuBefore) * 1000;
  const summary = summarizeLatencies(latencies);
  return {
    creates,
    createsPerSec: Math.round(creates / seconds),
    failedClosed,
    errors,
    errorSamples,
    meanMs: Math.round((latencies.reduce((sum, l) => sum + l, 0) / latencies.length) * 10) / 10,
    p50Ms: summary.p50Ms,
    p95Ms: summary.p95Ms,
    p99Ms: summary.p99Ms,
    apiServerCpuMsPerCreate: Math.round((cpuMs / creates) * 10) / 10,
  };
}

/** The webhook's fail-closed answer (apps/webhook admission-strategy.ts failClosed), as the API server relays it. */
export function isFailClosedAnswer(status: number, body: unknown): boolean {
  const message = (body as { message?: unknown } | undefined)?.message;
  return (
    status === 503 &&
    typeof message === 'string' &&
    message.includes('karmada-quota could not check the quota, so the request is not admitted (fail closed)')
  );
}

/** How long `--profile` samples the host API server's CPU in each half (from its start). */
const HOST_PROFILE_SECONDS = 15;

/**
 * With `--profile`: the host API server's own Go CPU profile (its /debug/pprof, on by default) over
 * the first seconds of a half, written as `<name>.pprof` beside the services' profiles. Never fails
 * the scenario: a profile that cannot be taken is reported and skipped.
 */
async function profileHost(ctx: BenchContext, client: HttpsJsonClient, name: string): Promise<void> {
  if (!ctx.profileDir) return;
  try {
    const res = await client.download(`/debug/pprof/profile?seconds=${HOST_PROFILE_SECONDS}`);
    if (res.status !== 200)
      throw new Error(`HTTP ${res.status}: ${res.bytes.toString('utf8').slice(0, 200)}`);
    const dir = join(ctx.profileDir, 'end-to-end');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.pprof`), res.bytes);
  } catch (err) {
    ctx.log(`end-to-end: no CPU profile of the host API server (${name}): ${(err as Error).message}`);
  }
}

const WEBHOOK_DURATION = 'apiserver_admission_webhook_admission_duration_seconds';

/** The API server's count of KarmadaQuota status writes between two scrapes, per create. */
export function quotaStatusWrites(before: string, after: string, creates: number): QuotaStatusWrites {
  const writes = (labels: Record<string, string>) => {
    const all = { resource: 'karmadaquotas', subresource: 'status', verb: 'PUT', ...labels };
    return (
      metricValue(after, 'apiserver_request_total', all) - metricValue(before, 'apiserver_request_total', all)
    );
  };
  const perCreate = (n: number) => Math.round((n / creates) * 100) / 100;
  return { perCreate: perCreate(writes({})), conflictsPerCreate: perCreate(writes({ code: '409' })) };
}

/** What the API server's admission histogram says our webhook took per binding create between two scrapes. */
function webhookTime(before: string, after: string, meanCreateMs: number): WebhookTime {
  const labels = { name: BINDING_WEBHOOK_NAME, operation: 'CREATE' };
  const delta = (metric: string) => metricValue(after, metric, labels) - metricValue(before, metric, labels);
  const meanMs = histogramMeanMs(delta, WEBHOOK_DURATION);
  return { calls: delta(`${WEBHOOK_DURATION}_count`), meanMs, shareOfCreate: ratio(meanMs, meanCreateMs) };
}
