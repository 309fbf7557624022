/**
 * Requests for counts of quotas whose statuses must reach a version (the admission owner's claims and
 * ghosts, the batched fence's mark): a status is not written for its stamp alone, so the webhook asks
 * the reconciler for a count (a reconcile job with `restamp`), at most every few seconds per quota.
 */
import type { ReconcileTarget } from '#usage';
import { countTargetOf } from './owner-ledger.js';

const COUNT_REQUEST_INTERVAL_MS = 5_000;

export class CountRequests {
  private readonly requestedAt = new Map<string, number>();

  constructor(
    private readonly request: (target: ReconcileTarget) => Promise<unknown>,
    /** Monotonic milliseconds. */
    private readonly monotonic: () => number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Asks for a count of each quota (by ledger key) not asked for in the last few seconds. */
  async ask(keys: readonly string[]): Promise<void> {
    const now = this.monotonic();
    for (const key of keys) {
      if (now - (this.requestedAt.get(key) ?? -Infinity) < COUNT_REQUEST_INTERVAL_MS) continue;
      this.requestedAt.set(key, now);
      try {
        await this.request(countTargetOf(key));
      } catch (err) {
        this.warn(`could not ask the reconciler for a count of ${key}: ${String(err)}`);
      }
    }
  }
}
