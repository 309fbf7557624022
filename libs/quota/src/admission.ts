/**
 * The admission decision for a batch of binding changes against a running total. Pure: it takes the
 * quotas' states and returns their new states; the webhook writes them with one compare-and-swap per
 * quota. The rules (what a change already holds, its increase, the order of the checks, the claim it
 * writes) are docs/concepts/accounting.md#when-quota-is-taken-admission; the denial's wording is
 * docs/reference/webhook.md#the-denial; Warn and DryRun are docs/concepts/enforcement.md.
 * Admission never releases quota: the reconciler does (reservations.ts).
 */
import {
  addLists,
  excessOf,
  formatList,
  formatListInline,
  maskList,
  maxLists,
  Quantity,
  removeZeros,
  type ResourceList,
} from '#quantity';
import type { Enforcement, WouldBeDeniedStatus } from '#api';
import { addWouldBeDenied } from './enforcement.js';
import { cappedOn, memberPart, splitMemberKey } from './member-caps.js';
import type { QuotaClaim } from './owner-claims.js';
import {
  bindingKeyString,
  clusterQuotaNamed,
  isExpired,
  type BindingKey,
  type QuotaState,
  isLaterVersion,
  type ReservationEntry,
} from './state.js';

export interface AdmissionItem {
  binding: BindingKey;
  /** The binding's new charge (bindingCharge). */
  charge: ResourceList;
  /**
   * For an UPDATE: the persisted old object's charge, and the names of the quotas it counts as held on
   * (those whose scopes the old object matched, when oldChargeHeld; none otherwise).
   */
  old?: {
    charge: ResourceList;
    quotas: readonly string[];
    /** The stored object's resourceVersion the update was decided against, when known. */
    resourceVersion?: string;
  };
  dryRun: boolean;
  /**
   * Per quota name, why the binding breaks that quota's "must specify" rule (missingRequestErrors
   * against the quota's hard keys); absent or empty when it declares every tracked request.
   */
  missingRequests?: Readonly<Record<string, readonly string[]>>;
  /**
   * Per quota name, why that quota cannot bound the binding's pods (unboundedPodsRefusals): asked of
   * every quota, whether its scopes match or not, before anything else.
   */
  unboundedPods?: Readonly<Record<string, string>>;
  /**
   * Per quota name, what the admission owner's record of the binding claims (owner-claims.ts): when
   * given, it stands for the quotas' claim entries, which are then not looked up (none claims {}).
   */
  claimed?: Readonly<Record<string, ResourceList>>;
}

/** A refusal a quota whose enforcement is Warn or DryRun did not enforce (enforcement.ts). */
export interface NotEnforced {
  quota: string;
  enforcement: Exclude<Enforcement, 'Deny'>;
  message: string;
}

export type Decision =
  | {
      allowed: true;
      /** The refusals of quotas that only warn or record, in quota order; absent when none. */
      notEnforced?: NotEnforced[];
    }
  | {
      allowed: false;
      message: string;
      quota: string;
      exceeded: string[];
      /**
       * For a limit refusal: the increase asked and what was free (hard - used - reserved, never
       * below 0), on the exceeded keys, in wire form: what a waiting change records (waiting.ts).
       */
      shortfall?: { requested: Record<string, string>; free: Record<string, string> };
    };

export interface AdmitOptions {
  now: Date;
  /** How long an admitted claim stays pending (held whatever the stored binding says). */
  ttlSeconds: number;
  /** The longest an admitted change can take to be stored (the API server's request timeout). */
  landingWindowSeconds: number;
}

export interface BatchResult {
  /** One per item, in order. */
  decisions: Decision[];
  /**
   * One per item: true for an admitted item whose answer depends on the quotas' write landing (it
   * changed a reservation, or relies on a claim this batch wrote). The others can be answered at once.
   */
  awaitsWrite: boolean[];
  /** The new states, in the given order (an unchanged quota is returned as given). */
  quotas: QuotaState[];
  /** Names of the quotas whose reservations changed (the ones to write), in the given order. */
  changed: string[];
  /**
   * One per item: for an admitted item that is not a dry run, what it claims on each quota it
   * raises (by name: the charge weighed and the increase), for the owner's records; else undefined.
   */
  claims: (ReadonlyMap<string, QuotaClaim> | undefined)[];
}

const ZERO = Quantity.zero();

const get = (list: ResourceList, key: string): Quantity =>
  Object.hasOwn(list, key) ? (list[key] as Quantity) : ZERO;

/** What `hard` leaves free after `taken`, on each of `keys`, never below 0. */
export function freeUnder(hard: ResourceList, taken: ResourceList, keys: readonly string[]): ResourceList {
  return Object.fromEntries(
    keys.map((key) => {
      const left = get(hard, key).sub(get(taken, key));
      return [key, left.sign() < 0 ? ZERO : left];
    }),
  );
}

/**
 * Kubernetes' quota denial message. When only member caps are exceeded (member-caps.ts), it names the
 * first such member and gives its caps under their plain resource names.
 */
export function exceededMessage(
  quota: string,
  requested: ResourceList,
  used: ResourceList,
  hard: ResourceList,
  exceeded: readonly string[],
): string {
  const global = exceeded.filter((key) => splitMemberKey(key) === undefined);
  const member = global.length > 0 ? undefined : splitMemberKey(exceeded[0] ?? '')?.member;
  if (member === undefined)
    return (
      `exceeded quota: ${quota}, requested: ${formatListInline(requested, global)}, ` +
      `used: ${formatListInline(used, global)}, limited: ${formatListInline(hard, global)}`
    );
  const keys = cappedOn(exceeded, member);
  const on = (list: ResourceList) => formatListInline(memberPart(list, member), keys);
  return (
    `exceeded quota: ${quota} on member cluster ${member}, requested: ${on(requested)}, ` +
    `used: ${on(used)}, limited: ${on(hard)}`
  );
}

/** ResourceQuota's refusal while a quota's usage has not been counted yet. */
export function usageUnknownMessage(quota: string, keys: readonly string[]): string {
  const why = clusterQuotaNamed(quota)
    ? `a new quota, an edited spec, or a namespace its namespaceSelector picks that status.namespaces ` +
      `does not list yet, or lists as counted before its labels last changed`
    : `a new quota, a new limit, or an edited spec: status.observedGeneration is behind metadata.generation`;
  return (
    `status unknown for quota: ${quota}, resources: ${keys.join(',')}: karmada-quota has not counted ` +
    `the usage of these resources for the quota's current spec yet (${why}); retry in a few seconds, ` +
    `and if it persists check that the karmada-quota reconciler is running`
  );
}

/** The refusal of an increase on a member whose cap a quota capping members by label cannot tell yet. */
export function memberUnknownMessage(quota: string, member: string): string {
  return (
    `status unknown for quota: ${quota}, member cluster: ${member}: the quota caps members by label ` +
    `(spec.clusters[].labelSelector) and karmada-quota has not resolved this member's cap yet (a ` +
    `member just joined, or the quota was just edited); retry in a few seconds, and if it persists ` +
    `check that the karmada-quota reconciler is running and may list Clusters`
  );
}

/** A quota while a batch runs: reservations indexed by binding, and the running reserved total. */
interface WorkingQuota {
  readonly original: QuotaState;
  readonly enforcement: Enforcement;
  wouldBeDenied: readonly WouldBeDeniedStatus[];
  readonly hardKeys: string[];
  /** The state's lists until the first change, then `own` (a batch that only refuses copies nothing). */
  entries: readonly ReservationEntry[];
  index: ReadonlyMap<string, number>;
  own?: { entries: ReservationEntry[]; index: Map<string, number> };
  total: ResourceList;
  changed: boolean;
  /** Bindings whose entry this batch changed: an item relying on one waits for the write too. */
  readonly touched: Set<string>;
}

/**
 * Each claim list's index by binding, once computed: a batch decided on the states an earlier batch
 * returned (the webhook keeps them with its cached quotas) does not index them again. Sound because a
 * QuotaState's reservations are never changed in place.
 */
const indexes = new WeakMap<readonly ReservationEntry[], ReadonlyMap<string, number>>();

function indexOf(entries: readonly ReservationEntry[]): ReadonlyMap<string, number> {
  let index = indexes.get(entries);
  if (index === undefined) {
    const built = new Map<string, number>();
    entries.forEach((entry, i) => {
      const key = bindingKeyString(entry.binding);
      if (!built.has(key)) built.set(key, i);
    });
    index = built;
    indexes.set(entries, index);
  }
  return index;
}

function workingQuota(state: QuotaState): WorkingQuota {
  return {
    original: state,
    enforcement: state.enforcement ?? 'Deny',
    wouldBeDenied: state.wouldBeDenied ?? [],
    hardKeys: Object.keys(state.hard),
    entries: state.reservations,
    index: indexOf(state.reservations),
    total: state.reserved,
    changed: false,
    touched: new Set(),
  };
}

/** What admitting an item would do to one quota; undefined when the quota needs nothing. */
interface Plan {
  quota: WorkingQuota;
  /** The binding's existing reservation, of whatever uid. */
  existing?: ReservationEntry;
  /** What the existing reservation claims while pending, whatever its uid ({} if nothing). */
  pending: ResourceList;
  charge: ResourceList;
  increase: ResourceList;
  /** A target member whose cap the quota cannot tell yet (it caps members by label). */
  unresolvedMember?: string;
}

/**
 * Is the entry this very change's claim, so that the change may rely on it: a re-review of the same
 * CREATE (its uid, a create's claim) or of the same UPDATE (its uid, decided against the same
 * resourceVersion)? Its change cannot have landed yet. A claim whose change may have landed is not:
 * the object may have shrunk since, its pods on their way out holding the room the claim counts
 * (an update of the object shows its create landed; one decided against another version may follow
 * the claim's landing and a decrease), nor is a claim naming no uid (merged: any object's).
 */
function claimCovers(entry: ReservationEntry, item: AdmissionItem): boolean {
  if (item.binding.uid === undefined || entry.binding.uid !== item.binding.uid) return false;
  if (item.old === undefined) return entry.operation === undefined;
  return (
    entry.operation === 'Update' &&
    entry.resourceVersion !== undefined &&
    entry.resourceVersion === item.old.resourceVersion
  );
}

function plan(quota: WorkingQuota, item: AdmissionItem, options: AdmitOptions): Plan | undefined {
  const keys = withUnresolvedMembers(quota, item);
  const charge = removeZeros(maskList(item.charge, keys));
  const stored =
    item.old !== undefined && item.old.quotas.includes(quota.original.name)
      ? maskList(item.old.charge, keys)
      : {};
  const byOwner = item.claimed && maskList(item.claimed[quota.original.name] ?? {}, keys);
  const position = byOwner ? undefined : quota.index.get(bindingKeyString(item.binding));
  const existing = position === undefined ? undefined : quota.entries[position];
  const claimUntil = (at: Date): ResourceList =>
    existing !== undefined && existing.expirationTime !== undefined && !isExpired(existing, at)
      ? maskList(existing.charge, keys)
      : {};
  const claimed =
    byOwner ??
    (existing !== undefined && claimCovers(existing, item)
      ? claimUntil(new Date(options.now.getTime() + options.landingWindowSeconds * 1000))
      : {});
  const increase = excessOf(charge, maxLists(stored, claimed));
  if (Object.keys(increase).length === 0) return undefined;
  const resolved = quota.original.capsResolvedFor;
  const unresolvedMember =
    resolved &&
    Object.keys(increase)
      .map((key) => splitMemberKey(key)?.member)
      .find((member) => member !== undefined && !resolved.has(member));
  return {
    quota,
    existing,
    pending: claimUntil(options.now),
    charge,
    increase,
    ...(unresolvedMember ? { unresolvedMember } : {}),
  };
}

/**
 * The keys a plan weighs: the quota's, and for a quota capping members by label, the item's member
 * keys of each member whose cap it has not resolved. A change that raises what such a member runs
 * is refused (or, not enforced, claimed on those keys, so that its claim covers that member once
 * its cap is known).
 */
function withUnresolvedMembers(quota: WorkingQuota, item: AdmissionItem): string[] {
  const resolved = quota.original.capsResolvedFor;
  if (resolved === undefined) return quota.hardKeys;
  const unresolved = Object.keys(item.charge).filter((key) => {
    const member = splitMemberKey(key)?.member;
    return member !== undefined && !resolved.has(member);
  });
  return unresolved.length === 0 ? quota.hardKeys : [...quota.hardKeys, ...unresolved];
}

/**
 * The resourceVersion an entry written for an UPDATE of its own object records: the later of the
 * update's and the claim's it carries, none when either is unknown (held until it expires).
 */
function recordedVersion(existing: ReservationEntry | undefined, item: AdmissionItem): string | undefined {
  const version = item.old?.resourceVersion;
  const carried = existing !== undefined && existing.expirationTime !== undefined ? existing : undefined;
  if (carried === undefined || carried.operation === undefined) return version;
  if (carried.resourceVersion === undefined || version === undefined) return undefined;
  return isLaterVersion(carried.resourceVersion, version) ? carried.resourceVersion : version;
}

/** Why the quota refuses the plan, or undefined when it admits it. */
function refusal(p: Plan): Exclude<Decision, { allowed: true }> | undefined {
  const { name, hard, used } = p.quota.original;
  if (p.unresolvedMember !== undefined)
    return {
      allowed: false,
      quota: name,
      exceeded: [],
      message: memberUnknownMessage(name, p.unresolvedMember),
    };
  const unknown = Object.keys(p.increase)
    .filter((key) => !Object.hasOwn(used, key))
    .sort();
  if (unknown.length > 0) {
    return { allowed: false, quota: name, exceeded: [], message: usageUnknownMessage(name, unknown) };
  }
  const exceeded = Object.keys(p.increase)
    .filter(
      (key) =>
        get(used, key)
          .add(get(p.quota.total, key))
          .add(p.increase[key] as Quantity)
          .cmp(get(hard, key)) > 0,
    )
    .sort();
  if (exceeded.length === 0) return undefined;
  const taken = addLists(used, p.quota.total);
  return {
    allowed: false,
    quota: name,
    exceeded,
    message: exceededMessage(name, p.increase, taken, hard, exceeded),
    shortfall: {
      requested: formatList(maskList(p.increase, exceeded)),
      free: formatList(freeUnder(hard, taken, exceeded)),
    },
  };
}

/** The quota's own lists to change, copied from the state's at the first change. */
function ownLists(quota: WorkingQuota): NonNullable<WorkingQuota['own']> {
  if (quota.own === undefined) {
    quota.own = { entries: [...quota.entries], index: new Map(quota.index) };
    quota.entries = quota.own.entries;
    quota.index = quota.own.index;
  }
  return quota.own;
}

/** Records an admitted plan in its binding's entry (docs/concepts/accounting.md#when-quota-is-taken-admission). */
function apply(p: Plan, item: AdmissionItem, options: AdmitOptions): void {
  const quota = p.quota;
  const next: ReservationEntry = {
    binding: { namespace: item.binding.namespace, name: item.binding.name },
    reserved: removeZeros(addLists(p.existing?.reserved ?? {}, p.increase)),
    // Never less than a pending claim: others may have relied on it until its expiration.
    charge: maxLists(p.pending, p.charge),
    expirationTime: new Date(options.now.getTime() + options.ttlSeconds * 1000).toISOString(),
  };
  // A pending claim not known to be this object's (another uid, or none: it merged two objects'
  // claims) is merged, not taken over: the entry then names no uid, which the reconciler settles
  // against whichever object of the name is stored. Naming this object's uid again would let the
  // deletion of this object release the other object's claim while its create may still land.
  const notKnownOurs =
    p.existing !== undefined &&
    (p.existing.binding.uid === undefined || p.existing.binding.uid !== item.binding.uid);
  const carriesOtherClaim = notKnownOurs && Object.keys(p.pending).length > 0;
  // An UPDATE's object was stored when it was admitted: the claim can land only while it stays stored,
  // and so can a pending claim of the same object this entry carries (its create has landed). Not
  // when the entry has a claim not known to be this object's, even one lapsed by this clock: the
  // reconciler's clock may still hold it for a create not stored yet.
  const otherClaimMayLive = notKnownOurs && p.existing?.expirationTime !== undefined;
  // An update's claim that cannot be marked so names no uid either: under its object's uid it would
  // read as a create's, retired once that object is stored, before the update lands.
  const unmarkedUpdate = item.old !== undefined && otherClaimMayLive;
  const uid = item.binding.uid ?? p.existing?.binding.uid;
  if (uid !== undefined && !carriesOtherClaim && !unmarkedUpdate) next.binding.uid = uid;
  if (item.old !== undefined && item.binding.uid !== undefined && !otherClaimMayLive) {
    next.operation = 'Update';
    const version = recordedVersion(p.existing, item);
    if (version !== undefined) next.resourceVersion = version;
  }

  quota.total = addLists(quota.total, p.increase);
  const { entries, index } = ownLists(quota);
  const position = index.get(bindingKeyString(item.binding));
  if (position !== undefined) {
    entries[position] = next;
  } else {
    index.set(bindingKeyString(item.binding), entries.length);
    entries.push(next);
  }
  quota.changed = true;
  quota.touched.add(bindingKeyString(item.binding));
}

/** Records a refusal the quota did not enforce in its `wouldBeDenied` (enforcement.ts). */
function note(quota: WorkingQuota, item: AdmissionItem, message: string, now: Date): void {
  const entry = {
    // One ClusterKarmadaQuota's entries span namespaces: each names its binding's.
    binding: quota.original.spansNamespaces ? bindingKeyString(item.binding) : item.binding.name,
    enforcement: quota.enforcement as NotEnforced['enforcement'],
    message,
    at: now.toISOString(),
  };
  quota.wouldBeDenied = addWouldBeDenied(quota.wouldBeDenied, entry, now);
  quota.changed = true;
  quota.touched.add(bindingKeyString(item.binding));
}

/**
 * Does an UPDATE ask nothing of any quota? True when its new charge exceeds the stored one on no key
 * and its old charge counts as held on exactly the quotas that check the new object (`holdAlike`):
 * every quota would admit it without a check or a write, so it can be answered without reading them.
 */
export function increasesNothing(charge: ResourceList, oldCharge: ResourceList, holdAlike: boolean): boolean {
  return holdAlike && Object.keys(excessOf(charge, oldCharge)).length === 0;
}

/** A CREATE with replicas, or an UPDATE raising them: what the "must specify" rule applies to. */
function addsPods(item: AdmissionItem): boolean {
  const after = get(item.charge, 'pods');
  return after.sign() > 0 && (item.old === undefined || after.cmp(get(item.old.charge, 'pods')) > 0);
}

/**
 * Decides a batch of admissions against the quotas' states (see the file comment). `matches(quota, i)`
 * tells whether the quota checks item i (checksChangeOn: its scopes select the new object, which is not
 * being deleted); `quotas` are evaluated in the given order.
 */
export function admitBatch(
  quotas: readonly QuotaState[],
  items: readonly AdmissionItem[],
  matches: (quotaName: string, itemIndex: number) => boolean,
  options: AdmitOptions,
): BatchResult {
  const working = quotas.map(workingQuota);
  const awaitsWrite: boolean[] = [];
  const claims: BatchResult['claims'] = [];
  const decisions: Decision[] = items.map((item, i): Decision => {
    awaitsWrite[i] = false;
    claims[i] = undefined;
    const applicable = working.filter((w) => matches(w.original.name, i));
    // A quota that does not enforce notes its refusal and admits: the change is counted all the same.
    const notEnforced: { quota: WorkingQuota; message: string }[] = [];
    const enforced = (quota: WorkingQuota, message: string): boolean => {
      if (quota.enforcement === 'Deny') return true;
      // One note per quota: its refusals for missing requests and for a limit, joined.
      const noted = notEnforced.find((n) => n.quota === quota);
      if (noted) noted.message = `${noted.message}; ${message}`;
      else notEnforced.push({ quota, message });
      return false;
    };
    for (const w of working) {
      const message = item.unboundedPods?.[w.original.name];
      if (message !== undefined && enforced(w, message))
        return { allowed: false, quota: w.original.name, exceeded: [], message };
    }
    if (addsPods(item)) {
      for (const w of applicable) {
        const missing = item.missingRequests?.[w.original.name] ?? [];
        if (missing.length > 0 && enforced(w, missing.join('; ')))
          return { allowed: false, quota: w.original.name, exceeded: [], message: missing.join('; ') };
      }
    }
    const plans = applicable.map((w) => plan(w, item, options)).filter((p): p is Plan => p !== undefined);
    for (const p of plans) {
      const refused = refusal(p);
      if (refused && enforced(p.quota, refused.message)) return refused;
    }
    if (!item.dryRun) {
      for (const p of plans) apply(p, item, options);
      for (const { quota, message } of notEnforced) note(quota, item, message, options.now);
      const key = bindingKeyString(item.binding);
      awaitsWrite[i] = plans.length > 0 || applicable.some((w) => w.touched.has(key));
      claims[i] = new Map(
        plans.map((p) => [p.quota.original.name, { charge: p.charge, increase: p.increase }]),
      );
    }
    if (notEnforced.length === 0) return { allowed: true };
    return {
      allowed: true,
      notEnforced: notEnforced.map(({ quota, message }) => ({
        quota: quota.original.name,
        enforcement: quota.enforcement as NotEnforced['enforcement'],
        message,
      })),
    };
  });

  const result = working.map((w): QuotaState => {
    if (!w.changed) return w.original;
    indexes.set(w.entries, w.index);
    const noted = w.wouldBeDenied.length > 0 ? { wouldBeDenied: w.wouldBeDenied } : {};
    return { ...w.original, reserved: w.total, reservations: w.entries, ...noted };
  });
  return {
    decisions,
    awaitsWrite,
    quotas: result,
    changed: working.filter((w) => w.changed).map((w) => w.original.name),
    claims,
  };
}
