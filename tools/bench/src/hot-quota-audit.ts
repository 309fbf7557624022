import type { KarmadaQuota } from '#api';
import {
  addLists,
  describeFieldError,
  formatList,
  lessThanOrEqual,
  listsEqual,
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

/** The over-admission check of the hot-quota scenario, recounted from the quota as stored. */
export interface HotQuotaAudit {
  /** Keys where used + reserved (the recounted sum of reservations) exceeds hard. */
  overAdmittedKeys: string[];
  /** status.reserved differs from the sum of status.reservations[].reserved. */
  reservedSumMismatch: boolean;
  /** Bindings whose reservation is none of the charges the clients had admitted (lost or doubled). */
  mismatchedBindings: string[];
  /** Reservations of bindings no client drove. */
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
 * Checks the quota after a run: used + reserved <= hard on every key, status.reserved is the sum of
 * the reservations, and every binding's reservation holds exactly the charge (`perReplica` x
 * replicas, on the quota's hard keys) of a replica count its client saw admitted last, so no
 * admitted change was lost or counted twice.
 */
export function auditHotQuota(
  quota: KarmadaQuota,
  records: readonly BindingRecord[],
  perReplica: ResourceList,
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
    Object.fromEntries(Object.entries(list).filter(([key]) => hardKeys.includes(key)));
  const used = parse(quota.status?.used, 'status.used');
  const reservations = quota.status?.reservations ?? [];
  let recounted: ResourceList = {};
  const held = new Map<string, { reserved: ResourceList; charge: ResourceList }>();
  reservations.forEach((r, i) => {
    const reserved = parse(r.reserved, `status.reservations[${i}].reserved`);
    recounted = addLists(recounted, reserved);
    const name = r.reservedBy.name;
    if (held.has(name)) problems.push(`${name} holds two reservations`);
    held.set(name, { reserved, charge: parse(r.charge ?? r.reserved, `status.reservations[${i}].charge`) });
  });
  const total = addLists(used, recounted);
  const overAdmittedKeys = lessThanOrEqual(mask(total), hard).exceeded;
  const reservedSumMismatch = !listsEqual(
    removeZeros(parse(quota.status?.reserved, 'status.reserved')),
    removeZeros(recounted),
  );

  const mismatchedBindings: string[] = [];
  for (const record of records) {
    const reservation = held.get(record.name);
    held.delete(record.name);
    const matches = [...record.possibleReplicas].some((replicas) => {
      const expected = removeZeros(mask(scaled(perReplica, replicas)));
      if (reservation === undefined) return replicas === 0;
      // Nothing runs in the members, so a reservation still reserves its whole charge.
      return (
        listsEqual(removeZeros(reservation.charge), expected) &&
        listsEqual(removeZeros(reservation.reserved), expected)
      );
    });
    if (!matches) mismatchedBindings.push(record.name);
  }
  return {
    overAdmittedKeys,
    reservedSumMismatch,
    mismatchedBindings,
    unknownReservations: [...held.keys()],
    uncertainBindings: records.filter((r) => r.possibleReplicas.size > 1).length,
    hard: formatList(hard),
    usedPlusReserved: formatList(mask(total)),
    problems,
  };
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
