import type { KarmadaQuota, Reservation } from '#api';
import {
  addLists,
  describeFieldError,
  formatList,
  lessThanOrEqual,
  listsEqual,
  maxLists,
  parseResourceList,
  removeZeros,
  type ResourceList,
} from '#quantity';

/**
 * What a load client knows about one binding it drives: the replica counts the webhook may have
 * admitted last. One value after an allow or a deny; after an error (5xx, no answer) both the old
 * and the attempted count, since the write may have landed before the answer was lost. 0 = holds
 * nothing (never admitted).
 */
export interface BindingRecord {
  name: string;
  possibleReplicas: ReadonlySet<number>;
}

/** The over-admission check of the hot-quota scenario, recounted from the quota and bindings as stored. */
export interface HotQuotaAudit {
  /** Keys where used + what the bindings hold exceeds hard. */
  overAdmittedKeys: string[];
  /** status.reserved differs from what the bindings hold (nothing runs in the members). */
  reservedSumMismatch: boolean;
  /** Bindings holding none of the charges their client may have had admitted (lost or doubled). */
  mismatchedBindings: string[];
  /** Bindings no client drove that hold something (stored, or a claim listed). */
  unknownReservations: string[];
  /** Bindings whose last admission outcome was unknown (an error): either charge is accepted. */
  uncertainBindings: number;
  hard: Record<string, string>;
  usedPlusReserved: Record<string, string>;
  problems: string[];
}

const scaled = (perReplica: ResourceList, replicas: number): ResourceList =>
  replicas === 0
    ? {}
    : Object.fromEntries(Object.entries(perReplica).map(([key, q]) => [key, q.mul(BigInt(replicas))]));

/**
 * Checks the quota after a run. What a binding holds is the larger of its charge as stored
 * (`storedReplicas` x `perReplica`, on the quota's hard keys: a stored binding is its own charge
 * record) and the charge of its claim still listed (a change admitted, not stored yet). Nothing runs
 * in the members, so status.reserved must be the sum of what they hold; used + that sum must be
 * within hard; and each binding must hold the charge of a replica count its client saw admitted last,
 * so no admitted change was lost or counted twice.
 */
export function auditHotQuota(
  quota: KarmadaQuota,
  records: readonly BindingRecord[],
  perReplica: ResourceList,
  storedReplicas: ReadonlyMap<string, number>,
): HotQuotaAudit {
  const problems: string[] = [];
  const parse = (raw: unknown, field: string): ResourceList => {
    const { list, errors } = parseResourceList(raw, field);
    problems.push(...errors.map(describeFieldError));
    return list;
  };
  const hard = parse(quota.spec?.hard, 'spec.hard');
  const hardKeys = Object.keys(hard);
  const mask = (list: ResourceList) =>
    removeZeros(Object.fromEntries(Object.entries(list).filter(([key]) => hardKeys.includes(key))));
  const used = parse(quota.status?.used, 'status.used');
  const held = new Map<string, ResourceList>();
  for (const [name, replicas] of storedReplicas) held.set(name, mask(scaled(perReplica, replicas)));
  (quota.status?.reservations ?? []).forEach((r, i) => {
    const claimed = mask(parse(r.charge ?? r.reserved, `status.reservations[${i}].charge`));
    const name = claimKey(r);
    held.set(name, maxLists(held.get(name) ?? {}, claimed));
  });
  let recounted: ResourceList = {};
  for (const list of held.values()) recounted = addLists(recounted, list);
  const total = addLists(used, recounted);
  const overAdmittedKeys = lessThanOrEqual(mask(total), hard).exceeded;
  const reservedSumMismatch = !listsEqual(
    removeZeros(parse(quota.status?.reserved, 'status.reserved')),
    removeZeros(recounted),
  );
  const mismatchedBindings = records
    .filter((record) => {
      const holds = held.get(record.name) ?? {};
      return ![...record.possibleReplicas].some((replicas) =>
        listsEqual(holds, mask(scaled(perReplica, replicas))),
      );
    })
    .map((record) => record.name);
  const driven = new Set(records.map((r) => r.name));
  return {
    overAdmittedKeys,
    reservedSumMismatch,
    mismatchedBindings,
    unknownReservations: [...held]
      .filter(([name, list]) => !driven.has(name) && Object.keys(list).length > 0)
      .map(([name]) => name),
    uncertainBindings: records.filter((r) => r.possibleReplicas.size > 1).length,
    hard: formatList(hard),
    usedPlusReserved: formatList(mask(total)),
    problems,
  };
}

/**
 * The binding a claim is for, as records and stored bindings name it: its name, or for a
 * ClusterKarmadaQuota's claim (which names its namespace) `namespace/name`.
 */
export function claimKey(claim: Reservation): string {
  const { namespace, name } = claim.reservedBy;
  return namespace ? `${namespace}/${name}` : name;
}

/** Whether the audit found nothing wrong. */
export function auditPassed(audit: HotQuotaAudit): boolean {
  return (
    audit.overAdmittedKeys.length === 0 &&
    !audit.reservedSumMismatch &&
    audit.mismatchedBindings.length === 0 &&
    audit.unknownReservations.length === 0 &&
    audit.problems.length === 0
  );
}

/**
 * One audit of several quotas (one per namespace): the findings of all, each over-admitted key and
 * problem named with its namespace when there are several; hard and used + reserved of the first
 * quota that over-admitted, else of the first.
 */
export function mergeAudits(audits: readonly { namespace: string; audit: HotQuotaAudit }[]): HotQuotaAudit {
  if (audits.length === 1) return audits[0]!.audit;
  const named = (namespace: string, items: readonly string[]) => items.map((item) => `${namespace}: ${item}`);
  const shown = audits.find((a) => a.audit.overAdmittedKeys.length > 0) ?? audits[0];
  return {
    overAdmittedKeys: audits.flatMap((a) => named(a.namespace, a.audit.overAdmittedKeys)),
    reservedSumMismatch: audits.some((a) => a.audit.reservedSumMismatch),
    mismatchedBindings: audits.flatMap((a) => a.audit.mismatchedBindings),
    unknownReservations: audits.flatMap((a) => a.audit.unknownReservations),
    uncertainBindings: audits.reduce((sum, a) => sum + a.audit.uncertainBindings, 0),
    hard: shown?.audit.hard ?? {},
    usedPlusReserved: shown?.audit.usedPlusReserved ?? {},
    problems: audits.flatMap((a) => named(a.namespace, a.audit.problems)),
  };
}
