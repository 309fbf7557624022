/**
 * What the accounting simulation's runs are made of (docs/development/simulation.md): the bindings,
 * quotas and members in play, the actions, and the model's own recount of what a binding costs.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { clusterOverridesOf } from '#quota';
import { parseResourceList } from '#quantity';
import { CLUSTER_LABELS, NAMESPACE, NAMESPACES, type HostFault } from './model-host.js';
import { jobFinished, type WorkloadKind } from './kinds-model.js';

/**
 * Binding names the clients use, each with its cpu request per replica (millicores) and its
 * namespace: b0 to b4 in the namespace of the KarmadaQuotas, b5 and b6 in the second namespace, which
 * only the ClusterKarmadaQuota limits (names are unique across both, so the model keys by name).
 */
export const BINDINGS = [
  { name: 'b0', cpuMilli: 500, namespace: NAMESPACE },
  { name: 'b1', cpuMilli: 1000, namespace: NAMESPACE },
  { name: 'b2', cpuMilli: 1500, namespace: NAMESPACE },
  { name: 'b3', cpuMilli: 700, namespace: NAMESPACE },
  { name: 'b4', cpuMilli: 300, namespace: NAMESPACE },
  { name: 'b5', cpuMilli: 800, namespace: NAMESPACES[1] },
  { name: 'b6', cpuMilli: 600, namespace: NAMESPACES[1] },
] as const;

/** BINDINGS' index of each name (a workload or a binding is named as its BINDINGS entry). */
export const BINDING_INDEX: ReadonlyMap<string, number> = new Map(BINDINGS.map((b, i) => [b.name, i]));

/** The namespace of the named binding (or workload). */
export const namespaceOf = (name: string): string => BINDINGS[BINDING_INDEX.get(name)!]!.namespace;

/** What one replica of the named binding's workload takes of `key` on member `m` (its index in MEMBERS). */
export const perReplica = (name: string, key: Key, m: number): number =>
  key === 'pods' ? 1 : key === CAPPED && m !== 0 ? 0 : BINDINGS[BINDING_INDEX.get(name)!]!.cpuMilli;

/**
 * A quota's spec as the simulation edits it: cpu in millicores; no pods limit when `pods` is absent,
 * no cap on member1 (docs/concepts/member-caps.md) when `CAPPED` is.
 */
export interface QuotaSpec {
  name: string;
  hard: { cpu: number; pods?: number; [CAPPED]?: number };
  /** The cap on member1 selects it by a label of its Cluster, not by its name. */
  capByLabel?: boolean;
  highOnly: boolean;
  /** spec.enforcement when not Deny: the quota admits what it would refuse (docs/concepts/enforcement.md). */
  enforcement?: 'Warn' | 'DryRun';
  /**
   * A ClusterKarmadaQuota over the namespaces labelled CLUSTER_LABELS (docs/concepts/cluster-quotas.md);
   * else a KarmadaQuota of NAMESPACE.
   */
  cluster?: true;
}

/** The quotas at the start: one for the namespace, one scoped to the `high` priority class. */
export const QUOTAS: readonly QuotaSpec[] = [
  { name: 'all', hard: { cpu: 10_000, pods: 12 }, highOnly: false },
  { name: 'high', hard: { cpu: 4_000 }, highOnly: true },
];

/** The ClusterKarmadaQuota over both namespaces (runs with `clusterQuota`): tighter than `all` on cpu. */
export const CLUSTER_QUOTA: QuotaSpec = {
  name: 'shared',
  hard: { cpu: 8_000, pods: 10 },
  highOnly: false,
  cluster: true,
};
/** The name the product gives it in decisions and records (quotaName). */
export const CLUSTER_QUOTA_NAME = `ClusterKarmadaQuota/${CLUSTER_QUOTA.name}`;

/** The cpu limits an edit may set (millicores). */
export const CPU_LIMITS = [2_000, 4_000, 7_000, 10_000] as const;

/** The one member cap an edit may set: cpu on member1, under its member key. */
export const CAPPED = 'cpu@member1';
/** member1's Cluster labels (member2 has none): what a cap by label selects. */
export const CAPPED_LABELS = { 'sim.karmada-quota/capped': 'yes' };

export type Key = 'cpu' | 'pods' | typeof CAPPED;

/** A cpu amount (millicores) per key; pods a count. */
export const isCpu = (key: string): boolean => key === 'cpu' || key === CAPPED;

export const TIMING = { ttlSeconds: 120, landingWindowSeconds: 60 };
/** The longest an admitted change takes to be stored: kube-apiserver caps a write's context at 34 s. */
export const LANDING_LIMIT_MS = 34_000;
/**
 * How far apart the processes' clocks may be (docs/concepts/accounting.md, "Clocks"): the landing
 * window less the landing limit. Each process's clock is off real time by at most half of it.
 */
export const MAX_CLOCK_SKEW_MS = TIMING.landingWindowSeconds * 1000 - LANDING_LIMIT_MS;
export const DEADLINE_MS = 5_000;
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
export const REQUEUE_ROUNDS = 5;

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
  /** `n` of binding `b`'s pods on member `m` are evicted: they terminate, and its charge may start others. */
  | { t: 'evict'; b: number; n: number; m?: number }
  /**
   * `n` pods of the `i`-th group of pods on their way out (in the order they began terminating) are
   * gone: their grace period is over. Until then they run, and count in `used` (Terminating).
   */
  | { t: 'terminate'; i: number; n: number }
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
   * An admin edits quota `q`: 'scope' deletes it and creates it again with the other scope (every
   * binding, or `high`), as the product refuses a scope edit; 'cpu' sets its cpu limit to `cpu`;
   * 'pods' removes its pods key, or adds it back; 'existence' deletes it, or creates it again (a new
   * uid, nothing counted) once deleted;
   * 'enforcement' moves it from Deny to DryRun, to Warn, and back to Deny; 'cap' caps member1's cpu
   * at half of `cpu` by its name, then selects it by label instead, then removes the cap.
   */
  | {
      t: 'edit';
      q: number;
      edit: 'scope' | 'cpu' | 'pods' | 'existence' | 'enforcement' | 'cap';
      cpu: number;
    }
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
  /**
   * A user sets (or, with replicas -1, removes) an OverridePolicy making member `m` run `replicas`
   * of workload `b` wherever its binding schedules it there; Karmada applies it to the member at once.
   */
  | { t: 'override'; b: number; m: number; replicas: number }
  /** Karmada reacts to pending requeue `i` (a reconciler's poke): it re-sends the refused write. */
  | { t: 'requeue'; i: number; replica: number }
  /**
   * Karmada's back-off: the detector or scheduler sends binding `b`'s last refused write again (if
   * its last answer was a refusal that waits), against the binding as stored now.
   */
  | { t: 'retry'; b: number; replica: number }
  | { t: 'waitingFlush'; replica: number }
  /**
   * An admin adds or removes namespace `ns`'s label the ClusterKarmadaQuota selects by (it enters or
   * leaves the selector) on the Karmada API server; the services' watches learn it later.
   */
  | { t: 'label'; ns: number }
  /** Webhook replica `replica`'s namespace watch delivers the next label change it has not seen. */
  | { t: 'labelDeliver'; replica: number }
  /** The reconciler's job for the ClusterKarmadaQuota (reconcileClusterQuota), as `reconcile` is its namespace's. */
  | { t: 'reconcileCluster' };

export type UnadmittedKind = 'surge' | 'jobFinishes' | 'jobRecreated' | 'jobRunsAgain';

export interface Request {
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
  /** Whether an OverridePolicy changed after its decision: what that adds is counted by no status yet. */
  overridden?: boolean;
  /** The webhook replica it was sent to (a readmission's: the one the API server calls then). */
  replica?: number;
}

export interface Violation {
  invariant: 'LIMIT' | 'ACCOUNTED' | 'RUNS' | 'EXACT' | 'ERROR' | 'DETECTED' | 'LIVENESS';
  message: string;
  step: number;
  trace: string[];
}

export const isDuplicated = (rb: ResourceBinding): boolean =>
  rb.spec?.placement?.replicaScheduling?.replicaSchedulingType === 'Duplicated';

/**
 * What a stored binding must be counted for (docs/concepts/binding-cost.md): its replicas, on every
 * cluster when Duplicated, at least what its clusters list; nothing once it is being deleted.
 */
export const charge = (rb: ResourceBinding, overrides: Overrides = NO_OVERRIDES): Record<Key, number> => {
  if (rb.metadata?.deletionTimestamp || jobFinished(rb)) return NOTHING;
  const clusters = rb.spec?.clusters ?? [];
  const scheduled = clusters.reduce((sum, c) => sum + (c.replicas ?? 0), 0);
  const asked = (rb.spec?.replicas ?? 0) * (isDuplicated(rb) ? Math.max(1, clusters.length) : 1);
  // An overridden member runs its override instead of its share (docs/concepts/binding-cost.md).
  let replicas = Math.max(asked, scheduled);
  for (const target of clusters) {
    const overridden = overrides.get(target.name);
    if (overridden !== undefined) replicas += overridden - shareOf(rb, target.replicas ?? 0);
  }
  const cpu = Number.parseInt(String(rb.spec?.replicaRequirements?.resourceRequest?.['cpu'] ?? '0m'), 10);
  const onMember1 = clusters.find((c) => c.name === MEMBERS[0]);
  const capped =
    onMember1 === undefined ? 0 : (overrides.get(onMember1.name) ?? shareOf(rb, onMember1.replicas ?? 0));
  return { cpu: cpu * replicas, pods: replicas, [CAPPED]: cpu * capped };
};

/** Per member name, the replicas an OverridePolicy makes it run where that differs from its share. */
export type Overrides = ReadonlyMap<string, number>;
export const NO_OVERRIDES: Overrides = new Map();

/** The overrides a binding was judged with (withClusterOverrides), as the recount reads them. */
export const judgedOverrides = (rb: ResourceBinding): Overrides =>
  new Map(clusterOverridesOf(rb).map((o) => [o.cluster, o.replicas ?? 0]));

/** A member's share of the binding's replicas: its spec.clusters entry (Duplicated: at least spec.replicas). */
export const shareOf = (rb: ResourceBinding, assigned: number): number =>
  isDuplicated(rb) ? Math.max(rb.spec?.replicas ?? 0, assigned) : assigned;

/**
 * A binding's charge split by member, recounted as the product's chargeByCluster splits it: each
 * member it is scheduled to its replicas there (Duplicated: at least spec.replicas), the rest of the
 * charge unsplit. What one member runs beyond its share never nets another member's.
 */
export const shares = (
  rb: ResourceBinding,
  overrides: Overrides = NO_OVERRIDES,
): { on: Map<string, Record<Key, number>>; rest: Record<Key, number> } => {
  const total = charge(rb, overrides);
  const cpu = Number.parseInt(String(rb.spec?.replicaRequirements?.resourceRequest?.['cpu'] ?? '0m'), 10);
  const on = new Map<string, Record<Key, number>>();
  const holds = total.pods > 0 || total.cpu > 0;
  for (const target of rb.spec?.clusters ?? []) {
    const n = !holds ? 0 : (overrides.get(target.name) ?? shareOf(rb, target.replicas ?? 0));
    on.set(target.name, { cpu: n * cpu, pods: n, [CAPPED]: target.name === MEMBERS[0] ? n * cpu : 0 });
  }
  const split = (key: Key) => [...on.values()].reduce((sum, share) => sum + share[key], 0);
  return {
    on,
    rest: Object.fromEntries(KEYS.map((key) => [key, Math.max(0, total[key] - split(key))])) as Record<
      Key,
      number
    >,
  };
};

/** The pods Karmada runs for the binding on member `m`: what its `spec.clusters` entry there says. */
export const targetOn = (rb: ResourceBinding, m: number): number =>
  rb.metadata?.deletionTimestamp ? 0 : (rb.spec?.clusters?.find((c) => c.name === MEMBERS[m])?.replicas ?? 0);

export const milli = (value: unknown, key: string): number => {
  const parsed = parseResourceList({ [key]: value ?? '0' }, 'status').list[key];
  return parsed === undefined ? 0 : Number(isCpu(key) ? parsed.milliValue() : parsed.value());
};

/** A quota as an admin creates it: generation 1, no status. */
export const newQuota = (q: QuotaSpec, uid: string): KarmadaQuota =>
  (q.cluster
    ? {
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'ClusterKarmadaQuota',
        metadata: { name: q.name, uid, generation: 1 },
        spec: { ...specOf(q), namespaceSelector: { matchLabels: CLUSTER_LABELS } },
      }
    : {
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'KarmadaQuota',
        metadata: { name: q.name, namespace: NAMESPACE, uid, generation: 1 },
        spec: specOf(q),
      }) as KarmadaQuota;

/** The KarmadaQuota spec of a simulated quota. */
export const specOf = (q: QuotaSpec): KarmadaQuota['spec'] => ({
  hard: {
    cpu: `${q.hard.cpu}m`,
    ...(q.hard.pods === undefined ? {} : { pods: String(q.hard.pods) }),
  },
  ...(q.hard[CAPPED] === undefined
    ? {}
    : {
        clusters: [
          {
            ...(q.capByLabel ? { labelSelector: { matchLabels: CAPPED_LABELS } } : { name: MEMBERS[0] }),
            hard: { cpu: `${q.hard[CAPPED]}m` },
          },
        ],
      }),
  ...(q.highOnly
    ? {
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
      }
    : {}),
  ...(q.enforcement ? { enforcement: q.enforcement } : {}),
});

export const limitedKeys = (q: QuotaSpec): Key[] => KEYS.filter((key) => q.hard[key] !== undefined);

/** Each key at 0. */
export const NOTHING: Readonly<Record<Key, number>> = { cpu: 0, pods: 0, [CAPPED]: 0 };

/** A quota's limits per key, no limit read as infinite. */
export const limitsOf = (q: QuotaSpec): Record<Key, number> =>
  Object.fromEntries(KEYS.map((key) => [key, q.hard[key] ?? Number.POSITIVE_INFINITY])) as Record<
    Key,
    number
  >;

/**
 * A binding as Karmada v1.18.2's detector writes it with its default feature gates: no priority class
 * (nor `replicaRequirements.namespace`) in spec.replicaRequirements, the class being on the template
 * it names (`spec.resource`, at the template's resourceVersion `template`: Simulation.templateOf).
 */
export function bindingObject(
  b: number,
  uid: string,
  replicas: number,
  template: string,
  version: string,
  deletionTimestamp: Date | undefined,
  placement: Placement,
): ResourceBinding {
  const { name, cpuMilli, namespace } = BINDINGS[b]!;
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
      namespace,
      uid,
      resourceVersion: version,
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    spec: {
      resource: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name,
        namespace,
        resourceVersion: template,
      },
      replicas,
      replicaRequirements: { resourceRequest: { cpu: `${cpuMilli}m` } },
      placement: { replicaScheduling: { replicaSchedulingType: duplicated ? 'Duplicated' : 'Divided' } },
      clusters,
    },
  };
}

/** The published workloads that were made by hand in their member (the simulation's own knowledge). */
export const handMade = new WeakSet<object>();

/** Where the binding runs, for traces; nothing for the placement of the one-member runs (member1, Divided). */
export const describePlacement = (rb: ResourceBinding): string =>
  !isDuplicated(rb) && (rb.spec?.clusters ?? []).every((c) => c.name === MEMBERS[0])
    ? ''
    : ` on ${JSON.stringify((rb.spec?.clusters ?? []).map((c) => `${c.name}=${c.replicas}`))}${isDuplicated(rb) ? ' duplicated' : ''}`;

export const flush = async (): Promise<void> => {
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
  /** Refusals over member1's cap, and LIMIT checks of a capped quota's stored charges there. */
  refusedOnMemberCap: 0,
  /** Refusals of an increase on a member whose cap by label the reconciler had not resolved yet. */
  refusedMemberUnresolved: 0,
  memberCapChecked: 0,
  /** What no admission saw, as applied (an action that found nothing to act on left out). */
  unadmitted: {} as Partial<Record<UnadmittedKind | 'override', number>>,
  /** Refusals recorded as waiting changes, requeues the reconciler made, and writes Karmada re-sent. */
  waitingRecorded: 0,
  requeued: 0,
  requeueResent: 0,
  retried: 0,
  /** Quota edits by kind: a spec edit, a quota deleted, a quota created again. */
  quotaEdits: {} as Partial<Record<'edited' | 'deleted' | 'created', number>>,
  /** Checks that found a Warn or DryRun quota's stored charges over its hard limit (admitted, counted). */
  overWhileNotEnforced: 0,
  /** Pods that began terminating (on their way out), by why. */
  terminating: {} as Partial<Record<TerminatingCause, number>>,
  /** Pods on their way out that a 'terminate' finished. */
  terminated: 0,
  /** Creates stored while pods of an earlier object of their name were on their way out. */
  recreatedWhileTerminating: 0,
  /** RUNS checks, and those that counted pods on their way out. */
  runsChecked: 0,
  runsTerminating: 0,
  /** Statuses counted from a snapshot that did not show what the members were given (RUNS allows it). */
  unpublished: 0,
  /** Waiting records replicas flushed out of the order they decided in, beyond what the product orders. */
  waitingInverted: 0,
  /** Bindings the webhook or the reconciler gave their template's class ('high'): Karmada writes none. */
  templateClassed: 0,
  /** Bindings the services judged with an OverridePolicy in force. */
  overridden: 0,
  /**
   * The ClusterKarmadaQuota's decisions: requests it weighed (allowed by every quota, or refused by
   * it), those refused with its usage in the namespace not counted yet, changes stored while the
   * webhook's view of their namespace's labels left it out, namespaces entering and leaving the
   * selection LIMIT counts (both webhook replicas' views and the API server's labels), and its reconciles.
   */
  cluster: {
    allowed: 0,
    refused: 0,
    statusUnknown: 0,
    storedWithoutIt: 0,
    entered: 0,
    left: 0,
    reconciles: 0,
    written: 0,
  },
  /** Actions applied, by kind (one that found nothing to act on included). */
  actions: {} as Partial<Record<Action['t'], number>>,
};

/**
 * Why pods began terminating: their member copy scaled down ('scaledDown'), or taken off a member
 * ('moved'); their binding deleted ('deleted'); evicted ('evicted'); another object of the name took
 * over the member copy ('replaced'); a hand-made workload scaled down or deleted ('handMade').
 */
export type TerminatingCause = 'scaledDown' | 'moved' | 'deleted' | 'evicted' | 'replaced' | 'handMade';

/** The keys the simulation's quotas may limit. */
export const KEYS: readonly Key[] = ['cpu', 'pods', CAPPED];

/**
 * What no admission decided that gave the members more (Simulation.runsPending), or what a count
 * could not see of what they were given (Simulation.unpublishedRuns).
 */
export interface RunsEvent {
  seq: number;
  /** The members whose pods it changed: a count must read each as observed after it. */
  members: number[];
  /**
   * The workload it concerns and what it added to an unscoped count over every namespace (EVERY_POD:
   * a quota's edit, or a namespace entering the ClusterKarmadaQuota's count, takes that);
   * none for what a count could not see (an edit's ceiling takes what the members have).
   */
  workload?: {
    kind: string;
    name: string;
    /** Less what an admission decided it adds to the stored charges. */
    added: Record<Key, number>;
    /** All of it: for a quota the landing was decided before an edit of (`landing`). */
    gross: Record<Key, number>;
    landing?: ReadonlySet<string>;
  };
  /** Per quota name, what it added there. */
  amounts: Map<string, Record<Key, number>>;
}

/**
 * What a quota's stored status was counted from (RUNS): bindings listed after `seen` of runsEvents,
 * and each member `m` as observed at `at[m]`.
 */
export interface CountedFrom {
  seen: number;
  at: readonly number[];
}

/** Has a status counted `from` those inputs counted what event `e` did? */
export const runsCovered = (e: RunsEvent, from: CountedFrom | undefined): boolean =>
  from !== undefined && e.seq <= from.seen && e.members.every((m) => from.at[m]! >= e.seq);

/** Karmada's pods of one workload object running on member `m` (none terminating). */
export interface RunningPods {
  m: number;
  name: string;
  uid: string;
  kind: string;
  n: number;
}

/** What Karmada's pods run on the members: now, or as a published snapshot showed them. */
export interface MemberPods {
  running: RunningPods[];
  /** Karmada's pods on their way out (hand-made ones are usage outside the federation). */
  terminating: Terminating[];
}

/** Pods on their way out on a member: published apart from their workload, counted in `used`. */
export interface Terminating {
  m: number;
  name: string;
  kind: string;
  n: number;
  /** Pods of a hand-made workload (usage outside the federation, RUNS leaves them out). */
  handMade: boolean;
}
