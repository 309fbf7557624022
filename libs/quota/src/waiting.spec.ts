import type { ResourceBinding } from '#api';
import { parseResourceList, type ResourceList } from '#quantity';
import {
  ABANDONED_AFTER_MS,
  decodeWaiting,
  freeOf,
  liveWaiting,
  recordRefusal,
  REFUSAL_REWRITE_AFTER_MS,
  refusalNeedsWrite,
  refusedWriter,
  requeueOrder,
  REQUEUE_SETTLE_MS,
  waitingStatus,
  type WaitingChange,
} from './waiting.js';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const list = (wire: Record<string, string>): ResourceList => parseResourceList(wire, 'test').list;

const rb = (name: string, spec: Partial<ResourceBinding['spec']>, uid = `uid-${name}`): ResourceBinding => ({
  metadata: { name, namespace: 'team-a', uid },
  spec: { resource: { apiVersion: 'apps/v1', kind: 'Deployment', name }, replicas: 2, ...spec },
});

const record = (binding: string, overrides: Partial<WaitingChange> = {}): WaitingChange => ({
  binding,
  uid: `uid-${binding}`,
  quota: 'compute',
  requested: { cpu: '2' },
  free: { cpu: '1' },
  since: ago(60_000),
  lastRefusedAt: ago(1_000),
  retryVia: 'template',
  ...overrides,
});

/** A refusal of binding web by quota compute, as the webhook hands it to recordRefusal. */
const refusal = {
  binding: 'web',
  uid: 'uid-web',
  quota: 'compute',
  requested: { cpu: '3' },
  free: { cpu: '0' },
  retryVia: 'template' as const,
};

describe('refusedWriter', () => {
  const clusters = [{ name: 'member1', replicas: 2 }];
  it.each<[string, ResourceBinding, ResourceBinding | undefined, string]>([
    ['a create is the detector’s', rb('web', {}), undefined, 'template'],
    ['a replicas change is the detector’s', rb('web', { replicas: 4 }), rb('web', {}), 'template'],
    ['a placement result only is the scheduler’s', rb('web', { clusters }), rb('web', {}), 'scheduler'],
    [
      'placement and replicas together are the detector’s',
      rb('web', { clusters, replicas: 3 }),
      rb('web', {}),
      'template',
    ],
    [
      'key order does not matter',
      rb('web', {
        clusters,
        replicas: 2,
        resource: { name: 'web', kind: 'Deployment', apiVersion: 'apps/v1' },
      }),
      rb('web', { replicas: 2 }),
      'scheduler',
    ],
  ])('%s', (_, object, old, expected) => {
    expect(refusedWriter(object, old)).toBe(expected);
  });
});

describe('recordRefusal', () => {
  it('starts the wait at the first refusal', () => {
    expect(recordRefusal(undefined, refusal, NOW)).toEqual({
      ...refusal,
      since: NOW.toISOString(),
      lastRefusedAt: NOW.toISOString(),
    });
  });
  it('keeps since and the last requeue for the same object, with the latest figures', () => {
    const previous = record('web', { requeuedAt: ago(5_000) });
    expect(recordRefusal(previous, refusal, NOW)).toEqual({
      ...refusal,
      since: previous.since,
      lastRefusedAt: NOW.toISOString(),
      requeuedAt: previous.requeuedAt,
    });
  });
  it('starts again for a re-created binding (another uid)', () => {
    const previous = record('web', { uid: 'old-uid', requeuedAt: ago(5_000) });
    expect(recordRefusal(previous, refusal, NOW)).toEqual({
      ...refusal,
      since: NOW.toISOString(),
      lastRefusedAt: NOW.toISOString(),
    });
  });
});

describe('refusalNeedsWrite', () => {
  const at = (ms: number) => new Date(NOW.getTime() + ms);
  const stored = recordRefusal(undefined, refusal, NOW);
  const soon = REFUSAL_REWRITE_AFTER_MS - 1;
  it.each<[string, WaitingChange | undefined, WaitingChange, boolean]>([
    ['the first refusal', undefined, stored, true],
    ['the same refusal again at once', stored, recordRefusal(stored, refusal, at(soon)), false],
    [
      'the same refusal once the stored one is old enough',
      stored,
      recordRefusal(stored, refusal, at(REFUSAL_REWRITE_AFTER_MS)),
      true,
    ],
    [
      'more free than the stored refusal shows',
      stored,
      recordRefusal(stored, { ...refusal, free: { cpu: '500m' } }, at(1)),
      true,
    ],
    [
      'a larger increase asked',
      stored,
      recordRefusal(stored, { ...refusal, requested: { cpu: '4' } }, at(1)),
      true,
    ],
    [
      'another object of the name (a new wait)',
      stored,
      recordRefusal(stored, { ...refusal, uid: 'uid-new' }, at(1)),
      true,
    ],
    [
      'a requeue since the stored refusal',
      { ...stored, requeuedAt: at(1).toISOString() },
      recordRefusal({ ...stored, requeuedAt: at(1).toISOString() }, refusal, at(2)),
      true,
    ],
    [
      'a requeue before the stored refusal',
      { ...stored, requeuedAt: at(-1).toISOString() },
      recordRefusal({ ...stored, requeuedAt: at(-1).toISOString() }, refusal, at(2)),
      false,
    ],
  ])('%s: %p', (_, previous, next, expected) => {
    expect(refusalNeedsWrite(previous, next)).toBe(expected);
  });

  it('skips only what liveWaiting cannot tell apart: the same verdicts with either record, but within a second of 20 minutes', () => {
    const requeued = { ...stored, requeuedAt: at(-1).toISOString() };
    const skipped = recordRefusal(requeued, refusal, at(soon));
    expect(refusalNeedsWrite(requeued, skipped)).toBe(false);
    const bindings = [rb('web', {})];
    for (const later of [0, REQUEUE_SETTLE_MS + 1, ABANDONED_AFTER_MS - 10_000, ABANDONED_AFTER_MS + 1]) {
      const now = at(soon + later);
      expect(liveWaiting([requeued], bindings, now).forget).toEqual(
        liveWaiting([skipped], bindings, now).forget,
      );
    }
  });
});

describe('decodeWaiting', () => {
  it('reads back what recordRefusal wrote', () => {
    const written = record('web', { requeuedAt: ago(1) });
    expect(decodeWaiting(JSON.stringify(written))).toEqual(written);
  });
  it.each<[string, string]>([
    ['not JSON', '{'],
    ['no binding', JSON.stringify({ ...record('web'), binding: 1 })],
    ['a number as quantity', JSON.stringify({ ...record('web'), requested: { cpu: 2 } })],
    ['a bad time', JSON.stringify({ ...record('web'), since: 'yesterday' })],
    ['an unknown writer', JSON.stringify({ ...record('web'), retryVia: 'user' })],
    ['a bad requeue time', JSON.stringify({ ...record('web'), requeuedAt: 'soon' })],
  ])('refuses %s', (_, raw) => {
    expect(decodeWaiting(raw)).toHaveProperty('error');
  });
});

describe('liveWaiting', () => {
  const bindings = [rb('web', {}), rb('api', {}), rb('batch', {})];
  it.each<[string, WaitingChange, boolean]>([
    ['refused recently: waiting', record('web'), true],
    ['binding deleted: withdrawn', record('gone'), false],
    ['binding re-created: withdrawn', record('web', { uid: 'older' }), false],
    ['refused create, no binding yet: waiting', record('new', { uid: undefined }), true],
    ['refused create, binding now exists: created', record('web', { uid: undefined }), false],
    [
      'requeued and refused again: waiting',
      record('web', { requeuedAt: ago(60_000), lastRefusedAt: ago(50_000) }),
      true,
    ],
    [
      'requeued, not refused since, still settling: waiting',
      record('web', { requeuedAt: ago(REQUEUE_SETTLE_MS - 1), lastRefusedAt: ago(60_000) }),
      true,
    ],
    [
      'requeued, not refused since: settled',
      record('web', { requeuedAt: ago(REQUEUE_SETTLE_MS + 1), lastRefusedAt: ago(60_000) }),
      false,
    ],
    [
      'not refused for longer than Karmada backs off: abandoned',
      record('web', { lastRefusedAt: ago(ABANDONED_AFTER_MS + 1) }),
      false,
    ],
  ])('%s', (_, r, live) => {
    const result = liveWaiting([r], bindings, NOW);
    expect(result.live).toEqual(live ? [r] : []);
    expect(result.forget).toEqual(live ? [] : [r.binding]);
  });
});

describe('waitingStatus', () => {
  it("lists the quota's own records oldest first, then by name", () => {
    const records = [
      record('c', { since: ago(10) }),
      record('b', { since: ago(20) }),
      record('a', { since: ago(10) }),
      record('other', { quota: 'gpu', since: ago(30) }),
    ];
    expect(waitingStatus('compute', records)).toEqual([
      { binding: 'b', requested: { cpu: '2' }, free: { cpu: '1' }, since: ago(20) },
      { binding: 'a', requested: { cpu: '2' }, free: { cpu: '1' }, since: ago(10) },
      { binding: 'c', requested: { cpu: '2' }, free: { cpu: '1' }, since: ago(10) },
    ]);
  });
});

describe('freeOf', () => {
  it.each<[string, Record<string, Record<string, string>>, Record<string, string>]>([
    [
      'hard - used - reserved',
      { hard: { cpu: '10' }, used: { cpu: '4' }, reserved: { cpu: '1500m' } },
      { cpu: '4500m' },
    ],
    [
      'never below zero',
      { hard: { cpu: '10', pods: '5' }, used: { cpu: '12', pods: '1' } },
      { cpu: '0', pods: '4' },
    ],
    ['only the keys of hard', { hard: { cpu: '1' }, used: { memory: '1Gi' } }, { cpu: '1' }],
  ])('%s', (_, status, expected) => {
    const free = freeOf(status);
    expect(Object.keys(free)).toEqual(Object.keys(expected));
    for (const [key, value] of Object.entries(expected))
      expect(free[key]!.cmp(list({ x: value })['x']!)).toBe(0);
  });
});

describe('requeueOrder', () => {
  const free = (cpu: string) => new Map([['compute', list({ cpu })]]);
  const names = (chosen: WaitingChange[]) => chosen.map((r) => r.binding);
  it.each<[string, WaitingChange[], Map<string, ResourceList>, string[]]>([
    ['nothing waiting', [], free('10'), []],
    [
      'the oldest that fit',
      [record('b', { since: ago(10) }), record('a', { since: ago(20) })],
      free('4'),
      ['a', 'b'],
    ],
    [
      'only as many as fit',
      [record('a', { since: ago(30) }), record('b', { since: ago(20) }), record('c', { since: ago(10) })],
      free('5'),
      ['a', 'b'],
    ],
    [
      'a younger, smaller change never overtakes the oldest',
      [
        record('big', { since: ago(30), requested: { cpu: '8' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('4'),
      [],
    ],
    [
      'a change in flight is not requeued again and holds what it asked',
      [record('a', { since: ago(30), requeuedAt: ago(1_000) }), record('b', { since: ago(20) })],
      free('3'),
      [],
    ],
    [
      'a change requeued long ago is requeued again',
      [record('a', { requeuedAt: ago(20_000) })],
      free('2'),
      ['a'],
    ],
    ['a key the quota has no room on', [record('a', { requested: { pods: '1' } })], free('10'), []],
    ['a quota that is gone', [record('a', { quota: 'deleted' })], free('10'), []],
    [
      'quotas are independent',
      [
        record('a', { since: ago(30), requested: { cpu: '9' } }),
        record('g', { quota: 'gpu', since: ago(20), requested: { gpu: '1' } }),
      ],
      new Map([
        ['compute', list({ cpu: '1' })],
        ['gpu', list({ gpu: '1' })],
      ]),
      ['g'],
    ],
  ])('%s', (_, records, available, expected) => {
    expect(names(requeueOrder(records, available, NOW, 10_000))).toEqual(expected);
  });
});
