/**
 * THE Redis layout and BullMQ payload shared by the aggregator (writer) and the reconciler
 * (reader). Pure: key builders, JSON encoding and validating decoders; no client.
 *
 * Keys (every name is a DNS-1123 name, so it can hold neither ':' nor '{' / '}'):
 *
 * | key                                | type   | value                                                    |
 * | ---------------------------------- | ------ | -------------------------------------------------------- |
 * | `kq:usage:{<namespace>}:<cluster>` | string | JSON `ClusterNamespaceSnapshot` (encodeSnapshot)         |
 * | `kq:usage-index:{<namespace>}`     | set    | clusters that have a snapshot for `<namespace>`          |
 * | `kq:cluster:<cluster>`             | string | JSON `ClusterHealth` (encodeHealth)                      |
 * | `kq:clusters`                      | set    | every cluster the aggregator tracks                      |
 * | `kq:removed-clusters`              | set    | clusters withdrawn from the federation                   |
 * | `kq:reconcile-queue-marker`        | string | set by the reconciler; gone = Redis lost the queue too   |
 * | `kq:deleted-bindings:{<namespace>}`| zset   | uids of ResourceBindings seen deleted, scored by time    |
 *
 * The `{<namespace>}` hash tag puts a namespace's snapshots and index in one Redis Cluster slot, so
 * the reader can SMEMBERS the index and MGET the snapshots, and the writer can MULTI them.
 *
 * Writer (aggregator), for each dirty (cluster, namespace) of a UsageLedger:
 *   MULTI; SET usageKey(ns, c) encodeSnapshot(s); SADD usageIndexKey(ns) c; EXEC
 *   then enqueue a reconcile job for ns (below). A namespace that became empty is published as an
 *   empty snapshot (`used: {}`), not deleted: "this cluster has nothing here" stays distinct from
 *   "no data from this cluster". `generation` comes from `nextGeneration`, so it increases per
 *   (cluster, namespace) even across aggregator restarts; `observedAt` is when the ledger state was
 *   taken. Health: SET clusterStateKey(c) encodeHealth(h); SADD CLUSTERS_KEY c. An unreachable
 *   cluster keeps its last snapshots (never counted as zero) and its health says Stale/Unreachable.
 *   A cluster removed from the federation: DEL its usage keys, SREM it from each index, DEL its
 *   state key, SREM it from CLUSTERS_KEY, SADD it to REMOVED_CLUSTERS_KEY (SREM again when it is
 *   published anew), and enqueue a reconcile for each namespace it had.
 *   Redis losing its data (restarted empty, flushed): a writer that finds the state key of a
 *   cluster it published gone publishes every namespace of the cluster again, atomically with the
 *   state key, so "state key present" means "every snapshot of the cluster is there".
 *
 * Reader (reconciler), for a namespace: SMEMBERS usageIndexKey(ns), MGET the usage keys,
 * decodeSnapshot each (a malformed one is reported, not thrown) and GET each cluster's state.
 *
 * Queue: BullMQ queue RECONCILE_QUEUE, job name RECONCILE_JOB_NAME, data ReconcileJob, options
 * reconcileJobOptions(ns). Deduplication uses BullMQ's `deduplication: { id, keepLastIfActive }`
 * (DeduplicationOptions in bullmq 6.x), not a custom `jobId`:
 * - a custom jobId makes every later add a no-op for as long as the finished job is kept, and
 *   drops adds while the job runs: a change published during a reconcile would be lost;
 * - plain `deduplication: { id }` (simple mode) also ignores adds while the job is active;
 * - `keepLastIfActive: true` ignores adds while a job for the namespace is waiting (one job for a
 *   burst), and an add while it is active is kept and becomes ONE follow-up job when it finishes, so
 *   the last change is always reconciled, never two reconciles of one namespace run at once.
 *   (It cannot be combined with `delay`; its `ttl` is ignored.)
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

export const KEY_PREFIX = 'kq';
/** Set of every cluster the aggregator tracks. */
export const CLUSTERS_KEY = `${KEY_PREFIX}:clusters`;
/** Set of the clusters withdrawn from the federation (their usage is gone on purpose). */
export const REMOVED_CLUSTERS_KEY = `${KEY_PREFIX}:removed-clusters`;

/**
 * The clusters whose usage of a namespace is unknown, so that their missing snapshot must not be
 * read as "nothing there": a quota's status still counts usage of theirs (`counted`), yet Redis
 * holds neither their snapshot of the namespace (`published`) nor their state key (`withState`),
 * and they were not withdrawn (`removed`). That is Redis having lost its data before their
 * aggregator published it again (which it does atomically with the state key).
 */
export function unknownUsageClusters(
  counted: Iterable<string>,
  redis: { published: ReadonlySet<string>; withState: ReadonlySet<string>; removed: ReadonlySet<string> },
): string[] {
  return [...new Set(counted)]
    .filter((c) => !redis.published.has(c) && !redis.withState.has(c) && !redis.removed.has(c))
    .sort();
}

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

/** `kq:cluster:<cluster>`: the cluster's health (JSON ClusterHealth). */
export function clusterStateKey(cluster: string): string {
  return `${KEY_PREFIX}:cluster:${checkName('cluster', cluster)}`;
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
}

export interface ClusterHealth {
  cluster: string;
  state: ClusterUsageState;
  /** RFC 3339: last time the cluster's watches were known to be in sync. */
  lastSyncTime: string;
  message?: string;
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
    workloads: snapshot.workloads.map((w) => ({ kind: w.kind, name: w.name, used: w.used })),
    observedAt: snapshot.observedAt,
    generation: snapshot.generation,
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
        if (kind !== undefined && name !== undefined) workloads.push({ kind, name, used: wused });
      });
    }
    const observedAt = readTime(obj, 'observedAt', errors);
    const generation = obj.generation;
    if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
      errors.push(`generation: must be a whole number of 0 or more, got ${describe(generation)}`);
    }
    if (errors.length > 0) return undefined;
    return {
      cluster: cluster as string,
      namespace: namespace as string,
      used,
      workloads,
      observedAt: observedAt as string,
      generation: generation as number,
    };
  });
}

export function encodeHealth(health: ClusterHealth): string {
  return JSON.stringify({
    cluster: health.cluster,
    state: health.state,
    lastSyncTime: health.lastSyncTime,
    ...(health.message === undefined ? {} : { message: health.message }),
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
    if (errors.length > 0) return undefined;
    const health: ClusterHealth = {
      cluster: cluster as string,
      state: state as ClusterUsageState,
      lastSyncTime: lastSyncTime as string,
    };
    if (typeof message === 'string') health.message = message;
    return health;
  });
}

// -- the reconcile queue ---------------------------------------------------------------------------

export const RECONCILE_QUEUE = 'kq-reconcile';
/**
 * Set (NX) by the reconciler next to the queue: finding it gone means Redis lost its data, queued
 * jobs included, so every quota is reconciled again rather than at the next periodic resync.
 */
export const RECONCILE_QUEUE_MARKER_KEY = `${KEY_PREFIX}:reconcile-queue-marker`;
export const RECONCILE_JOB_NAME = 'reconcile';

/** The data of a reconcile job: which namespace, and why (for logs). */
export interface ReconcileJob {
  namespace: string;
  reason: string;
}

/**
 * The deduplication id of a namespace's reconcile job: `reconcile-<namespace>`, one per namespace
 * (colon-free, so it would be a valid custom BullMQ jobId too). Throws on a bad name.
 */
export function reconcileJobId(namespace: string): string {
  return `reconcile-${checkName('namespace', namespace)}`;
}

/**
 * The BullMQ job options to add a reconcile job with (see the top of this file for why
 * keepLastIfActive): `queue.add(RECONCILE_JOB_NAME, job, reconcileJobOptions(job.namespace))`.
 * Failed attempts retry with exponential back-off; finished jobs are removed (completed at once,
 * the last 1000 failed kept for inspection).
 */
export function reconcileJobOptions(namespace: string): {
  deduplication: { id: string; keepLastIfActive: true };
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: true;
  removeOnFail: number;
} {
  return {
    deduplication: { id: reconcileJobId(namespace), keepLastIfActive: true },
    // A failing reconcile (host API server down) is retried with back-off; past these attempts the
    // reconciler's worker keeps delaying it rather than letting it fail (reconcile.worker.ts).
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
  const namespace = readString(data, 'namespace', errors);
  if (namespace !== undefined && !NAME.test(namespace)) {
    errors.push(`namespace: must be a DNS-1123 name, got ${JSON.stringify(namespace)}`);
  }
  const reason = data.reason;
  if (typeof reason !== 'string') errors.push(`reason: must be a string, got ${describe(reason)}`);
  if (errors.length > 0) return { ok: false, error: `invalid reconcile job: ${errors.join('; ')}` };
  return { ok: true, value: { namespace: namespace as string, reason: reason as string } };
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
