/**
 * What a status the reconciler writes, or finds current, was counted from (docs/development/simulation.md):
 * the usage a count attributes to each binding or to none (ACCOUNTED), and what the members were given
 * that its snapshot did not show (RUNS).
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import type { ObservedCluster } from '#quota';
import {
  BINDING_INDEX,
  BINDINGS,
  exercised,
  handMade,
  KEYS,
  MEMBERS,
  NOTHING,
  perReplica,
  type CountedFrom,
  type Key,
  type MemberPods,
  type RunsEvent,
} from './model.js';
import { isHigh, kindOf } from './kinds-model.js';
import type { Simulation } from './simulation.js';

/**
 * A status counted `from` a snapshot of the members (`seen`) cannot count what they run beyond it:
 * pods that began terminating since it showed them running (it nets a charge against them), and
 * pods it does not show of a binding that no longer holds them (being deleted). What the members
 * are given beyond the snapshot's count of the same bindings, less what pending causes the snapshot
 * does not show add (those that changed pods on a member it read before them: an override that
 * only raised a charge is in both counts), is allowed on top until a count reads each member as
 * observed after it (RUNS; the usage not published yet of docs/concepts/accounting.md).
 */
export function unpublishedRuns(
  sim: Simulation,
  quota: KarmadaQuota,
  from: CountedFrom,
  seen: MemberPods,
): void {
  const q = sim.specs.find((spec) => spec.name === quota.metadata!.name)!;
  const unshown = (e: RunsEvent) => e.members.some((m) => from.at[m]! < e.seq);
  const unseen = Object.fromEntries(
    KEYS.map((key) => [
      key,
      Math.max(
        0,
        sim.given(q, key).total -
          sim.given(q, key, false, seen).total -
          sim.runsAllowance(q, key, from, unshown),
      ),
    ]),
  ) as Record<Key, number>;
  if (unseen.cpu === 0 && unseen.pods === 0) return;
  exercised.unpublished++;
  sim.runsPending.push({
    seq: ++sim.runsEvents,
    members: MEMBERS.map((_, m) => m),
    amounts: new Map([[q.name, unseen]]),
  });
}

/**
 * What a quota's count of `clusters` and `bindings` puts in `used` that no binding's reservation may
 * stand in for: hand-made pods on members the binding of their name is not scheduled to (all of them
 * for an unscoped quota; for a scoped one, those named as a binding it selects).
 */
export function outsideIn(
  scoped: boolean,
  clusters: readonly ObservedCluster[],
  bindings: readonly ResourceBinding[],
): Record<Key, number> {
  const total = { ...NOTHING };
  for (const cluster of clusters) {
    const m = MEMBERS.indexOf(cluster.name as (typeof MEMBERS)[number]);
    for (const workload of cluster.workloads) {
      const b = BINDING_INDEX.get(workload.name)!;
      const rb = bindings.find((x) => x.metadata?.name === workload.name);
      const sameKind = rb !== undefined && kindOf(rb) === workload.kind;
      // As the product attributes usage (observedIn): to the binding of the name listing the member,
      // being deleted or not (its usage then stands in for a claim on the name until it is gone).
      if (sameKind && (rb.spec?.clusters ?? []).some((c) => c.name === MEMBERS[m])) continue;
      if (scoped && (!sameKind || !isHigh(rb))) continue;
      if (!handMade.has(workload)) continue;
      const pods = Number((workload.used as Record<Key, string>).pods);
      for (const key of KEYS) total[key] += pods * perReplica(BINDINGS[b]!.name, key, m);
    }
  }
  return total;
}

/**
 * Per binding name, the usage a count from `clusters` and `bindings` attributes to that binding: its
 * kind's pods on the members its spec.clusters lists (hand-made ones of the name there included, as
 * the product cannot tell them apart), for a scoped quota only while it is selected.
 */
export function observedIn(
  scoped: boolean,
  clusters: readonly ObservedCluster[],
  bindings: readonly ResourceBinding[],
): Map<string, Record<Key, number>> {
  const observed = new Map<string, Record<Key, number>>();
  for (const cluster of clusters) {
    for (const workload of cluster.workloads) {
      if (workload.terminating) continue; // on its way out: never the binding's (observedIn)
      const rb = bindings.find((x) => x.metadata?.name === workload.name);
      // Scheduled there, however many replicas and even while being deleted (observedIn).
      const scheduled = rb?.spec?.clusters?.some((c) => c.name === cluster.name) ?? false;
      if (rb === undefined || kindOf(rb) !== workload.kind || !scheduled) continue;
      if (scoped && !isHigh(rb)) continue;
      const pods = Number((workload.used as Record<Key, string>).pods);
      const total = observed.get(workload.name) ?? { ...NOTHING };
      const m = MEMBERS.indexOf(cluster.name as (typeof MEMBERS)[number]);
      for (const key of KEYS) total[key] += pods * perReplica(workload.name, key, m);
      observed.set(workload.name, total);
    }
  }
  return observed;
}
