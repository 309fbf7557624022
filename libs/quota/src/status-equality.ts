/**
 * Whether a computed status equals the current (wire, possibly malformed) one semantically: quantities
 * by value, times as strings, except that a cluster's lastSyncTime may have moved forward by less than
 * LAST_SYNC_TIME_SLACK_MS. The reconciler skips the write when they are equal.
 */
import { listsEqual, parseResourceList } from '#quantity';
import {
  sameJson,
  type ClusterUsage,
  type Condition,
  isJsonObject,
  type KarmadaQuotaStatus,
  type NamespaceUsage,
  type Reservation,
  type WaitingChangeStatus,
  type WouldBeDeniedStatus,
} from '#api';

/**
 * Two wire ResourceLists with the same keys and equal values; absent is `{}`; an unreadable value or a
 * non-object makes them differ.
 */
export function sameList(a: unknown, b: unknown): boolean {
  const x = parseResourceList(a ?? {}, 'a');
  const y = parseResourceList(b ?? {}, 'b');
  return x.errors.length === 0 && y.errors.length === 0 && listsEqual(x.list, y.list);
}

export function sameArray<T>(
  a: unknown,
  b: readonly T[] | undefined,
  same: (x: Record<string, unknown>, y: T) => boolean,
) {
  const left = Array.isArray(a) ? a : [];
  const right = b ?? [];
  if (a !== undefined && a !== null && !Array.isArray(a)) return false;
  return left.length === right.length && left.every((x, i) => isJsonObject(x) && same(x, right[i] as T));
}

function sameReservation(a: Record<string, unknown>, b: Reservation): boolean {
  const by = a['reservedBy'];
  return (
    isJsonObject(by) &&
    by['apiVersion'] === b.reservedBy.apiVersion &&
    by['kind'] === b.reservedBy.kind &&
    (by['namespace'] ?? undefined) === b.reservedBy.namespace &&
    by['name'] === b.reservedBy.name &&
    (by['uid'] ?? undefined) === b.reservedBy.uid &&
    sameList(a['reserved'], b.reserved) &&
    sameList(a['charge'], b.charge) &&
    (a['expirationTime'] ?? undefined) === b.expirationTime &&
    (a['operation'] ?? undefined) === b.operation
  );
}

/**
 * How far a cluster's lastSyncTime may move forward without the status being rewritten for it alone.
 * The aggregator refreshes a Ready member's time every 5 s; rewriting each quota's status for that
 * would double the status writes while bindings change (every claim's namespace is reconciled soon
 * after). A write for any other reason carries the current time.
 */
export const LAST_SYNC_TIME_SLACK_MS = 30_000;

/** Is `next` the same time as `current`, or later by less than the slack? */
function sameSyncTime(current: unknown, next: string): boolean {
  if (current === next) return true;
  if (typeof current !== 'string') return false;
  const ahead = Date.parse(next) - Date.parse(current);
  return ahead >= 0 && ahead < LAST_SYNC_TIME_SLACK_MS;
}

function sameCluster(a: Record<string, unknown>, b: ClusterUsage): boolean {
  return (
    a['name'] === b.name &&
    a['state'] === b.state &&
    sameSyncTime(a['lastSyncTime'], b.lastSyncTime) &&
    sameList(a['used'], b.used) &&
    sameList(a['hard'], b.hard) &&
    sameList(a['reserved'], b.reserved)
  );
}

function sameNamespace(a: Record<string, unknown>, b: NamespaceUsage): boolean {
  return (
    a['namespace'] === b.namespace &&
    // A webhook trusts a line only as new as the namespace's labels it saw: a recount that moves it is written.
    (a['resourceVersion'] ?? undefined) === b.resourceVersion &&
    sameList(a['used'], b.used) &&
    sameList(a['reserved'], b.reserved)
  );
}

function sameWaiting(a: Record<string, unknown>, b: WaitingChangeStatus): boolean {
  return (
    a['binding'] === b.binding &&
    a['since'] === b.since &&
    sameList(a['requested'], b.requested) &&
    sameList(a['free'], b.free)
  );
}

function sameWouldBeDenied(a: Record<string, unknown>, b: WouldBeDeniedStatus): boolean {
  return (
    a['binding'] === b.binding &&
    a['enforcement'] === b.enforcement &&
    a['message'] === b.message &&
    a['at'] === b.at
  );
}

function sameCondition(a: Record<string, unknown>, b: Condition): boolean {
  return (
    a['type'] === b.type &&
    a['status'] === b.status &&
    a['reason'] === b.reason &&
    a['message'] === b.message &&
    a['lastTransitionTime'] === b.lastTransitionTime &&
    (a['observedGeneration'] ?? undefined) === b.observedGeneration
  );
}

/** Does the current (wire, possibly malformed) status equal the computed one semantically? */
export function statusEquals(current: KarmadaQuotaStatus, next: KarmadaQuotaStatus): boolean {
  return (
    sameList(current.hard, next.hard) &&
    sameList(current.used, next.used) &&
    sameList(current.reserved, next.reserved) &&
    sameArray(current.reservations, next.reservations, sameReservation) &&
    sameArray(current.clusters, next.clusters, sameCluster) &&
    (current.namespaces === undefined
      ? next.namespaces === undefined
      : sameArray(current.namespaces, next.namespaces, sameNamespace)) &&
    sameJson(current.capsResolvedFor ?? [], next.capsResolvedFor ?? []) &&
    sameArray(current.waiting, next.waiting, sameWaiting) &&
    sameArray(current.wouldBeDenied, next.wouldBeDenied, sameWouldBeDenied) &&
    sameArray(current.conditions, next.conditions, sameCondition) &&
    (current.observedGeneration ?? undefined) === next.observedGeneration
  );
}
