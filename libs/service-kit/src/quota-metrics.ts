import { KarmadaQuotaConditionType, type KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { quotaName } from '#quota';
import { quotaView, type ResourceRow } from '#quota-view';
import { Gauge, type Registry } from 'prom-client';

/** One limited resource of one quota, as numbers in the resource's base unit (cores, bytes, objects). */
export interface QuotaResourceSample {
  resource: string;
  used: number;
  reserved: number;
  hard: number;
  /** (used + reserved) / hard: 1 is full. A zero limit is 0 while nothing is counted, +Inf after. */
  ratio: number;
}

/** What the quota gauges say of a quota's status (its `hard` falls back to spec.hard, as every view's). */
export function quotaResourceSamples(quota: KarmadaQuota): QuotaResourceSample[] {
  return quotaView(quota).resources.map(sampleOf);
}

/** The same of each member cap (docs/concepts/member-caps.md), with its member. */
export function memberCapSamples(quota: KarmadaQuota): (QuotaResourceSample & { member: string })[] {
  return quotaView(quota).memberCaps.map((row) => ({ member: row.member, ...sampleOf(row) }));
}

function sampleOf(row: ResourceRow): QuotaResourceSample {
  const used = baseUnits(row.used);
  const reserved = baseUnits(row.reserved);
  const hard = baseUnits(row.hard);
  const counted = used + reserved;
  const ratio = hard > 0 ? counted / hard : counted > 0 ? Number.POSITIVE_INFINITY : 0;
  return { resource: row.resource, used, reserved, hard, ratio };
}

function baseUnits(quantity: string): number {
  return Number(Quantity.parse(quantity).nanoValue()) / 1e9;
}

/**
 * Per-quota gauges computed at scrape time from `quotas()` (an informer's cache of KarmadaQuotas and
 * ClusterKarmadaQuotas on the Karmada API server): a deleted quota's series go with it, and every replica exporting them
 * reports the same stored statuses.
 */
export function registerQuotaMetrics(registry: Registry, quotas: () => readonly KarmadaQuota[]): void {
  const gauges = (prefix: string, of: string, member: boolean) => {
    const gauge = (name: string, help: string, value: (sample: QuotaResourceSample) => number) =>
      new Gauge({
        name: `${prefix}_${name}`,
        help: `${help}${of}`,
        labelNames: ['namespace', 'quota', ...(member ? ['member'] : []), 'resource'],
        registers: [registry],
        collect() {
          this.reset();
          for (const quota of quotas()) {
            const samples: (QuotaResourceSample & { member?: string })[] = member
              ? memberCapSamples(quota)
              : quotaResourceSamples(quota);
            for (const sample of samples) {
              const owner = member ? { member: sample.member } : {};
              this.set({ ...idOf(quota), ...owner, resource: sample.resource }, value(sample));
            }
          }
        },
      });
    gauge('used', 'Observed usage (status.used), in base units', (s) => s.used);
    gauge('reserved', 'Admitted but not yet observed (status.reserved), in base units', (s) => s.reserved);
    gauge('hard', 'The limit (status.hard, else spec.hard), in base units', (s) => s.hard);
    gauge('usage_ratio', '(used + reserved) / hard: 1 is full, above 1 is over quota', (s) => s.ratio);
  };
  gauges('karmada_quota', '', false);
  gauges('karmada_quota_member', ", of a member's cap (spec.clusters[])", true);
  new Gauge({
    name: 'karmada_quota_waiting_changes',
    help: 'ResourceBinding changes a KarmadaQuota refused that are still wanted (status.waiting)',
    labelNames: ['namespace', 'quota'],
    registers: [registry],
    collect() {
      this.reset();
      for (const quota of quotas()) this.set(idOf(quota), quota.status?.waiting?.length ?? 0);
    },
  });
  new Gauge({
    name: 'karmada_quota_running_beyond_charge',
    help: 'Whether some workload runs beyond what its binding was charged, usage no admission saw (condition RunningBeyondCharge): 1 or 0',
    labelNames: ['namespace', 'quota'],
    registers: [registry],
    collect() {
      this.reset();
      for (const quota of quotas()) this.set(idOf(quota), runningBeyondCharge(quota) ? 1 : 0);
    },
  });
}

const runningBeyondCharge = (quota: KarmadaQuota): boolean =>
  quota.status?.conditions?.some(
    (c) => c.type === KarmadaQuotaConditionType.RunningBeyondCharge && c.status === 'True',
  ) ?? false;

/** A ClusterKarmadaQuota's series have no namespace and name it `ClusterKarmadaQuota/<name>`. */
function idOf(quota: KarmadaQuota): { namespace: string; quota: string } {
  return { namespace: quota.metadata?.namespace ?? '', quota: quotaName(quota) };
}
