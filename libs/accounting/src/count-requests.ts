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
  /** The requests being sent: one round at a time (a later call's keys wait for the next). */
  private asking?: Promise<void>;

  constructor(
    private readonly request: (target: ReconcileTarget) => Promise<unknown>,
    /** Monotonic milliseconds. */
    private readonly monotonic: () => number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Asks for a count of each quota (by ledger key) not asked for in the last few seconds. */
  ask(keys: readonly string[]): Promise<void> {
    this.asking ??= this.send(keys).finally(() => (this.asking = undefined));
    return this.asking;
  }

  /** Settles once the requests being sent are. */
  idle(): Promise<void> {
    return this.asking ?? Promise.resolve();
  }

  private async send(keys: readonly string[]): Promise<void> {
    const now = this.monotonic();
    const failed: string[] = [];
    let failure = '';
    for (const key of keys) {
      if (now - (this.requestedAt.get(key) ?? -Infinity) < COUNT_REQUEST_INTERVAL_MS) continue;
      this.requestedAt.set(key, now);
      try {
        await this.request(countTargetOf(key));
      } catch (err) {
        failed.push(key);
        failure = String(err);
      }
    }
    if (failed.length > 0)
      this.warn(
        `could not ask the reconciler for counts of ${failed.length} quota(s) (${failed.slice(0, 3).join(', ')}${failed.length > 3 ? ', ...' : ''}): ${failure}`,
      );
  }
}
