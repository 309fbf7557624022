/**
 * The reconciler's pure computation: from a freshly read KarmadaQuota, the namespace's stored
 * ResourceBindings and the usage every member cluster published, the quota's next status, whether
 * it differs from the current one, the Events to record and the problems found. Never throws. The
 * rules, case by case: docs/reference/karmadaquota.md, "How the reconciler computes it".
 */
import {
  addLists,
  describeFieldError,
  formatList,
  formatListInline,
  maskList,
  Quantity,
  removeZeros,
  type ResourceList,
} from '#quantity';
import {
  type ClusterUsage,
  type ClusterUsageState,
  type Condition,
  type ConditionStatus,
  isJsonObject,
  type KarmadaQuota,
  KarmadaQuotaConditionType,
  type KarmadaQuotaStatus,
  type NamespaceUsage,
  type Reservation,
  type ResourceBinding,
  type WaitingChangeStatus,
} from '#api';
import { runningBeyondCharge, type BeyondCharge } from './beyond-charge.js';
import { bindingMatchesScopes, isScoped } from './scopes.js';
import {
  claimAdmittedAt,
  isClusterQuota,
  isAtOrAfterVersion,
  isExpired,
  isLaterVersion,
  isResourceVersion,
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type ReservationEntry,
} from './state.js';
import {
  bindingWorkloadKey,
  compareNames,
  isTime,
  readClusters,
  type ClusterView,
  type ObservedCluster,
} from './cluster-usage.js';
import { settleReservations, type ClaimTiming } from './reservations.js';
import { liveWouldBeDenied } from './enforcement.js';
import { statusEquals } from './status-equality.js';
import { cappedOn, memberPart, splitMemberKey, withoutMemberKeys, type MemberLabels } from './member-caps.js';

export interface QuotaEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** How many occurrences this one Event stands for (aggregated denials); 1 when absent. */
  count?: number;
}

/** What one namespace holds, as the reconciler read it. */
export interface NamespaceInput {
  namespace: string;
  /**
   * The namespace's resourceVersion as the reconciler's watch holds it: written with its count, so that
   * a webhook trusts the count only if it is newer than the namespace's last label change it saw.
   */
  resourceVersion?: string;
  /** Every ResourceBinding of the namespace, as persisted on the Karmada API server. */
  bindings: readonly ResourceBinding[];
  /** The resourceVersion of the list `bindings` came from: the count's version (countedVersion). */
  bindingsVersion?: string;
  /** Every cluster that published usage for the namespace. */
  clusters: ObservedCluster[];
  /**
   * Uids of bindings seen deleted on the Karmada API server. A missing binding cannot tell
   * "deleted" from "created but not persisted yet"; these can, so their reservations go at once
   * instead of at expiry.
   */
  deletedBindingUids?: ReadonlySet<string>;
}

/**
 * A KarmadaQuota's input is its namespace's (`bindings`, `clusters`, `deletedBindingUids`); a
 * ClusterKarmadaQuota's is each namespace it selects (`namespaces`): its claims in any other are dropped.
 */
export type QuotaStatusInput = QuotaStatusCommon &
  (Omit<NamespaceInput, 'namespace'> | { namespaces: readonly NamespaceInput[] });

interface QuotaStatusCommon {
  /** Freshly read: it holds the webhook's latest reservations. */
  quota: KarmadaQuota;
  now: Date;
  /** The webhook's claim timing, to settle claims of objects that can no longer be stored. */
  timing?: ClaimTiming;
  /** This quota's waiting changes, oldest first (waiting.ts waitingStatus). */
  waiting?: WaitingChangeStatus[];
  /** Each member cluster's labels, to resolve caps that select members by label (member-caps.ts). */
  members?: MemberLabels;
  /**
   * A count on request: `changed` also when only the stamp moves up (countedVersion), so that a quota
   * whose bindings do not change still gets a status naming a list made after the request.
   */
  restamp?: boolean;
}

export interface QuotaStatusResult {
  status: KarmadaQuotaStatus;
  /**
   * Every binding's reservation, in wire form: the claims in flight (as in `status.reservations`) and what
   * each stored binding holds beyond its observed usage (not written: derived again each time).
   */
  reservations: Reservation[];
  /** False when `status` equals the current status semantically: nothing to write. */
  changed: boolean;
  events: QuotaEvent[];
  /** Problems with the input, one message each (also in the Ready condition). */
  errors: string[];
}

/** Condition reasons this computation sets. */
export const QuotaConditionReason = {
  Reconciled: 'Reconciled',
  InvalidSpec: 'InvalidSpec',
  InvalidData: 'InvalidData',
  AllClustersReady: 'AllClustersReady',
  ClustersNotReady: 'ClustersNotReady',
  UsageExceedsHard: 'UsageExceedsHard',
  WithinQuota: 'WithinQuota',
  UsageExceedsCharge: 'UsageExceedsCharge',
  WithinCharge: 'WithinCharge',
} as const;

/** Event reasons this computation emits. */
export const QuotaEventReason = {
  OverQuota: 'OverQuota',
  RunningBeyondCharge: 'RunningBeyondCharge',
  ClusterStale: 'ClusterStale',
  ClusterRecovered: 'ClusterRecovered',
  /** Recorded by the webhook, aggregated per quota (denial-events.ts). */
  AdmissionDenied: 'AdmissionDenied',
  /** Recorded by the webhook: changes a Warn or DryRun quota admitted but would deny. */
  AdmissionNotEnforced: 'AdmissionNotEnforced',
  /**
   * Recorded by the reconciler on a workload Karmada's scheduler holds back because the member caps
   * leave too little room (estimate.ts heldWaitingStatus).
   */
  WaitingForQuota: 'WaitingForQuota',
} as const;

/** metav1.Condition's message limit (the CRD enforces it). */
const MAX_CONDITION_MESSAGE = 32768;

const ZERO = Quantity.zero();

const get = (list: ResourceList, key: string): Quantity =>
  Object.hasOwn(list, key) ? (list[key] as Quantity) : ZERO;

/** Every key of `keys`, from `list` or 0. */
const withAllKeys = (list: ResourceList, keys: readonly string[]): ResourceList =>
  Object.fromEntries(keys.map((key) => [key, get(list, key)]));

/** `now` as metav1.Time serializes it (RFC 3339, whole seconds). */
const metaTime = (now: Date): string =>
  new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** `message` cut to at most `max` characters, ending in `...` when cut (conditions, Events). */
export function clipMessage(message: string, max: number): string {
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}

/** Computes the quota's next status (see the file comment). Pure; never throws. */
export function computeQuotaStatus(input: QuotaStatusInput): QuotaStatusResult {
  const { quota, now } = input;
  const errors: string[] = [];
  const current: KarmadaQuotaStatus = isJsonObject(quota?.status) ? (quota.status as KarmadaQuotaStatus) : {};
  const namespace = quota?.metadata?.namespace ?? '';
  const generation = quota?.metadata?.generation;

  // Hard and the current reservations. status.used and status.reserved are recomputed here, so their
  // problems do not matter.
  const parsed = parseQuotaState(quota, input.members);
  const specErrors = parsed.errors.filter((e) => e.field === 'spec' || e.field.startsWith('spec.'));
  const recomputed = (field: string) =>
    ['status.used', 'status.reserved'].some((sum) => field === sum || field.startsWith(`${sum}[`));
  const otherErrors = parsed.errors.filter((e) => !specErrors.includes(e) && !recomputed(e.field));
  const hardMissing = quota?.spec?.hard === undefined || quota?.spec?.hard === null;
  if (hardMissing) errors.push('spec.hard: required: the limits of the quota');
  errors.push(...[...specErrors, ...otherErrors].map(describeFieldError));
  const invalidSpec = hardMissing || specErrors.length > 0;
  const hard = parsed.state.hard;
  const hardKeys = Object.keys(hard).sort(compareNames);

  // Clusters, usage and reservations, counted namespace by namespace, then summed.
  const previousClusters = new Map<string, ClusterUsage>();
  for (const c of Array.isArray(current.clusters) ? current.clusters : []) {
    if (isJsonObject(c) && typeof c.name === 'string') previousClusters.set(c.name, c);
  }
  const spansNamespaces = isClusterQuota(quota);
  const parts: readonly NamespaceInput[] =
    'namespaces' in input
      ? input.namespaces
      : [
          {
            namespace,
            bindings: input.bindings,
            ...(input.bindingsVersion !== undefined ? { bindingsVersion: input.bindingsVersion } : {}),
            clusters: input.clusters,
            ...(input.deletedBindingUids ? { deletedBindingUids: input.deletedBindingUids } : {}),
          },
        ];
  const counts = parts.map((part) =>
    countNamespace(part, {
      quota,
      claims: parsed.state.reservations.filter((entry) => entry.binding.namespace === part.namespace),
      hardKeys,
      previousClusters,
      now,
      timing: input.timing,
      errors,
      spansNamespaces,
    }),
  );
  const views = mergedViews(counts);
  const usedOn = new Map(views.map((view) => [view.name, view.used]));
  const used = withAllKeys(
    counts.reduce((total, count) => addLists(total, count.used), {} as ResourceList),
    hardKeys,
  );
  const reservations = [
    ...counts.flatMap((count) => count.reservations),
    ...pendingElsewhere(parsed.state.reservations, parts, hardKeys, now),
  ];
  const reserved = sumReserved(reservations);
  const clusters = views.map((view) =>
    memberStatus(view, usedOn.get(view.name)!, { hard, reserved, hardKeys }),
  );
  const allReservations = toWireReservations(reservations, namespace);
  const wouldBeDenied = liveWouldBeDenied(parsed.state.wouldBeDenied ?? [], now);
  const bindingsVersion = countedVersion(current.observedBindingsVersion, parts);
  const beyondCharge = counts
    .flatMap((count) => count.beyondCharge)
    .sort((a, b) => compareNames(a.binding, b.binding));

  const previousConditions = Array.isArray(current.conditions) ? current.conditions.filter(isJsonObject) : [];
  const conditions = quotaConditions(previousConditions, {
    now,
    generation,
    views,
    hardKeys,
    hard,
    used,
    reserved,
    beyondCharge,
    errors,
    invalidSpec,
  });

  const status: KarmadaQuotaStatus = {
    hard: formatList(hard),
    used: formatList(used),
    reserved: formatList(reserved),
    // A stored binding is its own record: only the claims in flight are listed.
    reservations: allReservations.filter((entry) => entry.expirationTime !== undefined),
    clusters,
    ...(spansNamespaces
      ? {
          namespaces: counts
            .map((count) => namespaceLine(count, hardKeys))
            .sort((a, b) => compareNames(a.namespace, b.namespace)),
        }
      : {}),
    ...(parsed.state.capsResolvedFor
      ? { capsResolvedFor: [...parsed.state.capsResolvedFor].sort(compareNames) }
      : {}),
    ...(input.waiting?.length ? { waiting: input.waiting } : {}),
    ...(wouldBeDenied.length > 0 ? { wouldBeDenied } : {}),
    conditions,
  };
  if (typeof generation === 'number') status.observedGeneration = generation;
  if (bindingsVersion !== undefined) status.observedBindingsVersion = bindingsVersion;

  const events = quotaEvents(views, previousClusters, previousConditions, conditions);

  const stampMoves =
    input.restamp === true &&
    bindingsVersion !== undefined &&
    !isAtOrAfterVersion(
      typeof current.observedBindingsVersion === 'string' ? current.observedBindingsVersion : undefined,
      bindingsVersion,
    );
  const changed =
    stampMoves || (!statusEquals(current, status) && !onlyRetiresRecentClaims(current, status, input));
  return { status, reservations: allReservations, changed, events, errors };
}

/**
 * `status.observedBindingsVersion` (docs/concepts/accounting.md, "The count's version"): the oldest of
 * the lists counted, kept when a list's version is unknown, and never below the stamp written before.
 * Its moving alone makes no change, except on request (`restamp`).
 */
function countedVersion(stamped: unknown, parts: readonly NamespaceInput[]): string | undefined {
  const previous = isResourceVersion(stamped) ? stamped : undefined;
  const listed = parts.map((part) => part.bindingsVersion);
  if (listed.length === 0 || !listed.every(isResourceVersion)) return previous;
  const oldest = listed.reduce((a, b) => (isLaterVersion(a, b) ? b : a));
  return previous !== undefined && isLaterVersion(previous, oldest) ? previous : oldest;
}

/** A member as the quota's status shows it: its health over the namespaces counted, and their usage. */
type MemberView = Pick<ClusterView, 'name' | 'state' | 'lastSyncTime' | 'message' | 'used'>;

/** What one namespace counts for the quota. */
interface NamespaceCount {
  namespace: string;
  resourceVersion?: string;
  /** Each member that published usage of the namespace, `used` as the quota counts it (its scopes). */
  views: MemberView[];
  used: ResourceList;
  reservations: ReservationEntry[];
  beyondCharge: BeyondCharge[];
}

interface CountContext {
  quota: KarmadaQuota;
  /** The quota's claims on bindings of this namespace. */
  claims: readonly ReservationEntry[];
  hardKeys: readonly string[];
  previousClusters: ReadonlyMap<string, ClusterUsage>;
  now: Date;
  timing: ClaimTiming | undefined;
  errors: string[];
  /** A ClusterKarmadaQuota: problems and bindings are named with their namespace. */
  spansNamespaces: boolean;
}

/** One namespace's usage, reservations and bindings running beyond their charge, for the quota. */
function countNamespace(part: NamespaceInput, context: CountContext): NamespaceCount {
  const { quota, hardKeys, now } = context;
  const errors: string[] = [];
  const views = readClusters(part.clusters, hardKeys, context.previousClusters, errors);
  const bindingsByName = new Map<string, ResourceBinding>();
  if (!Array.isArray(part.bindings)) {
    if (part.bindings !== undefined && part.bindings !== null) errors.push('bindings: must be a list');
  } else {
    part.bindings.forEach((rb, i) => {
      const name = rb?.metadata?.name;
      if (typeof name !== 'string' || name === '') {
        errors.push(`bindings[${i}].metadata.name: required; this ResourceBinding is ignored`);
        return;
      }
      const ns = rb.metadata?.namespace;
      if (ns !== undefined && ns !== '' && part.namespace !== '' && ns !== part.namespace) return;
      if (!bindingsByName.has(name)) bindingsByName.set(name, rb);
    });
  }

  const scoped = isScoped(quota);
  const inScope = new Set<string>();
  if (scoped) {
    for (const rb of bindingsByName.values()) {
      const key = bindingWorkloadKey(rb);
      if (key !== undefined && bindingMatchesScopes(quota, rb)) inScope.add(key);
    }
  }
  const clusterUsed = (view: ClusterView): ResourceList => {
    if (!scoped) return view.used;
    let total: ResourceList = {};
    for (const [key, used] of view.workloads) if (inScope.has(key)) total = addLists(total, used);
    // Pods on their way out count as long as they run, for the scope of their workload's binding.
    for (const [key, used] of view.terminating) if (inScope.has(key)) total = addLists(total, used);
    return total;
  };
  const counted = views.map((view) => ({ ...view, used: clusterUsed(view) }));
  const used = counted.reduce((total, view) => addLists(total, view.used), {} as ResourceList);

  const countsUsageOf = (rb: ResourceBinding) => {
    const key = bindingWorkloadKey(rb);
    return !scoped || (key !== undefined && inScope.has(key));
  };
  const settleInput = {
    quota,
    namespace: part.namespace,
    hardKeys,
    views,
    bindings: bindingsByName,
    countsUsageOf,
    now,
    deletedBindingUids: part.deletedBindingUids,
    timing: context.timing,
    errors,
  };
  const reservations = settleReservations(context.claims, settleInput);
  const beyondCharge = runningBeyondCharge({ ...settleInput, reservations }).map((found) =>
    context.spansNamespaces ? { ...found, binding: `${part.namespace}/${found.binding}` } : found,
  );
  const prefix = context.spansNamespaces ? `namespace ${part.namespace}: ` : '';
  context.errors.push(...errors.map((error) => prefix + error));
  return {
    namespace: part.namespace,
    ...(part.resourceVersion !== undefined ? { resourceVersion: part.resourceVersion } : {}),
    views: counted.map(({ name, state, lastSyncTime, message, used }) => ({
      name,
      state,
      lastSyncTime,
      used,
      ...(message !== undefined ? { message } : {}),
    })),
    used,
    reservations,
    beyondCharge,
  };
}

/**
 * A ClusterKarmadaQuota's pending claims in namespaces it does not count now (one that left its
 * selector, or that the reconciler's view has not seen return), each holding its whole charge until it
 * lapses: the change may still land, and if the namespace is counted again before it does, a batch
 * must not decide without it (docs/concepts/cluster-quotas.md).
 */
function pendingElsewhere(
  claims: readonly ReservationEntry[],
  parts: readonly NamespaceInput[],
  hardKeys: readonly string[],
  now: Date,
): ReservationEntry[] {
  const counted = new Set(parts.map((part) => part.namespace));
  return claims
    .filter((entry) => !counted.has(entry.binding.namespace))
    .filter((entry) => entry.expirationTime !== undefined && !isExpired(entry, now))
    .map((entry) => {
      const charge = removeZeros(maskList(entry.charge, hardKeys));
      return { ...entry, reserved: charge, charge };
    });
}

const STATE_RANK: Record<ClusterUsageState, number> = { Ready: 0, Stale: 1, Unreachable: 2 };

/**
 * Each member over the namespaces counted: their usage summed, the worst state, the oldest sync (one
 * namespace's view as it is).
 */
function mergedViews(counts: readonly NamespaceCount[]): MemberView[] {
  const members = new Map<string, MemberView>();
  for (const view of counts.flatMap((count) => count.views)) {
    const seen = members.get(view.name);
    if (seen === undefined) {
      members.set(view.name, view);
      continue;
    }
    const worse = STATE_RANK[view.state] > STATE_RANK[seen.state] ? view : seen;
    const older = Date.parse(view.lastSyncTime) < Date.parse(seen.lastSyncTime) ? view : seen;
    members.set(view.name, {
      name: view.name,
      state: worse.state,
      lastSyncTime: older.lastSyncTime,
      used: addLists(seen.used, view.used),
      ...(worse.message !== undefined ? { message: worse.message } : {}),
    });
  }
  return [...members.values()].sort((a, b) => compareNames(a.name, b.name));
}

/** One namespace's line of a ClusterKarmadaQuota's `status.namespaces[]`, on the global keys. */
function namespaceLine(count: NamespaceCount, hardKeys: readonly string[]): NamespaceUsage {
  const keys = hardKeys.filter((key) => !splitMemberKey(key));
  return {
    namespace: count.namespace,
    ...(count.resourceVersion !== undefined ? { resourceVersion: count.resourceVersion } : {}),
    used: formatList(withAllKeys(count.used, keys)),
    reserved: formatList(withAllKeys(sumReserved(count.reservations), keys)),
  };
}

/**
 * One member's line of `status.clusters[]`: its usage on the quota's resources and its caps, under
 * plain resource names, with its caps and what is reserved on them when it has any (member-caps.ts).
 */
function memberStatus(
  view: MemberView,
  used: ResourceList,
  quota: { hard: ResourceList; reserved: ResourceList; hardKeys: readonly string[] },
): ClusterUsage {
  const capped = cappedOn(quota.hardKeys, view.name);
  const keys = [...new Set([...quota.hardKeys.filter((key) => !splitMemberKey(key)), ...capped])];
  const line: ClusterUsage = {
    name: view.name,
    used: formatList(withAllKeys({ ...withoutMemberKeys(used), ...memberPart(used, view.name) }, keys)),
    lastSyncTime: view.lastSyncTime,
    state: view.state,
  };
  if (capped.length > 0) {
    line.hard = formatList(memberPart(quota.hard, view.name));
    line.reserved = formatList(withAllKeys(memberPart(quota.reserved, view.name), capped));
  }
  return line;
}

/**
 * A claim retired within this long of its admission is dropped from the status by a later write, not a
 * write of its own: on a busy quota every landing would otherwise cost a status write that conflicts
 * with the webhook's. Keeping a retired claim listed is only conservative (it covers what its binding
 * holds), and the expiry sweep queues the namespace once it is older (docs/concepts/accounting.md,
 * "Claim retirement").
 */
export const RETIREMENT_COALESCE_MS = 2_000;

/**
 * Is `next` the current status less claims retired early, each admitted under RETIREMENT_COALESCE_MS
 * ago, and nothing else? Then the write waits (see RETIREMENT_COALESCE_MS). A claim that expired, or
 * one retired later than that, is always written.
 */
function onlyRetiresRecentClaims(
  current: KarmadaQuotaStatus,
  next: KarmadaQuotaStatus,
  input: QuotaStatusInput,
): boolean {
  const ttlSeconds = input.timing?.ttlSeconds;
  if (ttlSeconds === undefined || !Array.isArray(current.reservations)) return false;
  const key = (r: Reservation) =>
    `${r?.reservedBy?.namespace ?? ''}/${r?.reservedBy?.name}/${r?.reservedBy?.uid ?? ''}`;
  const kept = new Set((next.reservations ?? []).map(key));
  const retired = current.reservations.filter((r) => !kept.has(key(r)));
  const now = input.now.getTime();
  const recent = retired.every((r) => {
    const admittedAt = isJsonObject(r) ? claimAdmittedAt(r, ttlSeconds) : undefined;
    return admittedAt !== undefined && now - admittedAt < RETIREMENT_COALESCE_MS;
  });
  if (retired.length === 0 || !recent) return false;
  return statusEquals(
    { ...current, reservations: current.reservations.filter((r) => kept.has(key(r))) },
    next,
  );
}

/** What the conditions are computed from. */
interface ConditionFacts {
  now: Date;
  generation: number | undefined;
  views: readonly MemberView[];
  hardKeys: readonly string[];
  hard: ResourceList;
  used: ResourceList;
  reserved: ResourceList;
  beyondCharge: readonly BeyondCharge[];
  errors: readonly string[];
  invalidSpec: boolean;
}

/** A cluster as a condition or an Event names it: its state and since when. */
const describeCluster = (v: MemberView): string =>
  `${v.name} ${v.state} since ${v.lastSyncTime}${v.message === undefined ? '' : ` (${v.message})`}`;

/** Ready, ClustersSynced, OverQuota and RunningBeyondCharge, then the previous ones of other types (file comment). */
function quotaConditions(previous: readonly Condition[], facts: ConditionFacts): Condition[] {
  const { views, hardKeys, hard, used, reserved, beyondCharge, errors } = facts;
  const transitionTime = metaTime(facts.now);
  const condition = (type: string, status: ConditionStatus, reason: string, message: string): Condition => {
    const before = previous.find((c) => c.type === type);
    const result: Condition = {
      type,
      status,
      lastTransitionTime:
        before !== undefined && before.status === status && isTime(before.lastTransitionTime)
          ? before.lastTransitionTime
          : transitionTime,
      reason,
      message: clipMessage(message, MAX_CONDITION_MESSAGE),
    };
    if (typeof facts.generation === 'number') result.observedGeneration = facts.generation;
    return result;
  };

  const notReady = views.filter((v) => v.state !== 'Ready');
  const clustersSynced =
    notReady.length === 0
      ? condition(
          KarmadaQuotaConditionType.ClustersSynced,
          'True',
          QuotaConditionReason.AllClustersReady,
          views.length === 0
            ? 'no member cluster has published usage for this namespace'
            : views.length === 1
              ? `member cluster ${views[0]?.name} is Ready`
              : `all ${views.length} member clusters are Ready`,
        )
      : condition(
          KarmadaQuotaConditionType.ClustersSynced,
          'False',
          QuotaConditionReason.ClustersNotReady,
          notReady.map(describeCluster).join('; '),
        );

  const over = hardKeys.filter((key) => get(used, key).add(get(reserved, key)).cmp(get(hard, key)) > 0);
  const overQuota =
    over.length > 0
      ? condition(
          KarmadaQuotaConditionType.OverQuota,
          'True',
          QuotaConditionReason.UsageExceedsHard,
          `used+reserved exceeds hard for ${over
            .map(
              (key) =>
                `${key} (used ${get(used, key).toCanonicalString()}, reserved ${get(reserved, key).toCanonicalString()}, ` +
                `hard ${get(hard, key).toCanonicalString()})`,
            )
            .join('; ')}`,
        )
      : condition(
          KarmadaQuotaConditionType.OverQuota,
          'False',
          QuotaConditionReason.WithinQuota,
          'used+reserved is within hard for every resource',
        );

  const runningBeyond =
    beyondCharge.length > 0
      ? condition(
          KarmadaQuotaConditionType.RunningBeyondCharge,
          'True',
          QuotaConditionReason.UsageExceedsCharge,
          describeBeyondCharge(beyondCharge),
        )
      : condition(
          KarmadaQuotaConditionType.RunningBeyondCharge,
          'False',
          QuotaConditionReason.WithinCharge,
          'every workload runs within what its binding was charged',
        );

  const ready =
    errors.length === 0
      ? condition(
          KarmadaQuotaConditionType.Ready,
          'True',
          QuotaConditionReason.Reconciled,
          'usage and reservations are reconciled',
        )
      : condition(
          KarmadaQuotaConditionType.Ready,
          'False',
          facts.invalidSpec ? QuotaConditionReason.InvalidSpec : QuotaConditionReason.InvalidData,
          `${errors.length} problem(s): ${errors.join('; ')}`,
        );

  const ours = new Set<string>(Object.values(KarmadaQuotaConditionType));
  return [ready, clustersSynced, overQuota, runningBeyond, ...previous.filter((c) => !ours.has(c.type))];
}

/** The Events of a status change (file comment): cluster states first, then conditions turned True. */
function quotaEvents(
  views: readonly MemberView[],
  previousClusters: ReadonlyMap<string, ClusterUsage>,
  previousConditions: readonly Condition[],
  conditions: readonly Condition[],
): QuotaEvent[] {
  const events: QuotaEvent[] = [];
  for (const view of views) {
    const before = previousClusters.get(view.name)?.state;
    if (view.state !== 'Ready' && (before === undefined || before === 'Ready')) {
      events.push({
        type: 'Warning',
        reason: QuotaEventReason.ClusterStale,
        message: `member cluster ${describeCluster(view)}: its last known usage still counts`,
      });
    } else if (view.state === 'Ready' && before !== undefined && before !== 'Ready') {
      events.push({
        type: 'Normal',
        reason: QuotaEventReason.ClusterRecovered,
        message: `member cluster ${view.name} is Ready again (was ${before})`,
      });
    }
  }
  const before = (type: string) => previousConditions.find((c) => c.type === type);
  const now = (type: string) => conditions.find((c) => c.type === type)!;
  const overQuota = now(KarmadaQuotaConditionType.OverQuota);
  if (overQuota.status === 'True' && before(KarmadaQuotaConditionType.OverQuota)?.status !== 'True') {
    events.push({ type: 'Warning', reason: QuotaEventReason.OverQuota, message: overQuota.message });
  }
  const beyond = now(KarmadaQuotaConditionType.RunningBeyondCharge);
  const beyondBefore = before(KarmadaQuotaConditionType.RunningBeyondCharge);
  const namedBefore = beyondBefore?.status === 'True' ? String(beyondBefore.message) : '';
  if (beyond.status === 'True' && bindingsNamed(namedBefore) !== bindingsNamed(beyond.message)) {
    events.push({ type: 'Warning', reason: QuotaEventReason.RunningBeyondCharge, message: beyond.message });
  }
  return events;
}

/** The RunningBeyondCharge message: each binding, what it runs and what it was charged. */
function describeBeyondCharge(found: readonly BeyondCharge[]): string {
  const each = found.map(
    ({ binding, running, charged, beyond }) =>
      `${binding} runs ${formatListInline(running, Object.keys(beyond))} against a charge of ` +
      `${formatListInline(charged, Object.keys(beyond))}`,
  );
  return (
    `${each.join('; ')}: no admission saw this usage (an OverridePolicy, a rolling update's surge, a ` +
    `member HPA, or a finished workload re-created; see docs/concepts/binding-cost.md)`
  );
}

/** The binding names a RunningBeyondCharge message starts its entries with, to tell a new set. */
const bindingsNamed = (message: string): string =>
  [...message.matchAll(/(?:^|; )(\S+) runs /g)].map((m) => m[1]).join(',');
