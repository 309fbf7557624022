import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { decodeWaiting, type WaitingChange } from '#quota';
import { waitingKey } from '#usage';
import { testRedisUrl } from '../../../test/support/federation.js';
import { replaceIfUnchanged, WaitingChanges } from './waiting-changes.js';

// Real Redis: the reconciler's mark races the webhook's writes of the same record. Each test has its
// own namespace, so its own key; nothing is flushed.
const REDIS_URL = testRedisUrl(15);

let redis: Redis;
let namespace: string;

beforeEach(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  namespace = `waiting-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  await redis.del(waitingKey(namespace));
  redis.disconnect();
});

const NOW = new Date();
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

const record = (overrides: Partial<WaitingChange> = {}): WaitingChange => ({
  binding: 'web',
  uid: 'uid-web',
  quota: 'compute',
  requested: { cpu: '2' },
  free: { cpu: '1' },
  needs: { cpu: '4' },
  since: at(-60_000),
  lastRefusedAt: at(-5_000),
  retryVia: 'scheduler',
  ...overrides,
});

const read = async (): Promise<WaitingChange | undefined> => {
  const raw = await redis.hget(waitingKey(namespace), 'web');
  if (raw === null) return undefined;
  const decoded = decodeWaiting(raw);
  if ('error' in decoded) throw new Error(decoded.error);
  return decoded;
};
/** A Karmada API server's KubeConfig naming an address where nothing listens: a poke fails at once. */
function nowhere(): k8s.KubeConfig {
  const karmada = new k8s.KubeConfig();
  karmada.loadFromOptions({
    clusters: [{ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nobody' }],
    currentContext: 'nowhere',
  });
  return karmada;
}

const write = (value: WaitingChange) => redis.hset(waitingKey(namespace), 'web', JSON.stringify(value));

describe('replaceIfUnchanged (marking a record requeued)', () => {
  const seen = record({ requeuedAt: at(-30_000) });
  const marked = { ...seen, requeuedAt: NOW.toISOString() };

  test('marks the record the reconciler read', async () => {
    await write(seen);
    expect(await replaceIfUnchanged(redis, namespace, seen, marked)).toBe(true);
    expect(await read()).toEqual(marked);
  });

  test('does not write back a record deleted since (its change admitted)', async () => {
    expect(await replaceIfUnchanged(redis, namespace, seen, marked)).toBe(false);
    expect(await read()).toBeUndefined();
  });

  test.each<[string, WaitingChange]>([
    ['refused again', { ...seen, lastRefusedAt: at(-1), free: { cpu: '0' } }],
    ['requeued by another reconcile', { ...seen, requeuedAt: at(-1) }],
    ['deleted and refused anew (no requeue yet)', record({ since: at(-1), lastRefusedAt: at(-1) })],
  ])('does not overwrite a record changed since: %s', async (_, since) => {
    await write(since);
    expect(await replaceIfUnchanged(redis, namespace, seen, marked)).toBe(false);
    expect(await read()).toEqual(since);
  });
});

test('settle forgets a settled record, but not one the webhook refused again since it was read', async () => {
  const waiting = new WaitingChanges(nowhere(), redis, new Registry(), 10_000);
  const settled = record({ requeuedAt: at(-60_000) });
  await write(settled);
  const [seen] = await waiting.read(namespace);
  const refusedAgain = { ...settled, lastRefusedAt: at(-1) };
  await write(refusedAgain);
  await waiting.settle(namespace, { live: [], forget: [seen!] }, new Map(), NOW);
  expect(await read()).toEqual(refusedAgain);
  await waiting.settle(namespace, { live: [], forget: [refusedAgain] }, new Map(), NOW);
  expect(await read()).toBeUndefined();
});

describe('replaceIfUnchanged with nothing (forgetting a settled record)', () => {
  const seen = record({ requeuedAt: at(-60_000) });

  test('deletes the record the reconciler read', async () => {
    await write(seen);
    expect(await replaceIfUnchanged(redis, namespace, seen, undefined)).toBe(true);
    expect(await read()).toBeUndefined();
  });

  test('keeps the record of another object of the name refused in the same millisecond', async () => {
    const update = { ...seen, uid: 'uid-web', since: seen.lastRefusedAt };
    await write(update);
    expect(await replaceIfUnchanged(redis, namespace, { ...seen, uid: undefined }, undefined)).toBe(false);
    expect(await read()).toEqual(update);
  });

  test('keeps a record the webhook refused again since: it waits anew', async () => {
    const refusedAgain = { ...seen, lastRefusedAt: at(-1) };
    await write(refusedAgain);
    expect(await replaceIfUnchanged(redis, namespace, seen, undefined)).toBe(false);
    expect(await read()).toEqual(refusedAgain);
  });
});

test('a requeue whose poke fails takes its mark back: the change is not taken as settled', async () => {
  const metrics = new Registry();
  const waiting = new WaitingChanges(nowhere(), redis, metrics, 10_000);
  const fits = record();
  await write(fits);
  await waiting.settle(
    namespace,
    { live: await waiting.read(namespace), forget: [] },
    new Map([['compute', { hard: { cpu: '10' }, used: { cpu: '8' } }]]),
    NOW,
  );
  const requeues = await metrics.getSingleMetric('karmada_quota_requeues_total')!.get();
  expect(requeues.values).toEqual([{ labels: { via: 'binding', result: 'failed' }, value: 1 }]);
  expect(await read()).toEqual(fits);
});
