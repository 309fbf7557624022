import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { RedisClient } from '#service-kit';
import { describeError, type ResourceBinding } from '#api';
import {
  admissionMark,
  ADMITTED_MARK_MS,
  decodeAdmittedMark,
  decodeWaiting,
  flushedFields,
  flushWaiting,
  specChanged,
  waitingRefusal,
  type AdmittedMark,
  type Decision,
  type WaitingChange,
  type WaitingNews,
} from '#quota';
import {
  RECONCILE_JOB_NAME,
  reconcileJobOptions,
  waitingAdmittedKey,
  waitingKey,
  type ReconcileJob,
} from '#usage';

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

/** What happened to one binding since the last flush: its latest admission and refusal after it. */
interface Pending {
  namespace: string;
  key: string;
  name: string;
  news: WaitingNews;
}

/**
 * Writes a binding's waiting record (field ARGV[1] of hash KEYS[1]) and its admission mark (KEYS[2])
 * only while both are still what the flush read (ARGV[2], ARGV[3]: the raw values, '' for none):
 * another replica's flush in between makes this one read and decide again. ARGV[4] is the record to
 * store ('' deletes it), ARGV[5] the mark ('' leaves it), ARGV[6] the mark's lifetime in ms.
 */
const WRITE_IF_UNCHANGED = `
local record = redis.call('HGET', KEYS[1], ARGV[1]) or ''
local mark = redis.call('GET', KEYS[2]) or ''
if record ~= ARGV[2] or mark ~= ARGV[3] then return 0 end
if ARGV[4] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[4]) end
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6]) end
return 1`;

/** Reads and decisions a flush of one binding may take while other replicas write it meanwhile. */
const FLUSH_ATTEMPTS = 5;

/** How long refusals and admissions of a binding are gathered before Redis is told the latest. */
export const WAITING_FLUSH_MS = 250;

/**
 * Keeps the namespace's waiting changes in Redis (libs/quota waiting.ts): a refusal over a limit or
 * for usage not counted yet is recorded, an admitted write that changes the binding's spec (other
 * than a requeue's poke) ends the wait, and either queues a reconcile of the namespace when it
 * changes what `status.waiting` shows. Off the admission path: Redis being down costs the record,
 * never an admission. What happens to a binding within `flushMs` is told to Redis once (an
 * admission, then the latest refusal after it): a binding refused in a tight loop costs a read per
 * flush, not per refusal. Other replicas flush the same binding in any order: each flush is
 * weighed against what they stored by what it was decided against (flushWaiting).
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
    const change = waitingRefusal(object, old, refusal);
    const pending = this.pendingFor(namespace, object);
    if (!pending) return;
    // Requests missing: only a change of the binding cures such a refusal; nothing waits, not even an
    // earlier refusal of it.
    if (change) pending.news.refused = { change, at: new Date(this.clock()) };
    else delete pending.news.refused;
  }

  admitted(namespace: string, object: ResourceBinding, old: ResourceBinding | undefined): void {
    if (!specChanged(object, old)) return; // metadata, status or a requeue's poke: the change still waits
    const pending = this.pendingFor(namespace, object);
    if (!pending) return;
    // A refusal before the admission waits no longer.
    pending.news = { admitted: admissionMark(object, old, new Date(this.clock())) };
  }

  /** The binding's pending entry, the flush scheduled; none for a name no namespace can have. */
  private pendingFor(namespace: string, object: ResourceBinding): Pending | undefined {
    const key = keyOf(namespace);
    if (key === undefined) return undefined;
    const name = object.metadata!.name!;
    const id = `${key}\0${name}`;
    let pending = this.pending.get(id);
    if (pending === undefined) {
      pending = { namespace, key, name, news: {} };
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

  /**
   * One binding's news, ordered against what other replicas flushed (flushWaiting); a namespace
   * whose `status.waiting` changes gets a reason to reconcile.
   */
  private async write(pending: Pending, reasons: Map<string, string>): Promise<void> {
    const { key, name, namespace } = pending;
    const markKey = waitingAdmittedKey(namespace, name);
    for (const { field, news } of flushedFields(name, pending.news)) {
      const written = await this.writeField(key, markKey, field, news);
      if (written === undefined) {
        this.logger.warn(
          { namespace, binding: name },
          `waiting record of ResourceBinding ${name} not written: other webhook replicas wrote it ${FLUSH_ATTEMPTS} times meanwhile`,
        );
      } else if (shown(written.record) !== shown(written.stored)) {
        reasons.set(
          namespace,
          written.record === undefined
            ? `waiting ResourceBinding ${name} admitted`
            : `ResourceBinding ${name} refused`,
        );
      }
    }
  }

  /** One field's flush, read and decided again while another replica writes it meanwhile. */
  private async writeField(
    key: string,
    markKey: string,
    field: string,
    news: WaitingNews,
  ): Promise<{ stored: WaitingChange | undefined; record: WaitingChange | undefined } | undefined> {
    for (let attempt = 0; attempt < FLUSH_ATTEMPTS; attempt++) {
      const [rawRecord, rawMark] = await Promise.all([this.redis.hget(key, field), this.redis.get(markKey)]);
      const decoded = rawRecord === null ? undefined : decodeWaiting(rawRecord);
      const stored = decoded && !('error' in decoded) ? decoded : undefined;
      const mark = decodeAdmittedMark(rawMark);
      const next = flushWaiting(stored, mark, news);
      if (next.record === stored && next.mark === mark) return { stored, record: stored };
      const written = await this.redis.eval(
        WRITE_IF_UNCHANGED,
        2,
        key,
        markKey,
        field,
        rawRecord ?? '',
        rawMark ?? '',
        next.record === undefined ? '' : JSON.stringify(next.record),
        next.mark === mark ? '' : JSON.stringify(next.mark satisfies AdmittedMark | undefined),
        String(ADMITTED_MARK_MS),
      );
      if (written === 1) return { stored, record: next.record };
    }
    return undefined;
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
