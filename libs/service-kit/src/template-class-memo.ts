/**
 * The Redis side of the template class memo (libs/quota template-class-memo.ts): every webhook
 * replica and the reconciler record the class of each template version they read, and look up the
 * class of an older version a binding names. Never on the critical path of an admission: Redis down
 * or a memo unreadable only loses the memo (the class read is used, as without it), logged once.
 */
import { Logger } from '@nestjs/common';
import { describeError } from '#api';
import { decodeClassMemo, encodeClassMemo, rememberClass, type ClassMemo, type TemplateRef } from '#quota';
import { TEMPLATE_CLASS_TTL_MS, templateClassField, templateClassKey, templateClassWrittenKey } from '#usage';
import type { RedisClient } from './redis.module.js';

/**
 * Writes field ARGV[1] of hash KEYS[1] to ARGV[3] only while it still holds ARGV[2] ('' for none),
 * and notes the write at ARGV[5] (ms) in the sorted set KEYS[2]: a replica recording another version
 * meanwhile makes this one read and merge again. Drops the fields not written since ARGV[5] - ARGV[4]
 * and keeps both keys ARGV[4] ms.
 */
const WRITE_IF_UNCHANGED = `
local stored = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if stored ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (tonumber(ARGV[5]) - tonumber(ARGV[4])))
for _, field in ipairs(stale) do
  redis.call('HDEL', KEYS[1], field)
  redis.call('ZREM', KEYS[2], field)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

/** Merges a record may take while other replicas record versions of the same template. */
const WRITE_ATTEMPTS = 3;

export class TemplateClassMemo {
  private readonly logger = new Logger('template-class-memo');
  private failing = false;

  constructor(private readonly redis: RedisClient) {}

  /**
   * The template's memo; undefined when Redis cannot tell it by `deadline` (the caller then judges
   * with the class read).
   */
  async read(ref: TemplateRef, deadline: number | undefined): Promise<ClassMemo | undefined> {
    return this.guard(async () => {
      const raw = await this.redis.hget(templateClassKey(ref.namespace), templateClassField(ref));
      if (raw === null) return [];
      const memo = decodeClassMemo(raw);
      if ('error' in memo)
        throw new Error(`${templateClassKey(ref.namespace)} ${templateClassField(ref)}: ${memo.error}`);
      return memo;
    }, deadline);
  }

  /** Records the class of a version just read, when new to the memo (a memo unreadable is replaced). */
  async record(ref: TemplateRef, resourceVersion: string, priorityClassName: string): Promise<void> {
    const key = templateClassKey(ref.namespace);
    const field = templateClassField(ref);
    await this.guard(async () => {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const raw = await this.redis.hget(key, field);
        const stored = raw === null ? [] : decodeClassMemo(raw);
        const next = rememberClass('error' in stored ? [] : stored, resourceVersion, priorityClassName);
        if (next === undefined) return;
        const written = await this.redis.eval(
          WRITE_IF_UNCHANGED,
          2,
          key,
          templateClassWrittenKey(ref.namespace),
          field,
          raw ?? '',
          encodeClassMemo(next),
          String(TEMPLATE_CLASS_TTL_MS),
          String(Date.now()),
        );
        if (written === 1) return;
      }
    }, undefined);
  }

  /**
   * `call`'s result, or undefined when it fails or outlasts `deadline`; one warning when the memo
   * starts failing and one line when it works again, not one per binding.
   */
  private async guard<T>(call: () => Promise<T>, deadline: number | undefined): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late =
      deadline === undefined
        ? undefined
        : new Promise<'late'>(
            (resolve) => (timer = setTimeout(() => resolve('late'), deadline - Date.now())),
          );
    try {
      const result = await (late ? Promise.race([call(), late]) : call());
      if (result === 'late') throw new Error('Redis did not answer within the admission deadline');
      if (this.failing) this.logger.log('the template class memo in Redis works again');
      this.failing = false;
      return result as T;
    } catch (err) {
      if (!this.failing)
        this.logger.warn(
          { error: describeError(err) },
          'cannot use the template class memo in Redis: a binding naming an older template version is ' +
            "judged with the template's current priority class meanwhile; check Redis (REDIS_URL) and this service's log",
        );
      this.failing = true;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
