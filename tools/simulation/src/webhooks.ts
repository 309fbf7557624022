/**
 * The two webhook replicas of the simulation (docs/development/simulation.md): the product's admission
 * core (#accounting), webhook-1 behind the watch-fed quota cache, each with its namespace watch; the
 * API server's admission requests to them and its answers, in time or not.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { bindingCharge } from '#quota';
import { AdmissionBatcher, asksNothing, bindingChange, CachedQuotaStore, NO_OBSERVER } from '#accounting';
import {
  CLUSTER_QUOTA,
  CLUSTER_QUOTA_NAME,
  DEADLINE_MS,
  exercised,
  namespaceOf,
  TIMING,
  type Request,
} from './model.js';
import { NAMESPACES } from './model-host.js';
import { limitNamespacesMoved } from './quota-edits.js';
import type { Simulation } from './simulation.js';

/**
 * The replicas, on their own clocks: webhook-0 lists the host's quotas, webhook-1 reads them from a
 * CachedQuotaStore its quota watch ('deliver') keeps.
 */
export function webhookReplicas(sim: Simulation): { cache: CachedQuotaStore; replicas: AdmissionBatcher[] } {
  const options = (replica: number) => ({
    ...TIMING,
    maxConflictRetries: 10,
    clock: sim.clockOf(replica),
  });
  // Each replica's namespace watch says which namespaces the ClusterKarmadaQuota selects.
  const selects = (replica: number) => (namespace: string) => {
    const ns = NAMESPACES.indexOf(namespace as never);
    if (!sim.webhookLabelled[replica]![ns]) return undefined;
    return { name: namespace, labelledAt: sim.namespaceVersion(ns, sim.labelsDelivered[replica]!) };
  };
  const cache = new CachedQuotaStore(sim.host.quotaStore('webhook-1', selects(1)));
  cache.setWatching(true);
  sim.delivered = sim.host.quotaEvents.length;
  const observer = { ...NO_OBSERVER, refusedOnArrival: () => void exercised.refusedOnArrival++ };
  const replicas = [
    new AdmissionBatcher(sim.host.quotaStore('webhook-0', selects(0)), options(0), observer),
    new AdmissionBatcher(cache, options(1), observer),
  ];
  return { cache, replicas };
}

/**
 * The API server sends `object` (an update of `old`, if given) to webhook-`replica`, which decides it
 * with the admission core; the answer is recorded on the request, and a non-dry-run one as the write's.
 */
export function request(
  sim: Simulation,
  label: string,
  object: ResourceBinding,
  replica: number,
  dryRun: boolean,
  old?: ResourceBinding,
  startedAt = sim.now,
): void {
  const namespace = namespaceOf(object.metadata!.name!);
  // Decided without the ClusterKarmadaQuota while the replica's view of the labels leaves the
  // namespace out: a change decided before the namespace entered the quota's count (LIMIT).
  const without = sim.clusterQuota && !sim.webhookLabelled[replica]![NAMESPACES.indexOf(namespace as never)];
  const req: Request = {
    id: sim.nextId++,
    replica,
    label,
    object,
    ...(old ? { oldVersion: old.metadata!.resourceVersion! } : {}),
    startedAt,
    answerBy: sim.now + DEADLINE_MS,
    dryRun,
    done: false,
    // The cached replica decides from its list until its watch delivers an edit.
    beforeEdit: new Set(
      replica === 1
        ? sim.specs.filter((q) => sim.lastEdit.get(q.name)! >= sim.delivered).map((q) => q.name)
        : [],
    ),
  };
  if (without) req.beforeEdit.add(CLUSTER_QUOTA.name);
  sim.requests.push(req);
  // As the webhook's controller does: the charge from the binding as written, the scopes from the
  // binding given its template's class when a quota it watches selects by class (the cached
  // replica's watch lags the host until 'deliver').
  const [scoped, scopedOld] = sim.forServices([object, old], watchedQuotas(sim, replica));
  const change = bindingChange(
    { namespace, name: object.metadata!.name! },
    scoped!,
    bindingCharge(scoped!).charge,
    dryRun,
    scopedOld,
  );
  if (asksNothing(change)) {
    req.answer = 'allowed';
    if (!dryRun) {
      sim.waiting.admitted(replica, object, old, sim.clockOf(replica)());
      answered(sim, object, false);
    }
    sim.log(`request ${req.id} ${label}: allowed at once (asks nothing)`);
    return;
  }
  sim.log(`request ${req.id} ${label} sent to webhook-${replica}`);
  // The replica's own deadline, on its own clock.
  sim.replicas[replica]!.admit(change, req.answerBy + sim.offsets[replica]!).then(
    (outcome) => {
      if (req.answer !== undefined) return;
      req.answer = outcome.allowed && sim.now < req.answerBy ? 'allowed' : 'refused';
      if (req.answer === 'allowed') exercised.allowed++;
      else if ('unavailable' in outcome) exercised.failedClosed++;
      else exercised.denied++;
      if (!outcome.allowed && outcome.message.startsWith('status unknown')) exercised.statusUnknown++;
      const byCluster = !outcome.allowed && 'quota' in outcome && outcome.quota === CLUSTER_QUOTA_NAME;
      if (byCluster) exercised.cluster.refused++;
      if (byCluster && outcome.message.startsWith('status unknown')) exercised.cluster.statusUnknown++;
      if (sim.clusterQuota && !without && req.answer === 'allowed') exercised.cluster.allowed++;
      if (!outcome.allowed && outcome.message.startsWith('cannot bound the pods'))
        exercised.refusedUnbounded++;
      if (!outcome.allowed && / on member cluster /.test(outcome.message)) exercised.refusedOnMemberCap++;
      if (!outcome.allowed && /, member cluster: /.test(outcome.message)) exercised.refusedMemberUnresolved++;
      sim.log(`request ${req.id} answered ${req.answer}${outcome.allowed ? '' : `: ${outcome.message}`}`);
      if (dryRun) return;
      // The ClusterKarmadaQuota's waiting changes are requeued by its namespaces' reconciles, which the
      // model does not run for it: LIVENESS leaves them out (docs/development/simulation.md).
      const waits =
        req.answer === 'refused' &&
        !outcome.allowed &&
        !byCluster &&
        (outcome.message.startsWith('exceeded quota') || outcome.message.startsWith('status unknown'));
      answered(sim, object, waits);
      if (req.answer === 'allowed') sim.waiting.admitted(replica, object, old, sim.clockOf(replica)());
      else if (!outcome.allowed && 'quota' in outcome)
        if (sim.waiting.refused(replica, scoped!, scopedOld, outcome, sim.clockOf(replica)()))
          exercised.waitingRecorded++;
    },
    (err: unknown) => (sim.failure = err as Error),
  );
}

/**
 * The quotas a webhook replica's watch has reported: the host's as they are for webhook-0, as of
 * the events 'deliver' has given webhook-1 (its watch's first list included).
 */
function watchedQuotas(sim: Simulation, replica: number): KarmadaQuota[] {
  if (replica !== 1) return [...sim.host.quotas.values()];
  const watched = new Map<string, KarmadaQuota>();
  for (const { quota, deleted } of sim.host.quotaEvents.slice(0, sim.delivered))
    if (deleted) watched.delete(quota.metadata!.name!);
    else watched.set(quota.metadata!.name!, quota);
  return [...watched.values()];
}

/** The API server answers a request the webhook did not answer in time: refused, nothing to wait on. */
export function timedOut(sim: Simulation, req: Request): void {
  req.answer = 'refused';
  if (!req.dryRun) answered(sim, req.object, false);
}

/** Records the answer to a non-dry-run `write` (lastAnswer): whether it must wait. */
function answered(sim: Simulation, write: ResourceBinding, waits: boolean): void {
  sim.lastAnswer.set(write.metadata!.name!, { write, waits, at: sim.now });
}

/** The 'deliver' action: webhook-1's quota watch delivers the next event to its cache. */
export function deliverQuotaEvent(sim: Simulation): void {
  const event = sim.host.quotaEvents[sim.delivered];
  if (event === undefined) return;
  sim.delivered++;
  sim.cache.observed(event.quota, event.deleted);
}

/** The 'labelDeliver' action: a replica's namespace watch delivers the next label change. */
export function deliverLabel(sim: Simulation, replica: number): void {
  const event = sim.labelEvents[sim.labelsDelivered[replica]!];
  if (event === undefined) return;
  sim.labelsDelivered[replica]!++;
  sim.webhookLabelled[replica]![event.ns] = event.labelled;
  const namespace = NAMESPACES[event.ns]!;
  if (replica === 1) sim.cache.namespaceChanged(namespace);
  // A change in flight at the replica may now be decided from a list without the quota; one
  // entering: a change in flight there was decided, or is being, on a selection without it, the
  // quota's total without its usage (the documented lag, docs/concepts/cluster-quotas.md).
  for (const req of sim.requests)
    if (req.replica === replica && req.answer === undefined)
      if (event.labelled || namespaceOf(req.object.metadata!.name!) === namespace)
        req.beforeEdit.add(CLUSTER_QUOTA.name);
  sim.log(`webhook-${replica} sees namespace ${namespace} ${event.labelled ? 'labelled' : 'unlabelled'}`);
  limitNamespacesMoved(sim);
}
