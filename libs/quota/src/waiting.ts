/**
 * Changes a quota refused, waiting for quota to free (docs/concepts/waiting-changes.md). Karmada retries a
 * refused binding write with a back-off that grows to 1000 s and nothing in Karmada retries it when
 * quota frees, so:
 * - the webhook records each refusal over a limit or for usage not counted yet (waitingRefusal,
 *   recordRefusal) and forgets the binding once a write that changes its spec is admitted;
 * - the reconciler shows the ones still wanted in the quota's `status.waiting` (waitingStatus),
 *   forgets the ones withdrawn or settled (liveWaiting), and requeues, higher priority first then
 *   oldest first, the ones that fit in what is free now (requeueOrder) through Karmada's own
 *   reactions: an annotation on the template re-runs the detector, `spec.rescheduleTriggeredAt` on the
 *   binding re-runs the scheduler.
 */
import { createHash } from 'node:crypto';
import {
  isJsonObject,
  sameJson,
  type KarmadaQuotaStatus,
  type ResourceBinding,
  type WaitingChangeStatus,
} from '#api';
import {
  addLists,
  formatList,
  maskList,
  parseResourceList,
  Quantity,
  subtractLists,
  type ResourceList,
} from '#quantity';
import { freeUnder, type Decision } from './admission.js';
import { bindingCharge, memberShares } from './charge.js';
import { isTime, isWireList } from './cluster-usage.js';

/** Whose write was refused, so whose reaction retries it. */
export type RetryVia = 'template' | 'scheduler';

export interface WaitingChange {
  /** The ResourceBinding's name (its namespace is the record's). */
  binding: string;
  /** The stored binding's uid, for a refused update; none for a refused create. */
  uid?: string;
  /** The quota that refused it. */
  quota: string;
  /**
   * The increase asked and what was free, on the exceeded keys, at the latest refusal. Both are empty
   * for a refusal because the quota's usage was not counted yet ("status unknown"): such a change
   * waits for the reconciler's count, not for room.
   */
  requested: Record<string, string>;
  free: Record<string, string>;
  /**
   * What the binding would hold in all once the change is admitted, on every key it is charged (its
   * share on each member under the member keys, member-caps.ts): more
   * than `hard` on any key the quota limits when weighed (its limits may have been edited since the
   * refusal) and the change can never fit. Absent in records written before it existed: `requested`
   * stands in.
   */
  needs?: Record<string, string>;
  /** Karmada's scheduling priority of the binding (`spec.schedulePriority.priority`); absent is 0. */
  priority?: number;
  /** RFC 3339: the first refusal since the binding last had a write admitted. */
  since: string;
  /** RFC 3339: the latest refusal. */
  lastRefusedAt: string;
  retryVia: RetryVia;
  /** The binding's template (spec.resource), which a requeue by `template` annotates. */
  template?: { apiVersion: string; kind: string; name: string };
  /** RFC 3339: when the reconciler last requeued it. */
  requeuedAt?: string;
  /**
   * The refused write's spec (specDigest): once the binding is stored with it, the change is in
   * place and the wait is over (liveWaiting), however that write was admitted.
   */
  spec?: string;
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

/**
 * Whether a write changes the binding's spec (a create does): admitted, such a write ends a wait.
 * `spec.rescheduleTriggeredAt` alone does not: it is how a requeue pokes the scheduler, and the
 * admission of that poke must not erase the record the requeue has just marked (the refused change
 * is the scheduler's next write, not the poke).
 */
export function specChanged(object: ResourceBinding, old: ResourceBinding | undefined): boolean {
  const withoutPoke = (spec: ResourceBinding['spec'] | undefined) => ({
    ...spec,
    rescheduleTriggeredAt: undefined,
  });
  return old === undefined || !sameJson(withoutPoke(object.spec), withoutPoke(old.spec));
}

type Refusal = Extract<Decision, { allowed: false }>;

/** A waiting change as one refusal describes it, before recordRefusal dates it. */
export type RefusedChange = Omit<WaitingChange, 'since' | 'lastRefusedAt' | 'requeuedAt'>;

/**
 * A binding's spec as a short digest: a refused write and the binding stored with the same spec
 * have the same. Left out: the requeue's poke (`spec.rescheduleTriggeredAt`, as specChanged does),
 * and the priority class the services may add from the template (withTemplateClass: the webhook and
 * the reconciler add it for different quotas; the template's resourceVersion in `spec.resource`
 * tells its changes anyway). The API server serialises a custom object's keys sorted, so the same
 * spec reads back as the same JSON.
 */
export function specDigest(object: ResourceBinding): string {
  const given = object.spec?.replicaRequirements;
  // withTemplateClass makes `replicaRequirements` for the class alone when the binding had none.
  const rest = isJsonObject(given)
    ? Object.fromEntries(Object.entries(given).filter(([key]) => key !== 'priorityClassName'))
    : {};
  const requirements = !isJsonObject(given) ? given : Object.keys(rest).length > 0 ? rest : undefined;
  const spec = JSON.stringify({
    ...object.spec,
    rescheduleTriggeredAt: undefined,
    replicaRequirements: requirements,
  });
  return createHash('sha256').update(spec).digest('base64url').slice(0, 16);
}

/**
 * Karmada's scheduling priority of a binding: `spec.schedulePriority.priority`, the value of the
 * PriorityClass its PropagationPolicy names (Karmada's PriorityBasedScheduling); 0 without one, as
 * Karmada's scheduling queue takes it. A workload's own `priorityClassName` is only a name: reading
 * the PriorityClass objects for it would be a second, different ordering from Karmada's.
 */
export function schedulePriority(object: ResourceBinding): number {
  const spec: unknown = object.spec;
  const field = isJsonObject(spec) ? spec['schedulePriority'] : undefined;
  const priority = isJsonObject(field) ? field['priority'] : undefined;
  return typeof priority === 'number' && Number.isInteger(priority) ? priority : 0;
}

/**
 * Whether a refusal says the quota's usage is not counted for its current spec yet. admission.ts
 * words it as ResourceQuota does (usageUnknownMessage): `status unknown for quota: <name>, ...`.
 */
const usageUnknown = (refusal: Refusal): boolean =>
  refusal.shortfall === undefined &&
  refusal.exceeded.length === 0 &&
  refusal.message.startsWith(`status unknown for quota: ${refusal.quota},`);

/**
 * What a refusal records as a waiting change (recordRefusal adds the times), or undefined for a
 * refusal nothing but a change of the binding can cure (requests missing). A limit refusal records
 * its shortfall; a "status unknown" one records nothing requested: the reconciler's next count of
 * the quota cures it.
 */
export function waitingRefusal(
  object: ResourceBinding,
  old: ResourceBinding | undefined,
  refusal: Refusal,
): RefusedChange | undefined {
  if (refusal.shortfall === undefined && !usageUnknown(refusal)) return undefined;
  const resource = object.spec?.resource;
  const priority = schedulePriority(object);
  const change = {
    binding: object.metadata!.name!,
    // The stored binding's: a create's uid is new on each attempt.
    ...(old?.metadata?.uid ? { uid: old.metadata.uid } : {}),
    quota: refusal.quota,
    retryVia: refusedWriter(object, old),
    ...(resource?.apiVersion && resource.kind && resource.name
      ? { template: { apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name } }
      : {}),
    ...(priority !== 0 ? { priority } : {}),
    spec: specDigest(object),
  };
  if (refusal.shortfall === undefined) return { ...change, requested: {}, free: {} };
  // Each member's share too: a member cap the change can never fit under holds no room (member-caps.ts).
  const needs = { ...bindingCharge(object).charge, ...memberShares(object) };
  return { ...change, ...refusal.shortfall, needs: formatList(needs) };
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

/**
 * The record after one more refusal of the binding: `since` stays while it is the same object. A
 * refusal is stamped after the record's requeue even when this webhook's clock is behind the
 * reconciler's that stamped it (liveWaiting reads a requeue not refused after it as settled).
 */
export function recordRefusal(
  previous: WaitingChange | undefined,
  refusal: RefusedChange,
  now: Date,
): WaitingChange {
  const same = previous !== undefined && previous.uid === refusal.uid;
  const requeued = same && previous.requeuedAt ? Date.parse(previous.requeuedAt) : undefined;
  const at = new Date(
    requeued !== undefined && now.getTime() <= requeued ? requeued + 1 : now.getTime(),
  ).toISOString();
  return {
    ...refusal,
    since: same ? previous.since : at,
    lastRefusedAt: at,
    ...(same && previous.requeuedAt ? { requeuedAt: previous.requeuedAt } : {}),
  };
}

/**
 * An admitted write that changed a binding's spec, kept beside its waiting record for
 * ADMITTED_MARK_MS: a refusal another webhook replica decided before it but flushes after it must
 * not bring back the wait it ended.
 */
export interface AdmittedMark {
  /** The stored binding's uid the update was decided against; a create's, the new object's. */
  uid: string;
  /** RFC 3339: when it was admitted, by the admitting replica's clock. */
  at: string;
}

/** The mark of an admitted write that changes the spec (specChanged). */
export function admissionMark(
  object: ResourceBinding,
  old: ResourceBinding | undefined,
  now: Date,
): AdmittedMark {
  return { uid: (old ?? object).metadata?.uid ?? '', at: now.toISOString() };
}

/** How long an admission is remembered: far beyond any replica's flush delay (WAITING_FLUSH_MS). */
export const ADMITTED_MARK_MS = 60_000;

/** What one webhook replica tells Redis of a binding at a flush: its latest admission and refusal. */
export interface WaitingNews {
  admitted?: AdmittedMark;
  refused?: { change: RefusedChange; at: Date };
}

/**
 * The record's field in the namespace's hash: the binding's name for a refused update, `<name>/create`
 * for a refused create, so that neither overwrites the other when replicas flush out of order (once
 * the binding exists liveWaiting forgets the create's; once it is gone, the update's).
 */
export const waitingField = (record: { binding: string; uid?: string }): string =>
  record.uid === undefined ? `${record.binding}/create` : record.binding;

/**
 * What one field of the binding's (waitingField) holds after one replica's flush of `news`, given
 * what it holds now, and the admission mark. Replicas flush in any order, so news is ordered by when
 * it was decided, not by when it arrives (docs/concepts/waiting-changes.md#replicas): an admission
 * ends a refused create's wait, and a refusal's of the same object decided before it; a refusal is
 * recorded unless an admission or refusal of the same object (of the name, for a create's refusal,
 * which names none) was decided after it. A tie goes to the refusal: a wait brought back costs one
 * requeue, a lost one waits for Karmada's back-off.
 */
export function flushWaiting(
  stored: WaitingChange | undefined,
  mark: AdmittedMark | undefined,
  news: WaitingNews,
): { record: WaitingChange | undefined; mark: AdmittedMark | undefined } {
  const admitted = news.admitted;
  const nextMark =
    admitted === undefined
      ? mark
      : mark !== undefined && mark.uid === admitted.uid && Date.parse(mark.at) >= Date.parse(admitted.at)
        ? mark
        : admitted;
  // A refusal repeated within REFUSAL_REWRITE_AFTER_MS is not written (refusalNeedsWrite): the record
  // may stand for one that late, so only an admission after that ends it (or the binding stored with
  // the spec refused, liveWaiting).
  const ended = (record: WaitingChange, by: AdmittedMark): boolean =>
    record.uid === undefined ||
    (record.uid === by.uid &&
      Date.parse(by.at) > Date.parse(record.lastRefusedAt) + REFUSAL_REWRITE_AFTER_MS);
  let record = stored;
  if (admitted !== undefined && record !== undefined && ended(record, admitted)) record = undefined;
  const refused = news.refused;
  if (refused === undefined) return { record, mark: nextMark };
  // The refusal came after this flush's own admission: only another replica's can supersede it.
  const sameObject = (uid: string | undefined) =>
    refused.change.uid === undefined || uid === refused.change.uid;
  const after = (at: string) => Date.parse(at) > refused.at.getTime();
  const superseded =
    (mark !== undefined && sameObject(mark.uid) && after(mark.at)) ||
    (record !== undefined && sameObject(record.uid) && after(record.lastRefusedAt));
  if (superseded) return { record, mark: nextMark };
  const next = recordRefusal(record, refused.change, refused.at);
  return { record: refusalNeedsWrite(record, next) ? next : record, mark: nextMark };
}

/** The fields of binding `binding` a flush of `news` touches, each with the news for it (flushWaiting). */
export function flushedFields(binding: string, news: WaitingNews): { field: string; news: WaitingNews }[] {
  const refusedIn = news.refused && waitingField(news.refused.change);
  const fields = news.admitted ? [binding, waitingField({ binding })] : refusedIn ? [refusedIn] : [];
  if (refusedIn !== undefined && !fields.includes(refusedIn)) fields.push(refusedIn);
  return fields.map((field) => ({
    field,
    news: {
      ...(news.admitted ? { admitted: news.admitted } : {}),
      ...(news.refused && field === refusedIn ? { refused: news.refused } : {}),
    },
  }));
}

/** A stored admission mark, or undefined for one unreadable (it then orders nothing). */
export function decodeAdmittedMark(raw: string | null): AdmittedMark | undefined {
  if (raw === null) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return isJsonObject(value) && typeof value.uid === 'string' && isTime(value.at)
      ? (value as unknown as AdmittedMark)
      : undefined;
  } catch {
    return undefined;
  }
}

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
    !isWireList(value.requested) ||
    !isWireList(value.free) ||
    !isTime(value.since) ||
    !isTime(value.lastRefusedAt) ||
    (value.retryVia !== 'template' && value.retryVia !== 'scheduler') ||
    (value.requeuedAt !== undefined && !isTime(value.requeuedAt)) ||
    (value.spec !== undefined && typeof value.spec !== 'string') ||
    (value.needs !== undefined && !isWireList(value.needs)) ||
    (value.priority !== undefined && !Number.isInteger(value.priority))
  ) {
    return { error: 'not a waiting change record' };
  }
  return value as unknown as WaitingChange;
}

/**
 * The records still waiting, and the records to forget: those of deleted or re-created
 * bindings (withdrawn), refused creates whose binding now exists (created), refused updates whose
 * binding is stored with the very spec refused (in place: another write of it was admitted, say
 * Karmada's retry less than a second after the refusal, which cannot end the wait in flushWaiting),
 * requeued ones not refused since (admitted or withdrawn), and ones Karmada stopped retrying
 * (abandoned).
 */
export function liveWaiting(
  records: readonly WaitingChange[],
  bindings: readonly ResourceBinding[],
  now: Date,
): { live: WaitingChange[]; forget: WaitingChange[] } {
  const byName = new Map(bindings.map((b) => [b.metadata?.name, b]));
  const live: WaitingChange[] = [];
  const forget: WaitingChange[] = [];
  for (const record of records) {
    const lastRefused = Date.parse(record.lastRefusedAt);
    const requeued = record.requeuedAt ? Date.parse(record.requeuedAt) : undefined;
    // A refused update names the stored binding's uid; a refused create has none (each attempt gets
    // a new one), and waits until a binding of that name exists.
    const binding = byName.get(record.binding);
    const gone = record.uid === undefined ? binding !== undefined : binding?.metadata?.uid !== record.uid;
    const inPlace =
      record.uid !== undefined &&
      record.spec !== undefined &&
      binding !== undefined &&
      !gone &&
      specDigest(binding) === record.spec;
    const settled =
      requeued !== undefined && lastRefused < requeued && now.getTime() - requeued > REQUEUE_SETTLE_MS;
    const abandoned = now.getTime() - lastRefused > ABANDONED_AFTER_MS;
    if (gone || inPlace || settled || abandoned) forget.push(record);
    else live.push(record);
  }
  return { live, forget };
}

/** The order of `status.waiting`: oldest first, then by binding name. */
export const bySince = (
  a: { since: string; binding: string },
  b: { since: string; binding: string },
): number =>
  a.since < b.since ? -1 : a.since > b.since ? 1 : a.binding < b.binding ? -1 : a.binding > b.binding ? 1 : 0;

/** A quota's `status.waiting`: its waiting changes, oldest first. */
export function waitingStatus(quota: string, live: readonly WaitingChange[]): WaitingChangeStatus[] {
  return live
    .filter((record) => record.quota === quota)
    .sort(bySince)
    .map(({ binding, requested, free, since }) => ({ binding, requested, free, since }));
}

/** What a requeue weighs a change against: the quota's limits and what it has free now. */
export interface QuotaRoom {
  hard: ResourceList;
  /** hard - used - reserved, per key of hard, never below 0. */
  free: ResourceList;
}

/** A quota's room, from the status a reconcile just computed. */
export function roomOf(status: KarmadaQuotaStatus): QuotaRoom {
  const list = (value: unknown) => parseResourceList(value ?? {}, 'status').list;
  const hard = list(status.hard);
  return {
    hard,
    free: freeUnder(hard, addLists(list(status.used), list(status.reserved)), Object.keys(hard)),
  };
}

/** Every key of `requested` within `available`, a key `available` lacks being 0. */
const fits = (requested: ResourceList, available: ResourceList): boolean =>
  Object.entries(requested).every(([key, q]) => q.cmp(available[key] ?? Quantity.zero()) <= 0);

/**
 * A change that does not fit but could once enough frees, waiting this long, holds the room it asks:
 * nothing after it in requeue order that needs that room is requeued ahead of it. Long against the
 * requeue interval (10 s) and Karmada's first retries, short against its 1000 s back-off.
 */
export const STARVING_AFTER_MS = 300_000;

/** Requeue order: higher priority first, then oldest first, then by name. */
const requeueFirst = (a: WaitingChange, b: WaitingChange): number =>
  (b.priority ?? 0) - (a.priority ?? 0) || bySince(a, b);

/**
 * The waiting changes to requeue now, per quota in requeue order (requeueFirst), each if it fits in
 * what is still free after the ones chosen before it. One that does not fit is skipped and blocks
 * nothing, unless it has waited STARVING_AFTER_MS and could fit once enough frees (what it `needs`
 * is within hard): then what it asks is counted as taken, so no change after it takes that room
 * first. A change that can never fit is neither requeued nor holds room. A change requeued less than
 * `minIntervalMs` ago, or not refused since its requeue (its retry admitted, or not sent yet: it
 * settles after REQUEUE_SETTLE_MS), is in flight: it is not requeued again, and what it asked is
 * counted as taken. A key the quota no longer limits asks nothing of it, and a quota absent from
 * `rooms` (every quota the reconcile listed is there: this one was deleted) limits nothing: such a
 * change is requeued.
 */
export function requeueOrder(
  live: readonly WaitingChange[],
  rooms: ReadonlyMap<string, QuotaRoom>,
  now: Date,
  minIntervalMs: number,
): WaitingChange[] {
  const left = new Map([...rooms].map(([quota, room]) => [quota, room.free]));
  const chosen: WaitingChange[] = [];
  for (const record of [...live].sort(requeueFirst)) {
    const requeued = record.requeuedAt === undefined ? undefined : Date.parse(record.requeuedAt);
    const inFlight =
      requeued !== undefined &&
      (now.getTime() - requeued < minIntervalMs || Date.parse(record.lastRefusedAt) < requeued);
    const room = rooms.get(record.quota);
    if (room === undefined) {
      if (!inFlight) chosen.push(record);
      continue;
    }
    const available = left.get(record.quota)!;
    const limited = Object.keys(room.hard);
    const requested = maskList(parseResourceList(record.requested, 'requested').list, limited);
    const canEverFit = fits(
      maskList(parseResourceList(record.needs ?? record.requested, 'needs').list, limited),
      room.hard,
    );
    const fitsNow = canEverFit && fits(requested, available);
    const starving = canEverFit && now.getTime() - Date.parse(record.since) >= STARVING_AFTER_MS;
    if (inFlight || fitsNow || starving) left.set(record.quota, subtractLists(available, requested));
    if (fitsNow && !inFlight) chosen.push(record);
  }
  return chosen;
}
