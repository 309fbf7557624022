import type { Enforcement } from '#api';
import { clipMessage, QuotaEventReason, type QuotaEvent } from './status.js';

/** The denials one quota caused within one aggregation window. */
export interface DenialTally {
  count: number;
  latestBinding: string;
  latestMessage: string;
}

/** Event messages past this are cut: one denial message names a handful of resources at most. */
const MAX_EVENT_MESSAGE = 1024;

export function addDenial(tally: DenialTally | undefined, binding: string, message: string): DenialTally {
  return { count: (tally?.count ?? 0) + 1, latestBinding: binding, latestMessage: message };
}

/**
 * One Warning Event for a window of denials, the way Kubernetes' event aggregation folds repeats:
 * a busy quota turning away hundreds of bindings a second writes one Event per window, not one per
 * denial, and `count` still says how many there were. A quota whose enforcement is Warn or DryRun
 * admitted them: its Event (AdmissionNotEnforced) says they would have been denied.
 */
export function denialEvent(
  tally: DenialTally,
  windowSeconds: number,
  enforcement: Enforcement = 'Deny',
): QuotaEvent {
  const others = tally.count - 1;
  const who =
    others === 0
      ? `ResourceBinding ${tally.latestBinding}`
      : `ResourceBinding ${tally.latestBinding} and ${others} more within ${windowSeconds}s`;
  const message =
    enforcement === 'Deny'
      ? `denied ${who}: ${tally.latestMessage}`
      : `admitted ${who}, which it would deny (spec.enforcement: ${enforcement}, not enforced): ${tally.latestMessage}`;
  return {
    type: 'Warning',
    reason: enforcement === 'Deny' ? QuotaEventReason.AdmissionDenied : QuotaEventReason.AdmissionNotEnforced,
    message: clipMessage(message, MAX_EVENT_MESSAGE),
    count: tally.count,
  };
}
