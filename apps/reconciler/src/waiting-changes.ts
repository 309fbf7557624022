import * as k8s from '@kubernetes/client-node';
import { Logger } from '@nestjs/common';
import type { RedisClient } from '#service-kit';
import { Counter, type Registry } from 'prom-client';
import {
  describeError,
  RESOURCE_BINDING,
  type KarmadaQuota,
  type KarmadaQuotaStatus,
  type ResourceBinding,
} from '#api';
import {
  capRoomFor,
  decodeWaiting,
  REQUEUED_AT_ANNOTATION,
  requeueOrder,
  roomOf,
  waitingField,
  type HeldBinding,
  type WaitingChange,
} from '#quota';
import { waitingKey } from '#usage';

/** A binding Karmada's scheduler holds back for want of room, and how the estimator sees it. */
export interface HeldBack {
  binding: ResourceBinding;
  estimate: HeldBinding;
}

/** On a binding Karmada holds back: the room under the caps, in replicas, it was last requeued for. */
export const HELD_ROOM_ANNOTATION = 'karmada-quota/requeued-for-room';

/**
 * Replaces a waiting record (ARGV[1] in hash KEYS[1]) with ARGV[5], or deletes it when ARGV[5] is '',
 * only while it is still the refusal the reconciler read: the same `lastRefusedAt` (ARGV[2]),
 * `requeuedAt` (ARGV[3], '' for none) and object `uid` (ARGV[4], '' for a create's). The webhook writes
 * the hash concurrently: a record it deleted meanwhile (the change admitted) is not written back,
 * and one it refused again, even within the same millisecond for another object of the name, is
 * neither overwritten with the older figures nor forgotten.
 */
const REPLACE_IF_UNCHANGED = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local ok, stored = pcall(cjson.decode, raw)
if not ok or type(stored) ~= 'table' then return 0 end
local requeuedAt = stored.requeuedAt
if type(requeuedAt) ~= 'string' then requeuedAt = '' end
local uid = stored.uid
if type(uid) ~= 'string' then uid = '' end
if stored.lastRefusedAt ~= ARGV[2] or requeuedAt ~= ARGV[3] or uid ~= ARGV[4] then return 0 end
if ARGV[5] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[5]) end
return 1`;

/**
 * Stores `next` over the namespace's record of `read.binding`, or deletes it when `next` is undefined,
 * if it is still `read` as far as the webhook's writes go (REPLACE_IF_UNCHANGED); whether it did.
 */
export async function replaceIfUnchanged(
  redis: RedisClient,
  namespace: string,
  read: WaitingChange,
  next: WaitingChange | undefined,
): Promise<boolean> {
  const replaced = await redis.eval(
    REPLACE_IF_UNCHANGED,
    1,
    waitingKey(namespace),
    waitingField(read),
    read.lastRefusedAt,
    read.requeuedAt ?? '',
    read.uid ?? '',
    next === undefined ? '' : JSON.stringify(next),
  );
  return replaced === 1;
}

/**
 * The reconciler's side of waiting changes (libs/quota waiting.ts): reads what the webhook recorded,
 * forgets what is withdrawn or settled, and requeues the changes that fit once a reconcile has
 * computed what is free, higher priority first then oldest, through Karmada's own reactions.
 */
export class WaitingChanges {
  private readonly logger = new Logger('waiting');
  private readonly objects: k8s.KubernetesObjectApi;
  private readonly requeues: Counter;

  constructor(
    karmada: k8s.KubeConfig,
    private readonly redis: RedisClient,
    metrics: Registry,
    private readonly minRequeueIntervalMs: number,
  ) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(karmada);
    this.requeues = new Counter({
      name: 'karmada_quota_requeues_total',
      help: 'Waiting changes requeued through Karmada once quota freed, by what was poked (template or binding)',
      labelNames: ['via', 'result'],
      registers: [metrics],
    });
  }

  /** The namespace's records; unreadable ones are reported and forgotten. */
  async read(namespace: string): Promise<WaitingChange[]> {
    const raw = await this.redis.hgetall(waitingKey(namespace));
    const records: WaitingChange[] = [];
    const unreadable: string[] = [];
    for (const [field, value] of Object.entries(raw)) {
      const record = decodeWaiting(value);
      // A refused create kept under its binding's name by an earlier version: the next refusal records it again.
      if ('error' in record || waitingField(record) !== field) unreadable.push(field);
      else records.push(record);
    }
    if (unreadable.length > 0) {
      this.logger.warn({ namespace, bindings: unreadable }, 'forgetting unreadable waiting records');
      await this.redis.hdel(waitingKey(namespace), ...unreadable);
    }
    return records;
  }

  /**
   * After a reconcile: forget what `forget` names, and requeue what fits in the statuses just computed
   * (the per-quota counts are status.waiting, exported from the quota informer).
   */
  async settle(
    namespace: string,
    waiting: { live: WaitingChange[]; forget: WaitingChange[] },
    statuses: ReadonlyMap<string, KarmadaQuotaStatus>,
    now: Date,
  ): Promise<void> {
    // A record refused again since it was read stays: it waits anew.
    for (const record of waiting.forget) await replaceIfUnchanged(this.redis, namespace, record, undefined);
    const rooms = new Map([...statuses].map(([quota, status]) => [quota, roomOf(status)]));
    for (const record of requeueOrder(waiting.live, rooms, now, this.minRequeueIntervalMs)) {
      await this.requeue(namespace, record, now);
    }
  }

  /**
   * Requeues a waiting change through the writer that was refused (poke). The record is marked
   * requeued before the poke, and only if the webhook has not written it since it was read: the retry
   * the poke causes may be admitted (the record deleted) or refused (rewritten) within milliseconds,
   * and a mark written after that would resurrect or overwrite it. A poke that fails takes the mark
   * back, if nothing was written since.
   */
  private async requeue(namespace: string, record: WaitingChange, now: Date): Promise<void> {
    const via = record.retryVia === 'template' && record.template ? 'template' : 'binding';
    const what = `${via === 'template' ? `${record.template!.kind} ${namespace}/${record.template!.name}` : `ResourceBinding ${namespace}/${record.binding}`}`;
    const marked = { ...record, requeuedAt: now.toISOString() };
    if (!(await replaceIfUnchanged(this.redis, namespace, record, marked))) return; // refused or admitted since
    try {
      await this.poke(
        namespace,
        via === 'template' ? { template: record.template! } : { binding: record.binding },
        now,
      );
      this.requeues.inc({ via, result: 'requeued' });
      this.logger.log(
        { namespace, binding: record.binding, quota: record.quota, poked: what },
        Object.keys(record.requested).length === 0
          ? "requeued a waiting change: its quota's usage is counted now"
          : 'requeued a waiting change: its quota has room now',
      );
    } catch (err) {
      await replaceIfUnchanged(this.redis, namespace, marked, record);
      this.requeues.inc({ via, result: 'failed' });
      this.logger.warn(
        { namespace, binding: record.binding, quota: record.quota, poked: what, error: describeError(err) },
        'could not requeue a waiting change',
      );
    }
  }

  /**
   * Requeues the bindings Karmada's scheduler holds back for want of room (libs/quota estimate.ts)
   * once the caps, with the statuses just computed, have room for all they wait to place, instead of
   * leaving them to Karmada's back-off (up to 1,000 s). Once per room: the binding keeps the room it
   * was requeued for (HELD_ROOM_ANNOTATION), so one that Karmada still cannot place (its nodes are
   * short, say) is not requeued again until the caps' room changes, and its pokes are spaced by the
   * requeue interval (its own `rescheduleTriggeredAt`).
   */
  async requeueHeld(
    namespace: string,
    held: readonly HeldBack[],
    quotas: readonly KarmadaQuota[],
    now: Date,
  ): Promise<void> {
    for (const { binding: rb, estimate } of held) {
      const room = capRoomFor(estimate, quotas, namespace);
      if (room === undefined || room < estimate.unplaced) continue;
      if (rb.metadata?.annotations?.[HELD_ROOM_ANNOTATION] === String(room)) continue;
      const poked = Date.parse(rb.spec?.rescheduleTriggeredAt ?? '');
      if (now.getTime() - poked < this.minRequeueIntervalMs) continue;
      try {
        await this.poke(
          namespace,
          { binding: estimate.name, annotations: { [HELD_ROOM_ANNOTATION]: String(room) } },
          now,
        );
        this.requeues.inc({ via: 'binding', result: 'requeued' });
        this.logger.log(
          { namespace, binding: estimate.name, room },
          "requeued a binding Karmada's scheduler held back: the member caps have room for it now",
        );
      } catch (err) {
        this.requeues.inc({ via: 'binding', result: 'failed' });
        this.logger.warn(
          { namespace, binding: estimate.name, error: describeError(err) },
          "could not requeue a binding Karmada's scheduler held back",
        );
      }
    }
  }

  /**
   * Pokes the writer that was refused: an annotation on the template re-runs Karmada's detector (it
   * reconciles on any annotation change), `spec.rescheduleTriggeredAt` on the binding re-runs its
   * scheduler (it reschedules on a spec change; the time must be after its last scheduling, which
   * metav1.Time keeps to the second). A template's poke changes nothing the workload runs; a binding's
   * makes Karmada divide its replicas afresh, which may move some already placed.
   */
  private async poke(
    namespace: string,
    target:
      | { template: NonNullable<WaitingChange['template']> }
      | { binding: string; annotations?: Record<string, string> },
    now: Date,
  ): Promise<void> {
    const nextSecond = new Date(Math.ceil((now.getTime() + 1) / 1000) * 1000)
      .toISOString()
      .replace('.000Z', 'Z');
    const patch =
      'template' in target
        ? {
            apiVersion: target.template.apiVersion,
            kind: target.template.kind,
            metadata: {
              name: target.template.name,
              namespace,
              annotations: { [REQUEUED_AT_ANNOTATION]: nextSecond },
            },
          }
        : {
            apiVersion: RESOURCE_BINDING.apiVersion,
            kind: RESOURCE_BINDING.kind,
            metadata: { name: target.binding, namespace, annotations: target.annotations },
            spec: { rescheduleTriggeredAt: nextSecond },
          };
    await this.objects.patch(
      patch,
      undefined,
      undefined,
      'karmada-quota-reconciler',
      undefined,
      k8s.PatchStrategy.MergePatch,
    );
  }
}
