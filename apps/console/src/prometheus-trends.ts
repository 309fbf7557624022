import { describeError } from '#api';
import type { QuotaView, TrendSample } from '#quota-view';
import { LRUCache } from 'lru-cache';
import { resourceTrends, TREND_WINDOW_MS, type Trends, type UsageHistory } from './usage-history.js';

/** The per-quota gauges the reconciler exports, in base units (docs/reference/metrics.md). */
export const QUOTA_USED_METRIC = 'karmada_quota_used';
export const QUOTA_HARD_METRIC = 'karmada_quota_hard';

/** Prometheus answers at most 11,000 points a series: the step over 24 hours is at least this. */
const MIN_STEP_SECONDS = Math.ceil(TREND_WINDOW_MS / 1000 / 10_000);
const QUERY_TIMEOUT_MS = 5_000;
/** A failed answer is reused this long: a Prometheus that is down costs one wait per quota, not one per request. */
const RETRY_AFTER_FAILURE_MS = 15_000;

/**
 * Used / hard in percent per resource of one quota. `max by`: every reconciler replica exports the
 * same stored statuses.
 */
export function trendQuery(namespace: string, quota: string): string {
  const selector = `{namespace=${JSON.stringify(namespace)},quota=${JSON.stringify(quota)}}`;
  return (
    `100 * max by (resource) (${QUOTA_USED_METRIC}${selector})` +
    ` / max by (resource) (${QUOTA_HARD_METRIC}${selector})`
  );
}

/** The samples per resource of a query_range answer (oldest first); throws what Prometheus said is wrong. */
export function parseQueryRange(body: unknown): Map<string, TrendSample[]> {
  const answer = body as {
    status?: unknown;
    error?: unknown;
    data?: { resultType?: unknown; result?: { metric?: { resource?: unknown }; values?: unknown }[] };
  };
  if (answer?.status !== 'success') {
    throw new Error(`Prometheus answered ${JSON.stringify(answer?.error ?? answer?.status ?? body)}`);
  }
  if (answer.data?.resultType !== 'matrix' || !Array.isArray(answer.data.result)) {
    throw new Error(`Prometheus answered no matrix: ${JSON.stringify(answer.data)}`);
  }
  const series = new Map<string, TrendSample[]>();
  for (const { metric, values } of answer.data.result) {
    if (typeof metric?.resource !== 'string' || !Array.isArray(values)) continue;
    series.set(
      metric.resource,
      values
        .map(([at, value]: [number, string]) => ({ at: Math.round(at * 1000), percent: Number(value) }))
        .filter((s) => Number.isFinite(s.at) && Number.isFinite(s.percent)),
    );
  }
  return series;
}

/**
 * Trends from Prometheus (PROMETHEUS_URL): the quota gauges over the last 24 hours, so they
 * survive console restarts and agree between replicas. Answers are reused for a step; when
 * Prometheus cannot answer, the console's own samples are shown, saying why, and it is asked again
 * after RETRY_AFTER_FAILURE_MS.
 */
export class PrometheusTrends {
  private readonly stepSeconds: number;
  private readonly answers: LRUCache<string, Promise<Map<string, TrendSample[]>>>;

  constructor(
    private readonly url: string,
    private readonly fallback: UsageHistory,
  ) {
    this.stepSeconds = Math.max(fallback.sampleSeconds, MIN_STEP_SECONDS);
    this.answers = new LRUCache({ max: 10_000, ttl: this.stepSeconds * 1000 });
  }

  async trends(view: QuotaView, now: Date): Promise<Trends> {
    try {
      const series = await this.series(view, now);
      return {
        source: `Prometheus (${QUOTA_USED_METRIC} / ${QUOTA_HARD_METRIC})`,
        trends: resourceTrends(view, (resource) => series.get(resource) ?? [], now),
      };
    } catch (err) {
      const fallback = this.fallback.trends(view, now);
      return {
        ...fallback,
        source: `${fallback.source}: Prometheus at ${this.url} failed: ${describeFailure(err)}`,
      };
    }
  }

  private series(view: QuotaView, now: Date): Promise<Map<string, TrendSample[]>> {
    const key = `${view.namespace}/${view.name}`;
    const cached = this.answers.get(key);
    if (cached) return cached;
    const answer = this.query(trendQuery(view.namespace, view.name), now);
    this.answers.set(key, answer);
    answer.catch(() => {
      if (this.answers.peek(key) === answer) this.answers.set(key, answer, { ttl: RETRY_AFTER_FAILURE_MS });
    });
    return answer;
  }

  private async query(query: string, now: Date): Promise<Map<string, TrendSample[]>> {
    const end = Math.floor(now.getTime() / 1000);
    const params = new URLSearchParams({
      query,
      start: String(end - TREND_WINDOW_MS / 1000),
      end: String(end),
      step: String(this.stepSeconds),
    });
    const response = await fetch(new URL(`api/v1/query_range?${params}`, withSlash(this.url)), {
      signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
    });
    const body: unknown = await response.json().catch(() => {
      throw new Error(`HTTP ${response.status} without a JSON body`);
    });
    return parseQueryRange(body);
  }
}

/** fetch() says only "fetch failed"; its cause says why (ECONNREFUSED, a timeout, ...). */
function describeFailure(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  return cause === undefined ? describeError(err) : `${describeError(err)}: ${describeError(cause)}`;
}

/** Prometheus behind a path prefix (http://host/prometheus) keeps it. */
const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);
