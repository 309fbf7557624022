/**
 * THE Redis layout and BullMQ payload shared by the aggregator (writer) and the reconciler
 * (reader). Pure: key builders, JSON encoding, validating decoders and the reader's verdict; no
 * client. The keys, the hash tags that keep each script in one slot, the epochs, the writer's and
 * the reader's steps and the queue's deduplication are in docs/operating/redis.md#the-layout-for-developers
 * (every name is a DNS-1123 name, so it can hold neither ':' nor '{' / '}').
 */
import { Quantity } from '#quantity';
import { CLUSTER_USAGE_STATES, type ClusterUsageState, isJsonObject } from '#api';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function checkName(what: string, name: string): string {
  if (typeof name !== 'string' || name.length > 253 || !NAME.test(name)) {
    throw new RangeError(`${what} must be a DNS-1123 name, got ${JSON.stringify(name)}`);
  }
  return name;
}

/** Whether `name` can name a cluster (or namespace) in a key: a DNS-1123 name. */
export const isClusterName = (name: string): boolean => name.length <= 253 && NAME.test(name);

export const KEY_PREFIX = 'kq';
/** Set of every cluster the aggregator tracks (for operators; the reader does not need it). */
export const CLUSTERS_KEY = `${KEY_PREFIX}:clusters`;

/** `kq:usage:{<namespace>}:<cluster>`: one cluster's snapshot of one namespace. Throws on a bad name. */
export function usageKey(namespace: string, cluster: string): string {
  return `${KEY_PREFIX}:usage:{${checkName('namespace', namespace)}}:${checkName('cluster', cluster)}`;
}

/** `kq:usage-index:{<namespace>}`: set of the clusters that published for the namespace. */
export function usageIndexKey(namespace: string): string {
  return `${KEY_PREFIX}:usage-index:{${checkName('namespace', namespace)}}`;
}

/**
 * `kq:deleted-bindings:{<namespace>}`: uids of ResourceBindings the reconciler saw deleted, scored
 * by deletion time (ms) and kept DELETED_BINDING_RETENTION_MS. A reconcile releases their
 * reservations at once, where a missing binding alone could also be a create not persisted yet.
 */
export function deletedBindingsKey(namespace: string): string {
  return `${KEY_PREFIX}:deleted-bindings:{${checkName('namespace', namespace)}}`;
}

export const DELETED_BINDING_RETENTION_MS = 10 * 60_000;

/**
 * `kq:waiting:{<namespace>}`: hash of binding name -> JSON WaitingChange (libs/quota waiting.ts),
 * the namespace's changes a quota refused: written by the webhook, pruned by the reconciler.
 */
export function waitingKey(namespace: string): string {
  return `${KEY_PREFIX}:waiting:{${checkName('namespace', namespace)}}`;
}

/**
 * `kq:template-class:{<namespace>}`: hash of templateClassField -> JSON ClassMemo (libs/quota
 * template-class-memo.ts), the priority classes of the template versions the webhook and the
 * reconciler read, so that a binding naming an older version is judged with that version's class.
 * Written (compare-and-set of one field, PEXPIRE TEMPLATE_CLASS_TTL_MS) when a version new to it is
 * read; memos not written for TEMPLATE_CLASS_TTL_MS are dropped then (templateClassWrittenKey).
 */
export function templateClassKey(namespace: string): string {
  return `${KEY_PREFIX}:template-class:{${checkName('namespace', namespace)}}`;
}

/**
 * `kq:template-class-at:{<namespace>}`: sorted set of templateClassField -> when its memo was last
 * written (ms): a write also drops the memos of templates not written for TEMPLATE_CLASS_TTL_MS, so
 * the hash of a busy namespace does not keep the memos of templates long gone.
 */
export function templateClassWrittenKey(namespace: string): string {
  return `${KEY_PREFIX}:template-class-at:{${checkName('namespace', namespace)}}`;
}

/** A template's field in templateClassKey: `<API group>/<kind>/<name>` (group '' for the core API). */
export function templateClassField(template: { apiVersion: string; kind: string; name: string }): string {
  const group = template.apiVersion.includes('/') ? template.apiVersion.split('/')[0] : '';
  return `${group}/${template.kind}/${template.name}`;
}

/**
 * How long a template's memo outlives its last write: a binding names an older template version
 * only until Karmada's detector updates it, seconds after the template changed (longer while Karmada
 * is down).
 */
export const TEMPLATE_CLASS_TTL_MS = 24 * 60 * 60_000;

/**
 * `kq:waiting-admitted:{<namespace>}:<binding>`: JSON AdmittedMark (libs/quota waiting.ts), the
 * binding's latest admitted spec change, expiring after ADMITTED_MARK_MS: beside the namespace's
 * waiting records, so one script reads and writes both.
 */
export function waitingAdmittedKey(namespace: string, binding: string): string {
  return `${KEY_PREFIX}:waiting-admitted:{${checkName('namespace', namespace)}}:${checkName('binding', binding)}`;
}

/** `kq:cluster:{<cluster>}`: the cluster's state key (JSON ClusterHealth, with its epoch). */
export function clusterStateKey(cluster: string): string {
  return `${KEY_PREFIX}:cluster:{${checkName('cluster', cluster)}}`;
}

/** `kq:cluster-namespaces:{<cluster>}`: set of the namespaces the cluster published in its epoch. */
export function clusterNamespacesKey(cluster: string): string {
  return `${KEY_PREFIX}:cluster-namespaces:{${checkName('cluster', cluster)}}`;
}

/** `kq:cluster-republish:{<cluster>}`: an epoch a reader found a listed snapshot missing from. */
export function clusterRepublishKey(cluster: string): string {
  return `${KEY_PREFIX}:cluster-republish:{${checkName('cluster', cluster)}}`;
}

/** `kq:cluster-removed:{<cluster>}`: present once the cluster was withdrawn from the federation. */
export function clusterRemovedKey(cluster: string): string {
  return `${KEY_PREFIX}:cluster-removed:{${checkName('cluster', cluster)}}`;
}

/** What the reader found of one cluster: its slot first, then its snapshot of the namespace. */
export interface ClusterRead {
  /** The state key (GET: null when absent). */
  state: unknown;
  /** Whether the namespace is in the cluster's namespaces (SISMEMBER). */
  listed: boolean;
  /** Whether the removed marker exists. */
  removed: boolean;
  /** The snapshot of the namespace (GET, read after the three above: null when absent). */
  snapshot: unknown;
}

/**
 * What a cluster's publication says of one namespace (the rules are at the top of this file):
 * - `usage`: count `snapshot` (its health when the state key is readable);
 * - `none`: the cluster has nothing here (never published here, a leftover, withdrawn);
 * - `unknown`: the quotas' statuses count the cluster (`counted`) but Redis lost its snapshot and
 *   it is not published again yet: never to be read as zero.
 * `republish`: the epoch to ask the writer to republish (SET clusterRepublishKey to it), when the
 * namespace's slot lost a snapshot the cluster's slot lists. Malformed entries are in `errors`.
 */
export function clusterUsageVerdict(
  namespace: string,
  cluster: string,
  read: ClusterRead,
  counted: boolean,
): {
  verdict: 'usage' | 'none' | 'unknown';
  snapshot?: ClusterNamespaceSnapshot;
  health?: ClusterHealth;
  republish?: number;
  errors: string[];
} {
  const errors: string[] = [];
  if (read.state === null || read.state === undefined) {
    // Withdrawn on purpose, or Redis lost the cluster's slot (its writer republishes on noticing).
    return { verdict: counted && !read.removed ? 'unknown' : 'none', errors };
  }
  const health = decodeHealth(read.state, { cluster });
  if (!health.ok) errors.push(`health of ${cluster}: ${health.error}`);
  if (read.snapshot !== null && read.snapshot !== undefined) {
    const snapshot = decodeSnapshot(read.snapshot, { cluster, namespace });
    if (!snapshot.ok)
      return { verdict: 'none', errors: [...errors, `usage of ${cluster}: ${snapshot.error}`] };
    if (!health.ok) return { verdict: 'usage', snapshot: snapshot.value, errors };
    if (snapshot.value.epoch >= health.value.epoch)
      return { verdict: 'usage', snapshot: snapshot.value, health: health.value, errors };
    // A leftover of an earlier epoch: the cluster's last full publish did not have the namespace.
  }
  if (health.ok && read.listed) {
    return { verdict: counted ? 'unknown' : 'none', republish: health.value.epoch, errors };
  }
  return { verdict: 'none', errors };
}

/** The inverse of usageKey (e.g. for keys found by SCAN); undefined for any other key. */
export function parseUsageKey(key: string): { namespace: string; cluster: string } | undefined {
  const match = /^kq:usage:\{([^{}:]+)\}:([^{}:]+)$/.exec(key);
  if (match === null) return undefined;
  const [, namespace, cluster] = match as unknown as [string, string, string];
  return NAME.test(namespace) && NAME.test(cluster) ? { namespace, cluster } : undefined;
}

export interface WorkloadSnapshot {
  kind: string;
  name: string;
  /** Its pods being deleted (counted in the namespace's `used`, never as its binding's). */
  terminating?: true;
  used: Record<string, string>;
}

/** One member cluster's usage of one namespace, as published. */
export interface ClusterNamespaceSnapshot {
  cluster: string;
  namespace: string;
  /** Canonical quantities, keys sorted (what UsageLedger.snapshot gives). */
  used: Record<string, string>;
  workloads: WorkloadSnapshot[];
  /** RFC 3339: when the aggregator took the snapshot. */
  observedAt: string;
  /** Increases with every publish of this (cluster, namespace); see nextGeneration. */
  generation: number;
  /** The cluster's publication epoch it was written in (see the top of this file). */
  epoch: number;
}

export interface ClusterHealth {
  cluster: string;
  state: ClusterUsageState;
  /** RFC 3339: last time the cluster's watches were known to be in sync. */
  lastSyncTime: string;
  message?: string;
  /** The cluster's publication epoch (see the top of this file). */
  epoch: number;
}

/** The outcome of a decoder: never an exception for bad input. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * The generation of the next publish: one more than the previous, and at least `nowMs`, so an
 * aggregator that restarted (and lost its counters) still publishes higher generations than before,
 * provided its clock does not go backwards by more than the number of publishes since.
 */
export function nextGeneration(previous: number | undefined, nowMs: number): number {
  return Math.max((previous ?? 0) + 1, Math.floor(nowMs));
}

export function encodeSnapshot(snapshot: ClusterNamespaceSnapshot): string {
  return JSON.stringify({
    cluster: snapshot.cluster,
    namespace: snapshot.namespace,
    used: snapshot.used,
    workloads: snapshot.workloads.map((w) => ({
      kind: w.kind,
      name: w.name,
      ...(w.terminating ? { terminating: true } : {}),
      used: w.used,
    })),
    observedAt: snapshot.observedAt,
    generation: snapshot.generation,
    epoch: snapshot.epoch,
  });
}

/**
 * Decodes and validates a stored snapshot (a string or a Buffer as Redis returns it). With
 * `expected`, also checks that the cluster and namespace are the ones the key names.
 */
export function decodeSnapshot(
  raw: unknown,
  expected?: { cluster?: string; namespace?: string },
): Decoded<ClusterNamespaceSnapshot> {
  return decode('usage snapshot', raw, (obj, errors) => {
    const cluster = readString(obj, 'cluster', errors);
    const namespace = readString(obj, 'namespace', errors);
    if (expected?.cluster !== undefined && cluster !== undefined && cluster !== expected.cluster) {
      errors.push(`cluster: expected ${JSON.stringify(expected.cluster)}, got ${JSON.stringify(cluster)}`);
    }
    if (expected?.namespace !== undefined && namespace !== undefined && namespace !== expected.namespace) {
      errors.push(
        `namespace: expected ${JSON.stringify(expected.namespace)}, got ${JSON.stringify(namespace)}`,
      );
    }
    const used = readUsed(obj.used, 'used', errors);
    const workloads: WorkloadSnapshot[] = [];
    if (!Array.isArray(obj.workloads)) {
      errors.push(`workloads: must be a list, got ${describe(obj.workloads)}`);
    } else {
      obj.workloads.forEach((item: unknown, i) => {
        const field = `workloads[${i}]`;
        if (!isJsonObject(item)) {
          errors.push(`${field}: must be an object, got ${describe(item)}`);
          return;
        }
        const kind = readString(item, 'kind', errors, field);
        const name = readString(item, 'name', errors, field);
        const wused = readUsed(item.used, `${field}.used`, errors);
        if (item.terminating !== undefined && item.terminating !== true)
          errors.push(`${field}.terminating: must be true when present, got ${describe(item.terminating)}`);
        if (kind !== undefined && name !== undefined)
          workloads.push({
            kind,
            name,
            ...(item.terminating === true ? { terminating: true } : {}),
            used: wused,
          });
      });
    }
    const observedAt = readTime(obj, 'observedAt', errors);
    const generation = readCount(obj, 'generation', errors);
    const epoch = readCount(obj, 'epoch', errors);
    if (errors.length > 0) return undefined;
    return {
      cluster: cluster as string,
      namespace: namespace as string,
      used,
      workloads,
      observedAt: observedAt as string,
      generation: generation as number,
      epoch: epoch as number,
    };
  });
}

export function encodeHealth(health: ClusterHealth): string {
  return JSON.stringify({
    cluster: health.cluster,
    state: health.state,
    lastSyncTime: health.lastSyncTime,
    ...(health.message === undefined ? {} : { message: health.message }),
    epoch: health.epoch,
  });
}

export function decodeHealth(raw: unknown, expected?: { cluster?: string }): Decoded<ClusterHealth> {
  return decode('cluster health', raw, (obj, errors) => {
    const cluster = readString(obj, 'cluster', errors);
    if (expected?.cluster !== undefined && cluster !== undefined && cluster !== expected.cluster) {
      errors.push(`cluster: expected ${JSON.stringify(expected.cluster)}, got ${JSON.stringify(cluster)}`);
    }
    const state = obj.state;
    if (!(CLUSTER_USAGE_STATES as readonly unknown[]).includes(state)) {
      errors.push(`state: must be one of ${CLUSTER_USAGE_STATES.join(', ')}, got ${describe(state)}`);
    }
    const lastSyncTime = readTime(obj, 'lastSyncTime', errors);
    const message = obj.message;
    if (message !== undefined && typeof message !== 'string') {
      errors.push(`message: must be a string, got ${describe(message)}`);
    }
    const epoch = readCount(obj, 'epoch', errors);
    if (errors.length > 0) return undefined;
    const health: ClusterHealth = {
      cluster: cluster as string,
      state: state as ClusterUsageState,
      lastSyncTime: lastSyncTime as string,
      epoch: epoch as number,
    };
    if (typeof message === 'string') health.message = message;
    return health;
  });
}

// -- the reconcile queue ---------------------------------------------------------------------------

export const RECONCILE_QUEUE = 'kq-reconcile';
/**
 * The BullMQ `prefix` of every Queue and Worker of RECONCILE_QUEUE: a hash tag, so that the queue's
 * keys share one Redis Cluster slot (which BullMQ's scripts need).
 */
export const RECONCILE_QUEUE_PREFIX = `${KEY_PREFIX}:{reconcile}`;
/**
 * Set (NX) by the reconciler next to the queue (same hash tag, so on the same Redis node): finding
 * it gone means Redis lost the queue's data, queued jobs included, so every quota is reconciled
 * again rather than at the next periodic resync.
 */
export const RECONCILE_QUEUE_MARKER_KEY = `${RECONCILE_QUEUE_PREFIX}:queue-marker`;
export const RECONCILE_JOB_NAME = 'reconcile';

/** What a reconcile job counts: a namespace's KarmadaQuotas, or one ClusterKarmadaQuota. */
export type ReconcileTarget = { namespace: string } | { clusterQuota: string };

/**
 * The data of a reconcile job: a namespace's KarmadaQuotas, or one ClusterKarmadaQuota over the
 * namespaces it selects; and why (for logs). `restamp`: a count on request, the status written even
 * if only its stamp (`status.observedBindingsVersion`) would move, so that a quota whose bindings do
 * not change still shows a count made after the request (docs/concepts/accounting.md, "The count's
 * version").
 */
export type ReconcileJob = ReconcileTarget & { reason: string; restamp?: true };

/**
 * The deduplication id of a namespace's reconcile job: `reconcile-<namespace>`, one per namespace
 * (colon-free, so it would be a valid custom BullMQ jobId too). Throws on a bad name.
 */
export function reconcileJobId(namespace: string): string {
  return `reconcile-${targetId({ namespace })}`;
}

/**
 * The BullMQ job options to add a reconcile job with (see the top of this file for why
 * keepLastIfActive): `queue.add(RECONCILE_JOB_NAME, job, reconcileJobOptions(job.namespace))`.
 * Failed attempts retry with exponential back-off; finished jobs are removed (completed at once,
 * the last 1000 failed kept for inspection).
 */
export function reconcileJobOptions(namespace: string): ReconcileJobOptions {
  return jobOptions(reconcileJobId(namespace));
}

/**
 * The options of a ClusterKarmadaQuota's reconcile job: deduplicated by `reconcile-cluster-quota.<name>`
 * (a namespace's name has no dot, so it is never a namespace's id). Throws on a bad name.
 */
export function clusterQuotaJobOptions(name: string): ReconcileJobOptions {
  return jobOptions(`reconcile-${targetId({ clusterQuota: name })}`);
}

/**
 * The options of a count on request (a ReconcileJob with `restamp`): deduplicated by
 * `restamp-<namespace>` or `restamp-cluster-quota.<name>`, never a plain job's id. BullMQ drops an
 * add whose deduplication id is already waiting, so under the plain id a restamp would be swallowed
 * by a plain reconcile waiting in the queue, which leaves a quiet quota's status unwritten. Under
 * its own id a restamp waiting takes in later requests (its list is made after all of them), and
 * one added while a restamp runs becomes one follow-up. A restamp may run beside a plain reconcile
 * of the same target: both write by compare-and-swap. Throws on a bad name.
 */
export function restampJobOptions(target: ReconcileTarget): ReconcileJobOptions {
  return jobOptions(`restamp-${targetId(target)}`);
}

/** A job id's target part: the namespace, or `cluster-quota.<name>`. Throws on a bad name. */
function targetId(target: ReconcileTarget): string {
  return 'clusterQuota' in target
    ? `cluster-quota.${checkName('ClusterKarmadaQuota name', target.clusterQuota)}`
    : checkName('namespace', target.namespace);
}

/** Where a count on request is added: a BullMQ Queue of RECONCILE_QUEUE (structural, no client here). */
export interface ReconcileQueue {
  add(name: typeof RECONCILE_JOB_NAME, data: ReconcileJob, options: ReconcileJobOptions): Promise<unknown>;
}

/**
 * Asks the reconciler for a count of `target` made after this call, written even if only its stamp
 * moves (restampJobOptions). Throws on a bad name, or when the queue cannot be written.
 */
export async function requestCount(
  queue: ReconcileQueue,
  target: ReconcileTarget,
  reason: string,
): Promise<void> {
  await queue.add(RECONCILE_JOB_NAME, { ...target, reason, restamp: true }, restampJobOptions(target));
}

export interface ReconcileJobOptions {
  deduplication: { id: string; keepLastIfActive: true };
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: true;
  removeOnFail: number;
}

function jobOptions(id: string): ReconcileJobOptions {
  return {
    deduplication: { id, keepLastIfActive: true },
    // A failing reconcile (Karmada API server down) is retried with back-off; past these attempts
    // the reconciler's worker keeps delaying it rather than letting it fail (reconcile.worker.ts).
    attempts: 8,
    backoff: { type: 'exponential', delay: 200 },
    removeOnComplete: true,
    removeOnFail: 1000,
  };
}

/** Validates a reconcile job's data as the worker receives it (already parsed by BullMQ). */
export function decodeReconcileJob(data: unknown): Decoded<ReconcileJob> {
  if (!isJsonObject(data))
    return { ok: false, error: `invalid reconcile job: must be an object, got ${describe(data)}` };
  const errors: string[] = [];
  const field = 'clusterQuota' in data ? 'clusterQuota' : 'namespace';
  const name = readString(data, field, errors);
  if (name !== undefined && !NAME.test(name)) {
    errors.push(`${field}: must be a DNS-1123 name, got ${JSON.stringify(name)}`);
  }
  const reason = data.reason;
  if (typeof reason !== 'string') errors.push(`reason: must be a string, got ${describe(reason)}`);
  if (data.restamp !== undefined && data.restamp !== true)
    errors.push(`restamp: must be true when present (a count on request), got ${describe(data.restamp)}`);
  if (errors.length > 0) return { ok: false, error: `invalid reconcile job: ${errors.join('; ')}` };
  const target = field === 'clusterQuota' ? { clusterQuota: name as string } : { namespace: name as string };
  return {
    ok: true,
    value: { ...target, reason: reason as string, ...(data.restamp === true ? { restamp: true } : {}) },
  };
}

// -- validation helpers ----------------------------------------------------------------------------

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return `${typeof value} ${text.length > 80 ? `${text.slice(0, 80)}...` : text}`;
}

function decode<T>(
  what: string,
  raw: unknown,
  read: (obj: Record<string, unknown>, errors: string[]) => T | undefined,
): Decoded<T> {
  let text: string;
  if (typeof raw === 'string') text = raw;
  else if (raw instanceof Uint8Array) text = new TextDecoder().decode(raw);
  else return { ok: false, error: `invalid ${what}: expected a JSON string, got ${describe(raw)}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `invalid ${what}: not JSON (${(err as Error).message})` };
  }
  if (!isJsonObject(parsed))
    return { ok: false, error: `invalid ${what}: must be a JSON object, got ${describe(parsed)}` };
  const errors: string[] = [];
  const value = read(parsed, errors);
  if (value === undefined || errors.length > 0)
    return { ok: false, error: `invalid ${what}: ${errors.join('; ')}` };
  return { ok: true, value };
}

function readString(
  obj: Record<string, unknown>,
  key: string,
  errors: string[],
  parent?: string,
): string | undefined {
  const value = obj[key];
  if (typeof value === 'string' && value.length > 0) return value;
  errors.push(
    `${parent === undefined ? key : `${parent}.${key}`}: must be a non-empty string, got ${describe(value)}`,
  );
  return undefined;
}

/** A whole number of 0 or more (a generation, an epoch). */
function readCount(obj: Record<string, unknown>, key: string, errors: string[]): number | undefined {
  const value = obj[key];
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  errors.push(`${key}: must be a whole number of 0 or more, got ${describe(value)}`);
  return undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function readTime(obj: Record<string, unknown>, key: string, errors: string[]): string | undefined {
  const value = obj[key];
  if (typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value))) return value;
  errors.push(`${key}: must be an RFC 3339 time, got ${describe(value)}`);
  return undefined;
}

/** A `used` map: resource name -> quantity string, every value a valid quantity. */
function readUsed(value: unknown, field: string, errors: string[]): Record<string, string> {
  if (!isJsonObject(value)) {
    errors.push(`${field}: must be an object mapping resource names to quantities, got ${describe(value)}`);
    return {};
  }
  const entries: [string, string][] = [];
  for (const name of Object.keys(value)) {
    const quantity = value[name];
    if (name.length === 0) {
      errors.push(`${field}: resource names must not be empty`);
    } else if (typeof quantity !== 'string') {
      errors.push(`${field}[${name}]: must be a quantity string, got ${describe(quantity)}`);
    } else {
      try {
        Quantity.parse(quantity);
        entries.push([name, quantity]);
      } catch (err) {
        errors.push(`${field}[${name}]: ${(err as Error).message}`);
      }
    }
  }
  return Object.fromEntries(entries);
}
