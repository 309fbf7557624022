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
import { storedCharge } from '#quota';
import { percentOf } from './quota-view.js';

/**
 * Usage by workload from what the Karmada API server holds (no Redis, so kubectl kq and the console
 * read the same): each ResourceBinding the quota selects with its charge (replicas x requests, as
 * admitted), and status.reservations' part of it not yet seen in the member clusters. The part seen
 * is charged - reserved: the reconciler reserves max(0, charge - observed). What a workload runs
 * beyond its charge, and pods no binding owns, are only in the aggregators' per-workload snapshots
 * (Redis); the quota's `used` minus what the bindings account for is shown as one line for them.
 */
export interface WorkloadRow {
  /** The ResourceBinding's name, or OTHER_USAGE. */
  binding: string;
  /** Canonical quantities on the quota's limited resources; zero entries left out. */
  charged: Record<string, string>;
  observed: Record<string, string>;
  reserved: Record<string, string>;
  /** Where Karmada scheduled it, `member1=2` (replicas) or `member1` for a workload without replicas. */
  clusters: string[];
}

export const OTHER_USAGE = '<not from a binding>';

export interface WorkloadUsage {
  rows: WorkloadRow[];
  /** Bindings whose charge could not be read in full, one message each. */
  problems: string[];
}

/** Largest first: the highest share of a limit (charged, else the other usage), then by name. */
export function workloadUsage(quota: KarmadaQuota, bindings: readonly ResourceBinding[]): WorkloadUsage {
  const problems: string[] = [];
  const read = (raw: unknown) => parseResourceList(raw, 'list').list;
  const status = quota.status ?? {};
  const hard = read(status.hard ?? quota.spec?.hard);
  const hardKeys = Object.keys(hard);
  const reservations = new Map((status.reservations ?? []).map((r) => [r.reservedBy?.name, r]));
  const byName = new Map(bindings.map((rb) => [rb.metadata?.name ?? '', rb]));
  const names = [...new Set([...byName.keys(), ...reservations.keys()])].filter(
    (name): name is string => !!name,
  );

  const measured: { row: WorkloadRow; size: ResourceList }[] = [];
  let accounted: ResourceList = {};
  for (const name of names) {
    const rb = byName.get(name);
    const reservation = reservations.get(name);
    const stored = rb ? storedCharge(rb, { quota, hardKeys, errors: problems }) : {};
    // A pending claim may hold more than the stored binding (a change admitted, not stored yet).
    const charged = maxLists(stored, maskList(read(reservation?.charge ?? reservation?.reserved), hardKeys));
    if (Object.keys(removeZeros(charged)).length === 0) continue;
    const reserved = maskList(read(reservation?.reserved), hardKeys);
    const observed = excessOf(charged, reserved);
    accounted = addLists(accounted, observed);
    measured.push({
      size: charged,
      row: {
        binding: name,
        charged: canonical(charged),
        observed: canonical(observed),
        reserved: canonical(reserved),
        clusters: (rb?.spec?.clusters ?? []).map((c) =>
          c.replicas === undefined ? c.name : `${c.name}=${c.replicas}`,
        ),
      },
    });
  }
  const other = excessOf(maskList(read(status.used), hardKeys), accounted);
  if (Object.keys(other).length > 0) {
    measured.push({
      size: other,
      row: { binding: OTHER_USAGE, charged: {}, observed: canonical(other), reserved: {}, clusters: [] },
    });
  }
  const share = (list: ResourceList) =>
    Math.max(0, ...hardKeys.map((key) => percentOf(list[key] ?? Quantity.zero(), hard[key]!)));
  measured.sort((a, b) => share(b.size) - share(a.size) || compare(a.row.binding, b.row.binding));
  return { rows: measured.map((m) => m.row), problems };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const canonical = (list: ResourceList): Record<string, string> =>
  Object.fromEntries(
    Object.keys(removeZeros(list))
      .sort()
      .map((key) => [key, list[key]!.toString()]),
  );
