/** Latency figures as the report prints them. */
export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The q-quantile (0..1) of `values` by the nearest-rank method: the smallest value with at least
 * q of the samples at or below it, so p99 of 100 samples is the 99th smallest. NaN when empty.
 */
export function percentile(values: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`a quantile is between 0 and 1, got ${q}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

/** p50/p95/p99/max of latencies in milliseconds, rounded to 0.1 ms. */
export function summarizeLatencies(latenciesMs: readonly number[]): LatencySummary {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    samples: latenciesMs.length,
    p50Ms: round(percentile(latenciesMs, 0.5)),
    p95Ms: round(percentile(latenciesMs, 0.95)),
    p99Ms: round(percentile(latenciesMs, 0.99)),
    maxMs: round(percentile(latenciesMs, 1)),
  };
}

/** a / b rounded to two decimals; NaN when b is 0 or either is not a number. */
export function ratio(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return Math.round((a / b) * 100) / 100;
}

/**
 * The value of a Prometheus metric in text exposition format, summed over its label sets
 * (`karmada_quota_status_conflicts_total{service="webhook"} 3`), or over those that carry every
 * label of `labels`; 0 when absent.
 */
export function metricValue(exposition: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((label) => present.includes(label))) total += Number(match[3]);
  }
  return total;
}

/**
 * A seconds histogram's mean between two scrapes, in ms to 0.1 (NaN when it observed nothing);
 * `delta(metric)` is how much a series grew between them.
 */
export function histogramMeanMs(delta: (metric: string) => number, histogram: string): number {
  const count = delta(`${histogram}_count`);
  return count > 0 ? Math.round(((delta(`${histogram}_sum`) * 1000) / count) * 10) / 10 : Number.NaN;
}
