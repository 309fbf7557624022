/**
 * The reconciler's pure computation (spec §2, §6): from a freshly read KarmadaQuota, the namespace's
 * persisted ResourceBindings and the usage every member cluster published, the quota's next status, whether
 * it differs from the current one, the Events to record and the problems found. Never throws: bad input is
 * reported in `errors` (and Ready=False) while the rest of the status is still computed.
 *
 * Keys: the quota's `spec.hard` keys (entries that cannot be read are reported and left out).
 *
 * Usage (`used`, `clusters[]`):
 * - an unscoped quota counts ALL the usage a cluster published for the namespace (`ObservedCluster.used`),
 *   pods that no binding names included: they are usage too (spec §5);
 * - a quota with a scopeSelector counts only the workloads whose ResourceBinding matches its scopes
 *   (`ObservedCluster.workloads`, matched by `spec.resource` kind/name): a workload that no binding names
 *   (a pod created directly in a member cluster, a namespace-level object count) cannot be scoped, so a
 *   scoped quota does not count it;
 * - `used` is the sum over clusters, every hard key present (0 when nothing); `clusters[]` holds each
 *   cluster's share of it (same keys, every hard key present, so the slices add up to `used`), sorted by
 *   name. A Stale or Unreachable cluster keeps counting with its last known usage, never as zero.
 *
 * Reservations (`reservations[]`, `reserved`), per entry of the current status, in order:
 * - its binding is the one of that name in the namespace; a uid on both sides that differs means another
 *   object of the same name: while the entry's expiration is in the future it is kept as it is (a new
 *   object not persisted yet), after that it is settled against the persisted object, under that
 *   object's uid (the admitted one never persisted: e.g. a create retried after its answer was lost,
 *   admitted under a fresh uid and then refused with AlreadyExists, must not strip the persisted
 *   binding of its reservation);
 * - binding missing: the entry is kept as it is (masked to the hard keys) until its expirationTime passes
 *   (a CREATE admitted but not persisted yet, or that failed), then dropped; an entry without an
 *   expiration whose binding is missing is dropped at once (the binding was deleted), and so is one whose
 *   uid is among `deletedBindingUids`. A binding being deleted (`metadata.deletionTimestamp` set)
 *   releases its reservation at once, like a deleted one;
 * - binding present: `persisted` = its charge (bindingCharge) on the hard keys, or nothing when the binding
 *   no longer matches the quota's scopes (the webhook would not charge it here). While the entry's
 *   expiration is in the future and `persisted < entry.charge` on some key (the admitted change has not
 *   landed on the binding yet), `effective = max(entry.charge, persisted)` and the expiration is kept;
 *   otherwise `effective = persisted` and the expiration is removed (the change landed, or never will).
 *   Then `charge = effective` and `reserved = max(0, effective - observed)` per key, `observed` being the
 *   usage of the binding's workload summed over clusters (observedUsageOf). An entry that reserves nothing
 *   and has no expiration is dropped (fully observed);
 * - bindings without an entry get none: reservations only come from admission;
 * - a second entry for the same binding is reported and dropped.
 * `reserved` = the sum of the entries' reserved, non-zero keys only, `{}` when nothing is reserved:
 * exactly what the webhook writes (`formatList(sumReserved(...))`). `reservations` is always written
 * (possibly `[]`), as the webhook does.
 *
 * Conditions (metav1.Condition; `observedGeneration` = metadata.generation on each; a condition whose
 * status did not change keeps its lastTransitionTime, else it is `now` at second precision as metav1.Time
 * serializes it; conditions of other types are kept as they are, after these three):
 * - Ready: True/Reconciled, or False/InvalidSpec (spec.hard unreadable) or False/InvalidData (a binding,
 *   snapshot or reservation could not be read) with the problems in the message;
 * - ClustersSynced: True/AllClustersReady when every cluster is Ready (also when none has published
 *   usage), else False/ClustersNotReady naming each other cluster, its state and since when;
 * - OverQuota: True/UsageExceedsHard when used + reserved > hard on some key, else False/WithinQuota.
 *
 * Events: Warning OverQuota when OverQuota turns True; per cluster, compared with the current
 * `status.clusters`, Warning ClusterStale when it turns non-Ready (or first appears non-Ready) and Normal
 * ClusterRecovered when it turns Ready again. Cluster events come first, in name order. Record them only
 * once the status write succeeded: a retry after a conflict computes them again.
 *
 * `changed` is false when the computed status equals the current one semantically (quantities by value,
 * times as strings), so the reconciler can skip the write.
 */
import {
  addLists,
  formatList,
  listsEqual,
  maskList,
  maxLists,
  parseResourceList,
  Quantity,
  removeZeros,
  subtractLists,
  type ResourceList,
} from '#quantity';
import {
  CLUSTER_USAGE_STATES,
  type ClusterUsage,
  type ClusterUsageState,
  type Condition,
  type ConditionStatus,
  isJsonObject,
  type KarmadaQuota,
  KarmadaQuotaConditionType,
  type KarmadaQuotaStatus,
  type Reservation,
  type ResourceBinding,
} from '#api';
import { bindingCharge } from './charge.js';
import { bindingMatchesScopes } from './scopes.js';
import {
  bindingKeyString,
  isExpired,
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type ReservationEntry,
} from './state.js';

/** Usage as the caller has it: decoded quantities, or the wire strings of a snapshot (parsed here). */
export type UsageList = ResourceList | Readonly<Record<string, string>>;

/** One workload's usage in one cluster (a WorkloadSnapshot). */
export interface ObservedWorkload {
  kind: string;
  name: string;
  used: UsageList;
}

/** What one member cluster published for the namespace, with its health. */
export interface ObservedCluster {
  name: string;
  state: ClusterUsageState;
  /** RFC 3339. */
  lastSyncTime: string;
  message?: string;
  /** This namespace's usage in the cluster (ClusterNamespaceSnapshot.used). */
  used: UsageList;
  workloads: ObservedWorkload[];
}

export interface QuotaEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** How many occurrences this one Event stands for (aggregated denials); 1 when absent. */
  count?: number;
}

export interface QuotaStatusInput {
  /** Freshly read: it holds the webhook's latest reservations. */
  quota: KarmadaQuota;
  /** Every ResourceBinding of the namespace, as persisted on the host. */
  bindings: ResourceBinding[];
  /** Every cluster that published usage for the namespace. */
  clusters: ObservedCluster[];
  now: Date;
  /**
   * Uids of bindings seen deleted on the host. A missing binding cannot tell "deleted" from "created
   * but not persisted yet"; these can, so their reservations go at once instead of at expiry.
   */
  deletedBindingUids?: ReadonlySet<string>;
}

export interface QuotaStatusResult {
  status: KarmadaQuotaStatus;
  /** False when `status` equals the current status semantically: nothing to write. */
  changed: boolean;
  events: QuotaEvent[];
  /** Problems with the input, one message each (also in the Ready condition). */
  errors: string[];
}

/** Condition reasons this computation sets. */
export const QuotaConditionReason = {
  Reconciled: 'Reconciled',
  InvalidSpec: 'InvalidSpec',
  InvalidData: 'InvalidData',
  AllClustersReady: 'AllClustersReady',
  ClustersNotReady: 'ClustersNotReady',
  UsageExceedsHard: 'UsageExceedsHard',
  WithinQuota: 'WithinQuota',
} as const;

/** Event reasons this computation emits. */
export const QuotaEventReason = {
  OverQuota: 'OverQuota',
  ClusterStale: 'ClusterStale',
  ClusterRecovered: 'ClusterRecovered',
  /** Recorded by the webhook, aggregated per quota (denial-events.ts). */
  AdmissionDenied: 'AdmissionDenied',
} as const;

/** metav1.Condition's message limit (the CRD enforces it). */
const MAX_CONDITION_MESSAGE = 32768;
/** lastSyncTime written for a cluster whose own cannot be read and that had none before. */
const UNKNOWN_TIME = '1970-01-01T00:00:00Z';

const ZERO = Quantity.zero();

const get = (list: ResourceList, key: string): Quantity =>
  Object.hasOwn(list, key) ? (list[key] as Quantity) : ZERO;

const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const isTime = (value: unknown): value is string =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));

/** Every key of `keys`, from `list` or 0. */
const withAllKeys = (list: ResourceList, keys: readonly string[]): ResourceList =>
  Object.fromEntries(keys.map((key) => [key, get(list, key)]));

/** The strictly positive entries (max(0, x) with zeros removed). */
const positivePart = (list: ResourceList): ResourceList =>
  Object.fromEntries(Object.entries(list).filter(([, q]) => q.sign() > 0));

/** Is `a` below `b` on some key of `b`? */
const belowSomewhere = (a: ResourceList, b: ResourceList): boolean =>
  Object.keys(b).some((key) => get(a, key).cmp(get(b, key)) < 0);

/**
 * A usage list from the caller, masked to `keys`: Quantity values are taken as they are, anything else is
 * parsed as a wire quantity; what cannot be read is reported (`<field>[<key>]: ...`) and left out.
 */
function readUsage(raw: unknown, field: string, keys: readonly string[], errors: string[]): ResourceList {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) {
    for (const e of parseResourceList(raw, field).errors) errors.push(`${e.field}: ${e.message}`);
    return {};
  }
  const decoded: [string, Quantity][] = [];
  const wire: [string, unknown][] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (value instanceof Quantity) decoded.push([key, value]);
    else wire.push([key, value]);
  }
  const parsed = parseResourceList(Object.fromEntries(wire), field);
  for (const e of parsed.errors) errors.push(`${e.field}: ${e.message}`);
  return maskList(Object.fromEntries([...decoded, ...Object.entries(parsed.list)]), keys);
}

const workloadKey = (kind: string, name: string): string => `${kind}/${name}`;

/** The key of the workload a binding propagates (`spec.resource` kind/name), if it names one. */
function bindingWorkloadKey(rb: ResourceBinding): string | undefined {
  const resource: unknown = rb?.spec?.resource;
  if (!isJsonObject(resource)) return undefined;
  const { kind, name } = resource;
  return typeof kind === 'string' && kind !== '' && typeof name === 'string' && name !== ''
    ? workloadKey(kind, name)
    : undefined;
}

/** A cluster's input, validated and masked to the hard keys. */
interface ClusterView {
  name: string;
  state: ClusterUsageState;
  lastSyncTime: string;
  message?: string;
  used: ResourceList;
  /** Workload key -> usage (several entries of one workload summed). */
  workloads: Map<string, ResourceList>;
}

function readWorkloads(
  raw: unknown,
  field: string,
  keys: readonly string[],
  errors: string[],
): Map<string, ResourceList> {
  const workloads = new Map<string, ResourceList>();
  if (raw === undefined || raw === null) return workloads;
  if (!Array.isArray(raw)) {
    errors.push(`${field}: must be a list`);
    return workloads;
  }
  raw.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isJsonObject(item) || typeof item['kind'] !== 'string' || item['kind'] === '') {
      errors.push(`${at}.kind: must be a non-empty string`);
      return;
    }
    if (typeof item['name'] !== 'string' || item['name'] === '') {
      errors.push(`${at}.name: must be a non-empty string`);
      return;
    }
    const key = workloadKey(item['kind'], item['name']);
    const used = readUsage(item['used'], `${at}.used`, keys, errors);
    const current = workloads.get(key);
    workloads.set(key, current === undefined ? used : addLists(current, used));
  });
  return workloads;
}

/**
 * Validates the clusters. A cluster without a name, or a second one of a name, is reported and ignored; an
 * unknown state is reported and read as Stale; an unreadable lastSyncTime is reported, the cluster read as
 * Stale (unless Unreachable) with the previous status' lastSyncTime for it (else the Unix epoch).
 */
function readClusters(
  raw: unknown,
  keys: readonly string[],
  previous: ReadonlyMap<string, ClusterUsage>,
  errors: string[],
): ClusterView[] {
  if (!Array.isArray(raw)) {
    if (raw !== undefined && raw !== null) errors.push('clusters: must be a list');
    return [];
  }
  const views = new Map<string, ClusterView>();
  raw.forEach((item: unknown, i) => {
    if (!isJsonObject(item) || typeof item['name'] !== 'string' || item['name'] === '') {
      errors.push(`clusters[${i}].name: must be a non-empty string; this cluster's usage is ignored`);
      return;
    }
    const name = item['name'];
    const field = `clusters[${name}]`;
    if (views.has(name)) {
      errors.push(`${field}: published more than once; only the first is counted`);
      return;
    }
    let state: ClusterUsageState;
    if ((CLUSTER_USAGE_STATES as readonly unknown[]).includes(item['state'])) {
      state = item['state'] as ClusterUsageState;
    } else {
      errors.push(
        `${field}.state: must be one of ${CLUSTER_USAGE_STATES.join(', ')}, got ${JSON.stringify(item['state'])}; read as Stale`,
      );
      state = 'Stale';
    }
    let lastSyncTime: string;
    if (isTime(item['lastSyncTime'])) {
      lastSyncTime = item['lastSyncTime'];
    } else {
      errors.push(
        `${field}.lastSyncTime: must be an RFC 3339 time, got ${JSON.stringify(item['lastSyncTime'])}`,
      );
      const before = previous.get(name)?.lastSyncTime;
      lastSyncTime = isTime(before) ? before : UNKNOWN_TIME;
      if (state === 'Ready') state = 'Stale';
    }
    const view: ClusterView = {
      name,
      state,
      lastSyncTime,
      used: readUsage(item['used'], `${field}.used`, keys, errors),
      workloads: readWorkloads(item['workloads'], `${field}.workloads`, keys, errors),
    };
    if (typeof item['message'] === 'string' && item['message'] !== '') view.message = item['message'];
    views.set(name, view);
  });
  return [...views.values()].sort((a, b) => compareNames(a.name, b.name));
}

function observedIn(rb: ResourceBinding, views: readonly ClusterView[]): ResourceList {
  const key = bindingWorkloadKey(rb);
  if (key === undefined) return {};
  let total: ResourceList = {};
  for (const view of views) {
    const used = view.workloads.get(key);
    if (used !== undefined) total = addLists(total, used);
  }
  return total;
}

/**
 * The usage of a binding's workload (the `spec.resource` kind/name) summed over the clusters, masked to
 * `hardKeys` (only keys some cluster reports). Unreadable quantities are appended to `errors` and left out.
 */
export function observedUsageOf(
  binding: ResourceBinding,
  clusters: readonly ObservedCluster[],
  hardKeys: Iterable<string>,
  errors: string[] = [],
): ResourceList {
  return observedIn(binding, readClusters(clusters, [...hardKeys], new Map(), errors));
}

/** Does the quota have a scope selector that restricts it (one or more expressions, or a malformed one)? */
function isScoped(quota: KarmadaQuota): boolean {
  const selector: unknown = quota?.spec?.scopeSelector;
  if (selector === undefined || selector === null) return false;
  if (!isJsonObject(selector)) return true;
  const expressions = selector['matchExpressions'];
  if (expressions === undefined || expressions === null) return false;
  return !Array.isArray(expressions) || expressions.length > 0;
}

const terminating = (rb: ResourceBinding): boolean =>
  rb.metadata?.deletionTimestamp !== undefined && rb.metadata.deletionTimestamp !== null;

/** Settles one reservation against its binding (see the file comment); undefined: drop it. */
function settle(
  entry: ReservationEntry,
  rb: ResourceBinding | undefined,
  context: {
    quota: KarmadaQuota;
    hardKeys: readonly string[];
    views: readonly ClusterView[];
    now: Date;
    errors: string[];
    deletedBindingUids?: ReadonlySet<string>;
  },
): ReservationEntry | undefined {
  const { quota, hardKeys, views, now, errors } = context;
  if (entry.binding.uid !== undefined && context.deletedBindingUids?.has(entry.binding.uid)) return undefined;
  const heldCharge = removeZeros(maskList(entry.charge, hardKeys));
  const uid = rb?.metadata?.uid;
  const otherObject =
    rb !== undefined && entry.binding.uid !== undefined && !!uid && uid !== entry.binding.uid;
  const live = entry.expirationTime !== undefined && !isExpired(entry, now);
  if (rb === undefined || (otherObject && live)) {
    if (!live) return undefined;
    return { ...entry, reserved: removeZeros(maskList(entry.reserved, hardKeys)), charge: heldCharge };
  }
  if (otherObject) {
    // The admitted object never persisted but one of that name did (a create retried after its
    // answer was lost meets AlreadyExists, yet the webhook admitted it first and took the name's
    // reservation): the persisted binding is what must be held, from now on under its own uid.
    return settle({ binding: { ...entry.binding, uid }, reserved: {}, charge: {} }, rb, context);
  }
  if (terminating(rb)) return undefined;

  const charged = bindingCharge(rb);
  for (const error of charged.errors) {
    errors.push(`ResourceBinding ${bindingKeyString(entry.binding)}: ${error}`);
  }
  const persisted = bindingMatchesScopes(quota, rb) ? removeZeros(maskList(charged.charge, hardKeys)) : {};
  const pending =
    entry.expirationTime !== undefined && !isExpired(entry, now) && belowSomewhere(persisted, heldCharge);
  const effective = pending ? maxLists(heldCharge, persisted) : persisted;
  const reserved = positivePart(subtractLists(effective, observedIn(rb, views)));
  if (!pending && Object.keys(reserved).length === 0) return undefined;
  const next: ReservationEntry = { binding: { ...entry.binding }, reserved, charge: effective };
  if (pending) next.expirationTime = entry.expirationTime;
  return next;
}

/** `now` as metav1.Time serializes it (RFC 3339, whole seconds). */
const metaTime = (now: Date): string =>
  new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** `message` cut to at most `max` characters, ending in `...` when cut (conditions, Events). */
export function clipMessage(message: string, max: number): string {
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}

/** Computes the quota's next status (see the file comment). Pure; never throws. */
export function computeQuotaStatus(input: QuotaStatusInput): QuotaStatusResult {
  const { quota, now } = input;
  const errors: string[] = [];
  const current: KarmadaQuotaStatus = isJsonObject(quota?.status) ? (quota.status as KarmadaQuotaStatus) : {};
  const namespace = quota?.metadata?.namespace ?? '';
  const generation = quota?.metadata?.generation;

  // Hard and the current reservations. status.used is recomputed here, so its problems do not matter.
  const parsed = parseQuotaState(quota);
  const specErrors = parsed.errors.filter((e) => e.field === 'spec' || e.field.startsWith('spec.'));
  const otherErrors = parsed.errors.filter(
    (e) => !specErrors.includes(e) && e.field !== 'status.used' && !e.field.startsWith('status.used['),
  );
  const hardMissing = quota?.spec?.hard === undefined || quota?.spec?.hard === null;
  if (hardMissing) errors.push('spec.hard: required: the limits of the quota');
  for (const e of [...specErrors, ...otherErrors]) errors.push(`${e.field}: ${e.message}`);
  const invalidSpec = hardMissing || specErrors.length > 0;
  const hard = parsed.state.hard;
  const hardKeys = Object.keys(hard).sort(compareNames);

  // Clusters and usage.
  const previousClusters = new Map<string, ClusterUsage>();
  for (const c of Array.isArray(current.clusters) ? current.clusters : []) {
    if (isJsonObject(c) && typeof c.name === 'string') previousClusters.set(c.name, c);
  }
  const views = readClusters(input.clusters, hardKeys, previousClusters, errors);

  const bindingsByName = new Map<string, ResourceBinding>();
  if (!Array.isArray(input.bindings)) {
    if (input.bindings !== undefined && input.bindings !== null) errors.push('bindings: must be a list');
  } else {
    input.bindings.forEach((rb, i) => {
      const name = rb?.metadata?.name;
      if (typeof name !== 'string' || name === '') {
        errors.push(`bindings[${i}].metadata.name: required; this ResourceBinding is ignored`);
        return;
      }
      const ns = rb.metadata?.namespace;
      if (ns !== undefined && ns !== '' && namespace !== '' && ns !== namespace) return;
      if (!bindingsByName.has(name)) bindingsByName.set(name, rb);
    });
  }

  const scoped = isScoped(quota);
  const inScope = new Set<string>();
  if (scoped) {
    for (const rb of bindingsByName.values()) {
      const key = bindingWorkloadKey(rb);
      if (key !== undefined && bindingMatchesScopes(quota, rb)) inScope.add(key);
    }
  }
  const clusterUsed = (view: ClusterView): ResourceList => {
    if (!scoped) return view.used;
    let total: ResourceList = {};
    for (const [key, used] of view.workloads) if (inScope.has(key)) total = addLists(total, used);
    return total;
  };
  let usedTotal: ResourceList = {};
  const clusters: ClusterUsage[] = views.map((view) => {
    const used = clusterUsed(view);
    usedTotal = addLists(usedTotal, used);
    return {
      name: view.name,
      used: formatList(withAllKeys(used, hardKeys)),
      lastSyncTime: view.lastSyncTime,
      state: view.state,
    };
  });
  const used = withAllKeys(usedTotal, hardKeys);

  // Reservations.
  const reservations: ReservationEntry[] = [];
  const seen = new Set<string>();
  for (const entry of parsed.state.reservations) {
    const key = bindingKeyString(entry.binding);
    if (seen.has(key)) {
      errors.push(
        `status.reservations: more than one reservation for ResourceBinding ${key}; only the first is kept`,
      );
      continue;
    }
    seen.add(key);
    const next = settle(entry, bindingsByName.get(entry.binding.name), {
      quota,
      hardKeys,
      views,
      now,
      errors,
      deletedBindingUids: input.deletedBindingUids,
    });
    if (next !== undefined) reservations.push(next);
  }
  const reserved = sumReserved(reservations);

  // Conditions.
  const previousConditions = Array.isArray(current.conditions) ? current.conditions.filter(isJsonObject) : [];
  const transitionTime = metaTime(now);
  const condition = (type: string, status: ConditionStatus, reason: string, message: string): Condition => {
    const before = previousConditions.find((c) => c.type === type);
    const result: Condition = {
      type,
      status,
      lastTransitionTime:
        before !== undefined && before.status === status && isTime(before.lastTransitionTime)
          ? before.lastTransitionTime
          : transitionTime,
      reason,
      message: clipMessage(message, MAX_CONDITION_MESSAGE),
    };
    if (typeof generation === 'number') result.observedGeneration = generation;
    return result;
  };

  const notReady = views.filter((v) => v.state !== 'Ready');
  const describeCluster = (v: ClusterView): string =>
    `${v.name} ${v.state} since ${v.lastSyncTime}${v.message === undefined ? '' : ` (${v.message})`}`;
  const clustersSynced =
    notReady.length === 0
      ? condition(
          KarmadaQuotaConditionType.ClustersSynced,
          'True',
          QuotaConditionReason.AllClustersReady,
          views.length === 0
            ? 'no member cluster has published usage for this namespace'
            : views.length === 1
              ? `member cluster ${views[0]?.name} is Ready`
              : `all ${views.length} member clusters are Ready`,
        )
      : condition(
          KarmadaQuotaConditionType.ClustersSynced,
          'False',
          QuotaConditionReason.ClustersNotReady,
          notReady.map(describeCluster).join('; '),
        );

  const over = hardKeys.filter((key) => get(used, key).add(get(reserved, key)).cmp(get(hard, key)) > 0);
  const overQuota =
    over.length > 0
      ? condition(
          KarmadaQuotaConditionType.OverQuota,
          'True',
          QuotaConditionReason.UsageExceedsHard,
          `used+reserved exceeds hard for ${over
            .map(
              (key) =>
                `${key} (used ${get(used, key).toCanonicalString()}, reserved ${get(reserved, key).toCanonicalString()}, ` +
                `hard ${get(hard, key).toCanonicalString()})`,
            )
            .join('; ')}`,
        )
      : condition(
          KarmadaQuotaConditionType.OverQuota,
          'False',
          QuotaConditionReason.WithinQuota,
          'used+reserved is within hard for every resource',
        );

  const ready =
    errors.length === 0
      ? condition(
          KarmadaQuotaConditionType.Ready,
          'True',
          QuotaConditionReason.Reconciled,
          'usage and reservations are reconciled',
        )
      : condition(
          KarmadaQuotaConditionType.Ready,
          'False',
          invalidSpec ? QuotaConditionReason.InvalidSpec : QuotaConditionReason.InvalidData,
          `${errors.length} problem(s): ${errors.join('; ')}`,
        );

  const ours = new Set<string>(Object.values(KarmadaQuotaConditionType));
  const conditions = [
    ready,
    clustersSynced,
    overQuota,
    ...previousConditions.filter((c) => !ours.has(c.type)),
  ];

  const status: KarmadaQuotaStatus = {
    hard: formatList(hard),
    used: formatList(used),
    reserved: formatList(reserved),
    reservations: toWireReservations(reservations),
    clusters,
    conditions,
  };
  if (typeof generation === 'number') status.observedGeneration = generation;

  // Events.
  const events: QuotaEvent[] = [];
  for (const view of views) {
    const before = previousClusters.get(view.name)?.state;
    if (view.state !== 'Ready' && (before === undefined || before === 'Ready')) {
      events.push({
        type: 'Warning',
        reason: QuotaEventReason.ClusterStale,
        message: `member cluster ${describeCluster(view)}: its last known usage still counts`,
      });
    } else if (view.state === 'Ready' && before !== undefined && before !== 'Ready') {
      events.push({
        type: 'Normal',
        reason: QuotaEventReason.ClusterRecovered,
        message: `member cluster ${view.name} is Ready again (was ${before})`,
      });
    }
  }
  const overBefore = previousConditions.find((c) => c.type === KarmadaQuotaConditionType.OverQuota);
  if (overQuota.status === 'True' && overBefore?.status !== 'True') {
    events.push({ type: 'Warning', reason: QuotaEventReason.OverQuota, message: overQuota.message });
  }

  return { status, changed: !statusEquals(current, status), events, errors };
}

// -- semantic comparison ---------------------------------------------------------------------------

/**
 * Two wire ResourceLists with the same keys and equal values; absent is `{}`; an unreadable value or a
 * non-object makes them differ.
 */
function sameList(a: unknown, b: unknown): boolean {
  const x = parseResourceList(a ?? {}, 'a');
  const y = parseResourceList(b ?? {}, 'b');
  return x.errors.length === 0 && y.errors.length === 0 && listsEqual(x.list, y.list);
}

function sameArray<T>(
  a: unknown,
  b: readonly T[] | undefined,
  same: (x: Record<string, unknown>, y: T) => boolean,
) {
  const left = Array.isArray(a) ? a : [];
  const right = b ?? [];
  if (a !== undefined && a !== null && !Array.isArray(a)) return false;
  return left.length === right.length && left.every((x, i) => isJsonObject(x) && same(x, right[i] as T));
}

function sameReservation(a: Record<string, unknown>, b: Reservation): boolean {
  const by = a['reservedBy'];
  return (
    isJsonObject(by) &&
    by['apiVersion'] === b.reservedBy.apiVersion &&
    by['kind'] === b.reservedBy.kind &&
    by['name'] === b.reservedBy.name &&
    (by['uid'] ?? undefined) === b.reservedBy.uid &&
    sameList(a['reserved'], b.reserved) &&
    sameList(a['charge'], b.charge) &&
    (a['expirationTime'] ?? undefined) === b.expirationTime
  );
}

function sameCluster(a: Record<string, unknown>, b: ClusterUsage): boolean {
  return (
    a['name'] === b.name &&
    a['state'] === b.state &&
    a['lastSyncTime'] === b.lastSyncTime &&
    sameList(a['used'], b.used)
  );
}

function sameCondition(a: Record<string, unknown>, b: Condition): boolean {
  return (
    a['type'] === b.type &&
    a['status'] === b.status &&
    a['reason'] === b.reason &&
    a['message'] === b.message &&
    a['lastTransitionTime'] === b.lastTransitionTime &&
    (a['observedGeneration'] ?? undefined) === b.observedGeneration
  );
}

/** Does the current (wire, possibly malformed) status equal the computed one semantically? */
function statusEquals(current: KarmadaQuotaStatus, next: KarmadaQuotaStatus): boolean {
  return (
    sameList(current.hard, next.hard) &&
    sameList(current.used, next.used) &&
    sameList(current.reserved, next.reserved) &&
    sameArray(current.reservations, next.reservations, sameReservation) &&
    sameArray(current.clusters, next.clusters, sameCluster) &&
    sameArray(current.conditions, next.conditions, sameCondition) &&
    (current.observedGeneration ?? undefined) === next.observedGeneration
  );
}
