/**
 * The reconciler's side of reservations: what each binding of the namespace holds on a quota beyond
 * the usage observed for it, `reserved = max(0, effective - observed)`. Pure; problems are appended to
 * `errors`. The rules, and what becomes of each entry of `status.reservations[]` (pending, lapsed,
 * retired, of a missing, deleted or other object), are
 * docs/concepts/accounting.md#when-quota-is-released-the-reconciler and
 * docs/concepts/accounting.md#claim-retirement.
 */
import { excessOf, maskList, maxLists, removeZeros, type ResourceList } from '#quantity';
import { isJsonObject, type KarmadaQuota, type ResourceBinding } from '#api';
import { bindingCharge, withMemberShares } from './charge.js';
import { observedAgainstShares, type ClusterView, compareNames } from './cluster-usage.js';
import { bindingMatchesScopes } from './scopes.js';
import {
  bindingKeyString,
  claimAdmittedAt,
  isExpired,
  isLaterVersion,
  type ReservationEntry,
} from './state.js';

/** How the webhook times claims; known to the reconciler to settle claims that can no longer land. */
export interface ClaimTiming {
  ttlSeconds: number;
  landingWindowSeconds: number;
}

export interface SettleInput {
  quota: KarmadaQuota;
  /** The namespace whose bindings these are (a ClusterKarmadaQuota settles each on its own). */
  namespace: string;
  hardKeys: readonly string[];
  views: readonly ClusterView[];
  /** Bindings of `namespace` by name. */
  bindings: ReadonlyMap<string, ResourceBinding>;
  /**
   * Whether the quota's `used` counts this binding's workload (a scoped quota counts only workloads
   * of bindings in its scopes): only usage counted in `used` may be taken off a reservation.
   */
  countsUsageOf: (rb: ResourceBinding) => boolean;
  now: Date;
  deletedBindingUids?: ReadonlySet<string>;
  timing?: ClaimTiming;
  errors: string[];
}

/** Is the binding being deleted? A deletion is final: it holds nothing from now on. */
export function beingDeleted(rb: ResourceBinding): boolean {
  return rb.metadata?.deletionTimestamp !== undefined && rb.metadata.deletionTimestamp !== null;
}

const FINISHED_JOB_CONDITIONS = ['Complete', 'Failed'];
const FINISHED_POD_PHASES = ['Succeeded', 'Failed'];

/**
 * Has the binding's workload run to completion in every cluster it was scheduled to? Only kinds whose
 * pods end (a batch Job, a bare Pod) can finish; Karmada's aggregated status must report each
 * scheduled cluster finished (a Job with a Complete or Failed condition, a Pod in a final phase).
 */
export function workloadFinished(rb: ResourceBinding): boolean {
  const resource: unknown = rb?.spec?.resource;
  if (!isJsonObject(resource)) return false;
  const { kind, apiVersion } = resource;
  const isJob = kind === 'Job' && typeof apiVersion === 'string' && apiVersion.startsWith('batch/');
  const isPod = kind === 'Pod' && apiVersion === 'v1';
  if (!isJob && !isPod) return false;
  const statuses: unknown = (rb as { status?: { aggregatedStatus?: unknown } }).status?.aggregatedStatus;
  if (!Array.isArray(statuses) || statuses.length === 0) return false;
  const finishedIn = new Set<string>();
  for (const item of statuses) {
    if (!isJsonObject(item) || typeof item['clusterName'] !== 'string' || !isJsonObject(item['status']))
      return false;
    const status = item['status'];
    const finished = isJob
      ? Array.isArray(status['conditions']) &&
        status['conditions'].some(
          (c) =>
            isJsonObject(c) &&
            FINISHED_JOB_CONDITIONS.includes(c['type'] as string) &&
            c['status'] === 'True',
        )
      : FINISHED_POD_PHASES.includes(status['phase'] as string);
    if (!finished) return false;
    finishedIn.add(item['clusterName']);
  }
  const scheduled: unknown = rb.spec?.clusters;
  return (Array.isArray(scheduled) ? scheduled : []).every(
    (target) => isJsonObject(target) && finishedIn.has(target['name'] as string),
  );
}

/**
 * What a stored binding holds on the quota: its charge on the quota's hard keys when the quota's scopes
 * select it; nothing when they do not, when it is being deleted, or when its workload has finished
 * (workloadFinished). Its problems go to `errors`.
 */
export function storedCharge(
  rb: ResourceBinding,
  input: Pick<SettleInput, 'quota' | 'hardKeys' | 'errors'>,
): ResourceList {
  if (holdsNothing(rb) || !bindingMatchesScopes(input.quota, rb)) return {};
  const charged = bindingCharge(rb);
  for (const error of charged.errors) {
    input.errors.push(`ResourceBinding ${rb.metadata?.namespace}/${rb.metadata?.name}: ${error}`);
  }
  return removeZeros(maskList(withMemberShares(rb, charged.charge, input.hardKeys), input.hardKeys));
}

/**
 * Does the binding hold nothing on any quota, by the rule above? Being deleted (final), or its
 * workload finished: until its aggregated status turns back to running (a member's Job re-created,
 * with no change the webhook sees; then it is counted in full, a documented exception).
 */
export function holdsNothing(rb: ResourceBinding): boolean {
  return beingDeleted(rb) || workloadFinished(rb);
}

/*
 * How the webhook charges a change by the rule above: what the new object will hold, less what the
 * stored object holds now, each as the reconciler counts it.
 */

/** Does the quota check a change of this object: it selects it, and the object holds something? */
export function checksChangeOn(quota: KarmadaQuota, object: ResourceBinding): boolean {
  return !holdsNothing(object) && bindingMatchesScopes(quota, object);
}

/**
 * Does the stored object's charge count as held for an update (on the quotas whose scopes select
 * it)? Only when the reconciler counts it now: a finished workload made to run again (scheduled to a
 * cluster it has not finished in) held nothing, so it is charged in full.
 */
export function oldChargeHeld(old: ResourceBinding): boolean {
  return !holdsNothing(old);
}

/**
 * The usage observed for the binding that nets its charge: what the quota's `used` counts of it, each
 * target cluster's within that cluster's share of the charge (observedAgainstShares).
 */
const countedUsage = (rb: ResourceBinding, input: SettleInput): ResourceList =>
  input.countsUsageOf(rb) ? observedAgainstShares(rb, input.views).within : {};

/** The entry a stored binding gets from its own charge alone, or undefined when it reserves nothing. */
function derived(rb: ResourceBinding, input: SettleInput): ReservationEntry | undefined {
  const charge = storedCharge(rb, input);
  const reserved = excessOf(charge, countedUsage(rb, input));
  if (Object.keys(reserved).length === 0) return undefined;
  const binding = {
    namespace: rb.metadata?.namespace ?? input.namespace,
    name: rb.metadata!.name!,
  };
  const uid = rb.metadata?.uid;
  return { binding: uid ? { ...binding, uid } : binding, reserved, charge };
}

/** Has this claim of another object been tried and failed against the stored binding of its name? */
function provenUnstored(entry: ReservationEntry, input: SettleInput): boolean {
  if (input.timing === undefined) return false;
  const admittedAt = claimAdmittedAt(entry, input.timing.ttlSeconds);
  return (
    admittedAt !== undefined && input.now.getTime() >= admittedAt + input.timing.landingWindowSeconds * 1000
  );
}

/**
 * Has every change that relies on this claim of the stored binding's own object landed or failed
 * (docs/concepts/accounting.md, "Claim retirement")? A create's claim once the object is stored (its uid
 * was fixed before admission; an update relying on the claim would have marked it 'Update'); an
 * update's once the object is stored at a version later than every one an admission relying on it
 * was decided against (an update lands only on the version it was decided against). Any binding list
 * shows this, however old: it is never undone.
 */
function retired(entry: ReservationEntry, rb: ResourceBinding): boolean {
  if (entry.binding.uid === undefined || entry.binding.uid !== rb.metadata?.uid) return false;
  if (entry.operation === undefined) return true;
  return isLaterVersion(rb.metadata?.resourceVersion, entry.resourceVersion);
}

/** One entry against its binding; undefined: drop it (the binding's own entry may still be derived). */
function settle(entry: ReservationEntry, input: SettleInput): ReservationEntry | undefined | 'derive' {
  if (entry.binding.uid !== undefined && input.deletedBindingUids?.has(entry.binding.uid)) return undefined;
  const rb = input.bindings.get(entry.binding.name);
  const pending = entry.expirationTime !== undefined && !isExpired(entry, input.now);
  const masked = (): ReservationEntry => ({
    ...entry,
    reserved: removeZeros(maskList(entry.reserved, input.hardKeys)),
    charge: removeZeros(maskList(entry.charge, input.hardKeys)),
  });
  const uid = rb?.metadata?.uid;
  const otherObject = entry.binding.uid !== undefined && !!uid && uid !== entry.binding.uid;
  // The object an update claim is for is no longer stored (the list began after the update read it):
  // the update cannot land.
  const updateOfGone = entry.operation === 'Update' && (rb === undefined || otherObject);
  // No stored object to observe usage for: the claim reserves its whole charge (usage seen for the
  // workload's name belongs to an older object, whose pods are going).
  if (rb === undefined)
    return pending && !updateOfGone ? { ...masked(), reserved: masked().charge } : undefined;
  if (otherObject && (!pending || updateOfGone || provenUnstored(entry, input))) return 'derive';
  if (pending && retired(entry, rb)) return 'derive';
  // Being deleted, the binding holds nothing: its own claims go. Another object's claim stays: its
  // create may still be stored once this one is gone.
  if (entry.binding.uid !== undefined && !otherObject && beingDeleted(rb)) return undefined;
  if (!pending) return 'derive';
  // A claim, of this object or of another one of its name that may still be stored: it holds the
  // stored binding's charge too, since the name has one entry.
  const effective = maxLists(masked().charge, storedCharge(rb, input));
  const excess = excessOf(effective, countedUsage(rb, input));
  const next: ReservationEntry = {
    // Kept under its own uid, or none: a claim of no uid may be for either object of the name.
    binding: { ...entry.binding },
    // A claim that may be another object's (another uid, or none beside a stored object, which has
    // one) is a create stored only once this object is gone, when its pods are on their way out and
    // net nothing: it holds its whole charge while pending.
    reserved: uid !== undefined && entry.binding.uid !== uid ? maxLists(excess, masked().charge) : excess,
    charge: effective,
  };
  next.expirationTime = entry.expirationTime;
  if (entry.operation !== undefined) next.operation = entry.operation;
  if (entry.resourceVersion !== undefined) next.resourceVersion = entry.resourceVersion;
  return next;
}

/**
 * Every reservation the quota holds now (docs/concepts/accounting.md#when-quota-is-released-the-reconciler).
 * `input.now` must not be later than the start of the binding list: a claim counts as expired only if
 * it expired before the list began, so that the list shows every change that relied on it.
 */
export function settleReservations(
  entries: readonly ReservationEntry[],
  input: SettleInput,
): ReservationEntry[] {
  const result: ReservationEntry[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const key = bindingKeyString(entry.binding);
    if (seen.has(key)) {
      input.errors.push(
        `status.reservations: more than one reservation for ResourceBinding ${key}; only the first is kept`,
      );
      continue;
    }
    seen.add(key);
    const settled = settle(entry, input);
    // An entry dropped for a deleted object leaves the stored object of its name (another one) to derive.
    const rb = input.bindings.get(entry.binding.name);
    const stored =
      rb !== undefined && !input.deletedBindingUids?.has(rb.metadata?.uid ?? '') ? rb : undefined;
    const next =
      settled === 'derive' ||
      (settled === undefined && stored !== undefined && stored.metadata?.uid !== entry.binding.uid)
        ? stored && derived(stored, input)
        : settled;
    if (next !== undefined) result.push(next);
  }
  const namespace = input.namespace;
  const unreserved = [...input.bindings.keys()]
    .filter((name) => !seen.has(bindingKeyString({ namespace, name })))
    .sort(compareNames);
  for (const name of unreserved) {
    const next = derived(input.bindings.get(name)!, input);
    if (next !== undefined) result.push(next);
  }
  return result;
}
