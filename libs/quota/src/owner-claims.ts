/**
 * The admission owner's claims in memory (design C, docs/development/plans/admission-owner.md): one
 * record per binding name, holding every attempt admitted for it and the increases they claimed on
 * each quota. A record is retired once every attempt can no longer land and the reconciler's count
 * (`status.observedBindingsVersion`) is at or past the latest of those outcomes. Pure: the owner's
 * ledger keeps the records, the binding watch and the sweep feed them.
 */
import { addLists, maxLists, removeZeros, type ResourceList } from '#quantity';
import { isAtOrAfterVersion, isLaterVersion } from './state.js';

/** One admitted change of a binding: a CREATE (no `oldVersion`) or an UPDATE of the stored object. */
export interface Attempt {
  /** The object's uid as reviewed. */
  uid: string;
  /** For an UPDATE: the resourceVersion of the stored object it was decided against. */
  oldVersion?: string;
  /** When it was admitted, on the owner's monotonic clock (ms). */
  admittedAt: number;
  /** By quota key: the charge it was admitted with, which a re-review of the same change relies on. */
  charges: ReadonlyMap<string, ResourceList>;
  /** A resourceVersion by which it has landed or never will; absent while it may still land. */
  decidedAt?: string;
}

/** What an admitted change claims on one quota: its charge as weighed, and the increase admitted. */
export interface QuotaClaim {
  charge: ResourceList;
  increase: ResourceList;
}

export interface ClaimRecord {
  attempts: readonly Attempt[];
  /** By quota key: the increases its attempts admitted there, not yet in that quota's count. */
  increases: ReadonlyMap<string, ResourceList>;
}

/** Which change an attempt is: a CREATE of a uid, or an UPDATE of it decided against a version. */
export type Change = Pick<Attempt, 'uid' | 'oldVersion'>;

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

const EMPTY: ClaimRecord = { attempts: [], increases: new Map() };

const sameChange = (a: Change, b: Change): boolean => a.uid === b.uid && a.oldVersion === b.oldVersion;

/**
 * What a re-review of `change` may rely on, on the quota: the charge it was admitted with while it may
 * still land; nothing for any other change. Another attempt's charge is not covered once a decrease
 * of the binding is counted (the count then holds less of it than the attempt was weighed against),
 * and a re-review of the same change can land only if that one did not.
 */
export function claimedFor(record: ClaimRecord | undefined, quota: string, change: Change): ResourceList {
  const attempt = record?.attempts.find((a) => sameChange(a, change) && a.decidedAt === undefined);
  return attempt?.charges.get(quota) ?? {};
}

/**
 * The record once `attempt` is admitted with `claims` (per quota, its charge and increase): the
 * record is not retired while any attempt may still land. A re-review of the same change (its uid,
 * and for an UPDATE its old version) is one attempt, admitted when last reviewed.
 */
export function joinAttempt(
  record: ClaimRecord | undefined,
  attempt: Change & Pick<Attempt, 'admittedAt'>,
  claims: ReadonlyMap<string, QuotaClaim>,
): ClaimRecord {
  const current = record ?? EMPTY;
  const earlier = current.attempts.find((a) => sameChange(a, attempt));
  const charges = new Map(earlier?.charges);
  const increases = new Map(current.increases);
  for (const [quota, claim] of claims) {
    charges.set(quota, removeZeros(maxLists(charges.get(quota) ?? {}, claim.charge)));
    increases.set(quota, removeZeros(addLists(increases.get(quota) ?? {}, claim.increase)));
  }
  const joined: Attempt = { uid: attempt.uid, admittedAt: attempt.admittedAt, charges };
  if (attempt.oldVersion !== undefined) joined.oldVersion = attempt.oldVersion;
  return { attempts: [...current.attempts.filter((a) => a !== earlier), joined], increases };
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
  return record.attempts.every((a) => a.decidedAt !== undefined && isAtOrAfterVersion(counted, a.decidedAt));
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
  if (!record.increases.has(quota) || !retirable(record, counted)) return record;
  const increases = new Map(record.increases);
  increases.delete(quota);
  return increases.size === 0 ? undefined : { ...record, increases };
}
