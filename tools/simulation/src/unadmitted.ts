/**
 * What the members are given that no admission decides (docs/development/simulation.md): what RUNS
 * records as pending until a count covers it, and the actions that make it: an OverridePolicy changed
 * after admission, a surge, a finished Job running again or re-created.
 */
import type { ResourceBinding } from '#api';
import {
  BINDING_INDEX,
  BINDINGS,
  exercised,
  KEYS,
  MEMBERS,
  targetOn,
  type Action,
  type Key,
  type UnadmittedKind,
} from './model.js';
import { finishedStatus, jobFinished, kindOf, runningStatus } from './kinds-model.js';
import { EVERY_POD } from './model-state.js';
import type { Simulation } from './simulation.js';

/**
 * Runs `change` of workload `kind`/`name`, which no admission decides (what a member does, or what
 * a landing gives beyond the charge it was admitted for), and records what it adds to what the
 * members are given (RUNS) as pending until counted: per quota, what it adds less, for a landing
 * (`landing`: the quotas it was decided before an edit of, for which all of it counts as the
 * edit's), what it adds to the quota's stored charges (an admission decided that); and as it adds
 * to an unscoped count, which a quota's edit takes for it again (editRuns).
 */
export function unadmittedRuns(
  sim: Simulation,
  kind: string,
  name: string,
  change: () => void,
  landing?: ReadonlySet<string>,
): void {
  const measure = () =>
    [EVERY_POD, ...sim.specs].map((q) =>
      KEYS.map((key) => ({ given: sim.given(q, key).total, charged: sim.charged(q, key) })),
    );
  const before = measure();
  sim.touched = new Set();
  try {
    change();
  } finally {
    const after = measure();
    const members = [...sim.touched];
    sim.touched = undefined;
    const added = (i: number, admitted: boolean) =>
      Object.fromEntries(
        KEYS.map((key, j) => {
          const was = before[i]![j]!;
          const now = after[i]![j]!;
          const charged = admitted ? Math.max(0, now.charged - was.charged) : 0;
          return [key, Math.max(0, now.given - was.given - charged)];
        }),
      ) as Record<Key, number>;
    const amounts = new Map(
      sim.specs.map((q, i) => [q.name, added(i + 1, landing !== undefined && !landing.has(q.name))]),
    );
    const workload = added(0, landing !== undefined);
    const gross = added(0, false);
    if ([...amounts.values(), gross].some((a) => KEYS.some((key) => a[key] > 0)))
      sim.runsPending.push({
        seq: ++sim.runsEvents,
        members,
        workload: { kind, name, added: workload, gross, ...(landing ? { landing } : {}) },
        amounts,
      });
  }
}

/**
 * An OverridePolicy set, changed or removed after its binding was admitted: no admission sees it
 * (docs/concepts/binding-cost.md#overridepolicies). The member follows it at once (pods beyond it
 * go), the services judge bindings with it from now on, and the charge grows by what it adds: as for
 * a change decided before an edit (LIMIT), the ceiling rises by that, and RUNS allows it, until a
 * recount has counted it.
 */
export function override(sim: Simulation, action: Extract<Action, { t: 'override' }>): void {
  const name = BINDINGS[action.b]!.name;
  const member = MEMBERS[action.m % MEMBERS.length]!;
  const stored = sim.versionOf(action.b);
  sim.growChargesUnadmitted(() =>
    unadmittedRuns(sim, stored === undefined ? 'Deployment' : kindOf(stored), name, () => {
      const policy = sim.policies.get(name) ?? new Map<string, number>();
      if (action.replicas < 0) policy.delete(member);
      else policy.set(member, action.replicas);
      if (policy.size === 0) sim.policies.delete(name);
      else sim.policies.set(name, policy);
      if (stored !== undefined && sim.pods.has(name)) {
        const on = sim.podsOf(stored).map((n, m) => Math.min(n, sim.runsOn(stored, m)));
        sim.setPods(name, stored.metadata!.uid!, on, () => 'scaledDown');
      }
    }),
  );
  // Stored charges and those of changes in flight grew with no admission: counted by a recount.
  for (const q of sim.specs) sim.awaitingRecount.set(q.name, ++sim.staleLandings);
  // A change of the name decided before the policy lands with it, as one decided before an edit.
  for (const req of sim.requests)
    if (!req.done && req.object.metadata?.name === name) {
      for (const q of sim.specs) req.beforeEdit.add(q.name);
      req.overridden = true;
    }
  sim.log(
    action.replicas < 0
      ? `OverridePolicy of ${name} on ${member} removed`
      : `OverridePolicy: ${member} runs ${action.replicas} of ${name} wherever its binding schedules it there`,
  );
  exercised.unadmitted.override = (exercised.unadmitted.override ?? 0) + 1;
}

/**
 * What the member runs that no admission sees (kinds-model.ts). Pod counts: these set `pods` as the
 * 'pods' action does, for the member's workload of the stored binding.
 */
export function unadmitted(sim: Simulation, action: Extract<Action, { t: UnadmittedKind }>): void {
  const applies = (rb: ResourceBinding): boolean => {
    if ((rb.spec?.clusters ?? []).length === 0) return false;
    const running = sim.podsOf(rb).reduce((sum, n) => sum + n, 0);
    if (action.t === 'surge')
      return (
        !rb.metadata?.deletionTimestamp &&
        !jobFinished(rb) &&
        // Not where a hand-made workload of the name runs ('outside').
        MEMBERS.every(
          (_, m) => targetOn(rb, m) === 0 || sim.outside[m]![BINDING_INDEX.get(rb.metadata!.name!)!]! === 0,
        )
      );
    if (action.t === 'jobFinishes') return kindOf(rb) === 'Job' && !jobFinished(rb);
    return jobFinished(rb) && (action.t === 'jobRecreated' || running > 0);
  };
  const candidates = [...sim.host.bindings.values()].filter(applies);
  const stored = candidates[action.i % Math.max(1, candidates.length)];
  if (stored === undefined) return;
  const name = stored.metadata!.name!;
  const uid = stored.metadata!.uid!;
  const declared = stored.spec!.replicas ?? 0;
  const targets = MEMBERS.map((_, m) => targetOn(stored, m));
  if (action.t === 'surge') {
    // On the first member it is scheduled to.
    const m = targets.findIndex((n) => n > 0);
    const on = targets.map((n, i) => (i === m ? n + action.n : n));
    sim.log(
      `${MEMBERS[m]}: ${name} runs ${on[m]} pods, spec.clusters says ${targets[m]} (override or surge)`,
    );
    unadmittedRuns(sim, kindOf(stored), name, () => sim.setPods(name, uid, on, () => 'scaledDown'));
  } else if (action.t === 'jobFinishes') {
    sim.host.storeBinding({
      ...stored,
      metadata: { ...stored.metadata, resourceVersion: sim.host.nextVersion() },
      status: finishedStatus(stored),
    });
    // Completed pods are gone at once: they do not terminate.
    sim.pods.set(name, { uid, on: MEMBERS.map(() => 0) });
    sim.log(`member: Job ${name} completed; Karmada writes the binding's status: finished`);
  } else if (action.t === 'jobRecreated') {
    sim.log(`members: finished Job ${name} re-created by Karmada, runs ${declared} pods`);
    unadmittedRuns(sim, kindOf(stored), name, () => sim.setPods(name, uid, targets, () => 'scaledDown'));
  } else {
    // A charge grown with no admission: as for a change decided before an edit (LIMIT), the ceiling
    // rises by what it adds, and the accounting covers it once a recount has listed it.
    const grew = sim.growChargesUnadmitted(() =>
      unadmittedRuns(sim, kindOf(stored), name, () =>
        sim.host.storeBinding({
          ...stored,
          metadata: { ...stored.metadata, resourceVersion: sim.host.nextVersion() },
          status: runningStatus(stored),
        }),
      ),
    );
    for (const q of grew) sim.awaitingRecount.set(q, ++sim.staleLandings);
    sim.log(`member: Job ${name} running again; Karmada writes the binding's status: running`);
  }
  exercised.unadmitted[action.t] = (exercised.unadmitted[action.t] ?? 0) + 1;
}
