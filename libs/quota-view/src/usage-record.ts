/**
 * The usage record: what the members run in one namespace, per workload, as the reconciler last read
 * it from the aggregators. The reconciler writes it into the namespace on the Karmada API server (a
 * WorkloadUsage named `usage`, at most once per USAGE_RECORD_SECONDS, only when a workload's usage
 * changed) so that kubectl kq and the console can split each workload's charge into observed and
 * reserved (workloadUsage) with nothing but the Karmada API server. Display only: admission and the
 * statuses never read it, so a record edited by hand changes what is shown, never what is admitted
 * (docs/concepts/observed-usage.md, "The usage record").
 */
import {
  CLUSTER_USAGE_STATES,
  isJsonObject,
  WORKLOAD_USAGE,
  type ClusterUsageState,
  type ResourceBinding,
} from '#api';
import {
  clusterOverridesOf,
  isTime,
  isWireList,
  type ClusterOverride,
  type ObservedCluster,
  type UsageList,
} from '#quota';
import type { WorkloadObservations } from './workload-usage.js';

/** The WorkloadUsage's name in each namespace with a KarmadaQuota. */
export const USAGE_RECORD_NAME = 'usage';

/** An object holds at most 1.5 MiB in etcd; a namespace whose record would not fit gets only its size. */
export const USAGE_RECORD_MAX_BYTES = 900_000;

/**
 * How the reconciler judged a binding beyond what the binding says: its template's priority class
 * (Karmada writes none with its default gates) and what OverridePolicies make its clusters run. The
 * views judge the binding so too, or a class-scoped quota would show none of the workloads it counts.
 */
export interface JudgedBinding {
  name: string;
  uid: string;
  priorityClassName?: string;
  overrides?: ClusterOverride[];
}

/** The usage of a namespace as read back from its record, and when the reconciler read it. */
export interface RecordedUsage {
  clusters: ObservedCluster[];
  observedAt: string;
  judged: JudgedBinding[];
}

/** What `judged` (the bindings as the reconciler charged them) adds to the bindings' own word. */
export function judgmentsOf(judged: readonly ResourceBinding[]): JudgedBinding[] {
  return judged.flatMap((rb) => {
    const name = rb.metadata?.name;
    const uid = rb.metadata?.uid;
    const priorityClassName = rb.spec?.replicaRequirements?.priorityClassName;
    const overrides = clusterOverridesOf(rb);
    if (!name || !uid || (!priorityClassName && overrides.length === 0)) return [];
    return [
      {
        name,
        uid,
        ...(priorityClassName ? { priorityClassName } : {}),
        ...(overrides.length > 0 ? { overrides: [...overrides] } : {}),
      },
    ];
  });
}

const wire = (list: UsageList): Record<string, string> =>
  Object.fromEntries(
    Object.entries(list)
      .map(([key, amount]) => [key, String(amount)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );

/** What the record says of the usage, without the times that move at every publish. */
function usageOf(clusters: readonly ObservedCluster[]) {
  return clusters.map((c) => ({
    name: c.name,
    state: c.state,
    used: wire(c.used),
    workloads: c.workloads.map((w) => ({
      kind: w.kind,
      name: w.name,
      ...(w.terminating ? { terminating: true } : {}),
      used: wire(w.used),
    })),
  }));
}

/** Equal for two readings that differ only in sync times: such a reading is not written again. */
export const usageFingerprint = (
  clusters: readonly ObservedCluster[],
  judged: readonly JudgedBinding[],
): string => JSON.stringify([usageOf(clusters), judged]);

/**
 * The WorkloadUsage for `clusters` read at `now` and the bindings as `judged` (its metadata but the
 * name and namespace is the writer's); only the workload count when it would not fit.
 */
export function usageRecord(
  namespace: string,
  clusters: readonly ObservedCluster[],
  judged: readonly JudgedBinding[],
  now: Date,
) {
  const head = {
    apiVersion: WORKLOAD_USAGE.apiVersion,
    kind: WORKLOAD_USAGE.kind,
    metadata: { name: USAGE_RECORD_NAME, namespace },
    observedAt: now.toISOString(),
  };
  const sync = new Map(clusters.map((c) => [c.name, c.lastSyncTime]));
  const record = {
    ...head,
    clusters: usageOf(clusters).map((c) => ({ ...c, lastSyncTime: sync.get(c.name)! })),
    ...(judged.length > 0 ? { bindings: judged } : {}),
  };
  if (Buffer.byteLength(JSON.stringify(record)) <= USAGE_RECORD_MAX_BYTES) return record;
  return { ...head, tooManyWorkloads: clusters.reduce((sum, c) => sum + c.workloads.length, 0) };
}

/**
 * The record read back (undefined: there is none), or why it cannot be used. Anything may be in it
 * (whoever may write WorkloadUsages can edit it): every field is checked, and quantities are parsed
 * by whoever reads them (computeQuotaStatus reports, never throws).
 */
export function readUsageRecord(record: unknown): { usage: RecordedUsage } | { problem: string } {
  const where = `${WORKLOAD_USAGE.kind} ${USAGE_RECORD_NAME}`;
  if (record === undefined)
    return {
      problem: `no ${where} in the namespace yet (the reconciler writes it once it has read the members' usage)`,
    };
  if (!isJsonObject(record) || !isTime(record.observedAt))
    return { problem: `${where} has no observedAt time` };
  if (typeof record.tooManyWorkloads === 'number')
    return {
      problem: `the namespace runs ${record.tooManyWorkloads} workloads in its member clusters, more than ${where} holds`,
    };
  if (!Array.isArray(record.clusters) || !record.clusters.every(isRecordedCluster))
    return { problem: `${where} has a malformed clusters list` };
  const judged = record.bindings ?? [];
  if (!Array.isArray(judged) || !judged.every(isJudgedBinding))
    return { problem: `${where} has a malformed bindings list` };
  return { usage: { clusters: record.clusters, observedAt: record.observedAt, judged } };
}

/** The record as workloadUsage takes it: the usage to split by, or why there is none. */
export function recordedObservations(record: unknown, now: Date): WorkloadObservations {
  const read = readUsageRecord(record);
  return 'usage' in read ? { ...read.usage, now } : read;
}

function isRecordedCluster(value: unknown): value is ObservedCluster {
  return (
    isJsonObject(value) &&
    typeof value.name === 'string' &&
    CLUSTER_USAGE_STATES.includes(value.state as ClusterUsageState) &&
    isTime(value.lastSyncTime) &&
    isWireList(value.used) &&
    Array.isArray(value.workloads) &&
    value.workloads.every(
      (w) =>
        isJsonObject(w) &&
        typeof w.kind === 'string' &&
        typeof w.name === 'string' &&
        (w.terminating === undefined || typeof w.terminating === 'boolean') &&
        isWireList(w.used),
    )
  );
}

function isJudgedBinding(value: unknown): value is JudgedBinding {
  const isOverride = (o: unknown) =>
    isJsonObject(o) &&
    typeof o.cluster === 'string' &&
    (o.replicas === undefined || Number.isInteger(o.replicas)) &&
    (o.resourceRequest === undefined || isWireList(o.resourceRequest)) &&
    Array.isArray(o.policies) &&
    o.policies.every((p) => typeof p === 'string');
  return (
    isJsonObject(value) &&
    typeof value.name === 'string' &&
    typeof value.uid === 'string' &&
    (value.priorityClassName === undefined || typeof value.priorityClassName === 'string') &&
    (value.overrides === undefined || (Array.isArray(value.overrides) && value.overrides.every(isOverride)))
  );
}
