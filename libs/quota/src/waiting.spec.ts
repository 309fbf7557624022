import type { ResourceBinding } from '#api';
import { parseResourceList, type ResourceList } from '#quantity';
import { admitBatch, usageUnknownMessage, type Decision } from './admission.js';
import { bindingCharge } from './charge.js';
import {
  ABANDONED_AFTER_MS,
  admissionMark,
  specDigest,
  decodeAdmittedMark,
  decodeWaiting,
  flushWaiting,
  liveWaiting,
  recordRefusal,
  REFUSAL_REWRITE_AFTER_MS,
  refusalNeedsWrite,
  refusedWriter,
  requeueOrder,
  REQUEUE_SETTLE_MS,
  roomOf,
  schedulePriority,
  specChanged,
  STARVING_AFTER_MS,
  waitingRefusal,
  waitingStatus,
  type AdmittedMark,
  type QuotaRoom,
  type WaitingChange,
  type WaitingNews,
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

describe('specDigest', () => {
  const spec = { replicas: 2, clusters: [{ name: 'm1', replicas: 2 }] };
  it.each<[string, ResourceBinding, boolean]>([
    ['the same spec', rb('web', spec), true],
    ['the same spec on another object', rb('web', spec, 'uid-other'), true],
    ['only the requeue poke differs', rb('web', { ...spec, rescheduleTriggeredAt: ago(0) }), true],
    [
      "only the template's class the services add differs",
      rb('web', { ...spec, replicaRequirements: { priorityClassName: 'high' } }),
      true,
    ],
    ['other replicas', rb('web', { ...spec, replicas: 3 }), false],
    ['another placement', rb('web', { ...spec, clusters: [{ name: 'm2', replicas: 2 }] }), false],
    [
      'another resource request',
      rb('web', { ...spec, replicaRequirements: { resourceRequest: { cpu: '1' } } }),
      false,
    ],
  ])('%s: %p', (_name, other, same) => {
    expect(specDigest(other) === specDigest(rb('web', spec))).toBe(same);
  });
});

describe('admissionMark', () => {
  const at = new Date(ago(0));
  it.each<[string, ResourceBinding, ResourceBinding | undefined, AdmittedMark]>([
    [
      "an update: the stored binding's uid",
      rb('web', { replicas: 3 }),
      rb('web', {}),
      { uid: 'uid-web', at: at.toISOString() },
    ],
    [
      "a create: the new object's uid",
      rb('web', {}, 'uid-new'),
      undefined,
      { uid: 'uid-new', at: at.toISOString() },
    ],
  ])('%s', (_name, object, old, expected) => {
    expect(admissionMark(object, old, at)).toEqual(expected);
  });
});

describe('flushWaiting (replicas flushing in any order)', () => {
  const mark = (msAgo: number, uid = 'uid-web'): AdmittedMark => ({ uid, at: ago(msAgo) });
  /** `uid` null: a create's refusal, which names no object. */
  const refused = (msAgo: number, uid: string | null = 'uid-web') => ({
    change: { ...refusal, uid: uid ?? undefined },
    at: new Date(ago(msAgo)),
  });
  const stored = (msAgo: number) => record('web', { since: ago(msAgo), lastRefusedAt: ago(msAgo) });
  // [case, stored record, stored mark, news, its lastRefusedAt if a record is left]
  it.each<[string, WaitingChange | undefined, AdmittedMark | undefined, WaitingNews, string | undefined]>([
    ['a refusal with nothing stored is recorded', undefined, undefined, { refused: refused(100) }, ago(100)],
    [
      "another replica's admission decided later: the refusal is not brought back",
      undefined,
      mark(50),
      { refused: refused(100) },
      undefined,
    ],
    [
      'an admission and a refusal in the same millisecond: the refusal is recorded',
      undefined,
      mark(100),
      { refused: refused(100) },
      ago(100),
    ],
    [
      "another replica's admission decided earlier: the refusal came after, recorded",
      undefined,
      mark(200),
      { refused: refused(100) },
      ago(100),
    ],
    [
      'an admission of another incarnation (uid) orders nothing: recorded',
      undefined,
      mark(50, 'uid-old'),
      { refused: refused(100) },
      ago(100),
    ],
    [
      "a create's refusal before an admission of the name is not brought back",
      undefined,
      mark(50, 'uid-new'),
      { refused: refused(100, null) },
      undefined,
    ],
    [
      "a create's refusal after an admission of the name is recorded (the binding was deleted since)",
      undefined,
      mark(200),
      { refused: refused(100, null) },
      ago(100),
    ],
    [
      "a create's refusal flushed after a refusal of an update of the binding it created leaves that",
      stored(100),
      undefined,
      { refused: refused(100, null) },
      ago(100),
    ],
    [
      "a create's refusal after another create's refusal is the latest",
      record('web', { uid: undefined, lastRefusedAt: ago(300) }),
      undefined,
      { refused: refused(100, null) },
      ago(100),
    ],
    [
      'an older refusal flushed after a newer one leaves the newer',
      stored(100),
      undefined,
      { refused: refused(200) },
      ago(100),
    ],
    [
      'an admission ends the wait of a refusal decided before it',
      stored(2_000),
      undefined,
      { admitted: mark(50) },
      undefined,
    ],
    [
      'an admission less than a second after a refusal leaves it (a repeat of it may not be written)',
      stored(500),
      undefined,
      { admitted: mark(50) },
      ago(500),
    ],
    [
      'an admission flushed late leaves a refusal decided after it',
      stored(50),
      undefined,
      { admitted: mark(100) },
      ago(50),
    ],
    [
      "a create's admission leaves the wait of a refused update of the binding stored (it cannot land beside it)",
      stored(100),
      undefined,
      { admitted: mark(50, 'uid-new') },
      ago(100),
    ],
    [
      "a create's admission ends a refused create's wait",
      record('web', { uid: undefined, lastRefusedAt: ago(10) }),
      undefined,
      { admitted: mark(50, 'uid-new') },
      undefined,
    ],
    [
      "this flush's own refusal after its admission starts a new wait, even within the same millisecond",
      stored(300),
      undefined,
      { admitted: mark(100), refused: refused(100) },
      ago(100),
    ],
  ])('%s', (_name, before, storedMark, news, lastRefusedAt) => {
    const after = flushWaiting(before, storedMark, news);
    expect(after.record?.lastRefusedAt).toBe(lastRefusedAt);
  });

  it('keeps the later of two admission marks of the same binding', () => {
    const newer = mark(50);
    expect(flushWaiting(undefined, newer, { admitted: mark(100) }).mark).toBe(newer);
    expect(flushWaiting(undefined, mark(100), { admitted: newer }).mark).toBe(newer);
    const recreated = mark(200, 'uid-new');
    expect(flushWaiting(undefined, newer, { admitted: recreated }).mark).toBe(recreated);
  });

  it('changes nothing when there is nothing to change (the recorder then writes nothing)', () => {
    const same = stored(100);
    const kept = mark(200);
    const after = flushWaiting(same, kept, {
      refused: {
        change: { ...refusal, requested: same.requested, free: same.free },
        at: new Date(Date.parse(same.lastRefusedAt) + 10),
      },
    });
    expect(after.record).toBe(same);
    expect(after.mark).toBe(kept);
  });

  it.each<[string, string | null, AdmittedMark | undefined]>([
    ['none', null, undefined],
    ['a mark', JSON.stringify(mark(0)), mark(0)],
    ['not JSON', '{', undefined],
    ['not a mark', JSON.stringify({ uid: 'x' }), undefined],
  ])('decodeAdmittedMark: %s', (_name, raw, expected) => {
    expect(decodeAdmittedMark(raw)).toEqual(expected);
  });
});

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
  it.each([
    ['the same millisecond', 0],
    ['a webhook clock 5 s behind the reconciler that stamped it', 5_000],
  ])('stamps a refusal after the requeue before it: %s', (_, behind) => {
    const requeuedAt = NOW.toISOString();
    const previous = record('web', { requeuedAt });
    const next = recordRefusal(previous, refusal, new Date(NOW.getTime() - behind));
    expect(next.lastRefusedAt).toBe(new Date(NOW.getTime() + 1).toISOString());
    expect(
      liveWaiting([next], [rb('web', {})], new Date(NOW.getTime() + REQUEUE_SETTLE_MS + 1)).live,
    ).toEqual([next]);
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
      const forgotten = (record: WaitingChange) =>
        liveWaiting([record], bindings, now).forget.map((r) => r.binding);
      expect(forgotten(requeued)).toEqual(forgotten(skipped));
    }
  });
});

describe('decodeWaiting', () => {
  it('reads back what recordRefusal wrote', () => {
    const written = record('web', { requeuedAt: ago(1), spec: 'digest' });
    expect(decodeWaiting(JSON.stringify(written))).toEqual(written);
  });
  it.each<[string, string]>([
    ['not JSON', '{'],
    ['no binding', JSON.stringify({ ...record('web'), binding: 1 })],
    ['a number as quantity', JSON.stringify({ ...record('web'), requested: { cpu: 2 } })],
    ['a bad time', JSON.stringify({ ...record('web'), since: 'yesterday' })],
    ['an unknown writer', JSON.stringify({ ...record('web'), retryVia: 'user' })],
    ['a bad requeue time', JSON.stringify({ ...record('web'), requeuedAt: 'soon' })],
    ['a number as spec digest', JSON.stringify({ ...record('web'), spec: 1 })],
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
    expect(result.forget).toEqual(live ? [] : [r]);
  });

  // web as stored: 3 replicas. A record carries the refused write's spec digest.
  const stored = rb('web', { replicas: 3 });
  it.each<[string, WaitingChange, boolean]>([
    [
      'its binding stored with the very spec refused (another write of it admitted): in place',
      record('web', { spec: specDigest(stored) }),
      false,
    ],
    [
      'its binding stored with another spec: waiting',
      record('web', { spec: specDigest(rb('web', { replicas: 4 })) }),
      true,
    ],
    ['a record written before the digest existed: waiting', record('web'), true],
    [
      "a refused create's record, no binding of the name yet: waiting",
      record('other', { uid: undefined, spec: specDigest(stored) }),
      true,
    ],
  ])('%s', (_, r, live) => {
    expect(liveWaiting([r], [stored], NOW).live).toEqual(live ? [r] : []);
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

describe('roomOf', () => {
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
    const { hard, free } = roomOf(status);
    expect(hard).toEqual(list(status['hard']!));
    expect(Object.keys(free)).toEqual(Object.keys(expected));
    for (const [key, value] of Object.entries(expected))
      expect(free[key]!.cmp(list({ x: value })['x']!)).toBe(0);
  });
});

describe('requeueOrder', () => {
  const room = (hard: Record<string, string>, free: Record<string, string>): QuotaRoom => ({
    hard: list(hard),
    free: list(free),
  });
  const free = (cpu: string) => new Map([['compute', room({ cpu: '10' }, { cpu })]]);
  const names = (chosen: WaitingChange[]) => chosen.map((r) => r.binding);
  const starved = ago(STARVING_AFTER_MS);
  const waitedLess = ago(STARVING_AFTER_MS - 1);
  it.each<[string, WaitingChange[], Map<string, QuotaRoom>, string[]]>([
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
      'N7: an older change that cannot fit now (+20 over hard 10) does not block a younger one that does',
      [
        record('big', { since: ago(60_000), requested: { cpu: '20' }, needs: { cpu: '20' } }),
        record('small', { since: ago(30_000), requested: { cpu: '1' }, needs: { cpu: '1' } }),
      ],
      free('5'),
      ['small'],
    ],
    [
      'an older change that does not fit now, not yet starving, does not block either',
      [
        record('big', { since: waitedLess, requested: { cpu: '8' }, needs: { cpu: '8' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('5'),
      ['small'],
    ],
    [
      'a starving change that could fit once enough frees holds the room it asks',
      [
        record('big', { since: starved, requested: { cpu: '8' }, needs: { cpu: '8' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('5'),
      [],
    ],
    [
      'a starving change holds only its own keys',
      [
        record('big', { since: starved, requested: { cpu: '8' }, needs: { cpu: '8' } }),
        record('pods', { since: ago(20), requested: { pods: '1' } }),
      ],
      new Map([['compute', room({ cpu: '10', pods: '10' }, { cpu: '5', pods: '3' })]]),
      ['pods'],
    ],
    [
      'a starving change whose binding would exceed hard in all (a scale-up past the limit) never blocks',
      [
        record('grow', { since: starved, requested: { cpu: '4' }, needs: { cpu: '12' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('3'),
      ['small'],
    ],
    [
      'a starving change refused over pods that needs more cpu than hard now (cpu lowered since) never blocks',
      [
        record('wide', { since: starved, requested: { pods: '12' }, needs: { cpu: '6', pods: '12' } }),
        record('small', { since: ago(20), requested: { pods: '5' } }),
      ],
      new Map([['compute', room({ cpu: '2', pods: '12' }, { cpu: '2', pods: '11' })]]),
      ['small'],
    ],
    [
      'a change that fits now on the keys it was refused on but can never fit (cpu lowered since) is not requeued',
      [record('wide', { since: ago(20), requested: { pods: '2' }, needs: { cpu: '6', pods: '2' } })],
      new Map([['compute', room({ cpu: '2', pods: '12' }, { cpu: '2', pods: '11' })]]),
      [],
    ],
    [
      'a starving change asking more than hard never blocks',
      [
        record('big', { since: starved, requested: { cpu: '20' }, needs: { cpu: '20' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('5'),
      ['small'],
    ],
    [
      'a record without needs (an older version’s) is judged by what it asked',
      [
        record('big', { since: starved, requested: { cpu: '8' } }),
        record('small', { since: ago(20), requested: { cpu: '1' } }),
      ],
      free('5'),
      [],
    ],
    [
      'higher priority first, whatever its age',
      [
        record('old-low', { since: ago(60_000), requested: { cpu: '3' } }),
        record('young-high', { since: ago(10), requested: { cpu: '3' }, priority: 1000 }),
      ],
      free('4'),
      ['young-high'],
    ],
    [
      'a negative priority after none',
      [
        record('negative', { since: ago(60_000), requested: { cpu: '3' }, priority: -5 }),
        record('none', { since: ago(10), requested: { cpu: '3' } }),
      ],
      free('4'),
      ['none'],
    ],
    [
      'same priority: oldest first',
      [
        record('young', { since: ago(10), requested: { cpu: '3' }, priority: 7 }),
        record('old', { since: ago(20), requested: { cpu: '3' }, priority: 7 }),
      ],
      free('4'),
      ['old'],
    ],
    [
      'a starving lower-priority change does not hold room against a higher one',
      [
        record('low', { since: starved, requested: { cpu: '8' }, needs: { cpu: '8' } }),
        record('high', { since: ago(10), requested: { cpu: '1' }, priority: 10 }),
      ],
      free('5'),
      ['high'],
    ],
    [
      'a starving higher-priority change holds room against an older lower one',
      [
        record('low', { since: ago(STARVING_AFTER_MS * 2), requested: { cpu: '1' } }),
        record('high', { since: starved, requested: { cpu: '8' }, needs: { cpu: '8' }, priority: 10 }),
      ],
      free('5'),
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
    [
      'a change requeued and not refused since is in flight until it settles, not requeued again',
      [record('a', { requeuedAt: ago(20_000), lastRefusedAt: ago(60_000) })],
      free('2'),
      [],
    ],
    [
      'a "status unknown" refusal (nothing requested) is requeued once its quota is counted',
      [record('unknown', { requested: {}, free: {} })],
      free('0'),
      ['unknown'],
    ],
    [
      'a key the quota no longer limits asks nothing of it',
      [record('a', { requested: { cpu: '1', pods: '1' } })],
      free('1'),
      ['a'],
    ],
    ['a key it still limits must fit', [record('a', { requested: { cpu: '2', pods: '1' } })], free('1'), []],
    [
      'a quota that is gone (not counted: the reconcile counts every quota) limits nothing',
      [record('a', { quota: 'deleted' })],
      free('0'),
      ['a'],
    ],
    [
      'a change of a quota that is gone requeued moments ago is in flight',
      [record('a', { quota: 'deleted', requeuedAt: ago(1_000) })],
      free('0'),
      [],
    ],
    [
      'quotas are independent',
      [
        record('a', { since: starved, requested: { cpu: '9' } }),
        record('g', { quota: 'gpu', since: ago(20), requested: { gpu: '1' } }),
      ],
      new Map([
        ['compute', room({ cpu: '10' }, { cpu: '1' })],
        ['gpu', room({ gpu: '1' }, { gpu: '1' })],
      ]),
      ['g'],
    ],
  ])('%s', (_, records, available, expected) => {
    expect(names(requeueOrder(records, available, NOW, 10_000))).toEqual(expected);
  });

  it('a starving change is requeued as soon as enough frees, ahead of younger ones', () => {
    const records = [
      record('big', { since: starved, requested: { cpu: '8' }, needs: { cpu: '8' } }),
      record('small', { since: ago(20), requested: { cpu: '1' } }),
    ];
    expect(names(requeueOrder(records, free('8'), NOW, 10_000))).toEqual(['big']);
    expect(names(requeueOrder(records, free('9'), NOW, 10_000))).toEqual(['big', 'small']);
  });
});

describe('specChanged', () => {
  const poke = { rescheduleTriggeredAt: '2026-11-24T12:00:01Z' };
  it.each<[string, ResourceBinding, ResourceBinding | undefined, boolean]>([
    ['a create', rb('web', {}), undefined, true],
    ['a replicas change', rb('web', { replicas: 4 }), rb('web', {}), true],
    [
      'metadata only',
      { ...rb('web', {}), metadata: { name: 'web', labels: { a: 'b' } } },
      rb('web', {}),
      false,
    ],
    ['a requeue’s poke (rescheduleTriggeredAt only)', rb('web', poke), rb('web', {}), false],
    ['a later poke', rb('web', { rescheduleTriggeredAt: '2026-11-24T12:00:09Z' }), rb('web', poke), false],
    [
      'a poke with a placement change',
      rb('web', { ...poke, clusters: [{ name: 'm1' }] }),
      rb('web', {}),
      true,
    ],
  ])('%s', (_, object, old, expected) => {
    expect(specChanged(object, old)).toBe(expected);
  });
});

describe('schedulePriority', () => {
  const withPriority = (schedulePriority: unknown) =>
    rb('web', { schedulePriority } as Partial<ResourceBinding['spec']>);
  it.each<[string, ResourceBinding, number]>([
    ['none', rb('web', {}), 0],
    ['Karmada’s resolved value', withPriority({ priority: 1000 }), 1000],
    ['a negative value', withPriority({ priority: -10 }), -10],
    ['not a number', withPriority({ priority: 'high' }), 0],
    ['not an integer', withPriority({ priority: 1.5 }), 0],
    [
      'a priorityClassName alone is not resolved',
      rb('web', { replicaRequirements: { priorityClassName: 'high' } }),
      0,
    ],
  ])('%s', (_, binding, expected) => {
    expect(schedulePriority(binding)).toBe(expected);
  });
});

describe('waitingRefusal', () => {
  const stored = rb('web', {
    replicas: 2,
    replicaRequirements: { resourceRequest: { cpu: '1' } },
    clusters: [{ name: 'm1', replicas: 2 }],
  });
  const scaled = rb('web', {
    replicas: 12,
    replicaRequirements: { resourceRequest: { cpu: '1' } },
    clusters: [{ name: 'm1', replicas: 12 }],
    schedulePriority: { priority: 100 },
  } as Partial<ResourceBinding['spec']>);
  /** What admission decides for `scaled` over `stored` against quota compute (hard cpu=10, `used`). */
  const decide = (used: Record<string, string>): Extract<Decision, { allowed: false }> => {
    const [decision] = admitBatch(
      [{ name: 'compute', hard: list({ cpu: '10' }), used: list(used), reserved: {}, reservations: [] }],
      [
        {
          binding: { namespace: 'team-a', name: 'web', uid: 'uid-web' },
          charge: bindingCharge(scaled).charge,
          old: { charge: bindingCharge(stored).charge, quotas: ['compute'] },
          dryRun: false,
        },
      ],
      () => true,
      { now: NOW, ttlSeconds: 300, landingWindowSeconds: 60 },
    ).decisions;
    if (decision === undefined || decision.allowed) throw new Error('expected a refusal');
    return decision;
  };

  it('records a limit refusal with its shortfall, what the binding would hold in all on every key, and its priority', () => {
    expect(waitingRefusal(scaled, stored, decide({ cpu: '2' }))).toEqual({
      binding: 'web',
      uid: 'uid-web',
      quota: 'compute',
      requested: { cpu: '10' },
      free: { cpu: '8' },
      // On every member too, under its member keys: a cap there may keep it from ever fitting.
      needs: {
        'count/deployments.apps': '1',
        'count/deployments.apps@m1': '1',
        cpu: '12',
        'cpu@m1': '12',
        pods: '12',
        'pods@m1': '12',
        'requests.cpu': '12',
        'requests.cpu@m1': '12',
      },
      retryVia: 'template',
      template: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      priority: 100,
      spec: specDigest(scaled),
    });
  });

  it('records a "status unknown" refusal with nothing requested: the count cures it, not room', () => {
    const refusal = decide({});
    expect(refusal.message).toMatch(/^status unknown for quota: compute,/);
    expect(waitingRefusal(scaled, stored, refusal)).toEqual({
      binding: 'web',
      uid: 'uid-web',
      quota: 'compute',
      requested: {},
      free: {},
      retryVia: 'template',
      template: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      priority: 100,
      spec: specDigest(scaled),
    });
  });

  it.each<[string, Extract<Decision, { allowed: false }>]>([
    [
      'requests missing',
      { allowed: false, quota: 'compute', exceeded: [], message: 'spec.replicaRequirements: no cpu request' },
    ],
    [
      'another quota’s "status unknown" message',
      { allowed: false, quota: 'compute', exceeded: [], message: usageUnknownMessage('compute-2', ['cpu']) },
    ],
  ])('records nothing for %s', (_, refusal) => {
    expect(waitingRefusal(scaled, stored, refusal)).toBeUndefined();
  });
});
