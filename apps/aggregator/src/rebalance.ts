/** What one aggregator replica sees of the cluster Leases and of the replicas alive. */
export interface RebalanceInput {
  /** This replica's identity. */
  self: string;
  /** Identities of the replicas alive (their membership Leases are being renewed); self is added. */
  replicas: Iterable<string>;
  /** Every member cluster, with the live holder of its Lease (undefined: no Lease, or it expired). */
  holders: ReadonlyMap<string, string | undefined>;
}

export interface Rebalance {
  /** How many clusters this replica should hold: floor or ceil of clusters / replicas. */
  share: number;
  /** Clusters this replica holds and keeps (renews). */
  keep: string[];
  /** Clusters this replica holds above its share: stop watching, publish the rest, release. */
  release: string[];
  /** Free clusters to try to take, in this order, until `share` are held (another may win some). */
  take: string[];
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The fair share of each replica and what this one should do to reach it. `clusters mod replicas`
 * replicas hold one more than the others: those that hold the most now (ties by identity), so a
 * replica that already holds the larger share keeps it and the split converges without clusters
 * moving back and forth. Every replica computes the same shares from the same Leases; when their
 * views differ for a moment, the compare-and-swap on each Lease still lets only one hold a cluster.
 */
export function rebalance({ self, replicas, holders }: RebalanceInput): Rebalance {
  const alive = [...new Set([self, ...replicas])];
  const held = new Map(alive.map((replica) => [replica, 0]));
  for (const holder of holders.values()) {
    if (holder !== undefined && held.has(holder)) held.set(holder, held.get(holder)! + 1);
  }
  const ranked = alive.sort((a, b) => held.get(b)! - held.get(a)! || byName(a, b));
  const floor = Math.floor(holders.size / ranked.length);
  const share = floor + (ranked.indexOf(self) < holders.size % ranked.length ? 1 : 0);

  const mine = [...holders].filter(([, holder]) => holder === self).map(([cluster]) => cluster);
  mine.sort(byName);
  const free = [...holders].filter(([, holder]) => holder === undefined).map(([cluster]) => cluster);
  return {
    share,
    keep: mine.slice(0, share),
    release: mine.slice(share),
    take: mine.length < share ? free.sort(byName) : [],
  };
}
