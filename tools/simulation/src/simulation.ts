/**
 * A deterministic simulation of the accounting (docs/development/simulation.md): the real admission
 * core and reconcile loop (#accounting) of two webhook replicas and a reconciler, Karmada-like clients
 * and two members, against a model of the Karmada API server (model-host.ts). A run is a list of
 * actions (model.ts) that chooses the interleaving; every invariant is checked after every action
 * against an independent recount.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { bindingCharge, isClusterQuota, type ObservedCluster, type ObservedWorkload } from '#quota';
import { AdmissionBatcher, asksNothing, bindingChange, CachedQuotaStore, NO_OBSERVER } from '#accounting';
import {
  BINDING_INDEX,
  bindingObject,
  BINDINGS,
  DEADLINE_MS,
  describePlacement,
  exercised,
  flush,
  handMade,
  isDuplicated,
  CAPPED,
  CLUSTER_QUOTA,
  CLUSTER_QUOTA_NAME,
  KEYS,
  limitsOf,
  NOTHING,
  LANDING_LIMIT_MS,
  limitedKeys,
  MAX_CLOCK_SKEW_MS,
  MEMBERS,
  milli,
  namespaceOf,
  newQuota,
  perReplica,
  REQUEUE_ROUNDS,
  runsCovered,
  specOf,
  targetOn,
  TIMING,
  type Action,
  type Key,
  type MemberEvent,
  type QuotaSpec,
  type Request,
  type TerminatingCause,
  type UnadmittedKind,
  type Violation,
} from './model.js';
import { NAMESPACE, NAMESPACES } from './model-host.js';
import {
  asKind,
  asUpdateOf,
  declaresNoReplicas,
  finishedStatus,
  jobFinished,
  kindOf,
  runningStatus,
  type WorkloadKind,
} from './kinds-model.js';
import { REQUEUE_INTERVAL_MS, type Poke } from './waiting-model.js';
import {
  bindingsIn,
  clustersIn,
  reconcile,
  reconcileCluster,
  startClusterReconcile,
  startReconcile,
  syncReconcilerCache,
  syncReconcilerLabels,
} from './reconciler.js';

import { Invariants } from './invariants.js';
import { EVERY_POD } from './model-state.js';
export class Simulation extends Invariants {
  private readonly cache: CachedQuotaStore;
  private readonly replicas: AdmissionBatcher[];

  constructor(clusterQuota = false) {
    super(clusterQuota);
    const options = (replica: number) => ({
      ...TIMING,
      maxConflictRetries: 10,
      clock: this.clockOf(replica),
    });
    // Each replica's namespace watch says which namespaces the ClusterKarmadaQuota selects.
    const selects = (replica: number) => (namespace: string) => {
      const ns = NAMESPACES.indexOf(namespace as never);
      if (!this.webhookLabelled[replica]![ns]) return undefined;
      return { name: namespace, labelledAt: this.namespaceVersion(ns, this.labelsDelivered[replica]!) };
    };
    this.cache = new CachedQuotaStore(this.host.quotaStore('webhook-1', selects(1)));
    this.cache.setWatching(true);
    this.delivered = this.host.quotaEvents.length;
    const observer = { ...NO_OBSERVER, refusedOnArrival: () => void exercised.refusedOnArrival++ };
    this.replicas = [
      new AdmissionBatcher(this.host.quotaStore('webhook-0', selects(0)), options(0), observer),
      new AdmissionBatcher(this.cache, options(1), observer),
    ];
  }

  private request(
    label: string,
    object: ResourceBinding,
    replica: number,
    dryRun: boolean,
    old?: ResourceBinding,
    startedAt = this.now,
  ): void {
    const namespace = namespaceOf(object.metadata!.name!);
    // Decided without the ClusterKarmadaQuota while the replica's view of the labels leaves the
    // namespace out: a change decided before the namespace entered the quota's count (LIMIT).
    const without =
      this.clusterQuota && !this.webhookLabelled[replica]![NAMESPACES.indexOf(namespace as never)];
    const req: Request = {
      id: this.nextId++,
      replica,
      label,
      object,
      ...(old ? { oldVersion: old.metadata!.resourceVersion! } : {}),
      startedAt,
      answerBy: this.now + DEADLINE_MS,
      dryRun,
      done: false,
      // The cached replica decides from its list until its watch delivers an edit.
      beforeEdit: new Set(
        replica === 1
          ? this.specs.filter((q) => this.lastEdit.get(q.name)! >= this.delivered).map((q) => q.name)
          : [],
      ),
    };
    if (without) req.beforeEdit.add(CLUSTER_QUOTA.name);
    this.requests.push(req);
    // As the webhook's controller does: the charge from the binding as written, the scopes from the
    // binding given its template's class when a quota it watches selects by class (the cached
    // replica's watch lags the host until 'deliver').
    const [scoped, scopedOld] = this.forServices([object, old], this.watchedQuotas(replica));
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
        this.waiting.admitted(replica, object, old, this.clockOf(replica)());
        this.answered(object, false);
      }
      this.log(`request ${req.id} ${label}: allowed at once (asks nothing)`);
      return;
    }
    this.log(`request ${req.id} ${label} sent to webhook-${replica}`);
    // The replica's own deadline, on its own clock.
    this.replicas[replica]!.admit(change, req.answerBy + this.offsets[replica]!).then(
      (outcome) => {
        if (req.answer !== undefined) return;
        req.answer = outcome.allowed && this.now < req.answerBy ? 'allowed' : 'refused';
        if (req.answer === 'allowed') exercised.allowed++;
        else if ('unavailable' in outcome) exercised.failedClosed++;
        else exercised.denied++;
        if (!outcome.allowed && outcome.message.startsWith('status unknown')) exercised.statusUnknown++;
        const byCluster = !outcome.allowed && 'quota' in outcome && outcome.quota === CLUSTER_QUOTA_NAME;
        if (byCluster) exercised.cluster.refused++;
        if (byCluster && outcome.message.startsWith('status unknown')) exercised.cluster.statusUnknown++;
        if (this.clusterQuota && !without && req.answer === 'allowed') exercised.cluster.allowed++;
        if (!outcome.allowed && outcome.message.startsWith('cannot bound the pods'))
          exercised.refusedUnbounded++;
        if (!outcome.allowed && / on member cluster /.test(outcome.message)) exercised.refusedOnMemberCap++;
        if (!outcome.allowed && /, member cluster: /.test(outcome.message))
          exercised.refusedMemberUnresolved++;
        this.log(`request ${req.id} answered ${req.answer}${outcome.allowed ? '' : `: ${outcome.message}`}`);
        if (dryRun) return;
        // The ClusterKarmadaQuota's waiting changes are requeued by its namespaces' reconciles, which the
        // model does not run for it: LIVENESS leaves them out (docs/development/simulation.md).
        const waits =
          req.answer === 'refused' &&
          !outcome.allowed &&
          !byCluster &&
          (outcome.message.startsWith('exceeded quota') || outcome.message.startsWith('status unknown'));
        this.answered(object, waits);
        if (req.answer === 'allowed') this.waiting.admitted(replica, object, old, this.clockOf(replica)());
        else if (!outcome.allowed && 'quota' in outcome)
          if (this.waiting.refused(replica, scoped!, scopedOld, outcome, this.clockOf(replica)()))
            exercised.waitingRecorded++;
      },
      (err: unknown) => (this.failure = err as Error),
    );
  }

  /**
   * The quotas a webhook replica's watch has reported: the host's as they are for webhook-0, as of
   * the events 'deliver' has given webhook-1 (its watch's first list included).
   */
  private watchedQuotas(replica: number): KarmadaQuota[] {
    if (replica !== 1) return [...this.host.quotas.values()];
    const watched = new Map<string, KarmadaQuota>();
    for (const { quota, deleted } of this.host.quotaEvents.slice(0, this.delivered))
      if (deleted) watched.delete(quota.metadata!.name!);
      else watched.set(quota.metadata!.name!, quota);
    return [...watched.values()];
  }

  /** The API server answers a request the webhook did not answer in time: refused, nothing to wait on. */
  private timedOut(req: Request): void {
    req.answer = 'refused';
    if (!req.dryRun) this.answered(req.object, false);
  }

  /** Records the answer to a non-dry-run `write` (lastAnswer): whether it must wait. */
  private answered(write: ResourceBinding, waits: boolean): void {
    this.lastAnswer.set(write.metadata!.name!, { write, waits, at: this.now });
  }

  /** The binding is gone from the host; its pods in the members begin terminating. */
  private remove(stored: ResourceBinding): void {
    const name = stored.metadata!.name!;
    this.host.deleteBinding(name);
    this.log(`DELETE ${name} (${stored.metadata!.uid})`);
    const pods = this.pods.get(name);
    if (pods === undefined) return;
    this.pods.delete(name);
    const kind = this.kinds.get(pods.uid) ?? 'Deployment';
    pods.on.forEach((n, m) => this.beginTerminating(m, name, kind, n, false, 'deleted'));
  }

  /**
   * Runs `change` of workload `kind`/`name`, which no admission decides (what a member does, or what
   * a landing gives beyond the charge it was admitted for), and records what it adds to what the
   * members are given (RUNS) as pending until counted: per quota, what it adds less, for a landing
   * (`landing`: the quotas it was decided before an edit of, for which all of it counts as the
   * edit's), what it adds to the quota's stored charges (an admission decided that); and as it adds
   * to an unscoped count, which a quota's edit takes for it again (editRuns).
   */
  private unadmittedRuns(
    kind: string,
    name: string,
    change: () => void,
    landing?: ReadonlySet<string>,
  ): void {
    const measure = () =>
      [EVERY_POD, ...this.specs].map((q) =>
        KEYS.map((key) => ({ given: this.given(q, key).total, charged: this.charged(q, key) })),
      );
    const before = measure();
    this.touched = new Set();
    try {
      change();
    } finally {
      const after = measure();
      const members = [...this.touched];
      this.touched = undefined;
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
        this.specs.map((q, i) => [q.name, added(i + 1, landing !== undefined && !landing.has(q.name))]),
      );
      const workload = added(0, landing !== undefined);
      const gross = added(0, false);
      if ([...amounts.values(), gross].some((a) => KEYS.some((key) => a[key] > 0)))
        this.runsPending.push({
          seq: ++this.runsEvents,
          members,
          workload: { kind, name, added: workload, gross, ...(landing ? { landing } : {}) },
          amounts,
        });
    }
  }

  private async apply(action: Action): Promise<void> {
    exercised.actions[action.t] = (exercised.actions[action.t] ?? 0) + 1;
    switch (action.t) {
      case 'create': {
        const uid = `uid-${this.nextId}`;
        const template = this.templateOf('Deployment', action.b, action.replicas, action.high);
        const rb = bindingObject(action.b, uid, action.replicas, template, '', undefined, action);
        this.request(
          `CREATE ${BINDINGS[action.b]!.name} (${uid}) replicas=${action.replicas}${action.high ? ' high' : ''}${describePlacement(rb)}${action.dryRun ? ' dry-run' : ''}`,
          rb,
          action.replica,
          action.dryRun,
        );
        break;
      }
      case 'update': {
        const old = this.versionOf(action.b);
        if (old === undefined) return;
        // A binding being deleted can still be updated; the API server keeps its deletionTimestamp.
        const rb = bindingObject(
          action.b,
          old.metadata!.uid!,
          action.replicas,
          this.templateOf(kindOf(old), action.b, action.replicas, action.high),
          old.metadata!.resourceVersion!,
          old.metadata?.deletionTimestamp,
          action,
        );
        if (action.unscheduled) rb.spec!.clusters = structuredClone(old.spec!.clusters);
        this.request(
          `UPDATE ${old.metadata!.name} ${old.spec!.replicas}->${action.replicas}${action.high ? ' high' : ''}${describePlacement(rb)}`,
          asUpdateOf(rb, old),
          action.replica,
          false,
          old,
        );
        break;
      }
      case 'delete': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || stored.metadata?.deletionTimestamp) return;
        if (action.graceful) {
          // Its pods run on until the finalizer is done; the binding holds nothing from now on.
          this.host.storeBinding({
            ...stored,
            metadata: {
              ...stored.metadata,
              resourceVersion: this.host.nextVersion(),
              deletionTimestamp: new Date(this.now),
            },
          });
          this.log(`DELETE ${stored.metadata!.name} (${stored.metadata!.uid}): being deleted (finalizer)`);
          break;
        }
        this.remove(stored);
        break;
      }
      case 'finalize': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || !stored.metadata?.deletionTimestamp) return;
        this.remove(stored);
        break;
      }
      case 'complete': {
        const label = this.host.completeOne(action.i);
        if (label) this.log(`host: ${label}`);
        break;
      }
      case 'fault': {
        const label = this.host.completeOne(action.i, action.fault);
        if (label === undefined) return;
        exercised.hostFaults++;
        this.log(`host: ${label}; ${action.fault}`);
        break;
      }
      case 'land': {
        const open = this.requests.filter((r) => r.answer === 'allowed' && !r.done && !r.dryRun);
        if (open.length === 0) return;
        const req = open[action.i % open.length]!;
        req.done = true;
        this.land(req);
        break;
      }
      case 'reconcile':
        startReconcile(this);
        break;
      case 'publish':
        this.publish();
        break;
      case 'pods':
      case 'evict': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || (action.t === 'pods' && stored.metadata?.deletionTimestamp)) return;
        const name = stored.metadata!.name!;
        const m =
          action.m ??
          Math.max(
            0,
            MEMBERS.findIndex((_, i) => targetOn(stored, i) > 0),
          );
        // Karmada cannot apply its copy over a hand-made workload of the name.
        if (action.t === 'pods' && this.outside[m % MEMBERS.length]![action.b]! > 0) return;
        const on = this.podsOf(stored);
        const running = on[m % MEMBERS.length]!;
        on[m % MEMBERS.length] =
          action.t === 'pods'
            ? Math.min(this.runsOn(stored, m % MEMBERS.length), running + action.n)
            : Math.max(0, running - action.n);
        this.log(`${MEMBERS[m % MEMBERS.length]}: ${name} runs ${on[m % MEMBERS.length]} pods`);
        const set = (cause: TerminatingCause) => () =>
          this.setPods(name, stored.metadata!.uid!, on, () => cause);
        // No admission decides what this gives the members beyond the binding's charge: an evicted
        // pod terminates while the charge lets its workload start another (the members run both, as
        // in a rolling update's surge); pods beyond spec.clusters (a surge's) terminate while the
        // charge lets others start; a finished Job's pods start again (its member object
        // re-created), though it holds nothing. Pods starting within the charge give nothing more.
        this.unadmittedRuns(kindOf(stored), name, set(action.t === 'evict' ? 'evicted' : 'scaledDown'));
        break;
      }
      case 'outside': {
        const m = action.m % MEMBERS.length;
        const name = BINDINGS[action.b]!.name;
        const karmadas = this.pods.get(name)?.on[m] ?? 0;
        // A hand-made workload cannot take a name Karmada's copy already has on the member.
        if (karmadas > 0) return;
        const gone = this.outside[m]![action.b]! - action.n;
        this.outside[m]![action.b] = action.n;
        this.log(`${MEMBERS[m]}: a hand-made Deployment ${name} runs ${action.n} pods`);
        this.beginTerminating(m, name, 'Deployment', gone, true, 'handMade');
        break;
      }
      case 'terminate': {
        const at = action.i % Math.max(1, this.terminating.length);
        const group = this.terminating[at];
        if (group === undefined) return;
        const n = Math.min(group.n, action.n);
        group.n -= n;
        if (group.n === 0) this.terminating.splice(at, 1);
        exercised.terminated += n;
        this.log(`${MEMBERS[group.m]}: ${n} terminating pods of ${group.kind} ${group.name} are gone`);
        break;
      }
      case 'member':
        this.memberEvent(action.m % MEMBERS.length, action.event);
        break;
      case 'redis-loss':
        if (this.published === undefined) return;
        this.published = [];
        this.lastPublished.fill(undefined);
        this.publishedPods.fill({ running: [], terminating: [] });
        this.observedAt.fill(-1);
        this.log('Redis loses every published usage');
        break;
      case 'deliver': {
        const event = this.host.quotaEvents[this.delivered];
        if (event === undefined) return;
        this.delivered++;
        this.cache.observed(event.quota, event.deleted);
        break;
      }
      case 'sync':
        syncReconcilerCache(this, action.n);
        syncReconcilerLabels(this, action.n);
        break;
      case 'edit':
        this.edit(action);
        break;
      case 'skew':
        this.offsets[action.who % this.offsets.length] = action.ms;
        this.log(
          `clock of ${['webhook-0', 'webhook-1', 'the reconciler'][action.who % 3]} set ${action.ms} ms off`,
        );
        break;
      case 'requeue': {
        const [poke] = this.pokes.splice(action.i % Math.max(1, this.pokes.length), 1);
        if (poke !== undefined) this.resend(poke, action.replica % this.replicas.length);
        break;
      }
      case 'label': {
        if (!this.clusterQuota) return;
        const ns = action.ns % NAMESPACES.length;
        this.labelled[ns] = !this.labelled[ns];
        this.labelEvents.push({ ns, labelled: this.labelled[ns]! });
        this.log(
          `namespace ${NAMESPACES[ns]} ${this.labelled[ns] ? 'labelled: it enters' : 'unlabelled: it leaves'} the ClusterKarmadaQuota's selector`,
        );
        this.limitNamespacesMoved();
        break;
      }
      case 'labelDeliver': {
        const replica = action.replica % this.replicas.length;
        const event = this.labelEvents[this.labelsDelivered[replica]!];
        if (event === undefined) return;
        this.labelsDelivered[replica]!++;
        this.webhookLabelled[replica]![event.ns] = event.labelled;
        const namespace = NAMESPACES[event.ns]!;
        if (replica === 1) this.cache.namespaceChanged(namespace);
        // A change in flight at the replica may now be decided from a list without the quota; one
        // entering: a change in flight there was decided, or is being, on a selection without it, the
        // quota's total without its usage (the documented lag, docs/concepts/cluster-quotas.md).
        for (const req of this.requests)
          if (req.replica === replica && req.answer === undefined)
            if (event.labelled || namespaceOf(req.object.metadata!.name!) === namespace)
              req.beforeEdit.add(CLUSTER_QUOTA.name);
        this.log(
          `webhook-${replica} sees namespace ${namespace} ${event.labelled ? 'labelled' : 'unlabelled'}`,
        );
        this.limitNamespacesMoved();
        break;
      }
      case 'reconcileCluster':
        startClusterReconcile(this);
        break;
      case 'waitingFlush':
        this.waiting.flush(this.now, action.replica % this.replicas.length);
        this.log(`webhook-${action.replica % this.replicas.length} flushes its waiting records`);
        break;
      case 'tick':
        this.now += action.ms;
        this.waiting.flush(this.now); // past every replica's flush delay
        for (const req of this.requests) {
          if (req.answer === undefined && this.now >= req.answerBy) {
            this.timedOut(req);
            exercised.failedClosed++;
            this.log(`request ${req.id} timed out (fail closed)`);
          }
        }
        break;
      case 'createKind': {
        const uid = `uid-${this.nextId}`;
        this.kinds.set(uid, action.kind);
        const template = this.templateOf(action.kind, action.b, action.replicas, action.high);
        const rb = asKind(
          bindingObject(action.b, uid, action.replicas, template, '', undefined, {}),
          action.kind,
        );
        const replicas =
          action.kind === 'Job' ? ` replicas=${action.replicas}${action.high ? ' high' : ''}` : '';
        this.request(
          `CREATE ${action.kind} ${BINDINGS[action.b]!.name} (${uid})${replicas}`,
          rb,
          action.replica,
          false,
        );
        break;
      }
      case 'surge':
      case 'jobFinishes':
      case 'jobRecreated':
      case 'jobRunsAgain':
        this.unadmitted(action);
        break;
      case 'override':
        this.override(action);
        break;
      case 'statusWrite': {
        const stored = this.versionOf(action.b);
        if (stored === undefined) return;
        const version = this.host.nextVersion();
        this.host.storeBinding({ ...stored, metadata: { ...stored.metadata, resourceVersion: version } });
        this.log(`Karmada writes ${stored.metadata!.name}'s status: resourceVersion ${version}`);
        break;
      }
    }
  }

  /**
   * An OverridePolicy set, changed or removed after its binding was admitted: no admission sees it
   * (docs/concepts/binding-cost.md#overridepolicies). The member follows it at once (pods beyond it
   * go), the services judge bindings with it from now on, and the charge grows by what it adds: as for
   * a change decided before an edit (LIMIT), the ceiling rises by that, and RUNS allows it, until a
   * recount has counted it.
   */
  private override(action: Extract<Action, { t: 'override' }>): void {
    const name = BINDINGS[action.b]!.name;
    const member = MEMBERS[action.m % MEMBERS.length]!;
    const stored = this.versionOf(action.b);
    const before = this.specs.map((q) => limitedKeys(q).map((key) => this.charged(q, key)));
    this.unadmittedRuns(stored === undefined ? 'Deployment' : kindOf(stored), name, () => {
      const policy = this.policies.get(name) ?? new Map<string, number>();
      if (action.replicas < 0) policy.delete(member);
      else policy.set(member, action.replicas);
      if (policy.size === 0) this.policies.delete(name);
      else this.policies.set(name, policy);
      if (stored !== undefined && this.pods.has(name)) {
        const on = this.podsOf(stored).map((n, m) => Math.min(n, this.runsOn(stored, m)));
        this.setPods(name, stored.metadata!.uid!, on, () => 'scaledDown');
      }
    });
    this.specs.forEach((q, i) => {
      const ceiling = this.ceilings.get(q.name)!;
      limitedKeys(q).forEach((key, j) => {
        ceiling[key] += Math.max(0, this.charged(q, key) - before[i]![j]!);
      });
      // Stored charges and those of changes in flight grew with no admission: counted by a recount.
      this.awaitingRecount.set(q.name, ++this.staleLandings);
    });
    // A change of the name decided before the policy lands with it, as one decided before an edit.
    for (const req of this.requests)
      if (!req.done && req.object.metadata?.name === name)
        for (const q of this.specs) req.beforeEdit.add(q.name);
    this.log(
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
  private unadmitted(action: Extract<Action, { t: UnadmittedKind }>): void {
    const applies = (rb: ResourceBinding): boolean => {
      if ((rb.spec?.clusters ?? []).length === 0) return false;
      const running = this.podsOf(rb).reduce((sum, n) => sum + n, 0);
      if (action.t === 'surge')
        return (
          !rb.metadata?.deletionTimestamp &&
          !jobFinished(rb) &&
          // Not where a hand-made workload of the name runs ('outside').
          MEMBERS.every(
            (_, m) =>
              targetOn(rb, m) === 0 || this.outside[m]![BINDING_INDEX.get(rb.metadata!.name!)!]! === 0,
          )
        );
      if (action.t === 'jobFinishes') return kindOf(rb) === 'Job' && !jobFinished(rb);
      return jobFinished(rb) && (action.t === 'jobRecreated' || running > 0);
    };
    const candidates = [...this.host.bindings.values()].filter(applies);
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
      this.log(
        `${MEMBERS[m]}: ${name} runs ${on[m]} pods, spec.clusters says ${targets[m]} (override or surge)`,
      );
      this.unadmittedRuns(kindOf(stored), name, () => this.setPods(name, uid, on, () => 'scaledDown'));
    } else if (action.t === 'jobFinishes') {
      this.host.storeBinding({
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: this.host.nextVersion() },
        status: finishedStatus(stored),
      });
      // Completed pods are gone at once: they do not terminate.
      this.pods.set(name, { uid, on: MEMBERS.map(() => 0) });
      this.log(`member: Job ${name} completed; Karmada writes the binding's status: finished`);
    } else if (action.t === 'jobRecreated') {
      this.log(`members: finished Job ${name} re-created by Karmada, runs ${declared} pods`);
      this.unadmittedRuns(kindOf(stored), name, () => this.setPods(name, uid, targets, () => 'scaledDown'));
    } else {
      const before = this.specs.map((q) => limitedKeys(q).map((key) => this.charged(q, key)));
      this.unadmittedRuns(kindOf(stored), name, () =>
        this.host.storeBinding({
          ...stored,
          metadata: { ...stored.metadata, resourceVersion: this.host.nextVersion() },
          status: runningStatus(stored),
        }),
      );
      // A charge grown with no admission: as for a change decided before an edit (LIMIT), the ceiling
      // rises by what it adds, and the accounting covers it once a recount has listed it.
      this.specs.forEach((q, i) => {
        const ceiling = this.ceilings.get(q.name)!;
        limitedKeys(q).forEach((key, j) => {
          const added = this.charged(q, key) - before[i]![j]!;
          if (added <= 0) return;
          ceiling[key] += added;
          this.awaitingRecount.set(q.name, ++this.staleLandings);
        });
      });
      this.log(`member: Job ${name} running again; Karmada writes the binding's status: running`);
    }
    exercised.unadmitted[action.t] = (exercised.unadmitted[action.t] ?? 0) + 1;
  }

  /**
   * An admin's edit of a quota, stored at once (see LIMIT): a spec edit (a new generation), a delete,
   * or a create of one deleted (a new uid). An edit of a deleted quota is the API server's 404.
   */
  private edit(action: Extract<Action, { t: 'edit' }>): void {
    const q = this.specs[action.q % this.specs.length]!;
    const current = this.host.quotas.get(q.name);
    if (current === undefined && action.edit !== 'existence') return;
    if (action.edit === 'scope') {
      // spec.scopeSelector is immutable (the webhook refuses the update): a new scope is a new quota.
      this.edit({ ...action, edit: 'existence' });
      q.highOnly = !q.highOnly;
      this.edit({ ...action, edit: 'existence' });
      return;
    }
    if (action.edit === 'cpu') q.hard.cpu = action.cpu;
    else if (action.edit === 'enforcement')
      q.enforcement =
        q.enforcement === undefined ? 'DryRun' : q.enforcement === 'DryRun' ? 'Warn' : undefined;
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
    if (kind === 'deleted') this.host.deleteQuota(q.name);
    else if (kind === 'created')
      this.host.putQuota(newQuota(q, `quota-${q.name}-${this.host.nextVersion()}`));
    else
      this.host.putQuota({
        ...current,
        metadata: { ...current!.metadata, generation: (current!.metadata?.generation ?? 1) + 1 },
        spec: specOf(q),
      });
    exercised.quotaEdits[kind] = (exercised.quotaEdits[kind] ?? 0) + 1;
    this.lastEdit.set(q.name, this.host.quotaEvents.length - 1);
    // Every request not yet stored was decided, or may be, from the quota before this edit.
    for (const req of this.requests) if (!req.done) req.beforeEdit.add(q.name);
    const ceiling = limitsOf(q);
    for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], this.held(q, key));
    this.ceilings.set(q.name, ceiling);
    // RUNS likewise: the members may keep what they are given at the edit, claims included; what
    // pending causes add is taken as they add under the new spec (its count may not see them yet).
    if (kind !== 'edited') this.runsCountedAs(q.name, undefined); // a quota of no status yet, or none
    const from = this.runsCountedFrom.get(q.name);
    for (const e of this.runsPending)
      if (!runsCovered(e, from)) e.amounts.set(q.name, this.workloadAdded(e, q) ?? { ...NOTHING });
    const runsCeiling = limitsOf(q);
    for (const key of limitedKeys(q))
      runsCeiling[key] = Math.max(
        runsCeiling[key],
        this.given(q, key, true).total - this.runsAllowance(q, key),
      );
    this.runsCeilings.set(q.name, runsCeiling);
    this.log(
      `${kind === 'edited' ? 'EDIT' : kind === 'deleted' ? 'DELETE' : 'CREATE'} quota ${q.name}: ${JSON.stringify(specOf(q))}`,
    );
  }

  /** The API server stores an admitted change, if it still can (within its request timeout, CAS). */
  private land(req: Request): void {
    const name = req.object.metadata!.name!;
    const stored = this.host.bindings.get(name);
    if (this.now > req.startedAt + LANDING_LIMIT_MS) {
      this.log(`request ${req.id} abandoned: the API server's request timeout passed`);
      return;
    }
    if (
      req.oldVersion === undefined
        ? stored !== undefined
        : stored?.metadata?.resourceVersion !== req.oldVersion
    ) {
      exercised.notStored++;
      this.log(
        `request ${req.id} not stored: ${req.oldVersion === undefined ? 'AlreadyExists' : 'Conflict'}`,
      );
      // The API server's update loop reads the object again and runs admission again against it.
      if (req.oldVersion !== undefined && stored?.metadata?.uid === req.object.metadata?.uid) {
        exercised.readmitted++;
        this.request(
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
    const chargedBefore = Object.fromEntries(
      this.specs.map((q) => [q.name, Object.fromEntries(KEYS.map((key) => [key, this.charged(q, key)]))]),
    );
    const object = structuredClone(req.object);
    object.metadata!.resourceVersion = this.host.nextVersion();
    if (req.oldVersion === undefined && this.terminating.some((t) => t.name === name && !t.handMade))
      exercised.recreatedWhileTerminating++;
    // Karmada scales each member's copy down to the new spec at once (a new object starts from none):
    // the pods it takes away begin terminating. What that gives the members beyond what the change
    // was admitted for (a copy taken off a member runs on, terminating, beside the one its charge
    // lets start elsewhere) is Karmada's doing, not the admission's (RUNS).
    this.unadmittedRuns(
      kindOf(object),
      name,
      () => {
        this.host.storeBinding(object);
        if (!this.pods.has(name)) return;
        const on = this.podsOf(object).map((n, m) => Math.min(n, this.runsOn(object, m)));
        const elsewhere = (m: number) =>
          targetOn(object, m) === 0 && MEMBERS.some((_, i) => targetOn(object, i) > 0);
        this.setPods(name, object.metadata!.uid!, on, (m) =>
          object.metadata?.deletionTimestamp ? 'deleted' : elsewhere(m) ? 'moved' : 'scaledDown',
        );
      },
      req.beforeEdit,
    );
    for (const q of this.specs) {
      if (!req.beforeEdit.has(q.name)) continue;
      const ceiling = this.ceilings.get(q.name)!;
      for (const key of limitedKeys(q))
        ceiling[key] += Math.max(0, this.charged(q, key) - chargedBefore[q.name]![key]);
      this.awaitingRecount.set(q.name, ++this.staleLandings);
    }
    // Every quota limits cpu: one that selects the binding and was not edited since the decision
    // must have refused a binding whose pods its charge cannot bound.
    const limiting = this.specs.filter(
      (q) =>
        this.host.quotas.has(q.name) &&
        q.enforcement === undefined &&
        !req.beforeEdit.has(q.name) &&
        this.inNamespaces(q, name) &&
        (!q.highOnly || this.high(object)),
    );
    if (declaresNoReplicas(object) && limiting.length > 0)
      this.unboundedStored = `${kindOf(object)} binding ${name} stored, its pods unbounded, while quotas ${limiting.map((q) => q.name).join(', ')} limit cpu`;
    exercised.stored++;
    if (req.beforeEdit.has(CLUSTER_QUOTA.name) && this.limitNamespaces.includes(namespaceOf(name)))
      exercised.cluster.storedWithoutIt++;
    if ((object.spec?.clusters ?? []).length > 1) exercised.storedOnBothMembers++;
    if (isDuplicated(object)) exercised.storedDuplicated++;
    if (object.metadata?.deletionTimestamp) exercised.storedWhileDeleting++;
    this.log(`request ${req.id} stored: ${req.label}`);
  }

  /** The aggregator publishes each Ready member's usage; a Stale or Unreachable one keeps its last. */
  private publish(): void {
    const entries: ObservedCluster[] = [];
    MEMBERS.forEach((_, m) => {
      if (this.memberStates[m] === 'Ready') {
        this.lastPublished[m] = this.observed(m);
        this.publishedPods[m] = this.memberPods(m);
        this.observedAt[m] = this.runsEvents;
        this.withdrawn.delete(MEMBERS[m]!);
      }
      const last = this.lastPublished[m];
      if (last !== undefined) entries.push({ ...last, state: this.memberStates[m]! });
    });
    this.published = entries;
    const described = (w: ObservedWorkload) =>
      `${w.name}${w.terminating ? ' terminating' : ''}=${(w.used as Record<Key, string>).pods}`;
    this.log(
      `aggregator publishes ${entries.map((c) => `${c.name} (${c.state}) ${JSON.stringify(c.workloads.map(described))}`).join(', ')}`,
    );
  }

  private memberEvent(m: number, event: MemberEvent): void {
    if (event !== 'removed') {
      this.memberStates[m] = event;
      this.log(`${MEMBERS[m]}'s watch is ${event}`);
      return;
    }
    // The host no longer has it: its pods are gone and the aggregator withdraws its usage. A member of
    // that name joining later starts empty.
    for (const pods of this.pods.values()) pods.on[m] = 0;
    this.outside[m]!.fill(0);
    this.terminating.splice(0, this.terminating.length, ...this.terminating.filter((t) => t.m !== m));
    // What the reconciler reads of it from now on (nothing) is what runs there.
    this.observedAt[m] = this.runsEvents;
    this.withdrawn.add(MEMBERS[m]!);
    this.memberStates[m] = 'Ready';
    this.lastPublished[m] = undefined;
    this.publishedPods[m] = { running: [], terminating: [] };
    if (this.published) this.published = this.published.filter((c) => c.name !== MEMBERS[m]);
    this.log(`${MEMBERS[m]} is removed from the federation; its usage is withdrawn`);
  }

  /** Member `m`'s usage as it runs now: each workload name's pods, Karmada's and hand-made ones. */
  private observed(m: number): ObservedCluster {
    return {
      name: MEMBERS[m]!,
      state: 'Ready',
      lastSyncTime: new Date(this.now).toISOString(),
      used: {},
      // Karmada's copy and a hand-made Deployment of a name never run on one member together ('outside').
      workloads: BINDINGS.flatMap(({ name, cpuMilli }, b) => {
        const workload = (kind: string, replicas: number) => ({
          kind,
          name,
          used: { cpu: `${cpuMilli * replicas}m`, pods: String(replicas) },
        });
        const pods = this.pods.get(name);
        const karmadas = pods?.on[m] ?? 0;
        const handMadeReplicas = this.outside[m]![b]!;
        const handMadeOne = workload('Deployment', handMadeReplicas);
        handMade.add(handMadeOne);
        return [
          ...(karmadas > 0 ? [workload(this.kinds.get(pods!.uid) ?? 'Deployment', karmadas)] : []),
          ...(handMadeReplicas > 0 ? [handMadeOne] : []),
          // Pods on their way out, published apart from their workload as the aggregator does
          // (libs/usage pod-usage.ts): one entry per kind, Karmada's and hand-made ones alike.
          ...[
            ...new Set(this.terminating.filter((t) => t.m === m && t.name === name).map((t) => t.kind)),
          ].map((kind): ObservedWorkload => {
            const n = this.terminating
              .filter((t) => t.m === m && t.name === name && t.kind === kind)
              .reduce((sum, t) => sum + t.n, 0);
            return { ...workload(kind, n), terminating: true };
          }),
        ];
      }),
    };
  }

  /**
   * After a label change or a watch delivering one: the namespaces LIMIT counts for the
   * ClusterKarmadaQuota (the API server's labels and both replicas' views) may have moved. One
   * entering is an edit of the quota (namespaceEntered); one leaving stops counting.
   */
  private limitNamespacesMoved(): void {
    const now: string[] = NAMESPACES.filter(
      (_, i) => this.labelled[i] && this.webhookLabelled.every((view) => view[i]),
    );
    const entered = now.filter((ns) => !this.limitNamespaces.includes(ns));
    const left = this.limitNamespaces.filter((ns) => !now.includes(ns));
    if (entered.length === 0 && left.length === 0) return;
    exercised.cluster.entered += entered.length;
    exercised.cluster.left += left.length;
    this.limitNamespaces = now;
    this.log(`LIMIT counts namespaces ${now.join(', ') || 'none'} for the ClusterKarmadaQuota`);
    if (entered.length > 0) this.namespaceEntered(this.specs.find((q) => q.cluster)!);
  }

  /**
   * A namespace enters the ClusterKarmadaQuota's count (LIMIT, RUNS): as at an edit, the quota may be
   * left over by what the namespace holds, and the ceilings follow it down from there. A change
   * decided without the quota (its replica's view of the labels left the namespace out) lands as one
   * decided before an edit: it raises the ceiling by what it adds (request() and labelDeliver mark it).
   * ACCOUNTED waits for a recount started after the entry.
   */
  private namespaceEntered(q: QuotaSpec): void {
    const ceiling = this.ceilings.get(q.name)!;
    for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], this.held(q, key));
    // Its bindings' charges changed while it was out of the count (a finished Job running again
    // marks no recount for a quota that does not count it): covered once a recount started after.
    this.awaitingRecount.set(q.name, ++this.staleLandings);
    const from = this.runsCountedFrom.get(q.name);
    for (const e of this.runsPending) {
      const added = runsCovered(e, from) ? undefined : this.workloadAdded(e, q);
      if (added) e.amounts.set(q.name, added);
    }
    const runsCeiling = this.runsCeilings.get(q.name)!;
    for (const key of limitedKeys(q))
      runsCeiling[key] = Math.max(
        runsCeiling[key],
        this.given(q, key, true).total - this.runsAllowance(q, key),
      );
  }

  /**
   * Karmada's reaction to a requeue: the detector or scheduler writes again what it wants, against the
   * binding as stored now; nothing when the binding was created, deleted or re-created meanwhile.
   */
  private resend(poke: Poke, replica: number): void {
    const name = poke.record.binding;
    const b = BINDING_INDEX.get(name)!;
    const stored = this.versionOf(b);
    const replicas = poke.write.spec?.replicas ?? 0;
    const high = this.high(poke.write);
    if (poke.record.uid === undefined ? stored !== undefined : stored?.metadata?.uid !== poke.record.uid) {
      this.log(`requeue of ${name}: nothing to re-send, the binding changed meanwhile`);
      return;
    }
    exercised.requeueResent++;
    // The write it wants, placement and kind as they were.
    const rb = structuredClone(poke.write);
    if (stored === undefined) {
      const uid = `uid-${this.nextId}`;
      rb.metadata = { ...rb.metadata, uid, resourceVersion: '' };
      delete rb.metadata.deletionTimestamp;
      if (kindOf(rb) !== 'Deployment') this.kinds.set(uid, kindOf(rb) as WorkloadKind);
      this.request(
        `REQUEUED CREATE ${name} (${uid}) replicas=${replicas}${high ? ' high' : ''}`,
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
    const label = `REQUEUED UPDATE ${name} ${stored.spec!.replicas}->${replicas}${high ? ' high' : ''}`;
    this.request(label, asUpdateOf(rb, stored), replica, false, stored);
  }

  /** Runs the actions, checking after each; then drains, settles and checks the exact recount. */
  async run(
    actions: readonly Action[],
    options: { countedAtStart?: boolean } = {},
  ): Promise<Violation | undefined> {
    if (options.countedAtStart ?? true) {
      // The quotas' usage is counted before the clients start (a run without it covers new quotas).
      this.publish();
      await this.reconcileToEnd();
    }
    for (const [step, action] of actions.entries()) {
      await this.apply(action);
      await flush();
      if (this.failure) return this.violation('ERROR', step, this.failure.stack ?? String(this.failure));
      const found = this.check(step);
      if (found) return found;
    }
    const settled = await this.settle(actions.length);
    exercised.quotaWrites += this.host.writes;
    exercised.conflicts += this.host.conflicts;
    return settled;
  }

  private async drain(): Promise<void> {
    for (let guard = 0; guard < 10_000 && this.host.pending.length > 0; guard++) {
      const label = this.host.completeOne(0);
      if (label) this.log(`host: ${label}`);
      await flush();
    }
  }

  /** One reconcile with every host operation completed in order. */
  private async reconcileToEnd(): Promise<void> {
    this.reconciles++;
    const done = reconcile(this);
    await flush();
    await this.drain();
    await done;
    if (this.clusterQuota) {
      const cluster = reconcileCluster(this);
      await flush();
      await this.drain();
      await cluster;
    }
    this.reconciles--;
  }

  private async settle(step: number): Promise<Violation | undefined> {
    this.log('-- settle: everything lands or times out, claims expire, pods catch up');
    await this.drain();
    for (const req of this.requests) {
      if (req.answer === undefined) this.timedOut(req);
      if (req.answer === 'allowed' && !req.done && !req.dryRun) {
        req.done = true;
        this.land(req);
      }
    }
    // Claims were written on clocks up to the skew ahead: past every expiration on every clock.
    this.offsets.fill(0);
    this.now += (TIMING.ttlSeconds + 1) * 1000 + MAX_CLOCK_SKEW_MS;
    // And past the grace period of every pod on its way out.
    if (this.terminating.length > 0) {
      this.terminating.length = 0;
      this.log('every pod on its way out is gone');
    }
    // Every member's watch recovers.
    this.memberStates.fill('Ready');
    this.publish();
    // Every namespace watch delivers the labels as they are.
    for (const replica of [0, 1])
      while (this.labelsDelivered[replica]! < this.labelEvents.length)
        await this.apply({ t: 'labelDeliver', replica });
    syncReconcilerLabels(this, Number.POSITIVE_INFINITY);
    for (let round = 0; round < 3; round++) {
      // The reconciler's watches catch up in the end: then a skip must be right, not merely safe.
      if (this.reconcilerCache) syncReconcilerCache(this, Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    const found = this.check(step);
    if (found) return found;
    // EXACT before the final DETECTED: a status that is not the recount is reported as that.
    for (const q of this.specs) {
      if (!this.host.quotas.has(q.name)) continue;
      const status = this.host.quotas.get(q.name)!.status;
      for (const key of limitedKeys(q)) {
        // used: every pod a quota selects on every member, hand-made ones of a selected name included;
        // reserved: what each selected binding's pods on its own members leave of its charge (a stored
        // binding is its own record: the status lists no entry for it, only the sum).
        const selected = this.inScope(q);
        let expectedUsed = 0;
        let expectedReserved = 0;
        BINDINGS.forEach(({ name }, b) => {
          if (!this.inNamespaces(q, name)) return;
          const rb = selected.find((x) => x.metadata!.name === name);
          if (q.highOnly && rb === undefined) return;
          const on = rb === undefined ? MEMBERS.map(() => 0) : this.podsOf(rb);
          // Hand-made Deployments pass for a binding of the name only if it is a Deployment's too.
          const sameKind = rb === undefined || kindOf(rb) === 'Deployment';
          const split = rb === undefined ? undefined : this.sharesNow(rb);
          if (split !== undefined) expectedReserved += split.rest[key];
          MEMBERS.forEach((member, m) => {
            const handMade = this.outside[m]![b]!;
            const each = perReplica(name, key, m);
            expectedUsed += (on[m]! + (q.highOnly && !sameKind ? 0 : handMade)) * each;
            const share = split?.on.get(member);
            if (share !== undefined)
              expectedReserved += Math.max(0, share[key] - (on[m]! + (sameKind ? handMade : 0)) * each);
          });
        });
        const used = milli(status?.used?.[key], key);
        const reserved = milli(status?.reserved?.[key], key);
        const claims = status?.reservations ?? [];
        if (used !== expectedUsed || reserved !== expectedReserved || claims.length > 0) {
          return this.violation(
            'EXACT',
            step,
            `quota ${q.name} after settling: used ${key}=${used} reserved=${reserved}, recount used=${expectedUsed} reserved=${expectedReserved}; claims left ${JSON.stringify(claims)}`,
          );
        }
      }
    }
    // DETECTED of the KarmadaQuotas (the ClusterKarmadaQuota's is not modelled yet).
    const bindings = bindingsIn([...this.host.bindings.values()], [NAMESPACE]).map((rb) =>
      this.classified(this.overridden(rb)),
    );
    for (const quota of this.host.quotas.values())
      if (!isClusterQuota(quota))
        this.checkDetected(
          quota,
          quota.status ?? {},
          bindings,
          this.published ? clustersIn(this, [NAMESPACE]) : [],
        );
    if (this.misdetected !== undefined) return this.violation('DETECTED', step, this.misdetected);
    return this.settleWaiting(step);
  }

  /**
   * Requeue to the end: Karmada re-sends what each requeue poked and the API server stores what is
   * admitted, time passes the requeue interval, the reconciler reconciles and requeues; REQUEUE_ROUNDS
   * times; then LIVENESS (Invariants.liveness).
   */
  private async settleWaiting(step: number): Promise<Violation | undefined> {
    for (let round = 0; ; round++) {
      for (const poke of this.pokes.splice(0)) this.resend(poke, 0);
      await flush();
      await this.drain();
      this.waiting.flush(this.now);
      for (const req of this.requests) {
        if (req.answer === 'allowed' && !req.done && !req.dryRun) {
          req.done = true;
          this.land(req);
        }
      }
      if (round === REQUEUE_ROUNDS || this.waiting.records.size === 0) break;
      this.now += REQUEUE_INTERVAL_MS + 1_000;
      // The members publish what runs after the writes stored (the independent recount's view).
      this.publish();
      if (this.reconcilerCache) syncReconcilerCache(this, Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    return this.check(step) ?? this.liveness(step);
  }
}

/** Runs one simulation of `actions`. */
export async function simulate(
  actions: readonly Action[],
  options: { countedAtStart?: boolean; trace?: string[]; clusterQuota?: boolean } = {},
): Promise<Violation | undefined> {
  const simulation = new Simulation(options.clusterQuota ?? true);
  const violation = await simulation.run(actions, options);
  options.trace?.push(...simulation.trace);
  return violation;
}
