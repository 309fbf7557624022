/**
 * The reconciler of the simulation (docs/development/simulation.md): the product's reconcile loop
 * (#accounting) for the KarmadaQuotas and the ClusterKarmadaQuota, run against the model host, and its
 * informer caches of quotas, bindings and namespace labels, which lag the host as the actions choose.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { isClusterQuota, type ObservedCluster } from '#quota';
import { countedClusters, reconcileClusterQuota, reconcileQuotas, statusesCurrentIn } from '#accounting';
import { CAPPED_LABELS, exercised, MEMBERS, milli, namespaceOf, TIMING, type MemberPods } from './model.js';
import { NAMESPACE, NAMESPACES } from './model-host.js';
import { selectsHighOnly } from './kinds-model.js';
import { observedIn, outsideIn, unpublishedRuns } from './counted-from.js';
import type { Simulation } from './simulation.js';

/** The 'reconcile' action: a reconcile of the KarmadaQuotas starts, unless two are running. */
export function startReconcile(sim: Simulation): void {
  if (sim.published === undefined || sim.reconciles >= 2) return;
  sim.reconciles++;
  sim.log('reconciler starts');
  void reconcile(sim).then(
    () => sim.reconciles--,
    (err: unknown) => {
      sim.reconciles--;
      sim.log(`reconciler gave up: ${(err as Error).message}`);
    },
  );
}

/** The 'reconcileCluster' action: a reconcile of the ClusterKarmadaQuota starts, unless two are running. */
export function startClusterReconcile(sim: Simulation): void {
  if (!sim.clusterQuota || sim.published === undefined || sim.reconciles >= 2) return;
  sim.reconciles++;
  sim.log('reconciler starts the ClusterKarmadaQuota');
  void reconcileCluster(sim).then(
    () => sim.reconciles--,
    (err: unknown) => {
      sim.reconciles--;
      sim.log(`reconciler gave the ClusterKarmadaQuota up: ${(err as Error).message}`);
    },
  );
}

/** What a count reads as it starts: bindings listed after these events, each member as observed then. */
function countStart(sim: Simulation) {
  return {
    landingsSeen: sim.staleLandings,
    runsSeen: sim.runsEvents,
    snapshotAt: [...sim.observedAt],
    snapshotPods: {
      running: sim.publishedPods.flatMap((p) => p.running),
      terminating: sim.publishedPods.flatMap((p) => p.terminating),
    } satisfies MemberPods,
  };
}

/**
 * The reconciler's job for the KarmadaQuotas of the namespace, with the product's reconcileQuotas: it
 * skips when its cache shows every status current, else lists the quotas and counts each from the
 * bindings it lists, the usage Redis holds and the waiting changes, and requeues what may now fit.
 */
export async function reconcile(sim: Simulation): Promise<void> {
  const { landingsSeen, runsSeen, snapshotAt, snapshotPods } = countStart(sim);
  // The namespace of the KarmadaQuotas: its usage, bindings and waiting changes only.
  const clusters = clustersIn(sim, [NAMESPACE]);
  const input = {
    clusters,
    deletedBindingUids: new Set(sim.deletedUids),
    timing: TIMING,
    maxConflictRetries: 10,
    waiting: sim.waiting.read((binding) => namespaceOf(binding) === NAMESPACE),
    // Karmada's Clusters: a member removed from the federation has none until it is published again.
    members: new Map(
      MEMBERS.filter((m) => !sim.withdrawn.has(m)).map((m) => [m, m === MEMBERS[0] ? CAPPED_LABELS : {}]),
    ),
  };
  const cache = sim.reconcilerCache;
  const namespaced = (quotas: readonly KarmadaQuota[]) => quotas.filter((q) => !isClusterQuota(q));
  // As the reconciler reads Redis (usage-reader.ts): a member a status counts whose usage is not
  // published (Redis lost it, and it is not published again yet) is unknown, never zero.
  const unknown = (quotas: readonly KarmadaQuota[]) =>
    countedClusters(quotas).filter(
      (name) => !clusters.some((c) => c.name === name) && !sim.withdrawn.has(name),
    );
  if (
    cache &&
    unknown(namespaced([...cache.quotas.values()])).length === 0 &&
    statusesCurrentIn(
      {
        quotas: namespaced([...cache.quotas.values()]),
        // As the reconciler gives its cached bindings their templates' classes.
        bindings: sim.forServices(
          bindingsIn([...cache.bindings.values()], [NAMESPACE]),
          namespaced([...cache.quotas.values()]),
        ),
      },
      input,
      sim.clockOf(2)(),
    )
  ) {
    exercised.reconcilesSkipped++;
    sim.log('reconciler: its cache shows every status current, nothing read or written');
    return;
  }
  if (cache) exercised.reconcilesFromCacheToHost++;
  // What each status it writes, or finds current, was counted from (see outsideCounted): the
  // clusters, and the last binding list read (a conflict reads the quota, then the list, again).
  let listed: ResourceBinding[] = [];
  const read = new Map<string, KarmadaQuota>();
  const listedAfterRead = new Map<string, ResourceBinding[]>();
  let rereading: string | undefined;
  let firstList: ResourceBinding[] | undefined;
  const written = new Set<string>();
  const countedFrom = (quota: KarmadaQuota, bindings: ResourceBinding[]) => {
    const name = quota.metadata!.name!;
    // What no admission decided is counted by a status computed from bindings listed after it
    // and a snapshot of each member it touched observed after it (RUNS).
    unpublishedRuns(sim, quota, { seen: runsSeen, at: snapshotAt }, snapshotPods);
    sim.runsCountedAs(name, { seen: runsSeen, at: snapshotAt });
    sim.outsideCounted.set(name, outsideIn(selectsHighOnly(quota), clusters, bindings));
    sim.observedCounted.set(name, observedIn(selectsHighOnly(quota), clusters, bindings));
  };
  const quotas = namespaced(await sim.host.listQuotas('reconciler'));
  const missing = unknown(quotas);
  if (missing.length > 0)
    // The status is kept until the aggregator publishes the usage again (reconcile.service.ts).
    throw new Error(`the usage of ${missing.join(', ')} is missing from Redis, not published again yet`);
  const outcome = await reconcileQuotas(
    {
      getQuota: async (_ns, name) => {
        const quota = await sim.host.getQuota('reconciler', name);
        read.set(name, quota);
        rereading = name;
        return quota;
      },
      listBindings: async () => {
        // Given their templates' classes when a quota it judges selects by class: those it listed,
        // and one read again after a conflict. (reconcile.service.ts asks only those it listed
        // first: a quota edited to select by class during the reconcile is then counted from
        // bindings without their class; reported, not modelled.)
        const list = await sim.host.listBindings('reconciler');
        listed = sim.forServices(bindingsIn(list.items, [NAMESPACE]), [...quotas, ...read.values()]);
        firstList ??= listed;
        if (rereading !== undefined) listedAfterRead.set(rereading, listed);
        rereading = undefined;
        return { items: listed, resourceVersion: list.resourceVersion };
      },
      writeStatus: (quota) => {
        const counted = listed;
        return sim.host.writeQuotaStatus('reconciler', quota, () => {
          written.add(quota.metadata!.name!);
          countedFrom(quota, counted);
        });
      },
      clock: sim.clockOf(2),
    },
    NAMESPACE,
    quotas,
    input,
    async (quota, result) => sim.checkDetected(quota, result.status, listed, clusters),
    () => {},
  );
  // Without a conflict, every status (written or found current) was computed from the one list.
  if (outcome.conflicts === 0)
    for (const quota of quotas)
      sim.checkDetected(quota, outcome.statuses.get(quota.metadata!.name!)!, listed, clusters);
  // Its binding list started after these landings: the statuses it wrote or found current count them.
  for (const name of outcome.statuses.keys())
    if ((sim.awaitingRecount.get(name) ?? Infinity) <= landingsSeen) sim.awaitingRecount.delete(name);
  // A status found current, and unchanged since it was read, counts what this count read: the
  // quotas go in order, each computed from the list current then (the one a conflict read last).
  let current = firstList ?? [];
  for (const listedQuota of quotas) {
    const name = listedQuota.metadata!.name!;
    current = listedAfterRead.get(name) ?? current;
    const quota = read.get(name) ?? listedQuota;
    const unchanged =
      sim.host.quotas.get(name)?.metadata?.resourceVersion === quota.metadata?.resourceVersion;
    if (outcome.statuses.has(name) && !written.has(name) && unchanged) countedFrom(quota, current);
  }
  for (const poke of sim.waiting.settle(outcome.waiting, outcome.statuses, sim.clockOf(2)())) {
    exercised.requeued++;
    sim.pokes.push(poke);
    sim.log(`reconciler requeues ${poke.record.binding} (waiting on ${poke.record.quota})`);
  }
}

/**
 * The reconciler's job for the ClusterKarmadaQuota, with the product's reconcileClusterQuota: it
 * reads the quota, then each namespace its own namespace watch shows selected (bindings listed then,
 * the usage Redis holds for the namespace, deletions, waiting changes), and writes the sum. Its
 * namespaces' waiting changes are requeued by their namespace reconciles in the product, which the
 * model does not run for it.
 */
export async function reconcileCluster(sim: Simulation): Promise<void> {
  const q = sim.specs.find((spec) => spec.cluster)!;
  const { landingsSeen, runsSeen, snapshotAt, snapshotPods } = countStart(sim);
  // What Redis holds for each namespace, read as the reconcile starts (as the namespace reconcile's).
  const published = sim.published!;
  const usage = new Map(NAMESPACES.map((ns) => [ns as string, clustersIn(sim, [ns])]));
  exercised.cluster.reconciles++;
  let namespaces: string[] = [];
  let readVersion: string | undefined;
  const listed = new Map<string, ResourceBinding[]>();
  const usageRead = new Map<string, ObservedCluster[]>();
  const members = new Map(
    MEMBERS.filter((m) => !sim.withdrawn.has(m)).map((m) => [m, m === MEMBERS[0] ? CAPPED_LABELS : {}]),
  );
  // What the status it writes, or finds current, was counted from (RUNS, ACCOUNTED).
  const countedFrom = (quota: KarmadaQuota, read: readonly string[], bindings: ResourceBinding[]) => {
    const from = { seen: runsSeen, at: snapshotAt };
    unpublishedRuns(sim, quota, from, snapshotPods);
    sim.runsCountedAs(q.name, from);
    // The usage each namespace's read found (one entry per member and namespace).
    const clusters = read.flatMap((ns) => usageRead.get(ns) ?? []);
    sim.outsideCounted.set(q.name, outsideIn(q.highOnly, clusters, bindings));
    sim.observedCounted.set(q.name, observedIn(q.highOnly, clusters, bindings));
  };
  const outcome = await reconcileClusterQuota(
    {
      getQuota: async () => {
        if (!sim.host.quotas.has(q.name)) return undefined;
        const quota = await sim.host.getQuota('reconciler', q.name);
        readVersion = quota.metadata?.resourceVersion;
        return quota;
      },
      selectedNamespaces: () => {
        namespaces = NAMESPACES.filter((_, i) => sim.reconcilerLabelled[i]);
        listed.clear();
        usageRead.clear();
        return namespaces.map((name) => ({
          name,
          resourceVersion: sim.namespaceVersion(NAMESPACES.indexOf(name as never), sim.reconcilerLabelsAt),
        }));
      },
      readNamespace: async (namespace, quota) => {
        const clusters = usage.get(namespace)!;
        const missing = countedClusters([quota]).filter(
          (name) => !published.some((c) => c.name === name) && !sim.withdrawn.has(name),
        );
        if (missing.length > 0)
          throw new Error(
            `the usage of ${missing.join(', ')} is missing from Redis, not published again yet`,
          );
        const list = await sim.host.listBindings('reconciler');
        const bindings = sim.forServices(bindingsIn(list.items, [namespace]), [quota]);
        listed.set(namespace, bindings);
        usageRead.set(namespace, clusters);
        return {
          bindings: { items: bindings, resourceVersion: list.resourceVersion },
          input: {
            clusters,
            deletedBindingUids: new Set(sim.deletedUids),
            timing: TIMING,
            maxConflictRetries: 10,
            waiting: sim.waiting.read((binding) => namespaceOf(binding) === namespace),
            members,
          },
        };
      },
      writeStatus: (quota) => {
        const bindings = [...listed.values()].flat();
        const read = [...namespaces];
        return sim.host.writeQuotaStatus('reconciler', quota, () => {
          exercised.cluster.written++;
          countedFrom(quota, read, bindings);
        });
      },
      clock: sim.clockOf(2),
    },
    10,
    async () => {},
    () => {},
  );
  // A status found current, and unchanged since it was read, counts what this count read.
  if (!outcome.written && outcome.status !== undefined)
    if (sim.host.quotas.get(q.name)?.metadata?.resourceVersion === readVersion)
      countedFrom(sim.host.quotas.get(q.name)!, namespaces, [...listed.values()].flat());
  // A recount that listed every namespace LIMIT counts, after these landings, counts them.
  const counted = sim.limitNamespaces.every((ns) => namespaces.includes(ns));
  if (
    outcome.status !== undefined &&
    counted &&
    (sim.awaitingRecount.get(q.name) ?? Infinity) <= landingsSeen
  )
    sim.awaitingRecount.delete(q.name);
}

export function syncReconcilerCache(sim: Simulation, n: number): void {
  if (sim.reconcilerCache === undefined) {
    sim.reconcilerCache = {
      quotas: new Map([...sim.host.quotas].map(([k, q]) => [k, structuredClone(q)])),
      bindings: new Map([...sim.host.bindings].map(([k, b]) => [k, structuredClone(b)])),
    };
    sim.reconcilerCacheAt = sim.host.changes.length;
    sim.log('reconciler cache lists the host');
    return;
  }
  const cache = sim.reconcilerCache;
  for (const change of sim.host.changes.slice(sim.reconcilerCacheAt, sim.reconcilerCacheAt + n)) {
    if (change.kind === 'quota') cache.quotas.set(change.object.metadata!.name!, change.object);
    else if (change.kind === 'quota-deleted') cache.quotas.delete(change.name);
    else if (change.kind === 'binding') cache.bindings.set(change.object.metadata!.name!, change.object);
    else {
      cache.bindings.delete(change.name);
      sim.deletedUids.add(change.uid);
    }
    sim.reconcilerCacheAt++;
  }
  sim.log(`reconciler cache at change ${sim.reconcilerCacheAt} of ${sim.host.changes.length}`);
}

/** The reconciler's namespace watch delivers up to `n` label changes it has not seen. */
export function syncReconcilerLabels(sim: Simulation, n: number): void {
  const upTo = Math.min(sim.labelEvents.length, sim.reconcilerLabelsAt + n);
  if (upTo === sim.reconcilerLabelsAt) return;
  for (const event of sim.labelEvents.slice(sim.reconcilerLabelsAt, upTo))
    sim.reconcilerLabelled[event.ns] = event.labelled;
  sim.reconcilerLabelsAt = upTo;
  sim.log(
    `reconciler sees namespaces ${NAMESPACES.filter((_, i) => sim.reconcilerLabelled[i]).join(', ') || 'none'} labelled`,
  );
}

/**
 * The usage Redis holds for the namespaces: each published member with the workloads of those
 * namespaces only (the aggregator publishes per namespace), `used` summed from them.
 */
export function clustersIn(sim: Simulation, namespaces: readonly string[]): ObservedCluster[] {
  return sim.published!.map((c) => {
    const workloads = c.workloads.filter((w) => namespaces.includes(namespaceOf(w.name)));
    return {
      ...c,
      workloads,
      used: Object.fromEntries(
        ['cpu', 'pods'].map((k) => [
          k,
          `${workloads.reduce((sum, w) => sum + milli((w.used as Record<string, string>)[k], k), 0)}${k === 'cpu' ? 'm' : ''}`,
        ]),
      ),
    };
  });
}

/** The bindings of the namespaces, of those given. */
export function bindingsIn<T extends ResourceBinding>(
  bindings: readonly T[],
  namespaces: readonly string[],
): T[] {
  return bindings.filter((rb) => namespaces.includes(namespaceOf(rb.metadata!.name!)));
}
