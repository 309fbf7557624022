/**
 * The admission owner's claims in memory (design C, docs/development/plans/admission-owner.md): one
 * record per binding name, holding every admitted attempt that relied on it and what it claimed on
 * each quota. A record is retired once every attempt can no longer land and the reconciler's count
 * (`status.observedBindingsVersion`) is at or past the latest of those outcomes. Pure: the owner's
 * ledger keeps the records, the binding watch and the sweep feed them.
 */
import { addLists, excessOf, maxLists, removeZeros, type ResourceList } from '#quantity';
import { isLaterVersion } from './state.js';

/** One admitted change of a binding: a CREATE (no `oldVersion`) or an UPDATE of the stored object. */
export interface Attempt {
  /** The object's uid as reviewed. */
  uid: string;
  /** For an UPDATE: the resourceVersion of the stored object it was decided against. */
  oldVersion?: string;
  /** When it was admitted, on the owner's monotonic clock (ms). */
  admittedAt: number;
  /** A resourceVersion by which it has landed or never will; absent while it may still land. */
  decidedAt?: string;
}

/** What a binding's record holds on one quota: the largest charge claimed, and the increases admitted. */
export interface QuotaClaim {
  charge: ResourceList;
  increase: ResourceList;
}

export interface ClaimRecord {
  attempts: readonly Attempt[];
  /** By quota key (the quota's uid: a quota made again under its name claims afresh). */
  quotas: ReadonlyMap<string, QuotaClaim>;
}

/** A binding of the record's name as the owner's watch or a read shows it. */
export interface BindingSeen {
  uid: string;
  /**
   * Its resourceVersion; for a deletion, one at or after it (a watch's DELETED event carries the
   * deletion's, a re-list's the list's).
   */
  resourceVersion: string;
  deleted: boolean;
}

const EMPTY: ClaimRecord = { attempts: [], quotas: new Map() };

/** What the record claims on the quota: an attempt's increase is its charge beyond this and the stored one. */
export function claimedFor(record: ClaimRecord | undefined, quota: string): ResourceList {
  return record?.quotas.get(quota)?.charge ?? {};
}

/**
 * The increase an attempt of `charge` admits on a quota: beyond both the stored object's charge (an
 * UPDATE's `oldObject`, counted on that quota) and what the record claims there.
 */
export function increaseOver(
  charge: ResourceList,
  stored: ResourceList,
  claimed: ResourceList,
): ResourceList {
  return removeZeros(excessOf(charge, maxLists(stored, claimed)));
}

/**
 * The record once `attempt` is admitted with `claims` (per quota, its charge and increase): every
 * admission relying on the record joins it, so the record is not retired while one may still land.
 * A re-review of the same change (its uid, and for an UPDATE its old version) is one attempt.
 */
export function joinAttempt(
  record: ClaimRecord | undefined,
  attempt: Omit<Attempt, 'decidedAt'>,
  claims: ReadonlyMap<string, QuotaClaim>,
): ClaimRecord {
  const current = record ?? EMPTY;
  const same = (a: Attempt) => a.uid === attempt.uid && a.oldVersion === attempt.oldVersion;
  const attempts = [...current.attempts.filter((a) => !same(a)), { ...attempt }];
  const quotas = new Map(current.quotas);
  for (const [quota, claim] of claims) {
    const held = quotas.get(quota);
    quotas.set(
      quota,
      held === undefined
        ? { charge: removeZeros(claim.charge), increase: removeZeros(claim.increase) }
        : {
            charge: removeZeros(maxLists(held.charge, claim.charge)),
            increase: removeZeros(addLists(held.increase, claim.increase)),
          },
    );
  }
  return { attempts, quotas };
}

/**
 * The version by which `seen` shows the attempt landed or never will, or undefined if it shows
 * neither: the table "Outcomes" of docs/development/plans/admission-owner.md.
 */
export function outcomeOf(attempt: Attempt, seen: BindingSeen): string | undefined {
  if (attempt.oldVersion === undefined) return seen.uid === attempt.uid ? seen.resourceVersion : undefined;
  if (seen.uid === attempt.uid && seen.deleted) return seen.resourceVersion;
  return isLaterVersion(seen.resourceVersion, attempt.oldVersion) ? seen.resourceVersion : undefined;
}

/** The record with every undecided attempt that `seen` decides, decided. */
export function decideBy(record: ClaimRecord, seen: BindingSeen): ClaimRecord {
  let changed = false;
  const attempts = record.attempts.map((attempt) => {
    if (attempt.decidedAt !== undefined) return attempt;
    const decidedAt = outcomeOf(attempt, seen);
    if (decidedAt === undefined) return attempt;
    changed = true;
    return { ...attempt, decidedAt };
  });
  return changed ? { ...record, attempts } : record;
}

/**
 * The record after a consistent read of its binding at `readVersion`, made at `now` (monotonic ms):
 * every attempt admitted at least `windowMs` before has landed or never will (the landing window and
 * the webhook's timeout), so it is decided at the read's version. Younger attempts are left as they are.
 */
export function decideByRead(
  record: ClaimRecord,
  readVersion: string,
  now: number,
  windowMs: number,
): ClaimRecord {
  let changed = false;
  const attempts = record.attempts.map((attempt) => {
    if (attempt.decidedAt !== undefined || now - attempt.admittedAt < windowMs) return attempt;
    changed = true;
    return { ...attempt, decidedAt: readVersion };
  });
  return changed ? { ...record, attempts } : record;
}

/** Undecided attempts admitted at least `windowMs` before `now`: the record needs a read of its binding. */
export function needsRead(record: ClaimRecord, now: number, windowMs: number): boolean {
  return record.attempts.some((a) => a.decidedAt === undefined && now - a.admittedAt >= windowMs);
}

/**
 * Whether the count stamped `counted` (a quota's `status.observedBindingsVersion`) holds every outcome
 * of the record: each attempt decided, none after the stamp. Then the count covers what it claimed.
 */
export function retirable(record: ClaimRecord, counted: string | undefined): boolean {
  return record.attempts.every(
    (a) =>
      a.decidedAt !== undefined &&
      counted !== undefined &&
      (a.decidedAt === counted || isLaterVersion(counted, a.decidedAt)),
  );
}

/**
 * The record without its claim on `quota` once that quota's count holds every outcome (retirable);
 * undefined when it claims nothing any more.
 */
export function retireOn(
  record: ClaimRecord,
  quota: string,
  counted: string | undefined,
): ClaimRecord | undefined {
  if (!record.quotas.has(quota) || !retirable(record, counted)) return record;
  const quotas = new Map(record.quotas);
  quotas.delete(quota);
  return quotas.size === 0 ? undefined : { ...record, quotas };
}

/** What the records admitted on the quota and its count does not hold yet: added to its reserved. */
export function pendingOn(records: Iterable<ClaimRecord>, quota: string): ResourceList {
  let pending: ResourceList = {};
  for (const record of records) {
    const claim = record.quotas.get(quota);
    if (claim !== undefined) pending = addLists(pending, claim.increase);
  }
  return pending;
}
