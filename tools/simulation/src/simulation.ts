/**
 * A deterministic simulation of the accounting (docs/concepts/accounting.md): the real admission core and CAS
 * rounds of two webhook replicas (one behind the watch-fed cache), the real reconcile loop (first looking
 * at its own informer cache, which lags the host as the actions choose), Karmada-like
 * clients and a member cluster, all against a model host (model-host.ts). A run is a list of actions;
 * every host operation completes only when an action says so, so the actions choose the interleaving.
 * Each process (the two webhook replicas, the reconciler) has a clock of its own ('skew'), the
 * pairwise difference within the bound the docs state; the API server stores an admitted change
 * within LANDING_LIMIT_MS of receiving it, or never.
 * An admin may edit a quota's spec at any step ('edit': its scope widened or narrowed, its cpu limit
 * raised or lowered, its pods key removed or added again, its enforcement set to DryRun, Warn or Deny:
 * LIMIT holds only under Deny, the rest in every mode).
 * Besides Deployments, clients create Job and DaemonSet bindings (kinds-model.ts), and the member may run
 * what no admission sees: pods beyond spec.replicas (an override, a surge), a finished Job re-created.
 * After every action the invariants are checked against an independent recount:
 * - LIMIT: the stored bindings' charges never exceed a quota's hard limit (nothing was over-admitted).
 *   An edit may leave a quota over (docs/concepts/accounting.md, "Quota edits"): from then on its
 *   charges may not grow while over beyond what each binding name held at the edit (its charge or
 *   its unexpired claim; the ceiling follows that down to hard), except by a change
 *   admitted from a view older than the edit (started before it, or sent to the cached replica before
 *   its watch delivered the edit), which the docs name: when one is stored, the ceiling rises by
 *   what it adds to the quota, and until a recount that listed the bindings after it, admissions
 *   may rely on a count without it, as Kubernetes' quota admission may until its controller recounts;
 * - ACCOUNTED: once a quota's usage is counted for its current spec, used + reserved covers every
 *   stored binding's charge (the accounting never under-counts, which is what makes the next
 *   admission safe), and also, per binding name, the charge of every admitted change of the name that
 *   can still land (a claim retired before its change landed fails here); not checked while such a
 *   stored change awaits its recount.
 * The API server's write rules are modelled as the claims' retirement relies on them: an update
 * conflicting at landing is admitted again against the stored version (re-admitted), Karmada's
 * status writes move a binding's resourceVersion ('statusWrite'), and an answer after the webhook's
 * deadline is discarded.
 * - DETECTED: a status the reconciler computed from a published snapshot names in RunningBeyondCharge
 *   exactly the bindings whose workload runs beyond what they hold (checked against the binding list and
 *   snapshot it was computed from, and at the end);
 * - LIMIT also: no binding of a kind declaring no replicas (a DaemonSet) is stored while a quota limits
 *   cpu or pods (every quota here limits cpu).
 * At the end everything is drained, time passes every claim's expiration, and after a reconcile
 * used + reserved must EQUAL the recount (reserved: each binding's max(0, charge - observed)) and no
 * claim is left listed (EXACT).
 * Refusals over a limit or "status unknown" wait as the webhook records them, and the reconciler's
 * requeues are re-sent by Karmada when a 'requeue' delivers them (waiting-model.ts); at the end, a
 * waiting change that fits must be admitted within REQUEUE_ROUNDS settle rounds (LIVENESS).
 */
import type { KarmadaQuota, KarmadaQuotaStatus, ResourceBinding } from '#api';
import { bindingCharge, type ObservedCluster } from '#quota';
import { parseResourceList } from '#quantity';
import { AdmissionBatcher } from '../../../apps/webhook/src/admission-batcher.js';
import { asksNothing, bindingChange, NO_OBSERVER } from '../../../apps/webhook/src/admission-strategy.js';
import { CachedQuotaStore } from '../../../apps/webhook/src/cached-quota-store.js';
import { reconcileQuotas, statusesCurrentIn } from '../../../apps/reconciler/src/reconcile-loop.js';
import { ModelHost, NAMESPACE, type HostFault } from './model-host.js';
import {
  asKind,
  asUpdateOf,
  declaresNoReplicas,
  detectionProblem,
  expectedBeyondCharge,
  finishedStatus,
  isHigh,
  jobFinished,
  kindOf,
  runningStatus,
  selectsHighOnly,
  type WorkloadKind,
} from './kinds-model.js';
import { REQUEUE_INTERVAL_MS, WaitingModel, type Poke } from './waiting-model.js';
import { ABANDONED_AFTER_MS, STARVING_AFTER_MS } from '../../../libs/quota/src/waiting.js';

/** Binding names the clients use, each with its cpu request per replica (millicores). */
export const BINDINGS = [
  { name: 'b0', cpuMilli: 500 },
  { name: 'b1', cpuMilli: 1000 },
  { name: 'b2', cpuMilli: 1500 },
  { name: 'b3', cpuMilli: 700 },
  { name: 'b4', cpuMilli: 300 },
] as const;

/** BINDINGS' index of each name (a workload or a binding is named as its BINDINGS entry). */
const BINDING_INDEX: ReadonlyMap<string, number> = new Map(BINDINGS.map((b, i) => [b.name, i]));

/** What one replica of the named binding's workload takes of `key`. */
const perReplica = (name: string, key: Key): number =>
  key === 'cpu' ? BINDINGS[BINDING_INDEX.get(name)!]!.cpuMilli : 1;

/** A quota's spec as the simulation edits it: cpu in millicores; no pods limit when `pods` is absent. */
export interface QuotaSpec {
  name: string;
  hard: { cpu: number; pods?: number };
  highOnly: boolean;
  /** spec.enforcement when not Deny: the quota admits what it would refuse (docs/concepts/enforcement.md). */
  enforcement?: 'Warn' | 'DryRun';
}

/** The quotas at the start: one for the namespace, one scoped to the `high` priority class. */
export const QUOTAS: readonly QuotaSpec[] = [
  { name: 'all', hard: { cpu: 10_000, pods: 12 }, highOnly: false },
  { name: 'high', hard: { cpu: 4_000 }, highOnly: true },
];

/** The cpu limits an edit may set (millicores). */
export const CPU_LIMITS = [2_000, 4_000, 7_000, 10_000] as const;

type Key = 'cpu' | 'pods';

export const TIMING = { ttlSeconds: 120, landingWindowSeconds: 60 };
/** The longest an admitted change takes to be stored: kube-apiserver caps a write's context at 34 s. */
export const LANDING_LIMIT_MS = 34_000;
/**
 * How far apart the processes' clocks may be (docs/concepts/accounting.md, "Clocks"): the landing
 * window less the landing limit. Each process's clock is off real time by at most half of it.
 */
export const MAX_CLOCK_SKEW_MS = TIMING.landingWindowSeconds * 1000 - LANDING_LIMIT_MS;
const DEADLINE_MS = 5_000;
export const MAX_REPLICAS = 6;
/** The member clusters. */
export const MEMBERS = ['member1', 'member2'] as const;
/**
 * Where a binding is placed: `spread` 0 or 1 puts it on that member alone, 2 on both (Divided: the
 * replicas split between them; `duplicated`: each runs them all). Absent: member1, Divided.
 */
export interface Placement {
  spread?: number;
  duplicated?: boolean;
}
/** What a member's health may turn to; 'removed' takes it out of the federation (and back, empty). */
export type MemberEvent = 'Ready' | 'Stale' | 'Unreachable' | 'removed';
/**
 * Settle rounds (re-send, reconcile, requeue) a waiting change that fits gets before LIVENESS. A
 * requeue counts what each change it picks asks as taken, so a change behind one that then takes
 * nothing (refused by another quota, or no longer in the quota's scope) waits a round; but each round
 * the first change in requeue order that fits is re-sent and admitted or refused (it leaves the
 * changes that fit), and there is at most one waiting change per binding. Measured: 1 round is enough
 * for 2000 runs of seed 20261127, none is not.
 */
export const REQUEUE_ROUNDS = BINDINGS.length;

export type Action =
  | ({
      t: 'create';
      b: number;
      replicas: number;
      high: boolean;
      replica: number;
      dryRun: boolean;
    } & Placement)
  /**
   * With `unscheduled`, only spec.replicas and the template change: spec.clusters stays as stored
   * until a later update (Karmada's detector writes the template's change before its scheduler runs).
   */
  | ({
      t: 'update';
      b: number;
      replicas: number;
      high: boolean;
      replica: number;
      unscheduled?: boolean;
    } & Placement)
  /** With `graceful`, a finalizer holds the binding: it is only marked deleting until 'finalize'. */
  | { t: 'delete'; b: number; graceful?: boolean }
  | { t: 'finalize'; b: number }
  | { t: 'complete'; i: number }
  /** Pending host operation `i` completes with a fault (model-host.ts says what each means). */
  | { t: 'fault'; i: number; fault: HostFault }
  | { t: 'land'; i: number }
  | { t: 'reconcile' }
  | { t: 'publish' }
  /** Binding `b`'s pods on member `m` (absent: its first target) start or stop, `n` of them. */
  | { t: 'pods'; b: number; n: number; m?: number }
  | { t: 'evict'; b: number; n: number; m?: number }
  /**
   * Someone runs `n` pods (0: none) of a Deployment made by hand on member `m`, named as binding `b`'s
   * workload: usage outside the federation that must never pass for the binding's. Karmada cannot
   * apply the binding's own copy there while it exists (its conflict check), so its pods wait.
   */
  | { t: 'outside'; m: number; b: number; n: number }
  /** Member `m`'s watch turns Stale or Unreachable (its last usage kept), recovers, or the member is removed. */
  | { t: 'member'; m: number; event: MemberEvent }
  /** Redis loses every published usage; the aggregator publishes it again on the next 'publish'. */
  | { t: 'redis-loss' }
  | { t: 'deliver' }
  | { t: 'sync'; n: number }
  | { t: 'tick'; ms: number }
  /**
   * An admin edits quota `q`: 'scope' widens a scoped quota to every binding or narrows an unscoped
   * one to `high`; 'cpu' sets its cpu limit to `cpu`; 'pods' removes its pods key, or adds it back;
   * 'existence' deletes it, or creates it again (a new uid, nothing counted) once deleted;
   * 'enforcement' moves it from Deny to DryRun, to Warn, and back to Deny.
   */
  | { t: 'edit'; q: number; edit: 'scope' | 'cpu' | 'pods' | 'existence' | 'enforcement'; cpu: number }
  /** Process `who`'s clock (webhook-0, webhook-1, the reconciler) is set `ms` off real time. */
  | { t: 'skew'; who: number; ms: number }
  /** A create of a binding of another kind than Deployment (kinds-model.ts). */
  | {
      t: 'createKind';
      b: number;
      kind: Exclude<WorkloadKind, 'Deployment'>;
      replicas: number;
      high: boolean;
      replica: number;
    }
  /**
   * What no admission sees, for the `i`-th stored binding it can happen to: 'surge', the member runs
   * `n` pods beyond spec.replicas (an OverridePolicy, a rollout's surge); 'jobFinishes', a Job's pods
   * complete and Karmada writes the binding's status saying so; 'jobRecreated', a finished Job's
   * member object is deleted and Karmada re-creates it; 'jobRunsAgain', Karmada then aggregates its
   * status as running, so its binding is charged in full again.
   */
  | { t: 'surge'; i: number; n: number }
  | { t: Exclude<UnadmittedKind, 'surge'>; i: number }
  /**
   * Karmada writes the status of binding `b` (its aggregated status, no charge changed): the object's
   * resourceVersion moves on, and an update decided against the old one conflicts.
   */
  | { t: 'statusWrite'; b: number }
  /** Karmada reacts to pending requeue `i` (a reconciler's poke): it re-sends the refused write. */
  | { t: 'requeue'; i: number; replica: number };

type UnadmittedKind = 'surge' | 'jobFinishes' | 'jobRecreated' | 'jobRunsAgain';

interface Request {
  id: number;
  label: string;
  object: ResourceBinding;
  /** For an UPDATE: the stored resourceVersion it was admitted against. */
  oldVersion?: string;
  startedAt: number;
  answerBy: number;
  dryRun: boolean;
  answer?: 'allowed' | 'refused';
  done: boolean;
  /** Per quota, whether it was decided from a view older than the quota's last edit (see LIMIT). */
  beforeEdit: Set<string>;
}

export interface Violation {
  invariant: 'LIMIT' | 'ACCOUNTED' | 'EXACT' | 'ERROR' | 'DETECTED' | 'LIVENESS';
  message: string;
  step: number;
  trace: string[];
}

const isDuplicated = (rb: ResourceBinding): boolean =>
  rb.spec?.placement?.replicaScheduling?.replicaSchedulingType === 'Duplicated';

/**
 * What a stored binding must be counted for (docs/concepts/binding-cost.md): its replicas, on every
 * cluster when Duplicated, at least what its clusters list; nothing once it is being deleted.
 */
const charge = (rb: ResourceBinding): Record<Key, number> => {
  if (rb.metadata?.deletionTimestamp || jobFinished(rb)) return { cpu: 0, pods: 0 };
  const clusters = rb.spec?.clusters ?? [];
  const scheduled = clusters.reduce((sum, c) => sum + (c.replicas ?? 0), 0);
  const asked = (rb.spec?.replicas ?? 0) * (isDuplicated(rb) ? Math.max(1, clusters.length) : 1);
  const replicas = Math.max(asked, scheduled);
  const cpu = Number.parseInt(String(rb.spec?.replicaRequirements?.resourceRequest?.['cpu'] ?? '0m'), 10);
  return { cpu: cpu * replicas, pods: replicas };
};

/** The pods Karmada runs for the binding on member `m`: what its `spec.clusters` entry there says. */
const targetOn = (rb: ResourceBinding, m: number): number =>
  rb.metadata?.deletionTimestamp ? 0 : (rb.spec?.clusters?.find((c) => c.name === MEMBERS[m])?.replicas ?? 0);

const milli = (value: unknown, key: string): number => {
  const parsed = parseResourceList({ [key]: value ?? '0' }, key).list[key];
  return parsed === undefined ? 0 : Number(key === 'cpu' ? parsed.milliValue() : parsed.value());
};

/** A quota as an admin creates it: generation 1, no status. */
const newQuota = (q: QuotaSpec, uid: string): KarmadaQuota =>
  ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: q.name, namespace: NAMESPACE, uid, generation: 1 },
    spec: specOf(q),
  }) as KarmadaQuota;

/** The KarmadaQuota spec of a simulated quota. */
const specOf = (q: QuotaSpec): KarmadaQuota['spec'] => ({
  hard: {
    cpu: `${q.hard.cpu}m`,
    ...(q.hard.pods === undefined ? {} : { pods: String(q.hard.pods) }),
  },
  ...(q.highOnly
    ? {
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
      }
    : {}),
  ...(q.enforcement ? { enforcement: q.enforcement } : {}),
});

const limitedKeys = (q: QuotaSpec): Key[] => (q.hard.pods === undefined ? ['cpu'] : ['cpu', 'pods']);

function bindingObject(
  b: number,
  uid: string,
  replicas: number,
  high: boolean,
  version: string,
  deletionTimestamp: Date | undefined,
  placement: Placement,
): ResourceBinding {
  const { name, cpuMilli } = BINDINGS[b]!;
  const spread = (placement.spread ?? 0) % 3;
  const members = spread === 2 ? [0, 1] : [spread];
  const duplicated = placement.duplicated ?? false;
  const clusters = members
    .map((m, i) => ({
      name: MEMBERS[m]!,
      replicas: duplicated
        ? replicas
        : Math.floor(replicas / members.length) + (i < replicas % members.length ? 1 : 0),
    }))
    .filter((c) => c.replicas > 0);
  return {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid,
      resourceVersion: version,
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NAMESPACE },
      replicas,
      replicaRequirements: {
        resourceRequest: { cpu: `${cpuMilli}m` },
        ...(high ? { priorityClassName: 'high' } : {}),
      },
      placement: { replicaScheduling: { replicaSchedulingType: duplicated ? 'Duplicated' : 'Divided' } },
      clusters,
    },
  };
}

/** The published workloads that were made by hand in their member (the simulation's own knowledge). */
const handMade = new WeakSet<object>();

/** Where the binding runs, for traces; nothing for the placement of the one-member runs (member1, Divided). */
const describePlacement = (rb: ResourceBinding): string =>
  !isDuplicated(rb) && (rb.spec?.clusters ?? []).every((c) => c.name === MEMBERS[0])
    ? ''
    : ` on ${JSON.stringify((rb.spec?.clusters ?? []).map((c) => `${c.name}=${c.replicas}`))}${isDuplicated(rb) ? ' duplicated' : ''}`;

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** What the runs exercised, summed over every simulation in the process (a test that cannot fail is no test). */
export const exercised = {
  allowed: 0,
  denied: 0,
  failedClosed: 0,
  stored: 0,
  notStored: 0,
  quotaWrites: 0,
  conflicts: 0,
  /** Updates the API server ran admission for again after a conflict. */
  readmitted: 0,
  /** Host operations completed with a fault: not applied, or applied with the answer lost. */
  hostFaults: 0,
  /** Requests a replica refused as they arrived, from the projection of the batch in flight. */
  refusedOnArrival: 0,
  /** Reconciles the reconciler's cache let it skip, and ones its cache sent to the host. */
  reconcilesSkipped: 0,
  reconcilesFromCacheToHost: 0,
  /** Changes of a binding being deleted that were stored (answered at once: it holds nothing). */
  storedWhileDeleting: 0,
  /** Refusals while a quota's usage was not counted for its spec (a new quota, or after an edit). */
  statusUnknown: 0,
  /** Bindings stored on both members, and Duplicated ones. */
  storedOnBothMembers: 0,
  storedDuplicated: 0,
  /** ACCOUNTED checks of a count that read usage outside the federation (hand-made, same name). */
  outsideCounted: 0,
  violationsChecked: 0,
  /** RunningBeyondCharge conditions checked (DETECTED), and how many of them had to name a binding. */
  detectionsChecked: 0,
  detectionsBeyond: 0,
  /** Refusals of a binding whose pods its charge cannot bound (a DaemonSet under a cpu quota). */
  refusedUnbounded: 0,
  /** What no admission saw, as applied (an action that found nothing to act on left out). */
  unadmitted: {} as Partial<Record<UnadmittedKind, number>>,
  /** Refusals recorded as waiting changes, requeues the reconciler made, and writes Karmada re-sent. */
  waitingRecorded: 0,
  requeued: 0,
  requeueResent: 0,
  /** Quota edits by kind: a spec edit, a quota deleted, a quota created again. */
  quotaEdits: {} as Partial<Record<'edited' | 'deleted' | 'created', number>>,
  /** Checks that found a Warn or DryRun quota's stored charges over its hard limit (admitted, counted). */
  overWhileNotEnforced: 0,
  /** Actions applied, by kind (one that found nothing to act on included). */
  actions: {} as Partial<Record<Action['t'], number>>,
};

export class Simulation {
  readonly host = new ModelHost();
  /** Real time. */
  now = Date.parse('2026-11-23T00:00:00Z');
  /** How far each process's clock is off real time: webhook-0, webhook-1, the reconciler. */
  private readonly offsets = [0, 0, 0];
  private readonly clockOf = (process: number) => () => this.now + this.offsets[process]!;
  private readonly cache: CachedQuotaStore;
  private readonly replicas: AdmissionBatcher[];
  private readonly requests: Request[] = [];
  private nextId = 0;
  private delivered = 0;
  /** Pods running per binding name: the uid they belong to, how many on each member. */
  private readonly pods = new Map<string, { uid: string; on: number[] }>();
  /** Pods of hand-made Deployments, per member and binding name they share (outside the federation). */
  private readonly outside: number[][] = MEMBERS.map(() => BINDINGS.map(() => 0));
  /** Each member's health as the aggregator sees it, and what it published last (kept while not Ready). */
  private readonly memberStates: ('Ready' | 'Stale' | 'Unreachable')[] = MEMBERS.map(() => 'Ready');
  private readonly lastPublished: (ObservedCluster | undefined)[] = MEMBERS.map(() => undefined);
  /** What Redis holds: the usage each member published, as the reconciler reads it. */
  /** The workload kind of each binding created, by uid (what the member reports its pods under). */
  private readonly kinds = new Map<string, WorkloadKind>();
  /** The first status found computed with a wrong RunningBeyondCharge (DETECTED). */
  private misdetected?: string;
  private published: ObservedCluster[] | undefined;
  /**
   * Per quota, the usage outside the federation that its stored `used` counts: the part no binding's
   * reservation may stand in for (ACCOUNTED), from the snapshot and bindings its last count read.
   */
  private readonly outsideCounted = new Map<string, Record<Key, number>>();
  /**
   * Per quota, per binding name, the usage its stored `used` attributes to that binding: what its
   * reservation nets (ACCOUNTED per binding), from the snapshot and bindings its last count read.
   */
  private readonly observedCounted = new Map<string, Map<string, Record<Key, number>>>();
  /**
   * The bindings whose deletion the reconciler has recorded: as in production, only those its binding
   * watch (the cache below) has delivered, so a deletion is known later than the host shows it.
   */
  private readonly deletedUids = new Set<string>();
  /**
   * The reconciler's informer cache: off (every reconcile reads the host) until the first 'sync'
   * lists the host, then fed the host's changes in order, `n` per 'sync', so it lags as it pleases.
   */
  private reconcilerCache?: { quotas: Map<string, KarmadaQuota>; bindings: Map<string, ResourceBinding> };
  private reconcilerCacheAt = 0;
  private reconciles = 0;
  readonly trace: string[] = [];
  private failure?: Error;
  /** The quotas' specs as edited so far. */
  private readonly specs: QuotaSpec[] = QUOTAS.map((q) => ({ ...q, hard: { ...q.hard } }));
  /** Per quota and key, what its stored charges may reach (LIMIT): hard, or more while an edit left it over. */
  private readonly ceilings = new Map<string, Record<Key, number>>();
  /** Per quota, the index in host.quotaEvents of its last edit (-1: never edited). */
  private readonly lastEdit = new Map<string, number>();
  /**
   * Per quota, the latest change stored from a view older than its edit, by a number that grows with
   * each one (`staleLandings`), until a reconcile started after it has written the quota's count.
   */
  private readonly awaitingRecount = new Map<string, number>();
  /** Set when a binding whose pods its charge cannot bound is stored under a quota limiting cpu (LIMIT). */
  private unboundedStored: string | undefined;
  private staleLandings = 0;
  /**
   * Per binding name, the last non-dry-run write answered, and when: whether it was refused over a
   * limit or for usage not counted (what must wait, by the simulation's own reading of the answer).
   */
  private readonly lastAnswer = new Map<string, { write: ResourceBinding; waits: boolean; at: number }>();
  /** The webhook's waiting records, and the requeues Karmada has not reacted to yet. */
  private readonly waiting = new WaitingModel();
  private readonly pokes: Poke[] = [];

  constructor() {
    for (const q of this.specs) {
      this.host.putQuota(newQuota(q, `quota-${q.name}`));
      this.ceilings.set(q.name, { cpu: q.hard.cpu, pods: q.hard.pods ?? Number.POSITIVE_INFINITY });
      this.lastEdit.set(q.name, -1);
    }
    const options = (replica: number) => ({
      ...TIMING,
      maxConflictRetries: 10,
      clock: this.clockOf(replica),
    });
    this.cache = new CachedQuotaStore(this.host.quotaStore('webhook-1'));
    this.cache.setWatching(true);
    this.delivered = this.host.quotaEvents.length;
    const observer = { ...NO_OBSERVER, refusedOnArrival: () => void exercised.refusedOnArrival++ };
    this.replicas = [
      new AdmissionBatcher(this.host.quotaStore('webhook-0'), options(0), observer),
      new AdmissionBatcher(this.cache, options(1), observer),
    ];
  }

  private log(line: string): void {
    this.trace.push(`t+${((this.now - Date.parse('2026-11-23T00:00:00Z')) / 1000).toFixed(3)}s ${line}`);
  }

  private request(
    label: string,
    object: ResourceBinding,
    replica: number,
    dryRun: boolean,
    old?: ResourceBinding,
    startedAt = this.now,
  ): void {
    const req: Request = {
      id: this.nextId++,
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
    this.requests.push(req);
    const change = bindingChange(
      { namespace: NAMESPACE, name: object.metadata!.name! },
      object,
      bindingCharge(object).charge,
      dryRun,
      old,
    );
    if (asksNothing(change)) {
      req.answer = 'allowed';
      if (!dryRun) {
        this.waiting.admitted(object, old);
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
        if (!outcome.allowed && outcome.message.startsWith('cannot bound the pods'))
          exercised.refusedUnbounded++;
        this.log(`request ${req.id} answered ${req.answer}${outcome.allowed ? '' : `: ${outcome.message}`}`);
        if (dryRun) return;
        const waits =
          req.answer === 'refused' &&
          !outcome.allowed &&
          (outcome.message.startsWith('exceeded quota') || outcome.message.startsWith('status unknown'));
        this.answered(object, waits);
        if (req.answer === 'allowed') this.waiting.admitted(object, old);
        else if (!outcome.allowed && 'quota' in outcome)
          if (this.waiting.refused(object, old, outcome, this.clockOf(replica)()))
            exercised.waitingRecorded++;
      },
      (err: unknown) => (this.failure = err as Error),
    );
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

  private versionOf(b: number): ResourceBinding | undefined {
    return this.host.bindings.get(BINDINGS[b]!.name);
  }

  /** The binding is gone from the host, and its pods from the members. */
  private remove(stored: ResourceBinding): void {
    this.host.deleteBinding(stored.metadata!.name!);
    this.pods.delete(stored.metadata!.name!);
    this.log(`DELETE ${stored.metadata!.name} (${stored.metadata!.uid})`);
  }

  private async apply(action: Action): Promise<void> {
    exercised.actions[action.t] = (exercised.actions[action.t] ?? 0) + 1;
    switch (action.t) {
      case 'create': {
        const uid = `uid-${this.nextId}`;
        const rb = bindingObject(action.b, uid, action.replicas, action.high, '', undefined, action);
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
          action.high,
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
      case 'reconcile': {
        if (this.published === undefined || this.reconciles >= 2) return;
        this.reconciles++;
        this.log('reconciler starts');
        void this.reconcile().then(
          () => this.reconciles--,
          (err: unknown) => {
            this.reconciles--;
            this.log(`reconciler gave up: ${(err as Error).message}`);
          },
        );
        break;
      }
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
            ? Math.min(targetOn(stored, m % MEMBERS.length), running + action.n)
            : Math.max(0, running - action.n);
        this.pods.set(name, { uid: stored.metadata!.uid!, on });
        this.log(`${MEMBERS[m % MEMBERS.length]}: ${name} runs ${on[m % MEMBERS.length]} pods`);
        break;
      }
      case 'outside': {
        const m = action.m % MEMBERS.length;
        const name = BINDINGS[action.b]!.name;
        const karmadas = this.pods.get(name)?.on[m] ?? 0;
        // A hand-made workload cannot take a name Karmada's copy already has on the member.
        if (karmadas > 0) return;
        this.outside[m]![action.b] = action.n;
        this.log(`${MEMBERS[m]}: a hand-made Deployment ${name} runs ${action.n} pods`);
        break;
      }
      case 'member':
        this.memberEvent(action.m % MEMBERS.length, action.event);
        break;
      case 'redis-loss':
        if (this.published === undefined) return;
        this.published = [];
        this.lastPublished.fill(undefined);
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
        this.syncReconcilerCache(action.n);
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
      case 'tick':
        this.now += action.ms;
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
        const rb = asKind(
          bindingObject(action.b, uid, action.replicas, action.high, '', undefined, {}),
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
      this.pods.set(name, { uid, on });
      this.log(
        `${MEMBERS[m]}: ${name} runs ${on[m]} pods, spec.clusters says ${targets[m]} (override or surge)`,
      );
    } else if (action.t === 'jobFinishes') {
      this.host.storeBinding({
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: this.host.nextVersion() },
        status: finishedStatus(stored),
      });
      this.pods.set(name, { uid, on: MEMBERS.map(() => 0) });
      this.log(`member: Job ${name} completed; Karmada writes the binding's status: finished`);
    } else if (action.t === 'jobRecreated') {
      this.pods.set(name, { uid, on: targets });
      this.log(`members: finished Job ${name} re-created by Karmada, runs ${declared} pods`);
    } else {
      const before = this.specs.map((q) => limitedKeys(q).map((key) => this.charged(q, key)));
      this.host.storeBinding({
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: this.host.nextVersion() },
        status: runningStatus(stored),
      });
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
    if (action.edit === 'scope') q.highOnly = !q.highOnly;
    else if (action.edit === 'cpu') q.hard.cpu = action.cpu;
    else if (action.edit === 'enforcement')
      q.enforcement =
        q.enforcement === undefined ? 'DryRun' : q.enforcement === 'DryRun' ? 'Warn' : undefined;
    else if (action.edit === 'pods') {
      if (q.hard.pods === undefined) q.hard.pods = 12;
      else delete q.hard.pods;
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
    const ceiling = { cpu: q.hard.cpu, pods: q.hard.pods ?? Number.POSITIVE_INFINITY };
    for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], this.held(q, key));
    this.ceilings.set(q.name, ceiling);
    this.log(
      `${kind === 'edited' ? 'EDIT' : kind === 'deleted' ? 'DELETE' : 'CREATE'} quota ${q.name}: ${JSON.stringify(specOf(q))}`,
    );
  }

  private syncReconcilerCache(n: number): void {
    if (this.reconcilerCache === undefined) {
      this.reconcilerCache = {
        quotas: new Map([...this.host.quotas].map(([k, q]) => [k, structuredClone(q)])),
        bindings: new Map([...this.host.bindings].map(([k, b]) => [k, structuredClone(b)])),
      };
      this.reconcilerCacheAt = this.host.changes.length;
      this.log('reconciler cache lists the host');
      return;
    }
    const cache = this.reconcilerCache;
    for (const change of this.host.changes.slice(this.reconcilerCacheAt, this.reconcilerCacheAt + n)) {
      if (change.kind === 'quota') cache.quotas.set(change.object.metadata!.name!, change.object);
      else if (change.kind === 'quota-deleted') cache.quotas.delete(change.name);
      else if (change.kind === 'binding') cache.bindings.set(change.object.metadata!.name!, change.object);
      else {
        cache.bindings.delete(change.name);
        this.deletedUids.add(change.uid);
      }
      this.reconcilerCacheAt++;
    }
    this.log(`reconciler cache at change ${this.reconcilerCacheAt} of ${this.host.changes.length}`);
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
      this.specs.map((q) => [q.name, { cpu: this.charged(q, 'cpu'), pods: this.charged(q, 'pods') }]),
    );
    const object = structuredClone(req.object);
    object.metadata!.resourceVersion = this.host.nextVersion();
    this.host.storeBinding(object);
    // Karmada scales each member's copy down to the new spec at once (a new object starts from none).
    if (this.pods.has(name))
      this.pods.set(name, {
        uid: object.metadata!.uid!,
        on: this.podsOf(object).map((n, m) => Math.min(n, targetOn(object, m))),
      });
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
        (!q.highOnly || isHigh(object)),
    );
    if (declaresNoReplicas(object) && limiting.length > 0)
      this.unboundedStored = `${kindOf(object)} binding ${name} stored, its pods unbounded, while quotas ${limiting.map((q) => q.name).join(', ')} limit cpu`;
    exercised.stored++;
    if ((object.spec?.clusters ?? []).length > 1) exercised.storedOnBothMembers++;
    if (isDuplicated(object)) exercised.storedDuplicated++;
    if (object.metadata?.deletionTimestamp) exercised.storedWhileDeleting++;
    this.log(`request ${req.id} stored: ${req.label}`);
  }

  /** The pods the binding's object runs on each member (none for another object of its name). */
  private podsOf(rb: ResourceBinding): number[] {
    const pods = this.pods.get(rb.metadata!.name!);
    return pods !== undefined && pods.uid === rb.metadata!.uid ? [...pods.on] : MEMBERS.map(() => 0);
  }

  /** The aggregator publishes each Ready member's usage; a Stale or Unreachable one keeps its last. */
  private publish(): void {
    const entries: ObservedCluster[] = [];
    MEMBERS.forEach((_, m) => {
      if (this.memberStates[m] === 'Ready') this.lastPublished[m] = this.observed(m);
      const last = this.lastPublished[m];
      if (last !== undefined) entries.push({ ...last, state: this.memberStates[m]! });
    });
    this.published = entries;
    this.log(
      `aggregator publishes ${entries.map((c) => `${c.name} (${c.state}) ${JSON.stringify(c.workloads.map((w) => `${w.name}=${(w.used as Record<Key, string>).pods}`))}`).join(', ')}`,
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
    this.memberStates[m] = 'Ready';
    this.lastPublished[m] = undefined;
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
        ];
      }),
    };
  }

  /**
   * What a quota's count of `clusters` and `bindings` puts in `used` that no binding's reservation may
   * stand in for: hand-made pods on members the binding of their name is not scheduled to (all of them
   * for an unscoped quota; for a scoped one, those named as a binding it selects).
   */
  private outsideIn(
    scoped: boolean,
    clusters: readonly ObservedCluster[],
    bindings: readonly ResourceBinding[],
  ): Record<Key, number> {
    const total = { cpu: 0, pods: 0 };
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
        total.pods += pods;
        total.cpu += pods * BINDINGS[b]!.cpuMilli;
      }
    }
    return total;
  }

  /**
   * Per binding name, the usage a count from `clusters` and `bindings` attributes to that binding: its
   * kind's pods on the members its spec.clusters lists (hand-made ones of the name there included, as
   * the product cannot tell them apart), for a scoped quota only while it is selected.
   */
  private observedIn(
    scoped: boolean,
    clusters: readonly ObservedCluster[],
    bindings: readonly ResourceBinding[],
  ): Map<string, Record<Key, number>> {
    const observed = new Map<string, Record<Key, number>>();
    for (const cluster of clusters) {
      for (const workload of cluster.workloads) {
        const rb = bindings.find((x) => x.metadata?.name === workload.name);
        // Scheduled there, however many replicas and even while being deleted (observedIn).
        const scheduled = rb?.spec?.clusters?.some((c) => c.name === cluster.name) ?? false;
        if (rb === undefined || kindOf(rb) !== workload.kind || !scheduled) continue;
        if (scoped && !isHigh(rb)) continue;
        const pods = Number((workload.used as Record<Key, string>).pods);
        const total = observed.get(workload.name) ?? { cpu: 0, pods: 0 };
        total.pods += pods;
        total.cpu += pods * perReplica(workload.name, 'cpu');
        observed.set(workload.name, total);
      }
    }
    return observed;
  }

  private async reconcile(): Promise<void> {
    const landingsSeen = this.staleLandings;
    const clusters = this.published!.map((c) => ({
      ...c,
      used: Object.fromEntries(
        ['cpu', 'pods'].map((k) => [
          k,
          `${c.workloads.reduce((sum, w) => sum + milli((w.used as Record<string, string>)[k], k), 0)}${k === 'cpu' ? 'm' : ''}`,
        ]),
      ),
    }));
    const input = {
      clusters,
      deletedBindingUids: new Set(this.deletedUids),
      timing: TIMING,
      maxConflictRetries: 10,
      waiting: this.waiting.read(),
    };
    const cache = this.reconcilerCache;
    if (
      cache &&
      statusesCurrentIn(
        { quotas: [...cache.quotas.values()], bindings: [...cache.bindings.values()] },
        input,
        this.clockOf(2)(),
      )
    ) {
      exercised.reconcilesSkipped++;
      this.log('reconciler: its cache shows every status current, nothing read or written');
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
      this.outsideCounted.set(name, this.outsideIn(selectsHighOnly(quota), clusters, bindings));
      this.observedCounted.set(name, this.observedIn(selectsHighOnly(quota), clusters, bindings));
    };
    const quotas = await this.host.listQuotas('reconciler');
    const outcome = await reconcileQuotas(
      {
        getQuota: async (_ns, name) => {
          const quota = await this.host.getQuota('reconciler', name);
          read.set(name, quota);
          rereading = name;
          return quota;
        },
        listBindings: async () => {
          listed = await this.host.listBindings('reconciler');
          firstList ??= listed;
          if (rereading !== undefined) listedAfterRead.set(rereading, listed);
          rereading = undefined;
          return listed;
        },
        writeStatus: (quota) => {
          const counted = listed;
          return this.host.writeQuotaStatus('reconciler', quota, () => {
            written.add(quota.metadata!.name!);
            countedFrom(quota, counted);
          });
        },
        clock: this.clockOf(2),
      },
      NAMESPACE,
      quotas,
      input,
      async (quota, result) => this.checkDetected(quota, result.status, listed, clusters),
      () => {},
    );
    // Without a conflict, every status (written or found current) was computed from the one list.
    if (outcome.conflicts === 0)
      for (const quota of quotas)
        this.checkDetected(quota, outcome.statuses.get(quota.metadata!.name!)!, listed, clusters);
    // Its binding list started after these landings: the statuses it wrote or found current count them.
    for (const name of outcome.statuses.keys())
      if ((this.awaitingRecount.get(name) ?? Infinity) <= landingsSeen) this.awaitingRecount.delete(name);
    // A status found current, and unchanged since it was read, counts what this count read: the
    // quotas go in order, each computed from the list current then (the one a conflict read last).
    let current = firstList ?? [];
    for (const listedQuota of quotas) {
      const name = listedQuota.metadata!.name!;
      current = listedAfterRead.get(name) ?? current;
      const quota = read.get(name) ?? listedQuota;
      const unchanged =
        this.host.quotas.get(name)?.metadata?.resourceVersion === quota.metadata?.resourceVersion;
      if (outcome.statuses.has(name) && !written.has(name) && unchanged) countedFrom(quota, current);
    }
    for (const poke of this.waiting.settle(outcome.waiting, outcome.statuses, this.clockOf(2)())) {
      exercised.requeued++;
      this.pokes.push(poke);
      this.log(`reconciler requeues ${poke.record.binding} (waiting on ${poke.record.quota})`);
    }
  }

  /** DETECTED: `status`, computed for `quota` from `bindings` and `clusters`, names who runs beyond its charge. */
  private checkDetected(
    quota: KarmadaQuota,
    status: KarmadaQuotaStatus,
    bindings: readonly ResourceBinding[],
    clusters: readonly ObservedCluster[],
  ): void {
    exercised.detectionsChecked++;
    const expected = expectedBeyondCharge(quota, status, bindings, clusters, charge);
    if (expected.length > 0) exercised.detectionsBeyond++;
    const problem = detectionProblem(
      status,
      expected,
      BINDINGS.map((b) => b.name),
    );
    if (problem !== undefined) this.misdetected ??= `quota ${quota.metadata!.name}: ${problem}`;
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
    const high = isHigh(poke.write);
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

  /** The stored bindings a quota selects, by an independent recount. */
  private inScope(quota: QuotaSpec): ResourceBinding[] {
    return [...this.host.bindings.values()].filter((b) => !quota.highOnly || isHigh(b));
  }

  /**
   * What a quota holds on `key`: per binding name, the larger of its stored binding's charge and its
   * pending claim's (one not lapsed on any clock). Room claimed before an edit stays the name's
   * (docs/concepts/accounting.md, "Quota edits"): a change that fits in it asks nothing. With
   * `running`, a name also holds what its pods still running on any member take (free).
   */
  private held(quota: QuotaSpec, key: Key, running = false): number {
    const claims = this.claims(quota, key);
    let total = 0;
    for (const b of this.inScope(quota)) {
      const name = b.metadata!.name!;
      const pods = running ? this.podsOf(b).reduce((sum, n) => sum + n, 0) : 0;
      total += Math.max(charge(b)[key], pods * perReplica(name, key), claims.get(name) ?? 0);
      claims.delete(name);
    }
    for (const claimed of claims.values()) total += claimed;
    return total;
  }

  /** Per binding name, the charge on `key` of its pending claims on the quota not lapsed on any clock. */
  private claims(quota: QuotaSpec, key: Key): Map<string, number> {
    const claims = new Map<string, number>();
    for (const entry of this.host.quotas.get(quota.name)?.status?.reservations ?? []) {
      if (entry.expirationTime === undefined) continue;
      if (Date.parse(entry.expirationTime) + MAX_CLOCK_SKEW_MS <= this.now) continue;
      const name = entry.reservedBy.name;
      claims.set(name, Math.max(claims.get(name) ?? 0, milli(entry.charge?.[key], key)));
    }
    return claims;
  }

  /**
   * Can this admitted change still be stored? Within the API server's request timeout, a create while its
   * name may yet be free, an update while its object is stored at the version it was decided against.
   */
  private landable(req: Request): boolean {
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
  private coveredInFlight(quota: QuotaSpec, key: Key): { total: number; landable: string[] } {
    const held = new Map<string, number>();
    for (const b of this.inScope(quota)) held.set(b.metadata!.name!, charge(b)[key]);
    const landable: string[] = [];
    for (const req of this.requests) {
      // A change decided before an edit of the quota is covered as the edit rules say (LIMIT), not here.
      if (!this.landable(req) || req.beforeEdit.has(quota.name)) continue;
      if (quota.highOnly && !isHigh(req.object)) continue;
      const name = req.object.metadata!.name!;
      landable.push(`request ${req.id}`);
      held.set(name, Math.max(held.get(name) ?? 0, charge(req.object)[key]));
    }
    let total = 0;
    for (const amount of held.values()) total += amount;
    return { total, landable };
  }

  /** What the stored bindings a quota selects are charged on `key`. */
  private charged(quota: QuotaSpec, key: Key): number {
    return this.inScope(quota).reduce((sum, b) => sum + charge(b)[key], 0);
  }

  private check(step: number): Violation | undefined {
    exercised.violationsChecked++;
    if (this.misdetected !== undefined) return this.violation('DETECTED', step, this.misdetected);
    if (this.unboundedStored !== undefined) return this.violation('LIMIT', step, this.unboundedStored);
    for (const q of this.specs) {
      const stored = this.host.quotas.get(q.name);
      if (stored === undefined) continue; // deleted: it limits nothing
      const status = stored.status;
      const ceiling = this.ceilings.get(q.name)!;
      for (const key of limitedKeys(q)) {
        const charged = this.charged(q, key);
        // Warn and DryRun admit what Deny refuses: no LIMIT then, the rest holds in every mode. Back
        // to Deny is an edit that may leave the quota over (edit()).
        if (q.enforcement !== undefined && charged > q.hard[key]!) exercised.overWhileNotEnforced++;
        if (q.enforcement === undefined && charged > ceiling[key]) {
          const hard = q.hard[key]!;
          return this.violation(
            'LIMIT',
            step,
            `quota ${q.name}: stored bindings charge ${key}=${charged} > ${
              ceiling[key] === hard
                ? `hard ${hard}`
                : `${ceiling[key]}, what they were when an edit left it over hard ${hard}`
            }`,
          );
        }
        if (this.awaitingRecount.has(q.name)) continue;
        // While over after an edit, the ceiling follows the charges down, never below hard.
        if (q.enforcement === undefined)
          ceiling[key] = Math.max(q.hard[key]!, Math.min(ceiling[key], this.held(q, key)));
        const counted = status?.observedGeneration === stored.metadata?.generation;
        if (!counted || status?.used === undefined || !(key in status.used)) continue;
        const accounted = milli(status.used[key], key) + milli(status.reserved?.[key], key);
        const outside = this.outsideCounted.get(q.name)?.[key] ?? 0;
        if (outside > 0) exercised.outsideCounted++;
        if (accounted < charged + outside) {
          return this.violation(
            'ACCOUNTED',
            step,
            `quota ${q.name}: used+reserved ${key}=${accounted} < stored charges ${charged}${
              outside > 0 ? ` + usage outside the federation it counted ${outside}` : ''
            } (${JSON.stringify(status.reservations)})`,
          );
        }
        // Every admitted change that can still land is covered too: per name, the larger of the stored
        // binding's charge and the charge of each such change (a claim retired too early fails here).
        const covered = this.coveredInFlight(q, key);
        if (accounted < covered.total + outside) {
          return this.violation(
            'ACCOUNTED',
            step,
            `quota ${q.name}: used+reserved ${key}=${accounted} < ${covered.total}${
              outside > 0 ? ` + ${outside}` : ''
            }, the stored charges with the changes in flight that can still land (${covered.landable.join(', ')}) (${JSON.stringify(status.reservations)})`,
          );
        }
      }
    }
    return undefined;
  }

  private violation(invariant: Violation['invariant'], step: number, message: string): Violation {
    return { invariant, message, step, trace: [...this.trace] };
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
    const done = this.reconcile();
    await flush();
    await this.drain();
    await done;
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
    // Every member's watch recovers.
    this.memberStates.fill('Ready');
    this.publish();
    for (let round = 0; round < 3; round++) {
      // The reconciler's watches catch up in the end: then a skip must be right, not merely safe.
      if (this.reconcilerCache) this.syncReconcilerCache(Number.POSITIVE_INFINITY);
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
        BINDINGS.forEach(({ name, cpuMilli }, b) => {
          const rb = selected.find((x) => x.metadata!.name === name);
          if (q.highOnly && rb === undefined) return;
          const perReplica = key === 'cpu' ? cpuMilli : 1;
          const on = rb === undefined ? MEMBERS.map(() => 0) : this.podsOf(rb);
          // Hand-made Deployments pass for a binding of the name only if it is a Deployment's too.
          const sameKind = rb === undefined || kindOf(rb) === 'Deployment';
          let observed = 0;
          MEMBERS.forEach((_, m) => {
            const handMade = this.outside[m]![b]!;
            expectedUsed += (on[m]! + (q.highOnly && !sameKind ? 0 : handMade)) * perReplica;
            if (rb !== undefined && targetOn(rb, m) > 0)
              observed += (on[m]! + (sameKind ? handMade : 0)) * perReplica;
          });
          expectedReserved += rb === undefined ? 0 : Math.max(0, charge(rb)[key] - observed);
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
    for (const quota of this.host.quotas.values())
      this.checkDetected(quota, quota.status ?? {}, [...this.host.bindings.values()], this.published ?? []);
    if (this.misdetected !== undefined) return this.violation('DETECTED', step, this.misdetected);
    return this.settleWaiting(step);
  }

  /**
   * Requeue to the end: Karmada re-sends what each requeue poked and the API server stores what is
   * admitted, time passes the requeue interval, the reconciler reconciles and requeues; REQUEUE_ROUNDS
   * times. Then a waiting change that asks no more than its quota has free, by the independent recount,
   * is a LIVENESS violation, unless a starving change ahead of it on that quota that could fit once
   * enough frees holds the room (STARVING_AFTER_MS, by design).
   */
  private async settleWaiting(step: number): Promise<Violation | undefined> {
    for (let round = 0; ; round++) {
      for (const poke of this.pokes.splice(0)) this.resend(poke, 0);
      await flush();
      await this.drain();
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
      if (this.reconcilerCache) this.syncReconcilerCache(Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    const found = this.check(step);
    if (found) return found;
    const live = this.waiting.live([...this.host.bindings.values()], this.now);
    // What the binding would hold in the quota once admitted is within its hard limit.
    const couldFit = (write: ResourceBinding, q: QuotaSpec) =>
      limitedKeys(q).every((key) => charge(write)[key] <= q.hard[key]!);
    for (const record of live) {
      const q = this.specs.find((x) => x.name === record.quota)!;
      // A deleted quota limits nothing; a key it no longer limits asks nothing of it.
      const asked = this.host.quotas.has(q.name)
        ? Object.entries(record.requested).filter(([key]) => limitedKeys(q).includes(key as Key))
        : [];
      if (!asked.every(([key, amount]) => milli(amount, key) <= this.free(q, key as Key))) continue;
      // Stored already by another write of the same spec, admitted before this refusal was recorded:
      // the wait is over, though the record stays until it settles (re-sent, it asks nothing).
      const stored = this.host.bindings.get(record.binding);
      const write = this.waiting.wantedWrite(record.binding)!;
      if (stored && stored.spec?.replicas === write.spec?.replicas && isHigh(stored) === isHigh(write))
        continue;
      // More than hard once admitted, on a key it was not refused on (a limit lowered since): it can
      // never fit, whatever frees.
      if (this.host.quotas.has(q.name) && !couldFit(write, q)) continue;
      const heldBack = live.some(
        (other) =>
          other !== record &&
          other.quota === record.quota &&
          ((other.priority ?? 0) > (record.priority ?? 0) ||
            ((other.priority ?? 0) === (record.priority ?? 0) &&
              // Oldest first; of the same second, by name (the product's order).
              (other.since < record.since ||
                (other.since === record.since && other.binding < record.binding)))) &&
          this.now - Date.parse(other.since) >= STARVING_AFTER_MS &&
          couldFit(this.waiting.wantedWrite(other.binding)!, q),
      );
      if (heldBack) continue;
      return this.violation(
        'LIVENESS',
        step,
        `${record.binding} still waits on quota ${record.quota} since ${record.since} after ${REQUEUE_ROUNDS} requeue rounds, asking ${JSON.stringify(record.requested)} of free ${JSON.stringify(Object.fromEntries(limitedKeys(q).map((key) => [key, this.free(q, key)])))}; waiting: ${JSON.stringify(live.map((r) => [r.binding, r.quota, r.requested, r.since, r.requeuedAt ?? null]))}`,
      );
    }
    return this.unkept(step, live);
  }

  /**
   * A change whose last answer was a refusal over a limit or for usage not counted must still wait
   * (a live record) until it is stored, its binding is deleted or re-created, or Karmada has stopped
   * retrying it (ABANDONED_AFTER_MS): by the simulation's own reading of the answers, so a refusal
   * the product never records, or forgets too early, is a LIVENESS violation too.
   */
  private unkept(step: number, live: readonly { binding: string }[]): Violation | undefined {
    for (const [name, answer] of this.lastAnswer) {
      if (!answer.waits || live.some((r) => r.binding === name)) continue;
      if (this.now - answer.at > ABANDONED_AFTER_MS) continue;
      const stored = this.host.bindings.get(name);
      const wanted = answer.write;
      if (
        wanted.metadata?.resourceVersion === undefined
          ? stored !== undefined
          : stored?.metadata?.uid !== wanted.metadata.uid
      )
        continue; // created since, or deleted or re-created: Karmada wants something else now
      if (stored && stored.spec?.replicas === wanted.spec?.replicas && isHigh(stored) === isHigh(wanted))
        continue;
      return this.violation(
        'LIVENESS',
        step,
        `${name}'s change to ${wanted.spec?.replicas} replicas${isHigh(wanted) ? ' high' : ''}, refused at t+${(answer.at - Date.parse('2026-11-23T00:00:00Z')) / 1000}s, is neither stored nor waiting`,
      );
    }
    return undefined;
  }

  /**
   * What a quota has free on `key` by an independent recount: hard less what each binding name
   * holds: its stored binding's charge, its pods still running on any member, or its pending claim,
   * whichever is most (a binding being deleted charges nothing, but its pods count until its
   * finalizer is done; a write admitted during the requeue rounds claims until its pods run), less
   * the hand-made pods it counts.
   */
  private free(q: QuotaSpec, key: Key): number {
    const selected = this.inScope(q);
    let handMade = 0;
    BINDINGS.forEach(({ name }, b) => {
      const rb = selected.find((x) => x.metadata!.name === name);
      if (q.highOnly && (rb === undefined || kindOf(rb) !== 'Deployment')) return;
      for (const row of this.outside) handMade += row[b]! * perReplica(name, key);
    });
    return q.hard[key]! - this.held(q, key, true) - handMade;
  }
}

/** Runs one simulation of `actions`. */
export async function simulate(
  actions: readonly Action[],
  options: { countedAtStart?: boolean; trace?: string[] } = {},
): Promise<Violation | undefined> {
  const simulation = new Simulation();
  const violation = await simulation.run(actions, options);
  options.trace?.push(...simulation.trace);
  return violation;
}
