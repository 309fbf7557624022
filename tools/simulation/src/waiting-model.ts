/**
 * Waiting changes in the accounting simulation (docs/concepts/waiting-changes.md): the webhook's
 * WaitingRecorder and the reconciler's WaitingChanges reduced to the real pure rules of libs/quota
 * waiting.ts over a map that stands in for the namespace's Redis hash (the Redis steps themselves are
 * integration-tested). Each Redis step is atomic here, as each of the product's is; what can happen
 * between them (a refusal between the reconcile's read and its mark) is left to the actions.
 */
import type { KarmadaQuotaStatus, ResourceBinding } from '#api';
import {
  liveWaiting,
  recordRefusal,
  refusalNeedsWrite,
  requeueOrder,
  roomOf,
  specChanged,
  waitingRefusal,
  type Decision,
  type WaitingChange,
} from '#quota';

/**
 * The reconciler's REQUEUE_MIN_INTERVAL_SECONDS default (apps/reconciler/src/config.ts), in ms: a
 * requeued change is in flight this long.
 */
export const REQUEUE_INTERVAL_MS = 10_000;

type Refusal = Extract<Decision, { allowed: false }>;

/** A requeue the reconciler made: Karmada re-sends `write` once an action delivers the poke. */
export interface Poke {
  record: WaitingChange;
  /** The refused write, as Karmada still wants it (its template). */
  write: ResourceBinding;
}

export class WaitingModel {
  /** The namespace's records by binding name: the Redis hash `kq:waiting:{<namespace>}`. */
  readonly records = new Map<string, WaitingChange>();
  /** The latest refused write of each binding: what Karmada re-sends when poked. */
  private readonly wanted = new Map<string, ResourceBinding>();

  /** WaitingRecorder.refused: records a refusal over a limit or "status unknown"; whether it did. */
  refused(object: ResourceBinding, old: ResourceBinding | undefined, refusal: Refusal, now: number): boolean {
    const change = waitingRefusal(object, old, refusal);
    if (change === undefined) return false;
    this.wanted.set(change.binding, object);
    const previous = this.records.get(change.binding);
    const record = recordRefusal(previous, change, new Date(now));
    if (refusalNeedsWrite(previous, record)) this.records.set(change.binding, record);
    return true;
  }

  /** WaitingRecorder.admitted: a write that changes the spec ends the wait. */
  admitted(object: ResourceBinding, old: ResourceBinding | undefined): void {
    if (specChanged(object, old)) this.records.delete(object.metadata!.name!);
  }

  /** What a reconcile reads (WaitingChanges.read). */
  read(): WaitingChange[] {
    return [...this.records.values()].map((r) => structuredClone(r));
  }

  /**
   * WaitingChanges.settle after a reconcile: forgets what it said to forget, and marks requeued each
   * change requeueOrder picks, each only if the record is still the one read (replaceIfUnchanged);
   * the pokes.
   */
  settle(
    waiting: { live: WaitingChange[]; forget: WaitingChange[] },
    statuses: ReadonlyMap<string, KarmadaQuotaStatus>,
    now: number,
  ): Poke[] {
    for (const record of waiting.forget) if (this.unchanged(record)) this.records.delete(record.binding);
    const rooms = new Map([...statuses].map(([quota, status]) => [quota, roomOf(status)]));
    const pokes: Poke[] = [];
    for (const record of requeueOrder(waiting.live, rooms, new Date(now), REQUEUE_INTERVAL_MS)) {
      if (!this.unchanged(record)) continue; // refused again or admitted since the read
      const marked = { ...record, requeuedAt: new Date(now).toISOString() };
      this.records.set(record.binding, marked);
      pokes.push({ record: marked, write: this.wanted.get(record.binding)! });
    }
    return pokes;
  }

  /** Whether the record of its binding is still `read` as far as the webhook's writes go (replaceIfUnchanged). */
  private unchanged(read: WaitingChange): boolean {
    const stored = this.records.get(read.binding);
    return (
      stored !== undefined &&
      stored.lastRefusedAt === read.lastRefusedAt &&
      stored.requeuedAt === read.requeuedAt &&
      stored.uid === read.uid
    );
  }

  /** The records a reconcile at `now` would still take as waiting, against the stored bindings. */
  live(bindings: readonly ResourceBinding[], now: number): WaitingChange[] {
    return liveWaiting(this.read(), bindings, new Date(now)).live;
  }

  /** The write Karmada still wants for a waiting binding. */
  wantedWrite(binding: string): ResourceBinding | undefined {
    return this.wanted.get(binding);
  }
}
