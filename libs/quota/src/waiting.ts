/**
 * Changes a quota refused, waiting for quota to free (docs/concepts/waiting-changes.md). Karmada retries a
 * refused binding write with a back-off that grows to 1000 s and nothing in Karmada retries it when
 * quota frees, so:
 * - the webhook records each refusal (recordRefusal) and forgets the binding once a write of it is
 *   admitted;
 * - the reconciler shows the ones still wanted in the quota's `status.waiting` (waitingStatus),
 *   forgets the ones withdrawn or settled (liveWaiting), and requeues, oldest first, the ones that fit
 *   in what is free now (requeueOrder) through Karmada's own reactions: an annotation on the template
 *   re-runs the detector, `spec.rescheduleTriggeredAt` on the binding re-runs the scheduler.
 */
import {
  isJsonObject,
  sameJson,
  type KarmadaQuotaStatus,
  type ResourceBinding,
  type WaitingChangeStatus,
} from '#api';
import { addLists, parseResourceList, Quantity, subtractLists, type ResourceList } from '#quantity';
import { freeUnder } from './admission.js';

/** Whose write was refused, so whose reaction retries it. */
export type RetryVia = 'template' | 'scheduler';

export interface WaitingChange {
  /** The ResourceBinding's name (its namespace is the record's). */
  binding: string;
  /** The stored binding's uid, for a refused update; none for a refused create. */
  uid?: string;
  /** The quota that refused it. */
  quota: string;
  /** The increase asked and what was free, on the exceeded keys, at the latest refusal. */
  requested: Record<string, string>;
  free: Record<string, string>;
  /** RFC 3339: the first refusal since the binding last had a write admitted. */
  since: string;
  /** RFC 3339: the latest refusal. */
  lastRefusedAt: string;
  retryVia: RetryVia;
  /** The binding's template (spec.resource), which a requeue by `template` annotates. */
  template?: { apiVersion: string; kind: string; name: string };
  /** RFC 3339: when the reconciler last requeued it. */
  requeuedAt?: string;
}

/** The annotation a requeue sets on a template: any annotation change makes Karmada's detector retry. */
export const REQUEUED_AT_ANNOTATION = 'karmada-quota/requeued-at';

/** A requeued change the webhook has not refused again within this long was admitted or withdrawn. */
export const REQUEUE_SETTLE_MS = 30_000;
/**
 * Karmada retries a refused write at least every 1000 s: a change not refused for longer than this
 * is no longer wanted (the template was scaled back, say).
 */
export const ABANDONED_AFTER_MS = 1_200_000;

/**
 * Who wrote a refused change: the scheduler when only the placement result (`spec.clusters`)
 * differs from the stored binding, else the detector (a create, or a template change it copied).
 */
export function refusedWriter(object: ResourceBinding, old: ResourceBinding | undefined): RetryVia {
  if (old === undefined) return 'template';
  const withoutPlacement = (spec: ResourceBinding['spec'] | undefined) => ({ ...spec, clusters: undefined });
  return sameJson(withoutPlacement(object.spec), withoutPlacement(old.spec)) ? 'scheduler' : 'template';
}

/** Whether a write changes the binding's spec (a create does): admitted, such a write ends a wait. */
export function specChanged(object: ResourceBinding, old: ResourceBinding | undefined): boolean {
  return old === undefined || !sameJson(object.spec, old.spec);
}

/**
 * A repeated refusal is written again only once the stored `lastRefusedAt` is this old: a binding
 * refused in a tight loop (Karmada's first retries come milliseconds apart) would otherwise cost a
 * Redis write per refusal, and only liveWaiting reads `lastRefusedAt`, against 30 s and 20 minutes.
 */
export const REFUSAL_REWRITE_AFTER_MS = 1_000;

/**
 * Whether `next` (recordRefusal's result) must be stored over `previous`: always, unless it differs
 * only in a `lastRefusedAt` less than REFUSAL_REWRITE_AFTER_MS later and no requeue came since the
 * stored refusal (liveWaiting takes a requeue not refused after it as settled).
 */
export function refusalNeedsWrite(previous: WaitingChange | undefined, next: WaitingChange): boolean {
  if (previous === undefined) return true;
  const lastRefused = Date.parse(previous.lastRefusedAt);
  if (previous.requeuedAt !== undefined && Date.parse(previous.requeuedAt) >= lastRefused) return true;
  if (Date.parse(next.lastRefusedAt) - lastRefused >= REFUSAL_REWRITE_AFTER_MS) return true;
  return !sameJson({ ...previous, lastRefusedAt: '' }, { ...next, lastRefusedAt: '' });
}

/** The record after one more refusal of the binding: `since` stays while it is the same object. */
export function recordRefusal(
  previous: WaitingChange | undefined,
  refusal: Omit<WaitingChange, 'since' | 'lastRefusedAt' | 'requeuedAt'>,
  now: Date,
): WaitingChange {
  const at = now.toISOString();
  const same = previous !== undefined && previous.uid === refusal.uid;
  return {
    ...refusal,
    since: same ? previous.since : at,
    lastRefusedAt: at,
    ...(same && previous.requeuedAt ? { requeuedAt: previous.requeuedAt } : {}),
  };
}

const wireList = (value: unknown): value is Record<string, string> =>
  isJsonObject(value) && Object.values(value).every((v) => typeof v === 'string');

const isTime = (value: unknown): value is string =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value));

/** A stored record, or why it is unreadable (a record written by a different version, say). */
export function decodeWaiting(raw: string): WaitingChange | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'not JSON' };
  }
  if (
    !isJsonObject(value) ||
    typeof value.binding !== 'string' ||
    typeof value.quota !== 'string' ||
    !wireList(value.requested) ||
    !wireList(value.free) ||
    !isTime(value.since) ||
    !isTime(value.lastRefusedAt) ||
    (value.retryVia !== 'template' && value.retryVia !== 'scheduler') ||
    (value.requeuedAt !== undefined && !isTime(value.requeuedAt))
  ) {
    return { error: 'not a waiting change record' };
  }
  return value as unknown as WaitingChange;
}

/**
 * The records still waiting, and the bindings whose records to forget: deleted or re-created
 * bindings (withdrawn), refused creates whose binding now exists (created), requeued ones not refused since (admitted or withdrawn), and ones Karmada
 * stopped retrying (abandoned).
 */
export function liveWaiting(
  records: readonly WaitingChange[],
  bindings: readonly ResourceBinding[],
  now: Date,
): { live: WaitingChange[]; forget: string[] } {
  const uids = new Map(bindings.map((b) => [b.metadata?.name, b.metadata?.uid]));
  const live: WaitingChange[] = [];
  const forget: string[] = [];
  for (const record of records) {
    const lastRefused = Date.parse(record.lastRefusedAt);
    const requeued = record.requeuedAt ? Date.parse(record.requeuedAt) : undefined;
    // A refused update names the stored binding's uid; a refused create has none (each attempt gets
    // a new one), and waits until a binding of that name exists.
    const gone =
      record.uid === undefined ? uids.has(record.binding) : uids.get(record.binding) !== record.uid;
    const settled =
      requeued !== undefined && lastRefused < requeued && now.getTime() - requeued > REQUEUE_SETTLE_MS;
    const abandoned = now.getTime() - lastRefused > ABANDONED_AFTER_MS;
    if (gone || settled || abandoned) forget.push(record.binding);
    else live.push(record);
  }
  return { live, forget };
}

const bySince = (a: WaitingChange, b: WaitingChange): number =>
  a.since < b.since ? -1 : a.since > b.since ? 1 : a.binding < b.binding ? -1 : a.binding > b.binding ? 1 : 0;

/** A quota's `status.waiting`: its waiting changes, oldest first. */
export function waitingStatus(quota: string, live: readonly WaitingChange[]): WaitingChangeStatus[] {
  return live
    .filter((record) => record.quota === quota)
    .sort(bySince)
    .map(({ binding, requested, free, since }) => ({ binding, requested, free, since }));
}

/** What a quota has free now, per key of hard: hard - used - reserved, never below 0. */
export function freeOf(status: KarmadaQuotaStatus): ResourceList {
  const list = (value: unknown) => parseResourceList(value ?? {}, 'status').list;
  const hard = list(status.hard);
  return freeUnder(hard, addLists(list(status.used), list(status.reserved)), Object.keys(hard));
}

/** Every key of `requested` within `available`, a key `available` lacks being 0. */
const fits = (requested: ResourceList, available: ResourceList): boolean =>
  Object.entries(requested).every(([key, q]) => q.cmp(available[key] ?? Quantity.zero()) <= 0);

/**
 * The waiting changes to requeue now: per quota, oldest first, as long as each fits in what is still
 * free after the ones before it; the first that does not fit stops its quota (no younger, smaller
 * change overtakes it). A change requeued less than `minIntervalMs` ago is in flight: it is not
 * requeued again, and what it asked is counted as taken.
 */
export function requeueOrder(
  live: readonly WaitingChange[],
  free: ReadonlyMap<string, ResourceList>,
  now: Date,
  minIntervalMs: number,
): WaitingChange[] {
  const left = new Map(free);
  const blocked = new Set<string>();
  const chosen: WaitingChange[] = [];
  for (const record of [...live].sort(bySince)) {
    const available = left.get(record.quota);
    if (available === undefined || blocked.has(record.quota)) continue;
    const requested = parseResourceList(record.requested, 'requested').list;
    const inFlight =
      record.requeuedAt !== undefined && now.getTime() - Date.parse(record.requeuedAt) < minIntervalMs;
    if (!inFlight && !fits(requested, available)) {
      blocked.add(record.quota);
      continue;
    }
    left.set(record.quota, subtractLists(available, requested));
    if (!inFlight) chosen.push(record);
  }
  return chosen;
}
