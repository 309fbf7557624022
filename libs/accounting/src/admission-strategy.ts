import type { ResourceBinding } from '#api';
import {
  bindingCharge,
  holdsNothing,
  increasesNothing,
  memberShares,
  oldChargeHeld,
  sameScopeInputs,
  type AdmissionItem,
  type Decision,
} from '#quota';
import type { ResourceList } from '#quantity';

/** A quota decision, or a refusal because the quota could not be checked (fail closed). */
export type AdmissionOutcome = Decision | { allowed: false; unavailable: true; message: string };

/** A ResourceBinding CREATE or UPDATE to admit. */
export interface BindingChange {
  /** Key, new charge and dry-run flag; the CAS round adds the per-quota parts. */
  item: Pick<AdmissionItem, 'binding' | 'charge' | 'dryRun'>;
  /** The new object (scopes, "must specify" rule). */
  object: ResourceBinding;
  /** For an UPDATE: the stored old object and its charge. */
  old?: { object: ResourceBinding; charge: ResourceList };
}

/**
 * The change a CREATE (no `oldObject`) or UPDATE asks for. The stored object's charge is what the
 * reconciler counts for it: whatever can be read of it, errors or not.
 */
export function bindingChange(
  key: { namespace: string; name: string },
  object: ResourceBinding,
  charge: ResourceList,
  dryRun: boolean,
  oldObject?: ResourceBinding,
): BindingChange {
  // An UPDATE's object may leave its uid out: the API server fills it in from the stored object.
  const uid = uidOf(object) ?? (oldObject && uidOf(oldObject));
  return {
    item: { binding: { ...key, uid }, charge, dryRun },
    object,
    ...(oldObject ? { old: { object: oldObject, charge: bindingCharge(oldObject).charge } } : {}),
  };
}

/** The object's uid; undefined unless a non-empty string (what the status can record). */
function uidOf(object: ResourceBinding): string | undefined {
  const uid: unknown = object.metadata?.uid;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

/**
 * Why an UPDATE's objects cannot come from the API server, or undefined: it sends the stored object,
 * which always has a uid, and refuses a change of it before admission. The accounting relies on it: an
 * update's claim is held only while the object of that uid is stored (docs/concepts/accounting.md).
 */
export function uidProblem(object: ResourceBinding, stored: ResourceBinding): string | undefined {
  const storedUid = uidOf(stored);
  if (storedUid === undefined)
    return 'oldObject.metadata.uid: Required value: an UPDATE names the stored object, which has a uid';
  const uid: unknown = object.metadata?.uid;
  if (uid !== undefined && uid !== '' && uid !== storedUid)
    return `metadata.uid: Invalid value: ${JSON.stringify(uid)}: field is immutable (stored: "${storedUid}")`;
  return undefined;
}

/**
 * A change that asks nothing of any quota: answered at once, never waiting for quotas. Its object
 * holds nothing (being deleted, or its workload finished: libs/quota holdsNothing), or it is an update
 * that raises no key and whose old charge counts as held on every quota that checks the new object
 * (libs/quota oldChargeHeld).
 */
export function asksNothing(change: BindingChange): boolean {
  if (holdsNothing(change.object)) return true;
  const old = change.old;
  if (old === undefined) return false;
  const holdAlike = oldChargeHeld(old.object) && sameScopeInputs(change.object, old.object);
  // Any member's share counts too: a quota may cap it (member-caps.ts). Member keys are keys of their
  // own, so the charge is weighed first: a scale-up is told without splitting it per member, the
  // costlier part.
  return (
    increasesNothing(change.item.charge, old.charge, holdAlike) &&
    increasesNothing(memberShares(change.object), memberShares(old.object), holdAlike)
  );
}

/** How the webhook decides and records admissions (ADMISSION_MODE): batched, or one CAS write each. */
export interface AdmissionStrategy {
  /**
   * `answerBy` (epoch ms, on the strategy's clock): the webhook has answered by then, failing closed;
   * no write is started for the request from then on.
   */
  admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome>;
}

/** One admission waiting for its outcome. */
export interface Pending {
  change: BindingChange;
  answerBy: number;
  resolve: (outcome: AdmissionOutcome) => void;
}

export interface BatchObserver {
  batch(size: number): void;
  conflict(): void;
  /** A request refused as it arrived, by the projection of the batch in flight (admission-batcher.ts). */
  refusedOnArrival(): void;
}

export const NO_OBSERVER: BatchObserver = { batch: () => {}, conflict: () => {}, refusedOnArrival: () => {} };

export function failClosed(reason: string): AdmissionOutcome {
  return {
    allowed: false,
    unavailable: true,
    message: `karmada-quota could not check the quota, so the request is not admitted (fail closed): ${reason}. Retry; if it persists, check the webhook's logs and the Karmada API server.`,
  };
}
