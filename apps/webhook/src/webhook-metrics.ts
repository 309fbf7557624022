import { Counter, Histogram, type Registry } from 'prom-client';
import type { BatchObserver } from '#accounting';

/** What an admission ended as: allowed, denied by a quota, refused as invalid, or failed closed. */
export type AdmissionResult = 'allowed' | 'denied' | 'exists' | 'invalid' | 'unavailable';

export class WebhookMetrics implements BatchObserver {
  private readonly latency: Histogram<'resource' | 'result'>;
  private readonly results: Counter<'resource' | 'result'>;
  private readonly batchSize: Histogram;
  private readonly conflicts: Counter;
  private readonly refusals: Counter;
  private readonly unenforced: Counter<'namespace' | 'quota' | 'enforcement'>;

  constructor(registry: Registry) {
    this.latency = new Histogram({
      name: 'karmada_quota_admission_duration_seconds',
      help: 'Time to answer an AdmissionReview, by resource and result',
      labelNames: ['resource', 'result'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.results = new Counter({
      name: 'karmada_quota_admissions_total',
      help: 'AdmissionReviews answered, by resource and result',
      labelNames: ['resource', 'result'],
      registers: [registry],
    });
    this.batchSize = new Histogram({
      name: 'karmada_quota_admission_batch_size',
      help: 'Admissions evaluated together for one namespace (one status write per changed quota)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [registry],
    });
    this.conflicts = new Counter({
      name: 'karmada_quota_status_conflicts_total',
      help: 'KarmadaQuota status writes that met a 409 Conflict and were re-evaluated',
      registers: [registry],
    });
    this.refusals = new Counter({
      name: 'karmada_quota_admission_refused_on_arrival_total',
      help: 'Admissions refused as they arrived, without waiting for the batch in flight to be written',
      registers: [registry],
    });
    this.unenforced = new Counter({
      name: 'karmada_quota_admissions_not_enforced_total',
      help: 'Changes a KarmadaQuota with spec.enforcement Warn or DryRun admitted but would have denied',
      labelNames: ['namespace', 'quota', 'enforcement'],
      registers: [registry],
    });
  }

  admitted(resource: string, result: AdmissionResult, startedAt: bigint): void {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    this.latency.observe({ resource, result }, seconds);
    this.results.inc({ resource, result });
  }

  batch(size: number): void {
    this.batchSize.observe(size);
  }

  conflict(): void {
    this.conflicts.inc();
  }

  refusedOnArrival(): void {
    this.refusals.inc();
  }

  notEnforced(namespace: string, quota: string, enforcement: string): void {
    this.unenforced.inc({ namespace, quota, enforcement });
  }
}
