import {
  age,
  OTHER_USAGE,
  type ClusterRow,
  type QuotaView,
  type Sparkline,
  type WorkloadUsage,
} from '#quota-view';
import { OTHER_USAGE as PAGE_OTHER_USAGE, type PageSnapshot } from './browser/wire.js';

/** Workloads listed per quota, largest first; the rest are counted (`more`). */
export const MAX_WORKLOAD_ROWS = 20;

/** How full one resource was over the last 24 hours (UsageHistory). */
export interface ResourceTrend extends Sparkline {
  resource: string;
}

/** What the console adds to a quota's view: who holds it and how it filled (and where that comes from). */
export interface QuotaDetails {
  workloads: WorkloadUsage;
  trends: ResourceTrend[];
  trendSource: string;
}

/** A quota as the console serves it: the shared view, with each cluster's time since its last sync. */
export type ConsoleQuota = Omit<QuotaView, 'clusters'> & {
  clusters: (ClusterRow & { lastSyncAge: string })[];
  workloads: WorkloadUsage & { more: number };
  trends: ResourceTrend[];
  trendSource: string;
};

/** What GET /api/quotas answers and each live update carries. */
export interface ConsoleSnapshot {
  user: string;
  generatedAt: string;
  quotas: ConsoleQuota[];
}

/** The page's own types (browser/wire.ts) must read what is served: a change here that they do not follow fails to compile. */
export const PAGE_READS_SNAPSHOT: ConsoleSnapshot extends PageSnapshot ? true : never = true;
export const PAGE_NAMES_OTHER_USAGE: typeof PAGE_OTHER_USAGE = OTHER_USAGE;

export function consoleQuota(view: QuotaView, now: Date, details: QuotaDetails): ConsoleQuota {
  const { rows, ...rest } = details.workloads;
  return {
    ...view,
    clusters: view.clusters.map((cluster) => ({ ...cluster, lastSyncAge: age(cluster.lastSyncTime, now) })),
    workloads: {
      rows: rows.slice(0, MAX_WORKLOAD_ROWS),
      more: Math.max(0, rows.length - MAX_WORKLOAD_ROWS),
      ...rest,
    },
    trends: details.trends,
    trendSource: details.trendSource,
  };
}

export function snapshot(user: string, quotas: ConsoleQuota[], now: Date): ConsoleSnapshot {
  return { user, generatedAt: now.toISOString(), quotas };
}

/** One server-sent event; every line of `data` gets its own `data:` field, as the format requires. */
export function sseFrame(event: string, data: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`);
  return `event: ${event}\n${lines.join('\n')}\n\n`;
}
