import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { RedisClient } from '#service-kit';
import { describeError, type ResourceBinding } from '#api';
import {
  decodeWaiting,
  recordRefusal,
  refusalNeedsWrite,
  specChanged,
  waitingRefusal,
  type Decision,
  type WaitingChange,
} from '#quota';
import { RECONCILE_JOB_NAME, reconcileJobOptions, waitingKey, type ReconcileJob } from '#usage';

type Refusal = Extract<Decision, { allowed: false }>;

/** What status.waiting shows of a record: a change of it is worth a reconcile. */
const shown = (record: WaitingChange | undefined): string =>
  record ? JSON.stringify([record.quota, record.requested, record.free, record.since]) : '';

/** The namespace's Redis key; none for a name no namespace can have (nothing of it can wait). */
function keyOf(namespace: string): string | undefined {
  try {
    return waitingKey(namespace);
  } catch {
    return undefined;
  }
}

/** A binding's refusal, kept until the next flush: only its latest is recorded. */
interface LatestRefusal {
  object: ResourceBinding;
  old: ResourceBinding | undefined;
  refusal: Refusal;
  at: number;
}

/** What happened to one binding since the last flush. */
interface Pending {
  namespace: string;
  key: string;
  name: string;
  /** A write of its spec was admitted: the wait ended, whatever was recorded before. */
  admitted: boolean;
  /** The latest refusal, when it came after any admission. */
  refused?: LatestRefusal;
}

/** How long refusals and admissions of a binding are gathered before Redis is told the latest. */
export const WAITING_FLUSH_MS = 250;

/**
 * Keeps the namespace's waiting changes in Redis (libs/quota waiting.ts): a refusal over a limit or
 * for usage not counted yet is recorded, an admitted write that changes the binding's spec (other
 * than a requeue's poke) ends the wait, and either queues a reconcile of the namespace when it
 * changes what `status.waiting` shows. Off the admission path: Redis being down costs the record,
 * never an admission. What happens to a binding within `flushMs` is told to Redis once, in order
 * (an admission, then the latest refusal after it): a binding refused in a tight loop costs a read
 * per flush, not per refusal.
 */
export class WaitingRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger('waiting');
  private failing = false;
  private readonly pending = new Map<string, Pending>();
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly reconciles: Queue<ReconcileJob>,
    private readonly clock: () => number = Date.now,
    private readonly flushMs = WAITING_FLUSH_MS,
  ) {}

  refused(
    namespace: string,
    object: ResourceBinding,
    old: ResourceBinding | undefined,
    refusal: Refusal,
  ): void {
    const pending = this.pendingFor(namespace, object);
    if (pending) pending.refused = { object, old, refusal, at: this.clock() };
  }

  admitted(namespace: string, object: ResourceBinding, old: ResourceBinding | undefined): void {
    if (!specChanged(object, old)) return; // metadata, status or a requeue's poke: the change still waits
    const pending = this.pendingFor(namespace, object);
    if (!pending) return;
    pending.admitted = true;
    pending.refused = undefined; // a refusal before the admission waits no longer
  }

  /** The binding's pending entry, the flush scheduled; none for a name no namespace can have. */
  private pendingFor(namespace: string, object: ResourceBinding): Pending | undefined {
    const key = keyOf(namespace);
    if (key === undefined) return undefined;
    const name = object.metadata!.name!;
    const id = `${key}\0${name}`;
    let pending = this.pending.get(id);
    if (pending === undefined) {
      pending = { namespace, key, name, admitted: false };
      this.pending.set(id, pending);
    }
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    return pending;
  }

  /** Tells Redis what is pending; flushes run one after another, so a binding's stay in order. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.flushing = this.flushing.then(async () => {
      const reasons = new Map<string, string>();
      await Promise.all(batch.map((pending) => this.guard(() => this.write(pending, reasons))));
      await Promise.all(
        [...reasons].map(([namespace, reason]) => this.guard(() => this.reconcile(namespace, reason))),
      );
    });
    return this.flushing;
  }

  /** One binding's news; a namespace whose `status.waiting` changes gets a reason to reconcile. */
  private async write(pending: Pending, reasons: Map<string, string>): Promise<void> {
    const { key, name, namespace, refused } = pending;
    const change = refused && waitingRefusal(refused.object, refused.old, refused.refusal);
    // Requests missing: only a change of the binding cures such a refusal, nothing waits.
    if (change === undefined) {
      if (pending.admitted && (await this.redis.hdel(key, name)) > 0)
        reasons.set(namespace, `waiting ResourceBinding ${name} admitted`);
      return;
    }
    const raw = pending.admitted ? null : await this.redis.hget(key, change.binding);
    const decoded = raw === null ? undefined : decodeWaiting(raw);
    const previous = decoded && !('error' in decoded) ? decoded : undefined;
    const record = recordRefusal(previous, change, new Date(refused!.at));
    if (!pending.admitted && !refusalNeedsWrite(previous, record)) return;
    await this.redis.hset(key, change.binding, JSON.stringify(record));
    if (pending.admitted || shown(record) !== shown(previous))
      reasons.set(namespace, `ResourceBinding ${change.binding} refused`);
  }

  private reconcile(namespace: string, reason: string): Promise<unknown> {
    return this.reconciles.add(RECONCILE_JOB_NAME, { namespace, reason }, reconcileJobOptions(namespace));
  }

  /** One warning when recording starts failing and one when it works again, not one per request. */
  private async guard(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
      if (this.failing) this.logger.log('recording waiting changes in Redis works again');
      this.failing = false;
    } catch (err) {
      if (!this.failing)
        this.logger.warn(
          { error: describeError(err) },
          'could not record waiting changes in Redis (kubectl kq shows none meanwhile)',
        );
      this.failing = true;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    await this.reconciles.close();
  }
}
