import type { Enforcement, KarmadaQuota, WouldBeDeniedStatus } from '#api';
import { addLists, describeFieldError, parseResourceList, Quantity, type ResourceList } from '#quantity';
import { decodeWouldBeDenied, parseEnforcement, splitMemberKey } from '#quota';

/**
 * What every surface (kubectl-kq, the console) shows of a KarmadaQuota: its status read once,
 * quantities in Kubernetes' canonical form, so the CLI and the web page never disagree.
 */
export interface QuotaView {
  namespace: string;
  name: string;
  /** One row per limited resource (status.hard, else spec.hard), sorted by name. */
  resources: ResourceRow[];
  /** One row per member cap (docs/concepts/member-caps.md), by member then resource. */
  memberCaps: MemberCapRow[];
  /** Per member cluster, as the reconciler last wrote it. */
  clusters: ClusterRow[];
  /** Admitted bindings whose charge is not (fully) observed yet. */
  reservations: ReservationRow[];
  /** Changes the quota refused that are still wanted, oldest first: what is waiting for room, and why. */
  waiting: WaitingRow[];
  /** spec.enforcement: Deny refuses; Warn and DryRun admit and only note (docs/concepts/enforcement.md). */
  enforcement: Enforcement;
  /** Changes admitted only because the quota does not enforce, newest first (status.wouldBeDenied). */
  wouldBeDenied: WouldBeDeniedStatus[];
  conditions: { type: string; status: string; reason: string; message: string }[];
  /** The highest (used + reserved) / hard over all resources, in percent: how full the quota is. */
  percentUsed: number;
  /** Fields of the status that could not be read, with why; the rest is still shown. */
  problems: string[];
}

export interface ResourceRow {
  resource: string;
  used: string;
  reserved: string;
  hard: string;
  /** used / hard and reserved / hard in percent, rounded down to 0.1 (may exceed 100). */
  usedPercent: number;
  reservedPercent: number;
  /** used + reserved > hard. */
  exceeded: boolean;
}

/** A member cap: its member, and the resource row of its member key under the plain resource name. */
export interface MemberCapRow extends ResourceRow {
  member: string;
}

export interface ClusterRow {
  name: string;
  state: string;
  lastSyncTime: string;
  /** Canonical quantities of the quota's resources in this cluster. */
  used: Record<string, string>;
}

export interface ReservationRow {
  binding: string;
  uid: string;
  reserved: Record<string, string>;
  expirationTime: string;
}

export interface WaitingRow {
  binding: string;
  /** The increase asked and what was free, on the exceeded resources (canonical quantities). */
  requested: Record<string, string>;
  free: Record<string, string>;
  since: string;
}

export function quotaView(quota: KarmadaQuota): QuotaView {
  const problems: string[] = [];
  const read = (raw: unknown, field: string): ResourceList => {
    const { list, errors } = parseResourceList(raw, field);
    problems.push(...errors.map(describeFieldError));
    return list;
  };
  const status = quota.status ?? {};
  const hard = read(status.hard ?? quota.spec?.hard, status.hard ? 'status.hard' : 'spec.hard');
  const used = read(status.used, 'status.used');
  const reserved = read(status.reserved, 'status.reserved');
  const limited = Object.keys(hard).sort();
  // The global limits; a member cap's key (`cpu@member1`) gets a row of its own below.
  const global = limited.filter((key) => splitMemberKey(key) === undefined);
  const canonical = (list: ResourceList, keys: Iterable<string>) =>
    Object.fromEntries([...keys].map((key) => [key, (list[key] ?? Quantity.zero()).toString()]));

  const row = (key: string, resource = key): ResourceRow => {
    const zero = Quantity.zero();
    const u = used[key] ?? zero;
    const r = reserved[key] ?? zero;
    return {
      resource,
      used: u.toString(),
      reserved: r.toString(),
      hard: hard[key].toString(),
      usedPercent: percentOf(u, hard[key]),
      reservedPercent: percentOf(r, hard[key]),
      exceeded: u.add(r).cmp(hard[key]) > 0,
    };
  };
  const resources = global.map((key) => row(key));
  const memberCaps = limited
    .flatMap((key) => {
      const split = splitMemberKey(key);
      return split ? [{ member: split.member, ...row(key, split.resource) }] : [];
    })
    .sort((a, b) => a.member.localeCompare(b.member) || a.resource.localeCompare(b.resource));
  const total = addLists(used, reserved);
  const percentUsed = Math.max(
    0,
    ...limited.map((key) => percentOf(total[key] ?? Quantity.zero(), hard[key])),
  );

  const clusters = (status.clusters ?? []).map((cluster, i): ClusterRow => {
    const clusterUsed = read(cluster.used, `status.clusters[${i}].used`);
    return {
      name: cluster.name,
      state: cluster.state,
      lastSyncTime: cluster.lastSyncTime,
      used: canonical(clusterUsed, global.length ? global : Object.keys(clusterUsed).sort()),
    };
  });
  const reservations = (status.reservations ?? []).map((reservation, i): ReservationRow => {
    const list = read(reservation.reserved, `status.reservations[${i}].reserved`);
    return {
      binding: reservation.reservedBy.name,
      uid: reservation.reservedBy.uid ?? '',
      reserved: canonical(list, Object.keys(list).sort()),
      expirationTime: reservation.expirationTime ?? '',
    };
  });
  const waiting = (status.waiting ?? []).map((change, i): WaitingRow => {
    const requested = read(change.requested, `status.waiting[${i}].requested`);
    const free = read(change.free, `status.waiting[${i}].free`);
    return {
      binding: change.binding,
      requested: canonical(requested, Object.keys(requested).sort()),
      free: canonical(free, Object.keys(requested).sort()),
      since: change.since,
    };
  });
  return {
    namespace: quota.metadata?.namespace ?? '',
    name: quota.metadata?.name ?? '',
    resources,
    memberCaps,
    clusters,
    reservations,
    waiting,
    enforcement: parseEnforcement(quota.spec?.enforcement),
    wouldBeDenied: decodeWouldBeDenied(status.wouldBeDenied),
    conditions: (status.conditions ?? []).map(({ type, status, reason, message }) => ({
      type,
      status,
      reason,
      message,
    })),
    percentUsed,
    problems,
  };
}

/**
 * part / whole in percent, rounded down to one decimal, computed exactly on nano values. A zero
 * limit is 0% full while nothing uses it and 100% as soon as anything does (no division by zero).
 */
export function percentOf(part: Quantity, whole: Quantity): number {
  if (whole.sign() <= 0) return part.sign() > 0 ? 100 : 0;
  return Number((part.nanoValue() * 1000n) / whole.nanoValue()) / 10;
}

/**
 * How long ago `time` (RFC 3339) was, printed as kubectl prints ages (apimachinery's
 * duration.HumanDuration): 45s, 3m20s, 25m, 5h12m, 20h, 4d3h, 30d, 3y45d.
 * `<unknown>` for an unreadable time; a time in the future (clock skew) is `0s`.
 */
export function age(time: string, now: Date): string {
  const at = Date.parse(time);
  if (!time || Number.isNaN(at)) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now.getTime() - at) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const years = Math.floor(days / 365);
  const pair = (major: number, majorUnit: string, minor: number, minorUnit: string) =>
    minor ? `${major}${majorUnit}${minor}${minorUnit}` : `${major}${majorUnit}`;
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return pair(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return pair(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  if (days < 8) return pair(days, 'd', hours % 24, 'h');
  if (days < 730) return `${days}d`;
  if (years < 8) return pair(years, 'y', days % 365, 'd');
  return `${years}y`;
}
