import { age, type ClusterRow, type QuotaView } from '#quota-view';

/** A quota as the console serves it: the shared view, with each cluster's time since its last sync. */
export type ConsoleQuota = Omit<QuotaView, 'clusters'> & {
  clusters: (ClusterRow & { lastSyncAge: string })[];
};

/** What GET /api/quotas answers and each live update carries. */
export interface ConsoleSnapshot {
  user: string;
  generatedAt: string;
  quotas: ConsoleQuota[];
}

export function consoleQuota(view: QuotaView, now: Date): ConsoleQuota {
  return {
    ...view,
    clusters: view.clusters.map((cluster) => ({ ...cluster, lastSyncAge: age(cluster.lastSyncTime, now) })),
  };
}

export function snapshot(user: string, quotaViews: readonly QuotaView[], now: Date): ConsoleSnapshot {
  return { user, generatedAt: now.toISOString(), quotas: quotaViews.map((v) => consoleQuota(v, now)) };
}

/** One server-sent event; every line of `data` gets its own `data:` field, as the format requires. */
export function sseFrame(event: string, data: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`);
  return `event: ${event}\n${lines.join('\n')}\n\n`;
}
