import { performance } from 'node:perf_hooks';
import { isJsonObject } from '#api';
import { Quantity } from '#quantity';
import { waitFor } from '../../federation/src/index.js';
import { REPLICA_REQUEST } from './bodies.js';
import type { HttpsJsonClient } from './https-client.js';
import { metricValue, summarizeLatencies } from './stats.js';

/**
 * What the load scenarios share: posting AdmissionReviews to a webhook from concurrent clients,
 * counting the answers and timing them.
 */

/** What one replica of the bench's workloads charges on each key its quotas limit. */
export const PER_REPLICA = {
  cpu: Quantity.parse(REPLICA_REQUEST.cpu),
  memory: Quantity.parse(REPLICA_REQUEST.memory),
  pods: Quantity.parse('1'),
};

/** `hard` for a quota that holds `pods` replicas of the bench's workloads. */
export function hardForPods(pods: bigint): Record<string, string> {
  return Object.fromEntries(
    Object.entries(PER_REPLICA).map(([key, perReplica]) => [key, perReplica.mul(pods).toString()]),
  );
}

/** What one timed load measured, whichever webhook answered it. */
export interface LoadFigures {
  requests: number;
  admissionsPerSec: number;
  allowed: number;
  denied: number;
  /**
   * Answers that were neither an allow nor a quota denial: 5xx, fail-closed, no answer (Karmada
   * answers 500 after 5 conflicts).
   */
  errors: number;
  errorSamples: string[];
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LoadResult {
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

  figures(): LoadFigures {
    const requests = this.latenciesMs.length;
    const { p50Ms, p95Ms, p99Ms, maxMs } = summarizeLatencies(this.latenciesMs);
    return {
      requests,
      admissionsPerSec: Math.round(requests / this.seconds),
      allowed: this.allowed,
      denied: this.denied,
      errors: this.errors,
      errorSamples: this.errorSamples,
      p50Ms,
      p95Ms,
      p99Ms,
      maxMs,
    };
  }

  /** One log line: rate, p99 and outcomes. */
  summary(): string {
    const { admissionsPerSec, p99Ms } = this.figures();
    return (
      `${admissionsPerSec} admissions/s, p99 ${p99Ms} ms, ` +
      `${this.allowed} allowed, ${this.denied} denied, ${this.errors} errors`
    );
  }
}

/**
 * How a webhook answered: allowed, denied for quota, or neither (an error, counted in the result;
 * its status write may have landed before the answer was lost).
 */
export type Verdict = 'allowed' | 'denied' | 'error';

/** Posts one AdmissionReview, times it and counts its verdict in `result`. */
export async function postReview(
  client: HttpsJsonClient,
  path: string,
  review: string,
  result: LoadResult,
): Promise<Verdict> {
  const sent = performance.now();
  let answer: { allowed: boolean; code?: number; reason?: string; message?: string } | undefined;
  let failure = '';
  try {
    const res = await client.post(path, review);
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
    return 'allowed';
  }
  if (answer?.code === 403 && answer.reason === 'QuotaExceeded') {
    result.denied++;
    return 'denied';
  }
  result.error(failure || `${answer?.code} ${answer?.reason}: ${answer?.message}`);
  return 'error';
}

/** Runs `turn` in a loop per client for `seconds` (each client's turns one after another). */
export async function runClients(
  clients: number,
  seconds: number,
  turn: (client: number, n: number) => Promise<void>,
): Promise<number> {
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; performance.now() < deadline; n++) await turn(client, n);
    }),
  );
  return (performance.now() - start) / 1000;
}

/** `items` by their namespace, in the order the namespaces first appear. */
export function byNamespace<T extends { namespace: string }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.namespace);
    if (group) group.push(item);
    else groups.set(item.namespace, [item]);
  }
  return groups;
}

/** The webhook's Prometheus metrics, as text. */
export async function metricsText(client: HttpsJsonClient): Promise<string> {
  const res = await client.get('/metrics');
  if (res.status !== 200 || typeof res.body !== 'string')
    throw new Error(`the webhook's /metrics answered ${res.status}`);
  return res.body;
}

/** Waits until the owner-mode webhook behind `client` holds the admission Lease (its owner gauge). */
export async function awaitAdmissionOwner(client: HttpsJsonClient, describe: () => string): Promise<void> {
  await waitFor(
    'the owner-mode webhook to hold the admission Lease',
    async () => metricValue(await metricsText(client), 'karmada_quota_admission_owner') === 1,
    { timeoutMs: 60_000, describe },
  );
}

/** A metric's increase over a load, summed over the webhooks. */
export type MetricDelta = (metric: string) => number;

/** Runs `load`, and returns what it returned with what the webhooks' metrics counted meanwhile. */
export async function withMetricDeltas<T>(
  webhooks: readonly HttpsJsonClient[],
  load: () => Promise<T>,
): Promise<{ result: T; delta: MetricDelta }> {
  const scrape = () => Promise.all(webhooks.map(metricsText));
  const before = await scrape();
  const result = await load();
  const after = await scrape();
  const delta = (metric: string) =>
    after.reduce((sum, text, i) => sum + metricValue(text, metric) - metricValue(before[i]!, metric), 0);
  return { result, delta };
}

/** Admissions per status write over a load (the webhook's batch-size histogram), to 0.1. */
export const meanBatchSize = (delta: MetricDelta): number =>
  Math.round(
    (delta('karmada_quota_admission_batch_size_sum') /
      Math.max(1, delta('karmada_quota_admission_batch_size_count'))) *
      10,
  ) / 10;
