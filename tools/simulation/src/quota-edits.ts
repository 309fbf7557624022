/**
 * An admin's changes to what the quotas count (docs/development/simulation.md): a KarmadaQuota's or the
 * ClusterKarmadaQuota's edit, delete or create again, and a namespace's label that the ClusterKarmadaQuota
 * selects by; for LIMIT and RUNS, a namespace entering that quota's count is an edit of it.
 */
import {
  CAPPED,
  exercised,
  limitedKeys,
  limitsOf,
  newQuota,
  NOTHING,
  runsCovered,
  specOf,
  type Action,
  type QuotaSpec,
} from './model.js';
import { NAMESPACES } from './model-host.js';
import type { Simulation } from './simulation.js';

/**
 * An admin's edit of a quota, stored at once (see LIMIT): a spec edit (a new generation), a delete,
 * or a create of one deleted (a new uid). An edit of a deleted quota is the API server's 404.
 */
export function edit(sim: Simulation, action: Extract<Action, { t: 'edit' }>): void {
  const q = sim.specs[action.q % sim.specs.length]!;
  const current = sim.host.quotas.get(q.name);
  if (current === undefined && action.edit !== 'existence') return;
  if (action.edit === 'scope') {
    // spec.scopeSelector is immutable (the webhook refuses the update): a new scope is a new quota.
    edit(sim, { ...action, edit: 'existence' });
    q.highOnly = !q.highOnly;
    edit(sim, { ...action, edit: 'existence' });
    return;
  }
  if (action.edit === 'cpu') q.hard.cpu = action.cpu;
  else if (action.edit === 'enforcement')
    q.enforcement = q.enforcement === undefined ? 'DryRun' : q.enforcement === 'DryRun' ? 'Warn' : undefined;
  else if (action.edit === 'pods') {
    if (q.hard.pods === undefined) q.hard.pods = 12;
    else delete q.hard.pods;
  } else if (action.edit === 'cap') {
    if (q.hard[CAPPED] === undefined) q.hard[CAPPED] = action.cpu / 2;
    else if (!q.capByLabel) q.capByLabel = true;
    else {
      delete q.hard[CAPPED];
      delete q.capByLabel;
    }
  }
  const kind = action.edit !== 'existence' ? 'edited' : current ? 'deleted' : 'created';
  if (kind === 'deleted') sim.host.deleteQuota(q.name);
  else if (kind === 'created') sim.host.putQuota(newQuota(q, `quota-${q.name}-${sim.host.nextVersion()}`));
  else
    sim.host.putQuota({
      ...current,
      metadata: { ...current!.metadata, generation: (current!.metadata?.generation ?? 1) + 1 },
      spec: specOf(q),
    });
  exercised.quotaEdits[kind] = (exercised.quotaEdits[kind] ?? 0) + 1;
  sim.lastEdit.set(q.name, sim.host.quotaEvents.length - 1);
  // Every request not yet stored was decided, or may be, from the quota before this edit.
  for (const req of sim.requests) if (!req.done) req.beforeEdit.add(q.name);
  const ceiling = limitsOf(q);
  for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], sim.held(q, key));
  sim.ceilings.set(q.name, ceiling);
  // RUNS likewise: the members may keep what they are given at the edit, claims included; what
  // pending causes add is taken as they add under the new spec (its count may not see them yet).
  if (kind !== 'edited') sim.runsCountedAs(q.name, undefined); // a quota of no status yet, or none
  const from = sim.runsCountedFrom.get(q.name);
  for (const e of sim.runsPending)
    if (!runsCovered(e, from)) e.amounts.set(q.name, sim.workloadAdded(e, q) ?? { ...NOTHING });
  const runsCeiling = limitsOf(q);
  for (const key of limitedKeys(q))
    runsCeiling[key] = Math.max(runsCeiling[key], sim.given(q, key, true).total - sim.runsAllowance(q, key));
  sim.runsCeilings.set(q.name, runsCeiling);
  sim.log(
    `${kind === 'edited' ? 'EDIT' : kind === 'deleted' ? 'DELETE' : 'CREATE'} quota ${q.name}: ${JSON.stringify(specOf(q))}`,
  );
}

/** The 'label' action: a namespace's label is added or removed; it enters or leaves the ClusterKarmadaQuota's selector. */
export function label(sim: Simulation, action: Extract<Action, { t: 'label' }>): void {
  if (!sim.clusterQuota) return;
  const ns = action.ns % NAMESPACES.length;
  sim.labelled[ns] = !sim.labelled[ns];
  sim.labelEvents.push({ ns, labelled: sim.labelled[ns]! });
  sim.log(
    `namespace ${NAMESPACES[ns]} ${sim.labelled[ns] ? 'labelled: it enters' : 'unlabelled: it leaves'} the ClusterKarmadaQuota's selector`,
  );
  limitNamespacesMoved(sim);
}

/**
 * After a label change or a watch delivering one: the namespaces LIMIT counts for the
 * ClusterKarmadaQuota (the API server's labels and both replicas' views) may have moved. One
 * entering is an edit of the quota (namespaceEntered); one leaving stops counting.
 */
export function limitNamespacesMoved(sim: Simulation): void {
  const now: string[] = NAMESPACES.filter(
    (_, i) => sim.labelled[i] && sim.webhookLabelled.every((view) => view[i]),
  );
  const entered = now.filter((ns) => !sim.limitNamespaces.includes(ns));
  const left = sim.limitNamespaces.filter((ns) => !now.includes(ns));
  if (entered.length === 0 && left.length === 0) return;
  exercised.cluster.entered += entered.length;
  exercised.cluster.left += left.length;
  sim.limitNamespaces = now;
  sim.log(`LIMIT counts namespaces ${now.join(', ') || 'none'} for the ClusterKarmadaQuota`);
  if (entered.length > 0)
    namespaceEntered(
      sim,
      sim.specs.find((q) => q.cluster)!,
    );
}

/**
 * A namespace enters the ClusterKarmadaQuota's count (LIMIT, RUNS): as at an edit, the quota may be
 * left over by what the namespace holds, and the ceilings follow it down from there. A change
 * decided without the quota (its replica's view of the labels left the namespace out) lands as one
 * decided before an edit: it raises the ceiling by what it adds (request() and deliverLabel mark it).
 * ACCOUNTED waits for a recount started after the entry.
 */
function namespaceEntered(sim: Simulation, q: QuotaSpec): void {
  const ceiling = sim.ceilings.get(q.name)!;
  for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], sim.held(q, key));
  // Its bindings' charges changed while it was out of the count (a finished Job running again
  // marks no recount for a quota that does not count it): covered once a recount started after.
  sim.awaitingRecount.set(q.name, ++sim.staleLandings);
  const from = sim.runsCountedFrom.get(q.name);
  for (const e of sim.runsPending) {
    const added = runsCovered(e, from) ? undefined : sim.workloadAdded(e, q);
    if (added) e.amounts.set(q.name, added);
  }
  const runsCeiling = sim.runsCeilings.get(q.name)!;
  for (const key of limitedKeys(q))
    runsCeiling[key] = Math.max(runsCeiling[key], sim.given(q, key, true).total - sim.runsAllowance(q, key));
}
