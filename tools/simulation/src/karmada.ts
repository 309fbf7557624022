/**
 * Karmada and its clients in the simulation (docs/development/simulation.md): bindings created, updated,
 * deleted and finalized, their status written, Karmada re-sending a requeued write, and the API server
 * storing an admitted change when an action lands it.
 */
import type { ResourceBinding } from '#api';
import {
  BINDING_INDEX,
  bindingObject,
  BINDINGS,
  CLUSTER_QUOTA,
  describePlacement,
  exercised,
  isDuplicated,
  LANDING_LIMIT_MS,
  MEMBERS,
  namespaceOf,
  targetOn,
  type Action,
  type Request,
} from './model.js';
import { asKind, asUpdateOf, declaresNoReplicas, kindOf, type WorkloadKind } from './kinds-model.js';
import type { Poke } from './waiting-model.js';
import { unadmittedRuns } from './unadmitted.js';
import { request } from './webhooks.js';
import type { Simulation } from './simulation.js';

/** A client creates a Deployment's binding. */
export function create(sim: Simulation, action: Extract<Action, { t: 'create' }>): void {
  const uid = `uid-${sim.nextId}`;
  const template = sim.templateOf('Deployment', action.b, action.replicas, action.high);
  const rb = bindingObject(action.b, uid, action.replicas, template, '', undefined, action);
  request(
    sim,
    `CREATE ${BINDINGS[action.b]!.name} (${uid}) replicas=${action.replicas}${action.high ? ' high' : ''}${describePlacement(rb)}${action.dryRun ? ' dry-run' : ''}`,
    rb,
    action.replica,
    action.dryRun,
  );
}

/** A client creates a Job's or a DaemonSet's binding. */
export function createKind(sim: Simulation, action: Extract<Action, { t: 'createKind' }>): void {
  const uid = `uid-${sim.nextId}`;
  sim.kinds.set(uid, action.kind);
  const template = sim.templateOf(action.kind, action.b, action.replicas, action.high);
  const rb = asKind(bindingObject(action.b, uid, action.replicas, template, '', undefined, {}), action.kind);
  const replicas = action.kind === 'Job' ? ` replicas=${action.replicas}${action.high ? ' high' : ''}` : '';
  request(
    sim,
    `CREATE ${action.kind} ${BINDINGS[action.b]!.name} (${uid})${replicas}`,
    rb,
    action.replica,
    false,
  );
}

/** A client updates a binding's replicas, class or placement. */
export function update(sim: Simulation, action: Extract<Action, { t: 'update' }>): void {
  const old = sim.versionOf(action.b);
  if (old === undefined) return;
  // A binding being deleted can still be updated; the API server keeps its deletionTimestamp.
  const rb = bindingObject(
    action.b,
    old.metadata!.uid!,
    action.replicas,
    sim.templateOf(kindOf(old), action.b, action.replicas, action.high),
    old.metadata!.resourceVersion!,
    old.metadata?.deletionTimestamp,
    action,
  );
  if (action.unscheduled) rb.spec!.clusters = structuredClone(old.spec!.clusters);
  request(
    sim,
    `UPDATE ${old.metadata!.name} ${old.spec!.replicas}->${action.replicas}${action.high ? ' high' : ''}${describePlacement(rb)}`,
    asUpdateOf(rb, old),
    action.replica,
    false,
    old,
  );
}

/** A client deletes a binding: at once, or held by Karmada's finalizer ('graceful'). */
export function deleteBinding(sim: Simulation, action: Extract<Action, { t: 'delete' }>): void {
  const stored = sim.versionOf(action.b);
  if (stored === undefined || stored.metadata?.deletionTimestamp) return;
  if (action.graceful) {
    // Its pods run on until the finalizer is done; the binding holds nothing from now on.
    sim.host.storeBinding({
      ...stored,
      metadata: {
        ...stored.metadata,
        resourceVersion: sim.host.nextVersion(),
        deletionTimestamp: new Date(sim.now),
      },
    });
    sim.log(`DELETE ${stored.metadata!.name} (${stored.metadata!.uid}): being deleted (finalizer)`);
    return;
  }
  remove(sim, stored);
}

/** Karmada's finalizer is done with a binding being deleted. */
export function finalize(sim: Simulation, action: Extract<Action, { t: 'finalize' }>): void {
  const stored = sim.versionOf(action.b);
  if (stored === undefined || !stored.metadata?.deletionTimestamp) return;
  remove(sim, stored);
}

/** Karmada writes a binding's status: only its resourceVersion moves. */
export function writeStatus(sim: Simulation, action: Extract<Action, { t: 'statusWrite' }>): void {
  const stored = sim.versionOf(action.b);
  if (stored === undefined) return;
  const version = sim.host.nextVersion();
  sim.host.storeBinding({ ...stored, metadata: { ...stored.metadata, resourceVersion: version } });
  sim.log(`Karmada writes ${stored.metadata!.name}'s status: resourceVersion ${version}`);
}

/** The binding is gone from the host; its pods in the members begin terminating. */
function remove(sim: Simulation, stored: ResourceBinding): void {
  const name = stored.metadata!.name!;
  sim.host.deleteBinding(name);
  sim.log(`DELETE ${name} (${stored.metadata!.uid})`);
  const pods = sim.pods.get(name);
  if (pods === undefined) return;
  sim.pods.delete(name);
  const kind = sim.kinds.get(pods.uid) ?? 'Deployment';
  pods.on.forEach((n, m) => sim.beginTerminating(m, name, kind, n, false, 'deleted'));
}

/** The 'land' action: the API server stores one of the admitted changes not stored yet. */
export function landOne(sim: Simulation, i: number): void {
  const open = sim.requests.filter((r) => r.answer === 'allowed' && !r.done && !r.dryRun);
  if (open.length === 0) return;
  const req = open[i % open.length]!;
  req.done = true;
  land(sim, req);
}

/** The API server stores an admitted change, if it still can (within its request timeout, CAS). */
export function land(sim: Simulation, req: Request): void {
  const name = req.object.metadata!.name!;
  const stored = sim.host.bindings.get(name);
  if (sim.now > req.startedAt + LANDING_LIMIT_MS) {
    sim.log(`request ${req.id} abandoned: the API server's request timeout passed`);
    return;
  }
  if (
    req.oldVersion === undefined ? stored !== undefined : stored?.metadata?.resourceVersion !== req.oldVersion
  ) {
    exercised.notStored++;
    sim.log(`request ${req.id} not stored: ${req.oldVersion === undefined ? 'AlreadyExists' : 'Conflict'}`);
    // The API server's update loop reads the object again and runs admission again against it.
    if (req.oldVersion !== undefined && stored?.metadata?.uid === req.object.metadata?.uid) {
      exercised.readmitted++;
      request(
        sim,
        `${req.label} again, against resourceVersion ${stored!.metadata!.resourceVersion}`,
        asUpdateOf({ ...req.object, metadata: { ...stored!.metadata } }, stored!),
        req.id % 2,
        false,
        stored,
        req.startedAt,
      );
    }
    return;
  }
  const object = structuredClone(req.object);
  object.metadata!.resourceVersion = sim.host.nextVersion();
  if (req.oldVersion === undefined && sim.terminating.some((t) => t.name === name && !t.handMade))
    exercised.recreatedWhileTerminating++;
  // Karmada scales each member's copy down to the new spec at once (a new object starts from none):
  // the pods it takes away begin terminating. What that gives the members beyond what the change
  // was admitted for (a copy taken off a member runs on, terminating, beside the one its charge
  // lets start elsewhere) is Karmada's doing, not the admission's (RUNS).
  // A change decided before an edit raises the edited quotas' ceilings by what it adds.
  sim.growChargesUnadmitted(
    () =>
      unadmittedRuns(
        sim,
        kindOf(object),
        name,
        () => {
          sim.host.storeBinding(object);
          if (!sim.pods.has(name)) return;
          const on = sim.podsOf(object).map((n, m) => Math.min(n, sim.runsOn(object, m)));
          const elsewhere = (m: number) =>
            targetOn(object, m) === 0 && MEMBERS.some((_, i) => targetOn(object, i) > 0);
          sim.setPods(name, object.metadata!.uid!, on, (m) =>
            object.metadata?.deletionTimestamp ? 'deleted' : elsewhere(m) ? 'moved' : 'scaledDown',
          );
        },
        req.beforeEdit,
      ),
    (q) => req.beforeEdit.has(q.name),
    req.overridden === true,
  );
  for (const q of sim.specs)
    if (req.beforeEdit.has(q.name)) sim.awaitingRecount.set(q.name, ++sim.staleLandings);
  // Every quota limits cpu: one that selects the binding and was not edited since the decision
  // must have refused a binding whose pods its charge cannot bound.
  const limiting = sim.specs.filter(
    (q) =>
      sim.host.quotas.has(q.name) &&
      q.enforcement === undefined &&
      !req.beforeEdit.has(q.name) &&
      sim.inNamespaces(q, name) &&
      (!q.highOnly || sim.high(object)),
  );
  if (declaresNoReplicas(object) && limiting.length > 0)
    sim.unboundedStored = `${kindOf(object)} binding ${name} stored, its pods unbounded, while quotas ${limiting.map((q) => q.name).join(', ')} limit cpu`;
  exercised.stored++;
  if (req.beforeEdit.has(CLUSTER_QUOTA.name) && sim.limitNamespaces.includes(namespaceOf(name)))
    exercised.cluster.storedWithoutIt++;
  if ((object.spec?.clusters ?? []).length > 1) exercised.storedOnBothMembers++;
  if (isDuplicated(object)) exercised.storedDuplicated++;
  if (object.metadata?.deletionTimestamp) exercised.storedWhileDeleting++;
  sim.log(`request ${req.id} stored: ${req.label}`);
}

/**
 * Karmada's reaction to a requeue: the detector or scheduler writes again what it wants, against the
 * binding as stored now; nothing when the binding was created, deleted or re-created meanwhile.
 */
export function resend(sim: Simulation, poke: Poke, replica: number): void {
  sendAgain(sim, 'REQUEUED', poke.record.binding, poke.record.uid, poke.write, replica);
}

/**
 * Karmada's own back-off (the 'retry' action): the writer of binding `name`'s last refused write
 * sends it again, as a requeue's poke makes it do at once.
 */
export function retry(sim: Simulation, name: string, replica: number): void {
  const answer = sim.lastAnswer.get(name);
  if (answer === undefined || !answer.waits) return;
  const write = answer.write;
  exercised.retried++;
  // A create's write names no stored version.
  const uid = write.metadata?.resourceVersion ? write.metadata.uid : undefined;
  sendAgain(sim, 'RETRIED', name, uid, write, replica);
}

/**
 * `write`, refused for binding `name` (of object `uid`; none for a create), sent again against the
 * binding as stored now: nothing when it was created, deleted or re-created meanwhile.
 */
function sendAgain(
  sim: Simulation,
  why: 'REQUEUED' | 'RETRIED',
  name: string,
  uid: string | undefined,
  write: ResourceBinding,
  replica: number,
): void {
  const b = BINDING_INDEX.get(name)!;
  const stored = sim.versionOf(b);
  const replicas = write.spec?.replicas ?? 0;
  const high = sim.high(write);
  if (uid === undefined ? stored !== undefined : stored?.metadata?.uid !== uid) {
    sim.log(
      `${why === 'REQUEUED' ? 'requeue' : 'retry'} of ${name}: nothing to re-send, the binding changed meanwhile`,
    );
    return;
  }
  if (why === 'REQUEUED') exercised.requeueResent++;
  // The write it wants, placement and kind as they were.
  const rb = structuredClone(write);
  if (stored === undefined) {
    const created = `uid-${sim.nextId}`;
    rb.metadata = { ...rb.metadata, uid: created, resourceVersion: '' };
    delete rb.metadata.deletionTimestamp;
    if (kindOf(rb) !== 'Deployment') sim.kinds.set(created, kindOf(rb) as WorkloadKind);
    request(
      sim,
      `${why} CREATE ${name} (${created}) replicas=${replicas}${high ? ' high' : ''}`,
      rb,
      replica,
      false,
    );
    return;
  }
  rb.metadata = {
    ...rb.metadata,
    uid: stored.metadata!.uid!,
    resourceVersion: stored.metadata!.resourceVersion!,
    ...(stored.metadata?.deletionTimestamp ? { deletionTimestamp: stored.metadata.deletionTimestamp } : {}),
  };
  const label = `${why} UPDATE ${name} ${stored.spec!.replicas}->${replicas}${high ? ' high' : ''}`;
  request(sim, label, asUpdateOf(rb, stored), replica, false, stored);
}
