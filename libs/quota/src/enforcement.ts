/**
 * A quota's `spec.enforcement` (docs/concepts/enforcement.md): Deny refuses what does not fit; Warn and
 * DryRun admit it, count it like any admitted change, and record it in `status.wouldBeDenied` (the
 * latest few, one per binding, for an hour), so an admin can see what a quota would refuse before
 * enforcing it. This file holds the list's rules and the texts; admission.ts decides.
 */
import { ENFORCEMENTS, isJsonObject, type Enforcement, type WouldBeDeniedStatus } from '#api';

/** Entries `status.wouldBeDenied` keeps at most (the CRD's maxItems). */
export const WOULD_BE_DENIED_LIMIT = 10;
/** How long an entry is shown after its admission. */
export const WOULD_BE_DENIED_TTL_MS = 3_600_000;
/** The CRD's maxLength of an entry's message. */
const MAX_MESSAGE = 1024;

/** Whether `value` is one of the enforcements (the CRD's enum). */
export const isEnforcement = (value: unknown): value is Enforcement =>
  (ENFORCEMENTS as readonly unknown[]).includes(value);

/** A quota's enforcement; anything but Warn or DryRun (absent, unknown) is Deny, the safe reading. */
export function parseEnforcement(value: unknown): Enforcement {
  return isEnforcement(value) ? value : 'Deny';
}

/**
 * `status.wouldBeDenied` as stored, leaving out what cannot be read: the list only informs, so a bad
 * entry must never stop admissions the way an unreadable reservation does.
 */
export function decodeWouldBeDenied(value: unknown): WouldBeDeniedStatus[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (entry): entry is WouldBeDeniedStatus =>
      isJsonObject(entry) &&
      typeof entry['binding'] === 'string' &&
      (entry['enforcement'] === 'Warn' || entry['enforcement'] === 'DryRun') &&
      typeof entry['message'] === 'string' &&
      typeof entry['at'] === 'string' &&
      !Number.isNaN(Date.parse(entry['at'])),
  );
}

/** The entries still shown at `now`, newest first, at most WOULD_BE_DENIED_LIMIT. */
export function liveWouldBeDenied(entries: readonly WouldBeDeniedStatus[], now: Date): WouldBeDeniedStatus[] {
  return entries
    .filter((entry) => now.getTime() - Date.parse(entry.at) < WOULD_BE_DENIED_TTL_MS)
    .slice(0, WOULD_BE_DENIED_LIMIT);
}

/** The list with `entry` first, replacing the binding's earlier entry. */
export function addWouldBeDenied(
  entries: readonly WouldBeDeniedStatus[],
  entry: WouldBeDeniedStatus,
  now: Date,
): WouldBeDeniedStatus[] {
  const clipped =
    entry.message.length > MAX_MESSAGE
      ? { ...entry, message: `${entry.message.slice(0, MAX_MESSAGE - 3)}...` }
      : entry;
  return liveWouldBeDenied([clipped, ...entries.filter((e) => e.binding !== entry.binding)], now);
}

/**
 * The admission warning a client is shown for a change a Warn quota admitted (kubectl prints it as
 * `Warning: ...`): which quota, that it is not enforced, and the refusal it would have met. `change`
 * names what is refused: the binding write itself, or (for a workload applied) its binding to come.
 */
export function enforcementWarning(quota: string, message: string, change = 'this change'): string {
  return `KarmadaQuota ${quota} would deny ${change} (spec.enforcement: Warn, not enforced): ${message}`;
}
