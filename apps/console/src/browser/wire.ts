/**
 * What the page reads of GET api/quotas and the live updates, written out for the browser build
 * (which compiles this folder alone). snapshot.ts checks at compile time that what the console
 * serves has this shape.
 */
/** The workload row of usage no binding accounts for (OTHER_USAGE of libs/quota-view; snapshot.ts checks they agree). */
export const OTHER_USAGE = '<not from a binding>';

export interface PageSnapshot {
  user: string;
  quotas: PageQuota[];
}

/** A limit's numbers: of a resource of hard, or of a member cap. */
export interface PageLimit {
  resource: string;
  used: string;
  reserved: string;
  hard: string;
  usedPercent: number;
  reservedPercent: number;
  exceeded: boolean;
}

export interface PageQuota {
  namespace: string;
  name: string;
  percentUsed: number;
  resources: PageLimit[];
  memberCaps: (PageLimit & { member: string })[];
  conditions: { type: string; status: string; reason: string; message: string }[];
  clusters: {
    name: string;
    state: string;
    lastSyncTime: string;
    lastSyncAge: string;
    used: Record<string, string>;
  }[];
  reservations: { binding: string; reserved: Record<string, string>; expirationTime: string }[];
  waiting: {
    binding: string;
    requested: Record<string, string>;
    free: Record<string, string>;
    since: string;
  }[];
  enforcement: string;
  wouldBeDenied: { binding: string; enforcement: string; message: string; at: string }[];
  workloads: {
    rows: {
      binding: string;
      charged: Record<string, string>;
      inFlight: Record<string, string>;
      observed?: Record<string, string>;
      reserved?: Record<string, string>;
      clusters: string[];
    }[];
    more: number;
    problems: string[];
    usageAsOf?: string;
    usageNotShown?: string;
  };
  trendSource: string;
  trends: {
    resource: string;
    points: string;
    ceiling: number;
    first?: { at: number; percent: number };
    last?: { at: number; percent: number };
  }[];
  problems: string[];
}
