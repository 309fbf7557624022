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

/**
 * Keeps the namespace's waiting changes in Redis (libs/quota waiting.ts): a refusal over a limit or
 * for usage not counted yet is recorded, an admitted write that changes the binding's spec (other
 * than a requeue's poke) ends the wait, and either queues a reconcile of the namespace when it
 * changes what `status.waiting` shows. Off the admission path: Redis being down costs the record,
 * never an admission.
 */
export class WaitingRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger('waiting');
  private failing = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly reconciles: Queue<ReconcileJob>,
    private readonly clock: () => number = Date.now,
  ) {}

  refused(
    namespace: string,
    object: ResourceBinding,
    old: ResourceBinding | undefined,
    refusal: Refusal,
  ): void {
    const change = waitingRefusal(object, old, refusal);
    if (change === undefined) return; // requests missing: only a change of the binding cures it
    const key = keyOf(namespace);
    if (key === undefined) return;
    void this.guard(async () => {
      const raw = await this.redis.hget(key, change.binding);
      const decoded = raw === null ? undefined : decodeWaiting(raw);
      const previous = decoded && !('error' in decoded) ? decoded : undefined;
      const record = recordRefusal(previous, change, new Date(this.clock()));
      if (!refusalNeedsWrite(previous, record)) return;
      await this.redis.hset(key, change.binding, JSON.stringify(record));
      if (shown(record) !== shown(previous))
        await this.reconcile(namespace, `ResourceBinding ${change.binding} refused`);
    });
  }

  admitted(namespace: string, object: ResourceBinding, old: ResourceBinding | undefined): void {
    if (!specChanged(object, old)) return; // metadata, status or a requeue's poke: the change still waits
    const key = keyOf(namespace);
    if (key === undefined) return;
    const name = object.metadata!.name!;
    void this.guard(async () => {
      if ((await this.redis.hdel(key, name)) > 0)
        await this.reconcile(namespace, `waiting ResourceBinding ${name} admitted`);
    });
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
    await this.reconciles.close();
  }
}
