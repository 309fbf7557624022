/**
 * What karmada-quota answers Karmada's scheduler when it asks, for one member, how many more replicas
 * of a binding fit there (its scheduler-estimator API): the room under the member caps of the
 * namespace's quotas. The scheduler takes the minimum over its estimators, so this only lowers what
 * node capacity allows; the webhook still decides. docs/concepts/scheduler-estimator.md has the
 * rules and why the global `hard` is not part of the answer.
 */
import { formatList, formatListInline, parseResourceList, Quantity, type ResourceList } from '#quantity';
import { isJsonObject, type KarmadaQuota, type ResourceBinding, type WaitingChangeStatus } from '#api';
import { parseEnforcement } from './enforcement.js';
import { labelsMatch } from './label-selector.js';
import { memberKey, type MemberLabels } from './member-caps.js';
import { PODS, quotaNamesForRequest } from './resource-names.js';
import { isScoped } from './scopes.js';
import { countedNamespaces, isClusterQuota, parseQuotaState, type QuotaState } from './state.js';
import { QuotaEventReason, type QuotaEvent } from './status.js';

/** "No opinion" in Karmada's estimator protocol: the scheduler skips the answer. */
export const NO_ESTIMATE = -1;

/** The largest answer the protocol carries (int32). */
const MAX_REPLICAS = 2 ** 31 - 1;

/** What one replica of the binding is charged: its pod requests under every quota name, and one pod. */
export function perReplicaCharge(requests: ResourceList): ResourceList {
  const charge: ResourceList = { [PODS]: Quantity.fromInt(1n) };
  for (const [name, amount] of Object.entries(requests)) {
    if (amount.sign() <= 0) continue;
    for (const key of quotaNamesForRequest(name)) charge[key] = amount;
  }
  return charge;
}

/**
 * How many more replicas charged `perReplica` each fit on `member` under the member caps of
 * `quotas` (those selecting the binding's `namespace`: its KarmadaQuotas and the ClusterKarmadaQuotas
 * whose selector picks it), or NO_ESTIMATE when no cap there constrains them. A quota gives no
 * opinion when its answer could be too low for what the webhook would admit: its status is not
 * counted for its spec (nor, for a ClusterKarmadaQuota, counted the namespace), the member is not
 * among those its label caps are resolved for, it only warns (Warn, DryRun), or it selects by
 * priority class (Karmada sends the class only with its alpha ResourceQuotaEstimate gate). Room
 * already taken beyond the cap is 0, never negative.
 */
export function replicasRoomOn(
  member: string,
  perReplica: ResourceList,
  quotas: readonly KarmadaQuota[],
  namespace: string,
): number {
  let room: bigint | undefined;
  for (const quota of quotas) {
    const state = steeringState(quota, member, namespace);
    for (const [resource, amount] of state ? Object.entries(perReplica) : []) {
      const left = leftOn(state!, resource, member);
      if (left === undefined || amount.sign() <= 0) continue;
      const fits = left.sign() <= 0 ? 0n : left.nanoValue() / amount.nanoValue();
      if (room === undefined || fits < room) room = fits;
    }
  }
  if (room === undefined) return NO_ESTIMATE;
  return room > BigInt(MAX_REPLICAS) ? MAX_REPLICAS : Number(room);
}

/** The quota's state when it steers placements on `member` (see replicasRoomOn), else undefined. */
function steeringState(quota: KarmadaQuota, member: string, namespace: string): QuotaState | undefined {
  if (quota.status?.observedGeneration !== quota.metadata?.generation) return undefined;
  if (parseEnforcement(quota.spec?.enforcement) !== 'Deny' || isScoped(quota)) return undefined;
  if (isClusterQuota(quota) && !countedNamespaces(quota).has(namespace)) return undefined;
  const { state } = parseQuotaState(quota);
  return state.capsResolvedFor === undefined || state.capsResolvedFor.has(member) ? state : undefined;
}

/** `resource`'s cap on `member` less what is used and reserved there; undefined when not capped. */
function leftOn(state: QuotaState, resource: string, member: string): Quantity | undefined {
  const key = memberKey(resource, member);
  const cap = state.hard[key];
  if (cap === undefined) return undefined;
  return cap.sub(state.used[key] ?? Quantity.zero()).sub(state.reserved[key] ?? Quantity.zero());
}

/** How Karmada's scheduler says its estimators left too little room (pkg/scheduler/core, v1.18). */
const TOO_LITTLE_ROOM = / are not enough to schedule/;

/** A binding Karmada's scheduler left (partly) unplaced for want of room, as the estimator sees it. */
export interface HeldBinding {
  name: string;
  /** When Karmada first said so (its Scheduled condition's lastTransitionTime). */
  since: string;
  /** Replicas Karmada could not place: `spec.replicas` beyond those in `spec.clusters`. */
  unplaced: number;
  perReplica: ResourceList;
  /** The members its placement may use. */
  candidates: readonly string[];
}

/**
 * The binding, when Karmada's scheduler left replicas of it unplaced because its estimators answered
 * too little room (`Scheduled=False`, "Clusters available replicas N are not enough to schedule"), with
 * the members its placement may use (`clusterAffinity` by names, exclusions and labels, among
 * `members`); undefined otherwise, or when those cannot be told (several affinity groups, a field
 * selector, members not known).
 */
export function heldForRoom(rb: ResourceBinding, members: MemberLabels | undefined): HeldBinding | undefined {
  const scheduled = rb.status?.conditions?.find((c) => c.type === 'Scheduled');
  if (scheduled?.status !== 'False' || !TOO_LITTLE_ROOM.test(scheduled.message ?? '')) return undefined;
  const spec = rb.spec;
  if (spec?.components?.length || spec?.placement?.replicaScheduling?.replicaSchedulingType === 'Duplicated')
    return undefined;
  const placed = (spec?.clusters ?? []).reduce((sum, c) => sum + (c.replicas ?? 0), 0);
  const unplaced = (spec?.replicas ?? 0) - placed;
  const candidates = candidateMembers(spec?.placement, members);
  if (unplaced <= 0 || candidates === undefined) return undefined;
  const requests = parseResourceList(spec?.replicaRequirements?.resourceRequest ?? {}, 'resourceRequest');
  if (requests.errors.length > 0) return undefined;
  return {
    name: rb.metadata?.name ?? '',
    since: scheduled.lastTransitionTime,
    unplaced,
    perReplica: perReplicaCharge(requests.list),
    candidates,
  };
}

function candidateMembers(placement: unknown, members: MemberLabels | undefined): string[] | undefined {
  const affinity = isJsonObject(placement) ? placement['clusterAffinity'] : undefined;
  if (isJsonObject(placement) && placement['clusterAffinities'] !== undefined) return undefined;
  if (affinity !== undefined && !isJsonObject(affinity)) return undefined;
  if (affinity?.['fieldSelector'] !== undefined) return undefined;
  const names = Array.isArray(affinity?.['clusterNames']) ? affinity['clusterNames'].map(String) : undefined;
  const exclude = new Set(Array.isArray(affinity?.['exclude']) ? affinity['exclude'].map(String) : []);
  const selector = affinity?.['labelSelector'];
  if (names === undefined && members === undefined) return undefined;
  const pool = names ?? [...members!.keys()];
  if (selector !== undefined && members === undefined) return undefined;
  return pool.filter(
    (m) => !exclude.has(m) && (selector === undefined || labelsMatch(selector, members!.get(m) ?? {})),
  );
}

/**
 * The replicas of a held binding the caps of `quotas` leave room for, summed over its candidate
 * members; undefined when a candidate has no cap that constrains it (replicasRoomOn gives no
 * opinion): its nodes, not the quotas, may be what holds the binding back.
 */
export function capRoomFor(
  held: HeldBinding,
  quotas: readonly KarmadaQuota[],
  namespace: string,
): number | undefined {
  let room = 0;
  for (const member of held.candidates) {
    const fits = replicasRoomOn(member, held.perReplica, quotas, namespace);
    if (fits === NO_ESTIMATE) return undefined;
    room += fits;
  }
  return held.candidates.length > 0 ? room : undefined;
}

/**
 * The held binding as `quota`'s `status.waiting` lists it, when the quota caps its candidates:
 * `requested` what its unplaced replicas ask of the resources capped there, `free` what the caps
 * leave on its candidates. Undefined when this quota caps none of them. `namespace` is the binding's
 * (a ClusterKarmadaQuota's status names it `namespace/name`).
 */
export function heldWaitingStatus(
  held: HeldBinding,
  quota: KarmadaQuota,
  namespace = quota.metadata?.namespace ?? '',
): WaitingChangeStatus | undefined {
  const requested: ResourceList = {};
  const free: ResourceList = {};
  for (const member of held.candidates) {
    const state = steeringState(quota, member, namespace);
    for (const [resource, amount] of state ? Object.entries(held.perReplica) : []) {
      const left = leftOn(state!, resource, member);
      if (left === undefined || amount.sign() <= 0) continue;
      requested[resource] = amount.mul(BigInt(held.unplaced));
      free[resource] = (free[resource] ?? Quantity.zero()).add(left.sign() > 0 ? left : Quantity.zero());
    }
  }
  if (Object.keys(requested).length === 0) return undefined;
  const binding = isClusterQuota(quota) ? `${namespace}/${held.name}` : held.name;
  return { binding, requested: formatList(requested), free: formatList(free), since: held.since };
}

/**
 * The Event the reconciler records on a held binding's workload when a quota first lists it: Karmada's
 * own condition cannot name the quota.
 */
export function heldEvent(quota: string, entry: WaitingChangeStatus): QuotaEvent {
  const list = (wire: Record<string, string>) => formatListInline(parseResourceList(wire, 'waiting').list);
  return {
    type: 'Warning',
    reason: QuotaEventReason.WaitingForQuota,
    message:
      `karmada-scheduler cannot place it: the member caps of quota ${quota} leave too little room, ` +
      `requested: ${list(entry.requested)}, free: ${list(entry.free)}; it is placed once they have room`,
  };
}
