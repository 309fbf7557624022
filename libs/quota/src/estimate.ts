/**
 * What karmada-quota answers Karmada's scheduler when it asks, for one member, how many more replicas
 * of a binding fit there (its scheduler-estimator API): the room under the member caps of the
 * namespace's quotas. The scheduler takes the minimum over its estimators, so this only lowers what
 * node capacity allows; the webhook still decides. docs/concepts/scheduler-estimator.md has the
 * rules and why the global `hard` is not part of the answer.
 */
import { Quantity, type ResourceList } from '#quantity';
import type { KarmadaQuota } from '#api';
import { parseEnforcement } from './enforcement.js';
import { memberKey } from './member-caps.js';
import { PODS, quotaNamesForRequest } from './resource-names.js';
import { isScoped } from './scopes.js';
import { parseQuotaState } from './state.js';

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
 * `quotas` (the binding's namespace's), or NO_ESTIMATE when no cap there constrains them. A quota
 * gives no opinion when its answer could be too low for what the webhook would admit: its status is
 * not counted for its spec, the member is not among those its label caps are resolved for, it only
 * warns (Warn, DryRun), or it selects by priority class (Karmada sends the class only with its alpha
 * ResourceQuotaEstimate gate). Room already taken beyond the cap is 0, never negative.
 */
export function replicasRoomOn(
  member: string,
  perReplica: ResourceList,
  quotas: readonly KarmadaQuota[],
): number {
  let room: bigint | undefined;
  for (const quota of quotas) {
    if (quota.status?.observedGeneration !== quota.metadata?.generation) continue;
    if (parseEnforcement(quota.spec?.enforcement) !== 'Deny' || isScoped(quota)) continue;
    const { state } = parseQuotaState(quota);
    if (state.capsResolvedFor !== undefined && !state.capsResolvedFor.has(member)) continue;
    for (const [resource, amount] of Object.entries(perReplica)) {
      const cap = state.hard[memberKey(resource, member)];
      if (cap === undefined || amount.sign() <= 0) continue;
      const taken = [state.used, state.reserved]
        .map((list) => list[memberKey(resource, member)] ?? Quantity.zero())
        .reduce((sum, q) => sum.add(q));
      const free = cap.sub(taken).nanoValue();
      const fits = free <= 0n ? 0n : free / amount.nanoValue();
      if (room === undefined || fits < room) room = fits;
    }
  }
  if (room === undefined) return NO_ESTIMATE;
  return room > BigInt(MAX_REPLICAS) ? MAX_REPLICAS : Number(room);
}
