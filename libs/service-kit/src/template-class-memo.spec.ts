import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { decodeClassMemo, type TemplateRef } from '#quota';
import { TEMPLATE_CLASS_TTL_MS, templateClassField, templateClassKey, templateClassWrittenKey } from '#usage';
import { testRedisUrl } from '../../../test/support/federation.js';
import { TemplateClassMemo } from './template-class-memo.js';

// Real Redis: replicas record versions of one template at once. Each test has its own namespace.
const REDIS_URL = testRedisUrl(15);

let redis: Redis;
let ref: TemplateRef;

beforeEach(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  ref = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: `memo-${randomUUID().slice(0, 8)}`,
    name: 'web',
  };
});

afterEach(async () => {
  await redis.del(templateClassKey(ref.namespace), templateClassWrittenKey(ref.namespace));
  redis.disconnect();
});

const stored = async () =>
  decodeClassMemo((await redis.hget(templateClassKey(ref.namespace), templateClassField(ref)))!);

test('versions recorded by replicas at once are all kept, the hash kept TEMPLATE_CLASS_TTL_MS', async () => {
  const other = redis.duplicate();
  const replicas = [new TemplateClassMemo(redis), new TemplateClassMemo(other)];
  await Promise.all([
    replicas[0]!.record(ref, '100', 'low'),
    replicas[1]!.record(ref, '120', 'high'),
    replicas[0]!.record(ref, '110', ''),
  ]);
  const expected = [
    ['100', 'low'],
    ['110', ''],
    ['120', 'high'],
  ];
  expect(await stored()).toEqual(expected);
  expect(await replicas[1]!.read(ref, Date.now() + 1_000)).toEqual(expected);
  const ttl = await redis.pttl(templateClassKey(ref.namespace));
  expect(ttl).toBeGreaterThan(TEMPLATE_CLASS_TTL_MS - 60_000);
  expect(ttl).toBeLessThanOrEqual(TEMPLATE_CLASS_TTL_MS);
  other.disconnect();
});

test('a memo unreadable reads as unknown and is replaced by the next record', async () => {
  await redis.hset(templateClassKey(ref.namespace), templateClassField(ref), '{"100":"low"}');
  const memo = new TemplateClassMemo(redis);
  expect(await memo.read(ref, undefined)).toBeUndefined();
  await memo.record(ref, '130', 'high');
  expect(await stored()).toEqual([['130', 'high']]);
});

test("a record drops the memos of the namespace's templates not written for TEMPLATE_CLASS_TTL_MS", async () => {
  const memo = new TemplateClassMemo(redis);
  const gone = { ...ref, name: 'gone' };
  const recent = { ...ref, name: 'recent' };
  await memo.record(gone, '100', 'low');
  await memo.record(recent, '101', 'high');
  // As if `gone` was last written a day and a minute ago, `recent` a day less a minute ago.
  const written = templateClassWrittenKey(ref.namespace);
  await redis.zadd(written, Date.now() - TEMPLATE_CLASS_TTL_MS - 60_000, templateClassField(gone));
  await redis.zadd(written, Date.now() - TEMPLATE_CLASS_TTL_MS + 60_000, templateClassField(recent));
  await memo.record(ref, '130', 'high');
  const fields = await redis.hkeys(templateClassKey(ref.namespace));
  expect(fields.sort()).toEqual([templateClassField(recent), templateClassField(ref)].sort());
  expect((await redis.zrange(written, 0, -1)).sort()).toEqual(fields.sort());
  expect(await redis.pttl(written)).toBeGreaterThan(TEMPLATE_CLASS_TTL_MS - 60_000);
});

test('with Redis unreachable the memo reads as unknown and records nothing, never failing', async () => {
  const down = new Redis('redis://127.0.0.1:1', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  down.on('error', () => undefined);
  const memo = new TemplateClassMemo(down);
  await expect(memo.read(ref, Date.now() + 1_000)).resolves.toBeUndefined();
  await expect(memo.record(ref, '100', 'low')).resolves.toBeUndefined();
  down.disconnect();
});
