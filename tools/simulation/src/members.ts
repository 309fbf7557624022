/**
 * The member clusters of the simulation (docs/development/simulation.md): the pods Karmada's copies and
 * hand-made workloads run, pods on their way out, each member's watch, and the aggregator publishing
 * their usage to Redis (or Redis losing it).
 */
import type { ObservedCluster, ObservedWorkload } from '#quota';
import {
  BINDINGS,
  exercised,
  handMade,
  MEMBERS,
  targetOn,
  type Action,
  type Key,
  type MemberEvent,
  type TerminatingCause,
} from './model.js';
import { kindOf } from './kinds-model.js';
import { unadmittedRuns } from './unadmitted.js';
import type { Simulation } from './simulation.js';

/** The 'pods' and 'evict' actions: a member starts pods of a binding (up to what it schedules there) or evicts some. */
export function runPods(sim: Simulation, action: Extract<Action, { t: 'pods' | 'evict' }>): void {
  const stored = sim.versionOf(action.b);
  if (stored === undefined || (action.t === 'pods' && stored.metadata?.deletionTimestamp)) return;
  const name = stored.metadata!.name!;
  const m =
    action.m ??
    Math.max(
      0,
      MEMBERS.findIndex((_, i) => targetOn(stored, i) > 0),
    );
  // Karmada cannot apply its copy over a hand-made workload of the name.
  if (action.t === 'pods' && sim.outside[m % MEMBERS.length]![action.b]! > 0) return;
  const on = sim.podsOf(stored);
  const running = on[m % MEMBERS.length]!;
  on[m % MEMBERS.length] =
    action.t === 'pods'
      ? Math.min(sim.runsOn(stored, m % MEMBERS.length), running + action.n)
      : Math.max(0, running - action.n);
  sim.log(`${MEMBERS[m % MEMBERS.length]}: ${name} runs ${on[m % MEMBERS.length]} pods`);
  const set = (cause: TerminatingCause) => () => sim.setPods(name, stored.metadata!.uid!, on, () => cause);
  // No admission decides what this gives the members beyond the binding's charge: an evicted
  // pod terminates while the charge lets its workload start another (the members run both, as
  // in a rolling update's surge); pods beyond spec.clusters (a surge's) terminate while the
  // charge lets others start; a finished Job's pods start again (its member object
  // re-created), though it holds nothing. Pods starting within the charge give nothing more.
  unadmittedRuns(sim, kindOf(stored), name, set(action.t === 'evict' ? 'evicted' : 'scaledDown'));
}

/** The 'outside' action: a Deployment made by hand on a member under a binding's name runs `n` pods. */
export function runHandMade(sim: Simulation, action: Extract<Action, { t: 'outside' }>): void {
  const m = action.m % MEMBERS.length;
  const name = BINDINGS[action.b]!.name;
  const karmadas = sim.pods.get(name)?.on[m] ?? 0;
  // A hand-made workload cannot take a name Karmada's copy already has on the member.
  if (karmadas > 0) return;
  const gone = sim.outside[m]![action.b]! - action.n;
  sim.outside[m]![action.b] = action.n;
  sim.log(`${MEMBERS[m]}: a hand-made Deployment ${name} runs ${action.n} pods`);
  sim.beginTerminating(m, name, 'Deployment', gone, true, 'handMade');
}

/** The 'terminate' action: the grace period of up to `n` pods of a group on their way out ends. */
export function terminate(sim: Simulation, action: Extract<Action, { t: 'terminate' }>): void {
  const at = action.i % Math.max(1, sim.terminating.length);
  const group = sim.terminating[at];
  if (group === undefined) return;
  const n = Math.min(group.n, action.n);
  group.n -= n;
  if (group.n === 0) sim.terminating.splice(at, 1);
  exercised.terminated += n;
  sim.log(`${MEMBERS[group.m]}: ${n} terminating pods of ${group.kind} ${group.name} are gone`);
}

/** A member's watch turns Ready, Stale or Unreachable, or the member is removed from the federation. */
export function memberEvent(sim: Simulation, m: number, event: MemberEvent): void {
  if (event !== 'removed') {
    sim.memberStates[m] = event;
    sim.log(`${MEMBERS[m]}'s watch is ${event}`);
    return;
  }
  // The host no longer has it: its pods are gone and the aggregator withdraws its usage. A member of
  // that name joining later starts empty.
  for (const pods of sim.pods.values()) pods.on[m] = 0;
  sim.outside[m]!.fill(0);
  sim.terminating.splice(0, sim.terminating.length, ...sim.terminating.filter((t) => t.m !== m));
  // What the reconciler reads of it from now on (nothing) is what runs there.
  sim.observedAt[m] = sim.runsEvents;
  sim.withdrawn.add(MEMBERS[m]!);
  sim.memberStates[m] = 'Ready';
  sim.lastPublished[m] = undefined;
  sim.publishedPods[m] = { running: [], terminating: [] };
  if (sim.published) sim.published = sim.published.filter((c) => c.name !== MEMBERS[m]);
  sim.log(`${MEMBERS[m]} is removed from the federation; its usage is withdrawn`);
}

/** The 'redis-loss' action: Redis loses every published usage. */
export function loseRedis(sim: Simulation): void {
  if (sim.published === undefined) return;
  sim.published = [];
  sim.lastPublished.fill(undefined);
  sim.publishedPods.fill({ running: [], terminating: [] });
  sim.observedAt.fill(-1);
  sim.log('Redis loses every published usage');
}

/** The aggregator publishes each Ready member's usage; a Stale or Unreachable one keeps its last. */
export function publish(sim: Simulation): void {
  const entries: ObservedCluster[] = [];
  MEMBERS.forEach((_, m) => {
    if (sim.memberStates[m] === 'Ready') {
      sim.lastPublished[m] = observed(sim, m);
      sim.publishedPods[m] = sim.memberPods(m);
      sim.observedAt[m] = sim.runsEvents;
      sim.withdrawn.delete(MEMBERS[m]!);
    }
    const last = sim.lastPublished[m];
    if (last !== undefined) entries.push({ ...last, state: sim.memberStates[m]! });
  });
  sim.published = entries;
  const described = (w: ObservedWorkload) =>
    `${w.name}${w.terminating ? ' terminating' : ''}=${(w.used as Record<Key, string>).pods}`;
  sim.log(
    `aggregator publishes ${entries.map((c) => `${c.name} (${c.state}) ${JSON.stringify(c.workloads.map(described))}`).join(', ')}`,
  );
}

/** Member `m`'s usage as it runs now: each workload name's pods, Karmada's and hand-made ones. */
function observed(sim: Simulation, m: number): ObservedCluster {
  return {
    name: MEMBERS[m]!,
    state: 'Ready',
    lastSyncTime: new Date(sim.now).toISOString(),
    used: {},
    // Karmada's copy and a hand-made Deployment of a name never run on one member together ('outside').
    workloads: BINDINGS.flatMap(({ name, cpuMilli }, b) => {
      const workload = (kind: string, replicas: number) => ({
        kind,
        name,
        used: { cpu: `${cpuMilli * replicas}m`, pods: String(replicas) },
      });
      const pods = sim.pods.get(name);
      const karmadas = pods?.on[m] ?? 0;
      const handMadeReplicas = sim.outside[m]![b]!;
      const handMadeOne = workload('Deployment', handMadeReplicas);
      handMade.add(handMadeOne);
      return [
        ...(karmadas > 0 ? [workload(sim.kinds.get(pods!.uid) ?? 'Deployment', karmadas)] : []),
        ...(handMadeReplicas > 0 ? [handMadeOne] : []),
        // Pods on their way out, published apart from their workload as the aggregator does
        // (libs/usage pod-usage.ts): one entry per kind, Karmada's and hand-made ones alike.
        ...[...new Set(sim.terminating.filter((t) => t.m === m && t.name === name).map((t) => t.kind))].map(
          (kind): ObservedWorkload => {
            const n = sim.terminating
              .filter((t) => t.m === m && t.name === name && t.kind === kind)
              .reduce((sum, t) => sum + t.n, 0);
            return { ...workload(kind, n), terminating: true };
          },
        ),
      ];
    }),
  };
}
