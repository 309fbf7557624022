import type { KarmadaQuota, ResourceBinding } from '#api';
import {
  addLists,
  excessOf,
  maskList,
  maxLists,
  parseResourceList,
  Quantity,
  removeZeros,
  type ResourceList,
} from '#quantity';
import {
  computeQuotaStatus,
  storedCharge,
  withClusterOverrides,
  withTemplateClass,
  type ObservedCluster,
} from '#quota';
import { percentOf } from './quota-view.js';
import type { JudgedBinding } from './usage-record.js';

/**
 * Usage by workload: each ResourceBinding the quota selects with its charge (replicas x requests, as
 * admitted) and what a change admitted but not stored yet claims beyond it (status.reservations lists
 * only such claims: a stored binding is its own charge record). How much of each charge runs in the
 * members is known only from the aggregators' per-workload usage (kubectl kq and the console read
 * it from the reconciler's usage record, usage-record.ts): given it, each row is split into observed
 * and reserved by the reconciler's own rule (computeQuotaStatus), and the quota's `used` that no
 * binding accounts for (pods no binding owns, or running beyond their charge) is one more line;
 * without it the split is not shown, and `usageNotShown` says why.
 */
export interface WorkloadRow {
  /** The ResourceBinding's name, or OTHER_USAGE. */
  binding: string;
  /** Canonical quantities on the quota's limited resources; zero entries left out. */
  charged: Record<string, string>;
  /** What a claim in flight holds beyond the stored charge (a change admitted, not stored yet). */
  inFlight: Record<string, string>;
  /** Only with per-workload usage: the part of `charged` running in the members, and the rest. */
  observed?: Record<string, string>;
  reserved?: Record<string, string>;
  /** Where Karmada scheduled it, `member1=2` (replicas) or `member1` for a workload without replicas. */
  clusters: string[];
}

export const OTHER_USAGE = '<not from a binding>';

export interface WorkloadUsage {
  rows: WorkloadRow[];
  /** Bindings whose charge could not be read in full, one message each. */
  problems: string[];
  /** With the split: when the members' usage it used was read. */
  usageAsOf?: string;
  /** Why there is no split, when the usage could not be had (no usage record yet, say). */
  usageNotShown?: string;
}

/**
 * The aggregators' per-workload usage of the quota's namespace (`observedAt`: when it was read, if
 * not just now), with the time to settle claims at, and how the reconciler judged the bindings
 * (`judged`); or why it cannot be had.
 */
export type WorkloadObservations =
  | { clusters: ObservedCluster[]; now: Date; observedAt?: string; judged?: readonly JudgedBinding[] }
  | { problem: string };

/** The bindings judged as the reconciler judged them (its template's class, its overrides). */
function asJudged(bindings: readonly ResourceBinding[], judged: readonly JudgedBinding[]): ResourceBinding[] {
  const byName = new Map(judged.map((j) => [j.name, j]));
  return bindings.map((rb) => {
    const judgment = byName.get(rb.metadata?.name ?? '');
    if (judgment === undefined || judgment.uid !== rb.metadata?.uid) return rb;
    const classed = rb.spec?.replicaRequirements?.priorityClassName
      ? rb
      : withTemplateClass(rb, judgment.priorityClassName);
    return withClusterOverrides(classed, judgment.overrides ?? []);
  });
}

/** Largest first: the highest share of a limit (charged, else the other usage), then by name. */
export function workloadUsage(
  quota: KarmadaQuota,
  wireBindings: readonly ResourceBinding[],
  usage?: WorkloadObservations,
): WorkloadUsage {
  const problems: string[] = [];
  const bindings = usage && 'judged' in usage ? asJudged(wireBindings, usage.judged ?? []) : wireBindings;
  const read = (raw: unknown) => parseResourceList(raw, 'list').list;
  const status = quota.status ?? {};
  const hard = read(status.hard ?? quota.spec?.hard);
  const hardKeys = Object.keys(hard);
  // Only claims (with an expirationTime) are in flight; an older status may list settled entries too.
  const claims = new Map(
    (status.reservations ?? []).filter((r) => r.expirationTime).map((r) => [r.reservedBy?.name, r]),
  );
  const byName = new Map(bindings.map((rb) => [rb.metadata?.name ?? '', rb]));
  const names = [...new Set([...byName.keys(), ...claims.keys()])].filter((name): name is string => !!name);
  const observed = usage && 'clusters' in usage ? usage : undefined;
  const split =
    observed &&
    new Map(
      computeQuotaStatus({
        quota,
        bindings,
        clusters: observed.clusters,
        now: observed.now,
      }).reservations.map((r) => [r.reservedBy.name, read(r.reserved)]),
    );

  const measured: { row: WorkloadRow; size: ResourceList }[] = [];
  let accounted: ResourceList = {};
  for (const name of names) {
    const rb = byName.get(name);
    const claim = claims.get(name);
    const stored = rb ? storedCharge(rb, { quota, hardKeys, errors: problems }) : {};
    const claimed = maskList(read(claim?.charge ?? claim?.reserved), hardKeys);
    const charged = maxLists(stored, claimed);
    if (Object.keys(removeZeros(charged)).length === 0) continue;
    const row: WorkloadRow = {
      binding: name,
      charged: canonical(charged),
      inFlight: canonical(excessOf(claimed, stored)),
      clusters: (rb?.spec?.clusters ?? []).map((c) =>
        c.replicas === undefined ? c.name : `${c.name}=${c.replicas}`,
      ),
    };
    if (split) {
      const reserved = maskList(split.get(name) ?? {}, hardKeys);
      const observed = excessOf(charged, reserved);
      accounted = addLists(accounted, observed);
      row.observed = canonical(observed);
      row.reserved = canonical(reserved);
    }
    measured.push({ size: charged, row });
  }
  const other = split ? excessOf(maskList(read(status.used), hardKeys), accounted) : {};
  if (Object.keys(other).length > 0) {
    measured.push({
      size: other,
      row: {
        binding: OTHER_USAGE,
        charged: {},
        inFlight: {},
        observed: canonical(other),
        reserved: {},
        clusters: [],
      },
    });
  }
  const share = (list: ResourceList) =>
    Math.max(0, ...hardKeys.map((key) => percentOf(list[key] ?? Quantity.zero(), hard[key]!)));
  measured.sort((a, b) => share(b.size) - share(a.size) || compare(a.row.binding, b.row.binding));
  return {
    rows: measured.map((m) => m.row),
    problems,
    ...(observed ? { usageAsOf: observed.observedAt ?? observed.now.toISOString() } : {}),
    ...(usage && 'problem' in usage ? { usageNotShown: usage.problem } : {}),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const canonical = (list: ResourceList): Record<string, string> =>
  Object.fromEntries(
    Object.keys(removeZeros(list))
      .sort()
      .map((key) => [key, list[key]!.toString()]),
  );
