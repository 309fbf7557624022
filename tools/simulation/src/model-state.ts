/**
 * The simulated federation's state (docs/development/simulation.md): the Karmada API server's model,
 * the members' pods, templates and policies, what each quota's status was counted from, and the
 * simulation's own recount of what a quota holds and what the members are given.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import {
  hasPriorityClassScope,
  templateClassNeeded,
  withClusterOverrides,
  withTemplateClass,
  type ObservedCluster,
} from '#quota';
import {
  BINDINGS,
  charge,
  CLUSTER_QUOTA,
  namespaceOf,
  exercised,
  KEYS,
  LANDING_LIMIT_MS,
  limitedKeys,
  limitsOf,
  MAX_CLOCK_SKEW_MS,
  MEMBERS,
  milli,
  newQuota,
  NO_OVERRIDES,
  perReplica,
  QUOTAS,
  runsCovered,
  shares,
  targetOn,
  type CountedFrom,
  type Key,
  type MemberPods,
  type Overrides,
  type QuotaSpec,
  type Request,
  type RunsEvent,
  type Terminating,
  type TerminatingCause,
  type Violation,
} from './model.js';
import { ModelHost, NAMESPACE, NAMESPACES } from './model-host.js';
import { isHigh, kindOf, type WorkloadKind } from './kinds-model.js';
import { WaitingModel, type Poke } from './waiting-model.js';

/**
 * No quota of the product: the model's unscoped count over every namespace, what RUNS measures a
 * workload's change by (RunsEvent.workload) so that an edit of a quota, or a namespace entering the
 * ClusterKarmadaQuota's count, can take what the change adds under it whatever its namespace.
 */
export const EVERY_POD: QuotaSpec = { name: '', hard: { cpu: 0 }, highOnly: false };

export abstract class ModelState {
  readonly host = new ModelHost();

  /** Real time. */
  now = Date.parse('2026-11-23T00:00:00Z');

  /** How far each process's clock is off real time: webhook-0, webhook-1, the reconciler. */
  readonly offsets = [0, 0, 0];

  readonly clockOf = (process: number) => () => this.now + this.offsets[process]!;

  readonly requests: Request[] = [];

  nextId = 0;

  delivered = 0;

  /** Pods running per binding name: the uid they belong to, how many on each member (none terminating). */
  readonly pods = new Map<string, { uid: string; on: number[] }>();

  /** Pods on their way out, in the order they began terminating ('terminate' finishes them). */
  readonly terminating: Terminating[] = [];

  /** While a change runs (unadmittedRuns): the members whose pods it changed. */
  touched?: Set<number>;

  /**
   * The resource templates on the Karmada API server, by kind and name: the version the detector last
   * wrote a binding from, and its content (a new version when the content changes); and the priority
   * class of each version's pods ('' for none), which the services read (classified).
   */
  readonly templates = new Map<string, { version: string; replicas: number; high: boolean }>();

  readonly templateClasses = new Map<string, string>();

  /** OverridePolicies: per workload name, per member name, the replicas the member is made to run. */
  readonly policies = new Map<string, Map<string, number>>();

  templateVersions = 0;

  /**
   * Per quota and key, what the members may be given (RUNS), besides what pending causes add
   * (runsPending): hard, or more while an edit or a counted cause left them over; it follows them
   * down to hard.
   */
  readonly runsCeilings = new Map<string, Record<Key, number>>();

  /**
   * What no admission decided that gave the members more (RUNS), in order: until a quota has counted
   * one (a reconcile started after it, `seq` of runsEvents, read a snapshot of each of its `members`
   * observed after it), what it added to the quota (`amounts`) is allowed on top of the ceiling, and
   * then added to the ceiling, which follows the members down from there.
   */
  readonly runsPending: RunsEvent[] = [];

  runsEvents = 0;

  /** Per quota, what the status stored now was counted from (RUNS: which causes it counts). */
  readonly runsCountedFrom = new Map<string, CountedFrom>();

  /** Per member, runsEvents when the usage the aggregator keeps for it was observed (-1: none). */
  readonly observedAt: number[] = MEMBERS.map(() => -1);

  /** Per member, Karmada's pods as the usage the aggregator keeps for it showed them (RUNS). */
  readonly publishedPods: MemberPods[] = MEMBERS.map(() => ({ running: [], terminating: [] }));

  /** Members withdrawn from the federation, until they are published again (their usage is none). */
  readonly withdrawn = new Set<string>();

  /** Pods of hand-made Deployments, per member and binding name they share (outside the federation). */
  readonly outside: number[][] = MEMBERS.map(() => BINDINGS.map(() => 0));

  /** Each member's health as the aggregator sees it, and what it published last (kept while not Ready). */
  readonly memberStates: ('Ready' | 'Stale' | 'Unreachable')[] = MEMBERS.map(() => 'Ready');

  readonly lastPublished: (ObservedCluster | undefined)[] = MEMBERS.map(() => undefined);

  /** The workload kind of each binding created, by uid (what the member reports its pods under). */
  readonly kinds = new Map<string, WorkloadKind>();

  /** The first status found computed with a wrong RunningBeyondCharge (DETECTED). */
  misdetected?: string;

  published: ObservedCluster[] | undefined;

  /**
   * Per quota, the usage outside the federation that its stored `used` counts: the part no binding's
   * reservation may stand in for (ACCOUNTED), from the snapshot and bindings its last count read.
   */
  readonly outsideCounted = new Map<string, Record<Key, number>>();

  /**
   * Per quota, per binding name, the usage its stored `used` attributes to that binding: what its
   * reservation nets (ACCOUNTED per binding), from the snapshot and bindings its last count read.
   */
  readonly observedCounted = new Map<string, Map<string, Record<Key, number>>>();

  /**
   * The bindings whose deletion the reconciler has recorded: as in production, only those its binding
   * watch (the cache below) has delivered, so a deletion is known later than the host shows it.
   */
  readonly deletedUids = new Set<string>();

  /**
   * The reconciler's informer cache: off (every reconcile reads the host) until the first 'sync'
   * lists the host, then fed the host's changes in order, `n` per 'sync', so it lags as it pleases.
   */
  reconcilerCache?: { quotas: Map<string, KarmadaQuota>; bindings: Map<string, ResourceBinding> };

  reconcilerCacheAt = 0;

  reconciles = 0;

  readonly trace: string[] = [];

  failure?: Error;

  /** The quotas' specs as edited so far (the ClusterKarmadaQuota's last, in runs with it). */
  readonly specs: QuotaSpec[];

  /**
   * Per namespace (NAMESPACES), whether it carries the label the ClusterKarmadaQuota selects: on the
   * Karmada API server, as each webhook replica's namespace watch has delivered it, and as the
   * reconciler's namespace watch has ('sync'). The changes in order, as the watches report them.
   */
  readonly labelled: boolean[] = NAMESPACES.map(() => true);
  readonly webhookLabelled: boolean[][] = [0, 1].map(() => NAMESPACES.map(() => true));
  readonly reconcilerLabelled: boolean[] = NAMESPACES.map(() => true);
  readonly labelEvents: { ns: number; labelled: boolean }[] = [];
  readonly labelsDelivered = [0, 0];
  reconcilerLabelsAt = 0;

  /**
   * A namespace's resourceVersion in a view that has seen the first `delivered` label changes: only
   * its labels change, so it is that of its last label change seen ('1' before any).
   */
  namespaceVersion(ns: number, delivered: number): string {
    const last = this.labelEvents.slice(0, delivered).findLastIndex((event) => event.ns === ns);
    return String(last + 2);
  }

  /**
   * The namespaces whose bindings LIMIT counts for the ClusterKarmadaQuota: those the API server's
   * labels and both webhook replicas' views select. While a replica's view lags a namespace entering,
   * changes there are admitted without the quota (docs/concepts/cluster-quotas.md): the namespace
   * joins the count only when every view selects it, as an edit does (namespaceEntered), and a change
   * decided without the quota lands as one decided before an edit.
   */
  limitNamespaces: string[] = [...NAMESPACES];

  /** While set, the namespaces the recount gives the ClusterKarmadaQuota instead (ACCOUNTED). */
  countIn?: readonly string[];

  /** Per quota and key, what its stored charges may reach (LIMIT): hard, or more while an edit left it over. */
  readonly ceilings = new Map<string, Record<Key, number>>();

  /** Per quota, the index in host.quotaEvents of its last edit (-1: never edited). */
  readonly lastEdit = new Map<string, number>();

  /**
   * Per quota, the latest change stored from a view older than its edit, by a number that grows with
   * each one (`staleLandings`), until a reconcile started after it has written the quota's count.
   */
  readonly awaitingRecount = new Map<string, number>();

  /** Set when a binding whose pods its charge cannot bound is stored under a quota limiting cpu (LIMIT). */
  unboundedStored: string | undefined;

  staleLandings = 0;

  /**
   * Per binding name, the last non-dry-run write answered, and when: whether it was refused over a
   * limit or for usage not counted (what must wait, by the simulation's own reading of the answer).
   */
  readonly lastAnswer = new Map<string, { write: ResourceBinding; waits: boolean; at: number }>();

  /** The webhook's waiting records, and the requeues Karmada has not reacted to yet. */
  readonly waiting = new WaitingModel();

  readonly pokes: Poke[] = [];

  constructor(readonly clusterQuota = false) {
    this.specs = [...QUOTAS, ...(clusterQuota ? [CLUSTER_QUOTA] : [])].map((q) => ({
      ...q,
      hard: { ...q.hard },
    }));
    for (const q of this.specs) {
      this.host.putQuota(newQuota(q, `quota-${q.name}`));
      this.ceilings.set(q.name, limitsOf(q));
      this.runsCeilings.set(q.name, limitsOf(q));
      this.lastEdit.set(q.name, -1);
    }
  }

  log(line: string): void {
    this.trace.push(`t+${((this.now - Date.parse('2026-11-23T00:00:00Z')) / 1000).toFixed(3)}s ${line}`);
  }

  versionOf(b: number): ResourceBinding | undefined {
    return this.host.bindings.get(BINDINGS[b]!.name);
  }

  /**
   * The version of the template of `kind` named as binding `b` that the detector writes a binding
   * from: the user has set its replicas and its pods' priority class (a new version if either changed).
   */
  templateOf(kind: string, b: number, replicas: number, high: boolean): string {
    const key = `${kind}/${BINDINGS[b]!.name}`;
    const current = this.templates.get(key);
    if (current?.replicas === replicas && current.high === high) return current.version;
    const version = String(++this.templateVersions);
    this.templates.set(key, { version, replicas, high });
    this.templateClasses.set(version, high ? 'high' : '');
    return version;
  }

  /**
   * The overrides in force for `rb`, as libs/usage cluster-overrides.ts reports them: each member it
   * is scheduled to whose policy makes it run other than its spec.clusters replicas.
   */
  overridesOf(rb: ResourceBinding): Overrides {
    const policy = this.policies.get(rb.metadata!.name!);
    if (policy === undefined) return NO_OVERRIDES;
    const found = new Map<string, number>();
    for (const target of rb.spec?.clusters ?? []) {
      const replicas = policy.get(target.name);
      if (replicas !== undefined && replicas !== (target.replicas ?? 0)) found.set(target.name, replicas);
    }
    return found;
  }

  /** The charge of `rb` by the simulation's own recount, with the overrides in force now. */
  chargeNow(rb: ResourceBinding): Record<Key, number> {
    return charge(rb, this.overridesOf(rb));
  }

  sharesNow(rb: ResourceBinding): ReturnType<typeof shares> {
    return shares(rb, this.overridesOf(rb));
  }

  /** The pods Karmada makes member `m` run for `rb`: its spec.clusters entry, or its override. */
  runsOn(rb: ResourceBinding, m: number): number {
    const target = targetOn(rb, m);
    if (rb.metadata?.deletionTimestamp || !(rb.spec?.clusters ?? []).some((c) => c.name === MEMBERS[m]))
      return target;
    return this.overridesOf(rb).get(MEMBERS[m]!) ?? target;
  }

  /**
   * `rb` with its overrides, as the services hand it to the core (libs/service-kit binding-overrides.ts,
   * withClusterOverrides).
   */
  overridden(rb: ResourceBinding): ResourceBinding {
    const overrides = this.overridesOf(rb);
    if (overrides.size === 0) return rb;
    exercised.overridden++;
    return withClusterOverrides(
      rb,
      [...overrides].map(([cluster, replicas]) => ({
        cluster,
        replicas,
        policies: [`OverridePolicy ${namespaceOf(rb.metadata!.name!)}/${rb.metadata!.name!}`],
      })),
    );
  }

  /**
   * `rb` as PriorityClass scopes judge it: a binding Karmada wrote with its default gates (naming no
   * class) given the class of its template's pods, at the version it names, by the services' own
   * rule (templateClassNeeded, withTemplateClass). The template read returns that version: this
   * models the class each binding was written with, not a template edited since.
   */
  classified(rb: ResourceBinding): ResourceBinding {
    const ref = templateClassNeeded(rb);
    return ref === undefined
      ? rb
      : withTemplateClass(rb, this.templateClasses.get(ref.resourceVersion ?? ''));
  }

  /** Is the binding's workload of the `high` class (its template's, as the services read it)? */
  high(rb: ResourceBinding): boolean {
    return isHigh(this.classified(rb));
  }

  /**
   * The bindings as the webhook and the reconciler hand them to the core (libs/service-kit
   * template-classes.ts classify): classified, when one of `quotas` selects by priority class.
   */
  forServices<T extends ResourceBinding | undefined>(
    bindings: readonly T[],
    quotas: readonly KarmadaQuota[],
  ): T[] {
    const overridden = bindings.map((rb) => (rb === undefined ? rb : (this.overridden(rb) as T)));
    if (!quotas.some(hasPriorityClassScope)) return overridden;
    return overridden.map((rb) => {
      if (rb === undefined) return rb;
      const scoped = this.classified(rb);
      if (scoped !== rb && isHigh(scoped)) exercised.templateClassed++;
      return scoped as T;
    });
  }

  /**
   * Sets the pods the binding object `uid` runs on each member. Pods that go away begin terminating:
   * on each member those it runs fewer of (`cause(m)` says why), and all of another object's of the name.
   */
  setPods(name: string, uid: string, on: number[], cause: (m: number) => TerminatingCause): void {
    const before = this.pods.get(name);
    const kind = before === undefined ? 'Deployment' : (this.kinds.get(before.uid) ?? 'Deployment');
    MEMBERS.forEach((_, m) => {
      const was = before?.on[m] ?? 0;
      const same = before?.uid === uid;
      if (same ? was !== on[m]! : was > 0 || on[m]! > 0) this.touched?.add(m);
      if (was > 0)
        this.beginTerminating(m, name, kind, was - (same ? on[m]! : 0), false, same ? cause(m) : 'replaced');
    });
    this.pods.set(name, { uid, on });
  }

  /** `n` pods of `kind`/`name` on member `m` begin terminating: they run until a 'terminate'. */
  beginTerminating(
    m: number,
    name: string,
    kind: string,
    n: number,
    handMade: boolean,
    cause: TerminatingCause,
  ): void {
    if (n <= 0) return;
    this.terminating.push({ m, name, kind, n, handMade });
    this.touched?.add(m);
    exercised.terminating[cause] = (exercised.terminating[cause] ?? 0) + n;
    this.log(
      `${MEMBERS[m]}: ${n} pods of ${handMade ? 'a hand-made ' : ''}${kind} ${name} terminating (${cause})`,
    );
  }

  /**
   * What pending causes add to what the members may be given under quota `q` (RUNS), beyond what a
   * status counted `from` those inputs (by default the one stored) counts.
   */
  runsAllowance(
    q: QuotaSpec,
    key: Key,
    from = this.runsCountedFrom.get(q.name),
    pending = (e: RunsEvent) => !runsCovered(e, from),
  ): number {
    return this.runsPending.filter(pending).reduce((sum, e) => sum + (e.amounts.get(q.name)?.[key] ?? 0), 0);
  }

  /**
   * The quota's stored status is now one counted `from` those inputs: what the causes it counts
   * added joins its RUNS ceiling (which then follows the members down), and leaves it again for
   * those it no longer counts (a status computed from an older snapshot written over a newer one).
   */
  runsCountedAs(name: string, from: CountedFrom | undefined): void {
    const before = this.runsCountedFrom.get(name);
    const ceiling = this.runsCeilings.get(name)!;
    const hard: Partial<Record<Key, number>> = this.specs.find((q) => q.name === name)?.hard ?? {};
    for (const e of this.runsPending) {
      const now = runsCovered(e, from);
      if (runsCovered(e, before) === now) continue;
      for (const key of KEYS) {
        const amount = e.amounts.get(name)?.[key] ?? 0;
        // Counted no more, it is allowed as pending again: it leaves the ceiling only as far as the
        // ceiling still holds it above hard (the ceiling follows the members down to hard meanwhile).
        ceiling[key] = now ? ceiling[key] + amount : Math.max(hard[key] ?? -Infinity, ceiling[key] - amount);
      }
    }
    if (from === undefined) this.runsCountedFrom.delete(name);
    else this.runsCountedFrom.set(name, from);
  }

  /** The pods the binding's object runs on each member (none for another object of its name). */
  podsOf(rb: ResourceBinding): number[] {
    const pods = this.pods.get(rb.metadata!.name!);
    return pods !== undefined && pods.uid === rb.metadata!.uid ? [...pods.on] : MEMBERS.map(() => 0);
  }

  /**
   * What a pending cause added to an unscoped count, as a count under quota `q`'s spec takes it (an
   * edit of it, or a namespace entering it): all of it for a landing decided before an edit of `q`
   * (an OverridePolicy made after its admission), else less what an admission decided; undefined when
   * `q` does not count the workload.
   */
  workloadAdded(e: RunsEvent, q: QuotaSpec): Record<Key, number> | undefined {
    if (e.workload === undefined || !this.countsPodsOf(q, e.workload.kind, e.workload.name)) return undefined;
    return { ...(e.workload.landing?.has(q.name) ? e.workload.gross : e.workload.added) };
  }

  /** The namespaces whose bindings and pods the recount gives a quota (EVERY_POD: all of them). */
  namespacesOf(quota: QuotaSpec): readonly string[] {
    if (quota === EVERY_POD) return NAMESPACES;
    return quota.cluster ? (this.countIn ?? this.limitNamespaces) : [NAMESPACE];
  }

  /** Does the quota count what the binding or workload of this name holds (its namespace)? */
  inNamespaces(quota: QuotaSpec, name: string): boolean {
    return this.namespacesOf(quota).includes(namespaceOf(name));
  }

  /** The stored bindings a quota selects, by an independent recount. */
  inScope(quota: QuotaSpec): ResourceBinding[] {
    return [...this.host.bindings.values()].filter(
      (b) => this.inNamespaces(quota, b.metadata!.name!) && (!quota.highOnly || this.high(b)),
    );
  }

  /**
   * What a quota holds on `key`: per binding name, the larger of its stored binding's charge and its
   * pending claim's (one not lapsed on any clock). Room claimed before an edit stays the name's
   * (docs/concepts/accounting.md, "Quota edits"): a change that fits in it asks nothing. With
   * `running`, a name also holds what its pods still running on any member take (free).
   */
  held(quota: QuotaSpec, key: Key, running = false): number {
    const claims = this.claims(quota, key);
    let total = 0;
    for (const b of this.inScope(quota)) {
      const name = b.metadata!.name!;
      // With its running pods: per member the larger of its share and its pods there (shares).
      let holds = this.chargeNow(b)[key];
      if (running) {
        const split = this.sharesNow(b);
        const pods = this.podsOf(b);
        holds = split.rest[key];
        MEMBERS.forEach((member, m) => {
          holds += Math.max(split.on.get(member)?.[key] ?? 0, pods[m]! * perReplica(name, key, m));
        });
      }
      total += Math.max(holds, claims.get(name) ?? 0);
      claims.delete(name);
    }
    for (const claimed of claims.values()) total += claimed;
    return total;
  }

  /** Per binding name, the charge on `key` of its pending claims on the quota not lapsed on any clock. */
  claims(quota: QuotaSpec, key: Key): Map<string, number> {
    const claims = new Map<string, number>();
    for (const entry of this.host.quotas.get(quota.name)?.status?.reservations ?? []) {
      if (entry.expirationTime === undefined) continue;
      if (Date.parse(entry.expirationTime) + MAX_CLOCK_SKEW_MS <= this.now) continue;
      const name = entry.reservedBy.name;
      if (!this.inNamespaces(quota, name)) continue;
      claims.set(name, Math.max(claims.get(name) ?? 0, milli(entry.charge?.[key], key)));
    }
    return claims;
  }

  /**
   * Can this admitted change still be stored? Within the API server's request timeout, a create while its
   * name may yet be free, an update while its object is stored at the version it was decided against.
   */
  landable(req: Request): boolean {
    if (req.answer !== 'allowed' || req.done || req.dryRun) return false;
    if (this.now > req.startedAt + LANDING_LIMIT_MS) return false;
    if (req.oldVersion === undefined) return true;
    const stored = this.host.bindings.get(req.object.metadata!.name!);
    return stored?.metadata?.resourceVersion === req.oldVersion;
  }

  /**
   * What the quota must cover on `key` (ACCOUNTED): per binding name it selects, the larger of its stored
   * charge and the charge of each admitted change of the name that can still land, decided after the
   * quota's last edit.
   */
  coveredInFlight(quota: QuotaSpec, key: Key): { total: number; landable: string[] } {
    const held = new Map<string, number>();
    for (const b of this.inScope(quota)) held.set(b.metadata!.name!, this.chargeNow(b)[key]);
    const landable: string[] = [];
    for (const req of this.requests) {
      // A change decided before an edit of the quota is covered as the edit rules say (LIMIT), not here.
      if (!this.landable(req) || req.beforeEdit.has(quota.name)) continue;
      if (quota.highOnly && !this.high(req.object)) continue;
      const name = req.object.metadata!.name!;
      if (!this.inNamespaces(quota, name)) continue;
      landable.push(`request ${req.id}`);
      held.set(name, Math.max(held.get(name) ?? 0, this.chargeNow(req.object)[key]));
    }
    let total = 0;
    for (const amount of held.values()) total += amount;
    return { total, landable };
  }

  /** What the stored bindings a quota selects are charged on `key`. */
  charged(quota: QuotaSpec, key: Key): number {
    return this.inScope(quota).reduce((sum, b) => sum + this.chargeNow(b)[key], 0);
  }

  /**
   * Runs `change`, which grows stored charges with no admission (an OverridePolicy, a landing decided
   * before an edit, a finished Job running again), and raises the LIMIT ceiling of each quota `of`
   * selects by what it adds, until a recount covers it. With `uncounted` (growth no count can have
   * seen: an OverridePolicy's, a Job's running again), the ClusterKarmadaQuota measures it over every
   * namespace selected anywhere (the API server's labels or a replica's view), not only those LIMIT
   * counts now: a namespace out of the count while a view lags keeps that allowance when it comes
   * back (regressions.ts, "an override landing while a replica's view lags a relabel"). A change
   * decided without the quota while a view lagged needs none: its namespace entering is an edit
   * (namespaceEntered), and no batch trusts a count from before it. Returns the quotas that grew.
   */
  growChargesUnadmitted(
    change: () => void,
    of: (q: QuotaSpec) => boolean = () => true,
    uncounted = true,
  ): Set<string> {
    const quotas = this.specs.filter(of);
    const measure = () => {
      if (uncounted)
        this.countIn = NAMESPACES.filter(
          (_, i) => this.labelled[i] || this.webhookLabelled.some((view) => view[i]),
        );
      try {
        return quotas.map((q) => limitedKeys(q).map((key) => this.charged(q, key)));
      } finally {
        this.countIn = undefined;
      }
    };
    const before = measure();
    change();
    const after = measure();
    const grew = new Set<string>();
    quotas.forEach((q, i) => {
      const ceiling = this.ceilings.get(q.name)!;
      limitedKeys(q).forEach((key, j) => {
        const added = after[i]![j]! - before[i]![j]!;
        if (added <= 0) return;
        ceiling[key] += added;
        grew.add(q.name);
      });
    });
    return grew;
  }

  /**
   * Does the quota count pods of workload `kind`/`name`? An unscoped one counts every pod; a scoped
   * one those of a workload a stored binding it selects names (status.ts, Terminating included).
   */
  countsPodsOf(quota: QuotaSpec, kind: string, name: string): boolean {
    return this.podsCounter(quota)(kind, name);
  }

  /** countsPodsOf for the bindings stored now, the quota's selection read once. */
  podsCounter(quota: QuotaSpec): (kind: string, name: string) => boolean {
    if (!quota.highOnly) return (_kind, name) => this.inNamespaces(quota, name);
    const named = new Set(this.inScope(quota).map((rb) => `${kindOf(rb)}/${rb.metadata!.name}`));
    return (kind, name) => named.has(`${kind}/${name}`);
  }

  /** What the pods on their way out that the quota counts take of `key` (hand-made ones included). */
  terminatingCounted(quota: QuotaSpec, key: Key): number {
    const counts = this.podsCounter(quota);
    return this.terminating
      .filter((t) => counts(t.kind, t.name))
      .reduce((sum, t) => sum + t.n * perReplica(t.name, key, t.m), 0);
  }

  /** Karmada's pods as they run now: on member `m`, or on every member. */
  memberPods(m?: number): MemberPods {
    const on = (i: number) => m === undefined || i === m;
    return {
      running: [...this.pods].flatMap(([name, { uid, on: counts }]) =>
        counts.flatMap((n, i) =>
          n > 0 && on(i) ? [{ m: i, name, uid, kind: this.kinds.get(uid) ?? 'Deployment', n }] : [],
        ),
      ),
      terminating: this.terminating.filter((t) => !t.handMade && on(t.m)).map((t) => ({ ...t })),
    };
  }

  /**
   * What the members are given of `key` under the quota (RUNS): every pod of Karmada's they run that
   * the quota counts, those on their way out included, plus what each stored binding it selects may
   * still start: its charge (`withClaims`: or its pending claim, if larger) less its pods not
   * terminating on the members it is scheduled to. Hand-made pods (usage outside the federation) are
   * left out. With `withClaims`, a pending claim of a name with no binding stored counts in full.
   * `pods`: the pods as they run now, or as a published snapshot showed them.
   */
  given(
    quota: QuotaSpec,
    key: Key,
    withClaims = false,
    pods: MemberPods = this.memberPods(),
  ): { total: number; running: number; terminating: number; toStart: string[] } {
    const counts = this.podsCounter(quota);
    let running = 0;
    for (const r of pods.running) if (counts(r.kind, r.name)) running += r.n * perReplica(r.name, key, r.m);
    let terminating = 0;
    for (const t of pods.terminating)
      if (counts(t.kind, t.name)) terminating += t.n * perReplica(t.name, key, t.m);
    const claims = withClaims ? this.claims(quota, key) : new Map<string, number>();
    const toStart: string[] = [];
    let startable = 0;
    for (const rb of this.inScope(quota)) {
      const name = rb.metadata!.name!;
      const split = this.sharesNow(rb);
      // Per member its share less its own pods there, plus the unsplit rest and what a pending
      // claim adds to the charge.
      let left = split.rest[key] + Math.max(0, (claims.get(name) ?? 0) - this.chargeNow(rb)[key]);
      for (const [member, share] of split.on) {
        const own = pods.running
          .filter((r) => r.name === name && r.uid === rb.metadata!.uid && MEMBERS[r.m] === member)
          .reduce((sum, r) => sum + r.n, 0);
        left += Math.max(0, share[key] - own * perReplica(name, key, MEMBERS.indexOf(member as never)));
      }
      claims.delete(name);
      if (left > 0) toStart.push(`${name} ${left}`);
      startable += left;
    }
    for (const [name, claimed] of claims) {
      toStart.push(`${name} ${claimed} (claimed)`);
      startable += claimed;
    }
    return { total: running + terminating + startable, running, terminating, toStart };
  }

  violation(invariant: Violation['invariant'], step: number, message: string): Violation {
    return { invariant, message, step, trace: [...this.trace] };
  }

  /**
   * What a quota has free on `key` by an independent recount: hard less what each binding name
   * holds: its stored binding's charge, its pods still running on any member, or its pending claim,
   * whichever is most (a binding being deleted charges nothing, but its pods count until its
   * finalizer is done; a write admitted during the requeue rounds claims until its pods run), less
   * the hand-made pods it counts and the pods on their way out it counts (a scale-down stored during
   * the requeue rounds).
   */
  free(q: QuotaSpec, key: Key): number {
    const selected = this.inScope(q);
    let handMade = 0;
    BINDINGS.forEach(({ name }, b) => {
      if (!this.inNamespaces(q, name)) return;
      const rb = selected.find((x) => x.metadata!.name === name);
      if (q.highOnly && (rb === undefined || kindOf(rb) !== 'Deployment')) return;
      this.outside.forEach((row, m) => (handMade += row[b]! * perReplica(name, key, m)));
    });
    return q.hard[key]! - this.held(q, key, true) - handMade - this.terminatingCounted(q, key);
  }
}
