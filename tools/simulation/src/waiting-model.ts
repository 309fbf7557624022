/**
 * Waiting changes in the accounting simulation (docs/concepts/waiting-changes.md): the webhook's
 * WaitingRecorder and the reconciler's WaitingChanges reduced to the real pure rules of libs/quota
 * waiting.ts over a map that stands in for the namespace's Redis hash (the Redis steps themselves are
 * integration-tested). Each Redis step is atomic here, as each of the product's is; what can happen
 * between them (a refusal between the reconcile's read and its mark) is left to the actions. Each
 * webhook replica gathers what it decides until its flush ('waitingFlush'), and replicas flush in any
 * order, as the product's do (flushWaiting orders them).
 */
import { sameJson, type KarmadaQuotaStatus, type ResourceBinding } from '#api';
import {
  ADMITTED_MARK_MS,
  admissionMark,
  flushedFields,
  flushWaiting,
  liveWaiting,
  requeueOrder,
  roomOf,
  specChanged,
  waitingField,
  waitingRefusal,
  type AdmittedMark,
  type Decision,
  type WaitingChange,
  type WaitingNews,
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
  /** The namespace's records by field (waitingField): the Redis hash `kq:waiting:{<namespace>}`. */
  readonly records = new Map<string, WaitingChange>();
  /** The latest refused write of each binding, by field (a create's apart): what Karmada re-sends when poked. */
  private readonly wanted = new Map<string, ResourceBinding>();
  /** Each binding's admission mark, and when it expires: `kq:waiting-admitted:{<namespace>}:<binding>`. */
  private readonly marks = new Map<string, { mark: AdmittedMark; expires: number }>();
  /** Per webhook replica, per binding, what it decided since its last flush (WaitingRecorder's pending). */
  private readonly pending = new Map<number, Map<string, WaitingNews>>();
  /** The order in which the webhooks decided: of each pending news, each stored record and mark. */
  private decided = 0;
  private readonly newsSeq = new Map<WaitingNews, { admitted?: number; refused?: number }>();
  private readonly recordSeq = new Map<string, number>();
  private readonly markSeq = new Map<string, number>();
  /** Per record field, the refusal decided last, by any replica: its order and its decider's time. */
  private readonly latestRefusal = new Map<string, { seq: number; at: number }>();
  /**
   * Bindings whose record replicas flushed out of the order they decided in, by more than the
   * product can tell apart (decisions within the clocks' skew, or of one millisecond: the limit
   * docs/concepts/waiting-changes.md#replicas states). The record is put right by Karmada's
   * next retry of the write, not by a requeue: LIVENESS leaves them out.
   */
  readonly inverted = new Set<string>();

  /**
   * Bindings whose latest refused write waits for nothing (a refusal no room cures: a DaemonSet under
   * a cpu quota): a record of an earlier write may stay stored, but no room lets Karmada's write in,
   * so LIVENESS leaves them out until a write of theirs waits again.
   */
  readonly superseded = new Set<string>();

  private newsOf(replica: number, binding: string): WaitingNews {
    const byBinding = this.pending.get(replica) ?? new Map<string, WaitingNews>();
    this.pending.set(replica, byBinding);
    const news = byBinding.get(binding) ?? {};
    byBinding.set(binding, news);
    return news;
  }

  /** WaitingRecorder.refused: gathers a refusal over a limit or "status unknown"; whether it is one. */
  refused(
    replica: number,
    object: ResourceBinding,
    old: ResourceBinding | undefined,
    refusal: Refusal,
    now: number,
  ): boolean {
    const change = waitingRefusal(object, old, refusal);
    if (change === undefined) {
      // Nothing waits, not even an earlier refusal the replica has not flushed.
      const pending = this.pending.get(replica)?.get(object.metadata!.name!);
      if (pending) delete pending.refused;
      this.superseded.add(object.metadata!.name!);
      return false;
    }
    this.superseded.delete(change.binding);
    this.wanted.set(waitingField(change), object);
    const news = this.newsOf(replica, change.binding);
    news.refused = { change, at: new Date(now) };
    this.newsSeq.set(news, { ...this.newsSeq.get(news), refused: ++this.decided });
    this.latestRefusal.set(waitingField(change), { seq: this.decided, at: now });
    return true;
  }

  /** WaitingRecorder.admitted: a write that changes the spec ends the wait. */
  admitted(replica: number, object: ResourceBinding, old: ResourceBinding | undefined, now: number): void {
    if (!specChanged(object, old)) return;
    const binding = object.metadata!.name!;
    this.pending.get(replica)?.delete(binding);
    const news = this.newsOf(replica, binding);
    news.admitted = admissionMark(object, old, new Date(now));
    this.newsSeq.set(news, { admitted: ++this.decided });
  }

  /** WaitingRecorder.flush of one replica (every replica's without one): tells the hash its news. */
  flush(now: number, replica?: number): void {
    for (const [r, byBinding] of this.pending) {
      if (replica !== undefined && r !== replica) continue;
      for (const [binding, all] of byBinding) {
        const seq = this.newsSeq.get(all) ?? {};
        this.newsSeq.delete(all);
        for (const { field, news } of flushedFields(binding, all)) {
          const marked = this.marks.get(binding);
          const mark = marked !== undefined && marked.expires > now ? marked.mark : undefined;
          const stored = this.records.get(field);
          const next = flushWaiting(stored, mark, news);
          const markSeq = mark && { mark, seq: this.markSeq.get(binding) ?? 0 };
          if (this.outOfOrder(stored, next.record, news, seq, field, markSeq)) this.inverted.add(binding);
          if (next.record === undefined) this.records.delete(field);
          else this.records.set(field, next.record);
          if (next.record !== stored && news.refused !== undefined && next.record !== undefined)
            this.recordSeq.set(field, seq.refused ?? 0);
          if (next.mark !== mark && next.mark !== undefined) {
            this.marks.set(binding, { mark: next.mark, expires: now + ADMITTED_MARK_MS });
            this.markSeq.set(binding, seq.admitted ?? 0);
          }
        }
      }
      this.pending.delete(r);
    }
  }

  /**
   * Whether a flush put the record out of the order the webhooks decided in, as the deciders' clocks
   * could not tell (docs/concepts/waiting-changes.md#replicas): a refusal dropped though decided
   * after what dropped it (the stored record, or the admission mark decided at `markSeq`) that its
   * clock put later; an older refusal written over a newer one of the same millisecond or later; an
   * admission ending a refusal decided after it that its clock put earlier. An inversion the clocks
   * could tell (a tie the product gives to the admission, say) is the product's bug: LIVENESS judges it.
   */
  private outOfOrder(
    stored: WaitingChange | undefined,
    next: WaitingChange | undefined,
    news: WaitingNews,
    seq: { admitted?: number; refused?: number },
    field: string,
    mark: { mark: AdmittedMark; seq: number } | undefined,
  ): boolean {
    const time = Date.parse;
    const storedSeq = stored === undefined ? 0 : (this.recordSeq.get(field) ?? 0);
    const refused = news.refused;
    if (refused !== undefined && next === stored) {
      // The same refusal stored already loses nothing, unless a requeue since it would let it settle.
      const settling =
        stored?.requeuedAt !== undefined && time(stored.requeuedAt) > time(stored.lastRefusedAt);
      if (
        stored !== undefined &&
        !settling &&
        stored.quota === refused.change.quota &&
        sameJson(stored.requested, refused.change.requested)
      )
        return false;
      const by = stored !== undefined && storedSeq >= (mark?.seq ?? 0) ? stored.lastRefusedAt : mark?.mark.at;
      return (
        by !== undefined &&
        (seq.refused ?? 0) > Math.max(storedSeq, mark?.seq ?? 0) &&
        time(by) > refused.at.getTime()
      );
    }
    // A refusal written though another of the field was decided after it, no later by the clocks (its
    // news never reached the hash: that replica's admission of it replaced it, say).
    const latest = this.latestRefusal.get(field);
    if (
      refused !== undefined &&
      next !== undefined &&
      next !== stored &&
      latest !== undefined &&
      latest.seq > (seq.refused ?? 0) &&
      latest.at <= refused.at.getTime()
    )
      return true;
    if (stored === undefined || next === stored) return false;
    if (next === undefined)
      return storedSeq > (seq.admitted ?? 0) && time(stored.lastRefusedAt) < time(news.admitted!.at);
    return storedSeq > (seq.refused ?? 0) && time(next.lastRefusedAt) >= time(stored.lastRefusedAt);
  }

  /**
   * What a reconcile reads (WaitingChanges.read): the records of the namespace `inNamespace` says a
   * binding name is in (the model keeps both namespaces' in one map, binding names being unique).
   */
  read(inNamespace: (binding: string) => boolean = () => true): WaitingChange[] {
    return [...this.records.values()].filter((r) => inNamespace(r.binding)).map((r) => structuredClone(r));
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
    for (const record of waiting.forget)
      if (this.unchanged(record)) this.records.delete(waitingField(record));
    const rooms = new Map([...statuses].map(([quota, status]) => [quota, roomOf(status)]));
    const pokes: Poke[] = [];
    for (const record of requeueOrder(waiting.live, rooms, new Date(now), REQUEUE_INTERVAL_MS)) {
      if (!this.unchanged(record)) continue; // refused again or admitted since the read
      const marked = { ...record, requeuedAt: new Date(now).toISOString() };
      this.records.set(waitingField(record), marked);
      pokes.push({ record: marked, write: this.wanted.get(waitingField(record))! });
    }
    return pokes;
  }

  /** Whether the record of its binding is still `read` as far as the webhook's writes go (replaceIfUnchanged). */
  private unchanged(read: WaitingChange): boolean {
    const stored = this.records.get(waitingField(read));
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
  wantedWrite(record: WaitingChange): ResourceBinding | undefined {
    return this.wanted.get(waitingField(record));
  }
}
