import { formatList, Quantity, type ResourceList } from '#quantity';
import {
  admitBatch,
  increasesNothing,
  type AdmissionItem,
  type BatchResult,
  type Decision,
} from './admission.js';
import type { KarmadaQuota } from '#api';
import {
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type BindingKey,
  type QuotaState,
  type ReservationEntry,
} from './state.js';

const NOW = new Date('2026-11-22T10:00:00Z');
const EXPIRES = '2026-11-22T10:02:00.000Z';
/** An expiration set by an earlier admission, still in the future. */
const EARLIER = '2026-11-22T10:01:00.000Z';
const TTL = 120;
const LANDING = 60;

const list = (raw: Record<string, string> = {}): ResourceList =>
  Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Quantity.parse(v)]));

/** A quota whose usage is known on every hard key (0 unless `used` says otherwise). */
const quota = (
  name: string,
  hard: Record<string, string>,
  used: Record<string, string> = {},
  reservations: ReservationEntry[] = [],
): QuotaState => ({
  name,
  hard: list(hard),
  used: list({ ...Object.fromEntries(Object.keys(hard).map((k) => [k, '0'])), ...used }),
  reserved: sumReserved(reservations),
  reservations,
});

/** Every quota name these tests use: an UPDATE's old object matches them all unless told otherwise. */
const ALL_QUOTAS = ['team-a', 'cpu-quota', 'gpu', 'mem-quota', 'pod-quota'];

const key = (name: string, uid?: string): BindingKey => ({
  namespace: 'team-a',
  name,
  ...(uid ? { uid } : {}),
});

const reservation = (
  name: string,
  reserved: Record<string, string>,
  charge: Record<string, string> = reserved,
  extra: { uid?: string; expirationTime?: string } = {},
): ReservationEntry => ({
  binding: key(name, extra.uid),
  reserved: list(reserved),
  charge: list(charge),
  ...(extra.expirationTime ? { expirationTime: extra.expirationTime } : {}),
});

interface ItemOptions {
  old?: Record<string, string>;
  /** The quotas whose scopes the old object matched (default: all). */
  oldQuotas?: string[];
  dryRun?: boolean;
  uid?: string;
  /** The old object's resourceVersion the UPDATE was decided against. */
  version?: string;
}

/** A CREATE by default; `old` makes it an UPDATE of a persisted binding. */
const item = (name: string, charge: Record<string, string>, options: ItemOptions = {}): AdmissionItem => ({
  binding: key(name, options.uid),
  charge: list(charge),
  ...(options.old
    ? {
        old: {
          charge: list(options.old),
          quotas: options.oldQuotas ?? ALL_QUOTAS,
          ...(options.version ? { resourceVersion: options.version } : {}),
        },
      }
    : {}),
  dryRun: options.dryRun ?? false,
});

const admit = (
  quotas: QuotaState[],
  items: AdmissionItem[],
  matches: (quota: string, index: number) => boolean = () => true,
): BatchResult =>
  admitBatch(quotas, items, matches, { now: NOW, ttlSeconds: TTL, landingWindowSeconds: LANDING });

/** Wire-like view of a state's reservations, for readable expectations. */
const view = (state: QuotaState | undefined) =>
  (state?.reservations ?? []).map((r) => ({
    name: r.binding.name,
    ...(r.binding.uid ? { uid: r.binding.uid } : {}),
    reserved: formatList(r.reserved),
    charge: formatList(r.charge),
    ...(r.expirationTime ? { expirationTime: r.expirationTime } : {}),
    ...(r.operation ? { operation: r.operation } : {}),
  }));

const ALLOWED: Decision = { allowed: true };

describe('admitBatch: limits', () => {
  it.each<[string, QuotaState, AdmissionItem, Decision]>([
    [
      'exactly at the limit',
      quota('team-a', { cpu: '10' }, { cpu: '6' }, [reservation('x', { cpu: '2' })]),
      item('web', { cpu: '2' }),
      ALLOWED,
    ],
    [
      'one over the limit',
      quota('team-a', { cpu: '10' }, { cpu: '6' }, [reservation('x', { cpu: '2' })]),
      item('web', { cpu: '3' }),
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['cpu'],
        message: 'exceeded quota: team-a, requested: cpu=3, used: cpu=8, limited: cpu=10',
        shortfall: { requested: { cpu: '3' }, free: { cpu: '2' } },
      },
    ],
    [
      'one milli-CPU over',
      quota('team-a', { cpu: '10' }, { cpu: '9' }),
      item('web', { cpu: '1001m' }),
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['cpu'],
        message: 'exceeded quota: team-a, requested: cpu=1001m, used: cpu=9, limited: cpu=10',
        shortfall: { requested: { cpu: '1001m' }, free: { cpu: '1' } },
      },
    ],
    [
      'only exceeded keys are reported, sorted, with canonical quantities',
      quota('team-a', { pods: '5', memory: '1Gi', cpu: '2' }, { cpu: '1.5', memory: '512Mi' }),
      item('web', { pods: '1', memory: '1Gi', cpu: '1' }),
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['cpu', 'memory'],
        message:
          'exceeded quota: team-a, requested: cpu=1,memory=1Gi, used: cpu=1500m,memory=512Mi, limited: cpu=2,memory=1Gi',
        shortfall: { requested: { cpu: '1', memory: '1Gi' }, free: { cpu: '500m', memory: '512Mi' } },
      },
    ],
    [
      'a key absent from used counts as 0',
      quota('team-a', { 'requests.nvidia.com/gpu': '1' }),
      item('web', { 'requests.nvidia.com/gpu': '2' }),
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['requests.nvidia.com/gpu'],
        message:
          'exceeded quota: team-a, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1',
        shortfall: {
          requested: { 'requests.nvidia.com/gpu': '2' },
          free: { 'requests.nvidia.com/gpu': '1' },
        },
      },
    ],
    [
      'keys the quota does not track are not checked',
      quota('team-a', { cpu: '1' }),
      item('web', { cpu: '1', memory: '1Ei' }),
      ALLOWED,
    ],
    [
      'no hard key in common: admitted trivially',
      quota('team-a', { pods: '0' }),
      item('web', { cpu: '100' }),
      ALLOWED,
    ],
    [
      'a zero limit denies any increase',
      quota('team-a', { pods: '0' }),
      item('web', { pods: '1' }),
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['pods'],
        message: 'exceeded quota: team-a, requested: pods=1, used: pods=0, limited: pods=0',
        shortfall: { requested: { pods: '1' }, free: { pods: '0' } },
      },
    ],
    [
      'already over the limit: a change that increases nothing is allowed',
      quota('team-a', { cpu: '1' }, { cpu: '5' }),
      item('web', { cpu: '2' }, { old: { cpu: '2' } }),
      ALLOWED,
    ],
  ])('%s', (_name, state, admission, expected) => {
    const result = admit([state], [admission]);
    expect(result.decisions).toEqual([expected]);
    if (!expected.allowed) {
      expect(result.changed).toEqual([]);
      expect(result.quotas[0]).toBe(state);
    }
  });
});

describe('admitBatch: running total', () => {
  it('evaluates the batch in order against a running total', () => {
    const state = quota('team-a', { cpu: '10' }, { cpu: '1' });
    const result = admit(
      [state],
      [item('a', { cpu: '4' }), item('b', { cpu: '4' }), item('c', { cpu: '4' }), item('d', { cpu: '1' })],
    );
    expect(result.decisions).toEqual([
      ALLOWED,
      ALLOWED,
      {
        allowed: false,
        quota: 'team-a',
        exceeded: ['cpu'],
        message: 'exceeded quota: team-a, requested: cpu=4, used: cpu=9, limited: cpu=10',
        shortfall: { requested: { cpu: '4' }, free: { cpu: '1' } },
      },
      ALLOWED,
    ]);
    expect(view(result.quotas[0]).map((r) => [r.name, r.reserved])).toEqual([
      ['a', { cpu: '4' }],
      ['b', { cpu: '4' }],
      ['d', { cpu: '1' }],
    ]);
    expect(result.changed).toEqual(['team-a']);
    expect(state.reservations).toEqual([]); // input not mutated
  });

  it('dryRun items get the real answer but change nothing', () => {
    const state = quota('team-a', { cpu: '10' });
    const result = admit(
      [state],
      [
        item('a', { cpu: '8' }, { dryRun: true }),
        item('b', { cpu: '11' }, { dryRun: true }),
        item('c', { cpu: '8' }),
        item('d', { cpu: '8' }, { dryRun: true }),
      ],
    );
    expect(result.decisions.map((d) => d.allowed)).toEqual([true, false, true, false]);
    expect(result.decisions[1]).toMatchObject({
      message: 'exceeded quota: team-a, requested: cpu=11, used: cpu=0, limited: cpu=10',
    });
    expect(result.decisions[3]).toMatchObject({
      message: 'exceeded quota: team-a, requested: cpu=8, used: cpu=8, limited: cpu=10',
    });
    expect(view(result.quotas[0]).map((r) => r.name)).toEqual(['c']);
  });

  it('a dryRun-only batch writes nothing', () => {
    const state = quota('team-a', { cpu: '10' });
    const result = admit([state], [item('a', { cpu: '1' }, { dryRun: true })]);
    expect(result).toEqual({
      decisions: [ALLOWED],
      awaitsWrite: [false],
      quotas: [state],
      changed: [],
      claims: [undefined],
    });
    expect(result.quotas[0]).toBe(state);
  });
});

describe('admitBatch: idempotency', () => {
  it('the same CREATE twice in a batch charges once', () => {
    const result = admit(
      [quota('team-a', { cpu: '5' })],
      [item('web', { cpu: '4' }, { uid: 'u1' }), item('web', { cpu: '4' }, { uid: 'u1' })],
    );
    expect(result.decisions).toEqual([ALLOWED, ALLOWED]);
    expect(view(result.quotas[0])).toEqual([
      { name: 'web', uid: 'u1', reserved: { cpu: '4' }, charge: { cpu: '4' }, expirationTime: EXPIRES },
    ]);
  });

  it('a retried request in a later batch charges once and writes nothing', () => {
    const first = admit([quota('team-a', { cpu: '5' })], [item('web', { cpu: '4' }, { uid: 'u1' })]);
    const second = admit(first.quotas, [item('web', { cpu: '4' }, { uid: 'u1' })]);
    expect(second.decisions).toEqual([ALLOWED]);
    expect(second.changed).toEqual([]);
    expect(second.quotas[0]).toBe(first.quotas[0]);
  });

  it('a retried UPDATE finds its increase already held', () => {
    const state = quota('team-a', { cpu: '10' }, { cpu: '4' });
    const update = item('web', { cpu: '8' }, { uid: 'u1', old: { cpu: '4' }, version: '42' });
    const first = admit([state], [update]);
    expect(view(first.quotas[0])).toEqual([
      {
        name: 'web',
        uid: 'u1',
        reserved: { cpu: '4' },
        charge: { cpu: '8' },
        expirationTime: EXPIRES,
        operation: 'Update',
      },
    ]);
    // Later, while the claim has more than the landing window to live, the same UPDATE retried: nothing
    // more to charge, nothing to write.
    const second = admitBatch(first.quotas, [update, update], () => true, {
      now: new Date('2026-11-22T10:00:59Z'),
      ttlSeconds: TTL,
      landingWindowSeconds: LANDING,
    });
    expect(second.decisions).toEqual([ALLOWED, ALLOWED]);
    expect(second.changed).toEqual([]);
    expect(second.quotas[0]).toBe(first.quotas[0]);
  });

  it('a retried CREATE near the limit is still admitted (its charge is held)', () => {
    const state = quota('team-a', { cpu: '4' }, {}, [
      reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'u1', expirationTime: EXPIRES }),
    ]);
    expect(admit([state], [item('web', { cpu: '4' }, { uid: 'u1' })]).decisions).toEqual([ALLOWED]);
  });

  it('the UPDATE that follows an admitted CREATE charges nothing more and keeps the expiration', () => {
    const created = admit([quota('team-a', { cpu: '4' })], [item('web', { cpu: '4' }, { uid: 'u1' })]);
    const updated = admit(created.quotas, [item('web', { cpu: '4' }, { uid: 'u1', old: { cpu: '4' } })]);
    expect(updated.decisions).toEqual([ALLOWED]);
    expect(view(updated.quotas[0])).toEqual([
      { name: 'web', uid: 'u1', reserved: { cpu: '4' }, charge: { cpu: '4' }, expirationTime: EXPIRES },
    ]);
    // Only the reconciler, having seen the persisted binding carry the charge, removes the expiration.
    expect(updated.changed).toEqual([]);
    expect(updated.quotas[0]).toBe(created.quotas[0]);
  });
});

describe('admitBatch: scaling', () => {
  /** The pending claim of an UPDATE of `web` (uid u1) decided against version 42. */
  const updateClaim = (
    reserved: Record<string, string>,
    charge: Record<string, string>,
  ): ReservationEntry => ({
    ...reservation('web', reserved, charge, { uid: 'u1', expirationTime: EXPIRES }),
    operation: 'Update',
    resourceVersion: '42',
  });
  const claimView = (reserved: Record<string, string>, charge: Record<string, string>) => ({
    name: 'web',
    uid: 'u1',
    reserved,
    charge,
    expirationTime: EXPIRES,
    operation: 'Update' as const,
  });
  it.each<[string, QuotaState, AdmissionItem, boolean, ReturnType<typeof view>]>([
    [
      'scale-up charges only the increase, pending until the reconciler sees it',
      quota('team-a', { cpu: '10' }, { cpu: '8' }),
      item('web', { cpu: '6' }, { old: { cpu: '4' } }),
      true,
      [{ name: 'web', reserved: { cpu: '2' }, charge: { cpu: '6' }, expirationTime: EXPIRES }],
    ],
    [
      'scale-up one over: denied',
      quota('team-a', { cpu: '10' }, { cpu: '8' }),
      item('web', { cpu: '7' }, { old: { cpu: '4' } }),
      false,
      [],
    ],
    [
      'scale-up adds to an existing reservation and makes it pending',
      quota('team-a', { cpu: '10' }, { cpu: '2' }, [reservation('web', { cpu: '2' }, { cpu: '4' })]),
      item('web', { cpu: '6' }, { old: { cpu: '4' } }),
      true,
      [{ name: 'web', reserved: { cpu: '4' }, charge: { cpu: '6' }, expirationTime: EXPIRES }],
    ],
    [
      'scale-up of a pending reservation extends its expiration',
      quota('team-a', { cpu: '10' }, {}, [
        reservation('web', { cpu: '4' }, { cpu: '4' }, { expirationTime: EARLIER }),
      ]),
      item('web', { cpu: '6' }, { old: { cpu: '4' } }),
      true,
      [{ name: 'web', reserved: { cpu: '6' }, charge: { cpu: '6' }, expirationTime: EXPIRES }],
    ],
    [
      'scale-down is allowed over a lowered limit, persisted: nothing to reserve',
      quota('team-a', { cpu: '5' }, { cpu: '8' }),
      item('web', { cpu: '2' }, { old: { cpu: '4' } }),
      true,
      [],
    ],
    [
      'scale-down releases nothing: the reconciler does, once the binding persisted it',
      quota('team-a', { cpu: '5' }, { cpu: '8' }, [reservation('web', { cpu: '3' }, { cpu: '4' })]),
      item('web', { cpu: '2' }, { old: { cpu: '4' } }),
      true,
      [{ name: 'web', reserved: { cpu: '3' }, charge: { cpu: '4' } }],
    ],
    [
      'a decrease of a pending reservation keeps it as it is, expiration not extended',
      quota('team-a', { cpu: '5' }, {}, [
        reservation('web', { cpu: '4' }, { cpu: '4' }, { expirationTime: EARLIER }),
      ]),
      item('web', { cpu: '0' }),
      true,
      [{ name: 'web', reserved: { cpu: '4' }, charge: { cpu: '4' }, expirationTime: EARLIER }],
    ],
    [
      'a claim with less than the landing window left is not relied on: the increase is checked and claimed again, never below the claim',
      quota('team-a', { cpu: '10' }, {}, [
        reservation('web', { cpu: '4' }, { cpu: '8' }, { expirationTime: EARLIER }),
      ]),
      item('web', { cpu: '6' }, { old: { cpu: '4' } }),
      true,
      [{ name: 'web', reserved: { cpu: '6' }, charge: { cpu: '8' }, expirationTime: EXPIRES }],
    ],
    [
      'its own claim with the landing window left covers a change up to its charge: no write',
      quota('team-a', { cpu: '10' }, {}, [updateClaim({ cpu: '4' }, { cpu: '8' })]),
      item('web', { cpu: '6' }, { uid: 'u1', old: { cpu: '4' }, version: '42' }),
      true,
      [claimView({ cpu: '4' }, { cpu: '8' })],
    ],
    [
      'up on one key and down on another: the increase is checked and reserved, the decrease left to the reconciler',
      quota('team-a', { cpu: '10', memory: '4Gi' }, {}, [reservation('web', { cpu: '4', memory: '4Gi' })]),
      item('web', { cpu: '6', memory: '1Gi' }, { old: { cpu: '4', memory: '4Gi' } }),
      true,
      [
        {
          name: 'web',
          reserved: { cpu: '6', memory: '4Gi' },
          charge: { cpu: '6', memory: '1Gi' },
          expirationTime: EXPIRES,
        },
      ],
    ],
    [
      'up on one key over the limit and down on another: denied, nothing applied',
      quota('team-a', { cpu: '4', memory: '4Gi' }, {}, [reservation('web', { cpu: '4', memory: '4Gi' })]),
      item('web', { cpu: '6', memory: '1Gi' }, { old: { cpu: '4', memory: '4Gi' } }),
      false,
      [{ name: 'web', reserved: { cpu: '4', memory: '4Gi' }, charge: { cpu: '4', memory: '4Gi' } }],
    ],
    [
      'a settled reservation is never relied on: the increase over the stored object is checked',
      quota('team-a', { cpu: '10', pods: '10' }, { cpu: '9', pods: '9' }, [
        reservation('web', { cpu: '1' }, { cpu: '5', pods: '1' }),
      ]),
      item('web', { cpu: '5', pods: '2' }, { old: { cpu: '1', pods: '2' } }),
      false,
      [{ name: 'web', reserved: { cpu: '1' }, charge: { cpu: '5', pods: '1' } }],
    ],
    [
      'held is the larger of its own live claim and the stored charge, per key',
      quota('team-a', { cpu: '10', pods: '10' }, { cpu: '9', pods: '9' }, [
        updateClaim({ cpu: '1' }, { cpu: '5', pods: '1' }),
      ]),
      item('web', { cpu: '5', pods: '2' }, { uid: 'u1', old: { cpu: '1', pods: '2' }, version: '42' }),
      true,
      [claimView({ cpu: '1' }, { cpu: '5', pods: '1' })],
    ],
  ])('%s', (_name, state, admission, allowed, reservations) => {
    const result = admit([state], [admission]);
    expect(result.decisions[0]?.allowed).toBe(allowed);
    expect(view(result.quotas[0])).toEqual(reservations);
  });

  it('decreases that lose their race to a concurrent update never strip the persisted charge', () => {
    // Persisted at 8 replicas (4 cpu, settled). Two clients read it and scale it down: both are
    // admitted, the first loses on resourceVersion, and the persisted binding still charges 4.
    const persisted = quota('team-a', { cpu: '6' }, {}, [reservation('web', { cpu: '4' }, { cpu: '4' })]);
    const lost = admit([persisted], [item('web', { cpu: '500m' }, { old: { cpu: '4' } })]);
    const second = admit(lost.quotas, [item('web', { cpu: '1' }, { old: { cpu: '4' } })]);
    expect([...lost.decisions, ...second.decisions]).toEqual([ALLOWED, ALLOWED]);
    expect(view(second.quotas[0])).toEqual([{ name: 'web', reserved: { cpu: '4' }, charge: { cpu: '4' } }]);
    expect([lost.changed, second.changed]).toEqual([[], []]);
    // So a competitor cannot take the 3.5 cpu the first decrease would have freed.
    expect(admit(second.quotas, [item('other', { cpu: '3' })]).decisions[0]?.allowed).toBe(false);
  });
});

describe('admitBatch: the "must specify" rule', () => {
  const cpuQuota = quota('cpu-quota', { cpu: '10' });
  const podQuota = quota('pod-quota', { pods: '10' });
  const missing = { 'cpu-quota': ['must specify requests.cpu for Deployment web'], 'pod-quota': [] };
  const denied: Decision = {
    allowed: false,
    quota: 'cpu-quota',
    exceeded: [],
    message: 'must specify requests.cpu for Deployment web',
  };
  const withGaps = (it: AdmissionItem): AdmissionItem => ({ ...it, missingRequests: missing });

  it.each<[string, AdmissionItem, Decision]>([
    ['a create with replicas', withGaps(item('web', { pods: '2' })), denied],
    ['a dry-run create with replicas', withGaps(item('web', { pods: '2' }, { dryRun: true })), denied],
    ['an update raising the replicas', withGaps(item('web', { pods: '3' }, { old: { pods: '2' } })), denied],
    [
      'an update of an object whose old charge had no pods',
      withGaps(item('web', { pods: '1' }, { old: {} })),
      denied,
    ],
    [
      'an update keeping the replicas',
      withGaps(item('web', { pods: '2' }, { old: { pods: '2' } })),
      { allowed: true },
    ],
    [
      'an update lowering the replicas',
      withGaps(item('web', { pods: '1' }, { old: { pods: '2' } })),
      { allowed: true },
    ],
    ['a create without replicas', withGaps(item('web', {})), { allowed: true }],
    ['a create declaring every tracked request', item('web', { pods: '2', cpu: '1' }), { allowed: true }],
  ])('%s', (_what, admission, decision) => {
    expect(admit([podQuota, cpuQuota], [admission]).decisions).toEqual([decision]);
  });

  it('comes before the limits, and leaves no reservation in the quotas that would admit', () => {
    const full = quota('pod-quota', { pods: '1' }, { pods: '1' });
    const result = admit([full, cpuQuota], [withGaps(item('web', { pods: '2' }))]);
    expect(result.decisions).toEqual([denied]);
    expect(result.changed).toEqual([]);
  });

  it('only a quota that applies to the binding (scopes) can refuse it', () => {
    const result = admit(
      [podQuota, cpuQuota],
      [withGaps(item('web', { pods: '2' }))],
      (q) => q !== 'cpu-quota',
    );
    expect(result.decisions).toEqual([{ allowed: true }]);
  });
});

describe('admitBatch: several quotas', () => {
  const cpuQuota = quota('cpu-quota', { cpu: '10' });
  const podQuota = quota('pod-quota', { pods: '2' }, { pods: '2' });
  const memQuota = quota('mem-quota', { memory: '1Gi' }, { memory: '1Gi' });

  it('all must admit; a denial leaves no partial reservation', () => {
    const result = admit([cpuQuota, podQuota], [item('web', { cpu: '1', pods: '1' })]);
    expect(result.decisions).toEqual([
      {
        allowed: false,
        quota: 'pod-quota',
        exceeded: ['pods'],
        message: 'exceeded quota: pod-quota, requested: pods=1, used: pods=2, limited: pods=2',
        shortfall: { requested: { pods: '1' }, free: { pods: '0' } },
      },
    ]);
    expect(result.changed).toEqual([]);
    expect(result.quotas).toEqual([cpuQuota, podQuota]);
  });

  it('with several quotas denying, the first in the given order is reported', () => {
    const charge = { pods: '1', memory: '1Mi' };
    expect(admit([podQuota, memQuota], [item('web', charge)]).decisions[0]).toMatchObject({
      quota: 'pod-quota',
    });
    expect(admit([memQuota, podQuota], [item('web', charge)]).decisions[0]).toMatchObject({
      quota: 'mem-quota',
    });
  });

  it('each admitting quota gets the reservation on its own keys', () => {
    const result = admit(
      [cpuQuota, quota('pod-quota', { pods: '5' })],
      [item('web', { cpu: '1', pods: '1', memory: '1Gi' })],
    );
    expect(result.decisions).toEqual([ALLOWED]);
    expect(result.changed).toEqual(['cpu-quota', 'pod-quota']);
    expect(view(result.quotas[0])).toEqual([
      { name: 'web', reserved: { cpu: '1' }, charge: { cpu: '1' }, expirationTime: EXPIRES },
    ]);
    expect(view(result.quotas[1])).toEqual([
      { name: 'web', reserved: { pods: '1' }, charge: { pods: '1' }, expirationTime: EXPIRES },
    ]);
  });

  it('only matching quotas are evaluated and charged', () => {
    const result = admit(
      [cpuQuota, podQuota],
      [item('a', { cpu: '1', pods: '1' }), item('b', { cpu: '1', pods: '1' })],
      (q, i) => (q === 'cpu-quota' ? true : i === 1),
    );
    expect(result.decisions.map((d) => d.allowed)).toEqual([true, false]);
    expect(view(result.quotas[0]).map((r) => r.name)).toEqual(['a']);
    expect(result.changed).toEqual(['cpu-quota']);
  });

  it('a quota sharing no key with the charge admits and keeps no reservation', () => {
    const result = admit([quota('gpu', { 'requests.nvidia.com/gpu': '0' })], [item('web', { cpu: '1' })]);
    expect(result).toMatchObject({ decisions: [ALLOWED], changed: [] });
    expect(result.quotas[0]?.reservations).toEqual([]);
  });

  it('no quotas: everything is admitted', () => {
    expect(admit([], [item('web', { cpu: '1' })])).toEqual({
      decisions: [ALLOWED],
      awaitsWrite: [false],
      quotas: [],
      changed: [],
      claims: [new Map()],
    });
  });
});

describe('admitBatch: enforcement (Warn and DryRun admit and count what Deny refuses)', () => {
  const full = (enforcement: QuotaState['enforcement'], name = 'pod-quota') => ({
    ...quota(name, { pods: '2' }, { pods: '2' }),
    ...(enforcement ? { enforcement } : {}),
  });
  const EXCEEDED = 'exceeded quota: pod-quota, requested: pods=1, used: pods=2, limited: pods=2';
  const AT = NOW.toISOString();

  it.each<['Warn' | 'DryRun']>([['Warn'], ['DryRun']])(
    '%s: an increase past the limit is admitted, reserved, and noted with the refusal',
    (enforcement) => {
      const result = admit([full(enforcement)], [item('web', { pods: '1' })]);
      expect(result.decisions).toEqual([
        { allowed: true, notEnforced: [{ quota: 'pod-quota', enforcement, message: EXCEEDED }] },
      ]);
      expect(result.awaitsWrite).toEqual([true]);
      expect(result.changed).toEqual(['pod-quota']);
      expect(view(result.quotas[0])).toEqual([
        { name: 'web', reserved: { pods: '1' }, charge: { pods: '1' }, expirationTime: EXPIRES },
      ]);
      expect(result.quotas[0]!.wouldBeDenied).toEqual([
        { binding: 'web', enforcement, message: EXCEEDED, at: AT },
      ]);
    },
  );

  it('Deny (or none) still refuses, and a later item of the batch counts what Warn admitted', () => {
    expect(admit([full('Deny')], [item('web', { pods: '1' })]).decisions[0]).toMatchObject({
      allowed: false,
    });
    expect(admit([full(undefined)], [item('web', { pods: '1' })]).decisions[0]).toMatchObject({
      allowed: false,
    });
    const room = { ...quota('pod-quota', { pods: '2' }, { pods: '1' }), enforcement: 'Warn' as const };
    const result = admit([room], [item('a', { pods: '1' }), item('b', { pods: '1' })]);
    expect(result.decisions[0]).toEqual({ allowed: true });
    expect(result.decisions[1]).toMatchObject({
      allowed: true,
      notEnforced: [
        { message: 'exceeded quota: pod-quota, requested: pods=1, used: pods=2, limited: pods=2' },
      ],
    });
    expect(formatList(sumReserved(result.quotas[0]!.reservations))).toEqual({ pods: '2' });
  });

  it('an enforcing quota refuses beside a Warn quota, and nothing is reserved or noted anywhere', () => {
    const result = admit([full('Warn'), full('Deny', 'team-a')], [item('web', { pods: '1' })]);
    expect(result.decisions[0]).toMatchObject({ allowed: false, quota: 'team-a' });
    expect(result.changed).toEqual([]);
  });

  it('a dry-run request is told the refusal but nothing is reserved or noted', () => {
    const result = admit([full('Warn')], [item('web', { pods: '1' }, { dryRun: true })]);
    expect(result.decisions[0]).toMatchObject({ allowed: true, notEnforced: [{ quota: 'pod-quota' }] });
    expect(result.changed).toEqual([]);
    expect(result.awaitsWrite).toEqual([false]);
  });

  it('"status unknown", the "must specify" rule and unbounded pods are noted, not enforced', () => {
    const unknown = { ...quota('pod-quota', { pods: '2' }), used: {}, enforcement: 'DryRun' as const };
    expect(admit([unknown], [item('web', { pods: '1' })]).decisions[0]).toMatchObject({
      allowed: true,
      notEnforced: [
        { enforcement: 'DryRun', message: expect.stringContaining('status unknown for quota: pod-quota') },
      ],
    });
    const cpu = { ...quota('cpu-quota', { cpu: '10' }), enforcement: 'Warn' as const };
    const gaps = {
      ...item('web', { pods: '2' }),
      missingRequests: { 'cpu-quota': ['must specify requests.cpu'] },
    };
    const noted = admit([cpu], [gaps]);
    expect(noted.decisions[0]).toEqual({
      allowed: true,
      notEnforced: [{ quota: 'cpu-quota', enforcement: 'Warn', message: 'must specify requests.cpu' }],
    });
    expect(noted.quotas[0]!.wouldBeDenied).toHaveLength(1);
    const small = { ...quota('cpu-quota', { cpu: '1', pods: '1' }), enforcement: 'Warn' as const };
    expect(admit([small], [gaps]).decisions[0]).toEqual({
      allowed: true,
      notEnforced: [
        {
          quota: 'cpu-quota',
          enforcement: 'Warn',
          message:
            'must specify requests.cpu; exceeded quota: cpu-quota, requested: pods=2, used: pods=0, limited: pods=1',
        },
      ],
    });
    expect(noted.awaitsWrite).toEqual([true]);
    const daemons = { ...item('ds', {}), unboundedPods: { 'cpu-quota': 'cannot bound the pods' } };
    expect(admit([cpu], [daemons], () => false).decisions[0]).toMatchObject({
      allowed: true,
      notEnforced: [{ message: 'cannot bound the pods' }],
    });
    const enforcing = quota('cpu-quota', { cpu: '10' });
    expect(admit([enforcing], [daemons], () => false).decisions[0]).toEqual({
      allowed: false,
      quota: 'cpu-quota',
      exceeded: [],
      message: 'cannot bound the pods',
    });
  });
});

describe('admitBatch: expiration and uid', () => {
  it('every increase, CREATE or UPDATE, gets now + ttl', () => {
    const result = admit(
      [quota('team-a', { cpu: '10' })],
      [item('new', { cpu: '1' }), item('old', { cpu: '2' }, { old: { cpu: '1' } })],
    );
    expect(view(result.quotas[0])).toEqual([
      { name: 'new', reserved: { cpu: '1' }, charge: { cpu: '1' }, expirationTime: EXPIRES },
      { name: 'old', reserved: { cpu: '1' }, charge: { cpu: '2' }, expirationTime: EXPIRES },
    ]);
  });

  it('an UPDATE increasing one key of a settled reservation makes the whole entry pending', () => {
    const state = quota('team-a', { cpu: '10', pods: '10' }, {}, [
      reservation('web', { cpu: '1' }, { cpu: '2', pods: '2' }),
    ]);
    const result = admit([state], [item('web', { cpu: '2', pods: '3' }, { old: { cpu: '2', pods: '2' } })]);
    expect(view(result.quotas[0])).toEqual([
      {
        name: 'web',
        reserved: { cpu: '1', pods: '1' },
        charge: { cpu: '2', pods: '3' },
        expirationTime: EXPIRES,
      },
    ]);
  });

  it('an UPDATE that changes nothing on a settled reservation writes nothing', () => {
    const state = quota('team-a', { cpu: '10' }, {}, [reservation('web', { cpu: '1' }, { cpu: '2' })]);
    const result = admit([state], [item('web', { cpu: '2' }, { old: { cpu: '2' } })]);
    expect(result.changed).toEqual([]);
    expect(result.quotas[0]).toBe(state);
  });

  it('a persisted UPDATE with nothing left to reserve and no increase creates no reservation', () => {
    const result = admit(
      [quota('team-a', { cpu: '10' })],
      [item('web', { cpu: '1' }, { old: { cpu: '2' } })],
    );
    expect(result.changed).toEqual([]);
    expect(result.quotas[0]?.reservations).toEqual([]);
  });

  it('a CREATE whose charge is all zero on the quota keys reserves nothing', () => {
    const result = admit([quota('team-a', { cpu: '10' })], [item('web', { cpu: '0', pods: '1' })]);
    expect(result.changed).toEqual([]);
  });

  it('a reservation of another uid is never held, and its reserved is kept in the new claim', () => {
    const state = quota('team-a', { cpu: '10' }, {}, [
      reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'old-uid' }),
      reservation('other', { cpu: '1' }),
    ]);
    const result = admit([state], [item('web', { cpu: '4' }, { uid: 'new-uid' })]);
    expect(result.decisions).toEqual([ALLOWED]);
    expect(view(result.quotas[0])).toEqual([
      { name: 'web', uid: 'new-uid', reserved: { cpu: '8' }, charge: { cpu: '4' }, expirationTime: EXPIRES },
      { name: 'other', reserved: { cpu: '1' }, charge: { cpu: '1' } },
    ]);
    expect(formatList(sumReserved(result.quotas[0]?.reservations ?? []))).toEqual({ cpu: '9' });
  });

  it('a reused name is checked against the running total including the stale reservation', () => {
    const state = quota('team-a', { cpu: '6' }, {}, [
      reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'old-uid' }),
    ]);
    expect(admit([state], [item('web', { cpu: '4' }, { uid: 'new-uid' })]).decisions[0]).toMatchObject({
      allowed: false,
      message: 'exceeded quota: team-a, requested: cpu=4, used: cpu=4, limited: cpu=6',
    });
  });

  it('a missing uid on either side matches by name, and the known uid is kept', () => {
    const state = quota('team-a', { cpu: '4' }, {}, [
      reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'u1' }),
    ]);
    const result = admit([state], [item('web', { cpu: '4' }, { old: { cpu: '4' } })]);
    expect(result.decisions).toEqual([ALLOWED]);
    expect(view(result.quotas[0])).toEqual([
      { name: 'web', uid: 'u1', reserved: { cpu: '4' }, charge: { cpu: '4' } },
    ]);
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['a claim that merged two objects (no uid), raised by one of them', undefined, 'u1'],
    ["another object's claim, raised by this one", 'u0', 'u1'],
    ['a claim of a known uid, raised by an item of unknown uid', 'u0', undefined],
  ])('%s names no uid while the claim is pending', (_what, claimUid, itemUid) => {
    const state = quota('team-a', { cpu: '10' }, {}, [
      reservation('web', { cpu: '1' }, { cpu: '1' }, { uid: claimUid, expirationTime: EXPIRES }),
    ]);
    const result = admit([state], [item('web', { cpu: '2' }, { uid: itemUid, old: { cpu: '1' } })]);
    expect(result.decisions).toEqual([ALLOWED]);
    // Deleting one object (its uid) must not release a claim another object's create relies on.
    expect(view(result.quotas[0])).toEqual([
      { name: 'web', reserved: { cpu: '2' }, charge: { cpu: '2' }, expirationTime: EXPIRES },
    ]);
  });

  it("this object's own pending claim keeps its uid when raised", () => {
    const state = quota('team-a', { cpu: '10' }, {}, [
      reservation('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u1', expirationTime: EXPIRES }),
    ]);
    const result = admit([state], [item('web', { cpu: '2' }, { uid: 'u1', old: { cpu: '1' } })]);
    expect(view(result.quotas[0])).toEqual([
      {
        name: 'web',
        uid: 'u1',
        reserved: { cpu: '2' },
        charge: { cpu: '2' },
        expirationTime: EXPIRES,
        operation: 'Update',
      },
    ]);
  });

  // The mark lets the reconciler drop the claim once its object is gone (the update cannot land then);
  // a claim that may be a create's must stay unmarked, since its binding is missing until it lands.
  it.each<[string, ReservationEntry[], AdmissionItem, 'Update' | undefined]>([
    ['an UPDATE of a known uid', [], item('web', { cpu: '2' }, { uid: 'u1', old: { cpu: '1' } }), 'Update'],
    [
      'an UPDATE over a settled entry of another uid',
      [reservation('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u0' })],
      item('web', { cpu: '2' }, { uid: 'u1', old: { cpu: '1' } }),
      'Update',
    ],
    ['an UPDATE of unknown uid', [], item('web', { cpu: '2' }, { old: { cpu: '1' } }), undefined],
    [
      "an UPDATE raising another object's pending claim",
      [reservation('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u0', expirationTime: EXPIRES })],
      item('web', { cpu: '2' }, { uid: 'u1', old: { cpu: '1' } }),
      undefined,
    ],
    [
      "an UPDATE over another object's claim lapsed by this clock (the reconciler's may lag)",
      [
        reservation(
          'web',
          { cpu: '1' },
          { cpu: '1' },
          { uid: 'u0', expirationTime: '2026-11-22T09:59:00.000Z' },
        ),
      ],
      item('web', { cpu: '2' }, { uid: 'u1', old: { cpu: '1' } }),
      undefined,
    ],
    ['a CREATE', [], item('web', { cpu: '2' }, { uid: 'u1' }), undefined],
    [
      "a CREATE over an update's pending claim of the same uid",
      [
        {
          ...reservation('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u1', expirationTime: EARLIER }),
          operation: 'Update',
        },
      ],
      item('web', { cpu: '2' }, { uid: 'u1' }),
      undefined,
    ],
  ])('%s: marked as the update it is or is not', (_what, reservations, change, operation) => {
    const result = admit([quota('team-a', { cpu: '10' }, {}, reservations)], [change]);
    expect(result.decisions).toEqual([ALLOWED]);
    expect(result.quotas[0]?.reservations[0]?.operation).toBe(operation);
  });

  it('a reused name charging nothing leaves the stale reservation to the reconciler', () => {
    const state = quota('team-a', { cpu: '10' }, {}, [
      reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'old' }),
    ]);
    const result = admit([state], [item('web', { cpu: '0' }, { uid: 'new', old: { cpu: '0' } })]);
    expect(result.decisions).toEqual([ALLOWED]);
    expect(result.changed).toEqual([]);
    expect(result.quotas[0]).toBe(state);
  });
});

describe('admitBatch: the fixes of the accounting review', () => {
  it('F2: a binding moved into a scoped quota is charged in full there, as a CREATE would be', () => {
    const high = quota('gpu', { cpu: '10' }, { cpu: '10' });
    // The old object (priority low) matched no quota here; the new one (priority high) matches gpu.
    const moved = item('web', { cpu: '100' }, { old: { cpu: '100' }, oldQuotas: [] });
    expect(admit([high], [moved]).decisions[0]).toMatchObject({
      allowed: false,
      message: 'exceeded quota: gpu, requested: cpu=100, used: cpu=10, limited: cpu=10',
    });
    // The same change inside the scope asks nothing.
    expect(admit([high], [item('web', { cpu: '100' }, { old: { cpu: '100' } })]).decisions).toEqual([
      ALLOWED,
    ]);
  });

  it('F6: an increase on a key whose usage is not counted yet is refused as "status unknown"', () => {
    const fresh: QuotaState = {
      name: 'team-a',
      hard: list({ cpu: '100', pods: '10' }),
      used: list({ pods: '0' }),
      reserved: {},
      reservations: [],
    };
    expect(admit([fresh], [item('web', { cpu: '1', pods: '1' })]).decisions[0]).toMatchObject({
      allowed: false,
      quota: 'team-a',
      exceeded: [],
      message: expect.stringMatching(/^status unknown for quota: team-a, resources: cpu: /),
    });
    // A change that increases only counted keys passes.
    expect(admit([fresh], [item('web', { pods: '1' })]).decisions).toEqual([ALLOWED]);
  });

  it('F8: items asking nothing are answered without awaiting a write, beside items that do', () => {
    const state = quota('team-a', { cpu: '10' });
    const result = admit(
      [state],
      [item('down', { cpu: '1' }, { old: { cpu: '4' } }), item('up', { cpu: '2' })],
    );
    expect(result.decisions).toEqual([ALLOWED, ALLOWED]);
    expect(result.awaitsWrite).toEqual([false, true]);
  });
});

describe('increasesNothing', () => {
  it.each<[string, Record<string, string>, Record<string, string>, boolean, boolean]>([
    ['a scale-down', { cpu: '1', pods: '1' }, { cpu: '2', pods: '2' }, true, true],
    ['no change', { cpu: '2' }, { cpu: '2' }, true, true],
    ['up on one key', { cpu: '1', memory: '2Gi' }, { cpu: '2', memory: '1Gi' }, true, false],
    ['a new key', { cpu: '1', 'nvidia.com/gpu': '1' }, { cpu: '2' }, true, false],
    ['a scale-down into other scopes', { cpu: '1' }, { cpu: '2' }, false, false],
  ])('%s', (_name, charge, old, sameScopes, expected) => {
    expect(increasesNothing(list(charge), list(old), sameScopes)).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Property test: a seeded stream of random admissions.
// ---------------------------------------------------------------------------------------------------------

/** mulberry32: small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const milli = (q: Quantity | undefined): bigint => (q === undefined ? 0n : q.milliValue());

describe('admitBatch: property (500 seeded random items)', () => {
  const HARD = { cpu: '100', memory: '64Gi', pods: '60' };
  const hardList = list(HARD);
  const keys = Object.keys(HARD);

  it.each([1, 2, 3, 42, 2026])(
    'seed %i: CREATEs only, reserved never exceeds hard and equals admitted increases',
    (seed) => {
      const random = prng(seed);
      const pick = (n: number): number => Math.floor(random() * n);
      // 80 bindings, each with a fixed charge (repeats are retries of the same CREATE).
      const charges = Array.from({ length: 80 }, () =>
        list({ cpu: `${1 + pick(8000)}m`, memory: `${1 + pick(4096)}Mi`, pods: `${1 + pick(4)}` }),
      );
      let states = [quota('team-a', HARD)];
      const admittedOnce = new Set<number>();
      const expected = new Map<string, bigint>(keys.map((k) => [k, 0n]));
      let remaining = 500;
      while (remaining > 0) {
        const size = Math.min(remaining, 1 + pick(20));
        remaining -= size;
        const ids = Array.from({ length: size }, () => pick(charges.length));
        const items = ids.map((id): AdmissionItem => ({
          binding: key(`b${id}`, `u${id}`),
          charge: charges[id] as ResourceList,
          dryRun: random() < 0.15,
        }));
        const before = sumReserved(states[0]?.reservations ?? []);
        const result = admit(states, items);
        // Replay the decisions: the first real admission of a binding adds its charge; nothing else does.
        result.decisions.forEach((decision, i) => {
          const id = ids[i] as number;
          if (admittedOnce.has(id)) expect(decision.allowed).toBe(true); // a held charge is never denied
          if (!decision.allowed || (items[i] as AdmissionItem).dryRun || admittedOnce.has(id)) return;
          admittedOnce.add(id);
          for (const k of keys) expected.set(k, (expected.get(k) as bigint) + milli(charges[id]?.[k]));
        });
        if (result.decisions.every((d, i) => !d.allowed || (items[i] as AdmissionItem).dryRun)) {
          expect(result.changed).toEqual([]);
          expect(formatList(sumReserved(result.quotas[0]?.reservations ?? []))).toEqual(formatList(before));
        }
        states = result.quotas;
        const total = sumReserved(states[0]?.reservations ?? []);
        for (const k of keys) {
          expect(milli(total[k])).toBeLessThanOrEqual(milli(hardList[k]));
          expect(milli(total[k])).toBe(expected.get(k));
        }
      }
      // Enough traffic reached the limit for the test to mean something.
      expect(admittedOnce.size).toBeGreaterThan(5);
      expect(admittedOnce.size).toBeLessThan(charges.length);
    },
  );

  it.each([7, 99, 12345])(
    'seed %i: mixed CREATE/UPDATE/scale-down, used + reserved never exceeds hard',
    (seed) => {
      const random = prng(seed);
      const pick = (n: number): number => Math.floor(random() * n);
      const randomCharge = (): ResourceList =>
        list({ cpu: `${pick(10000)}m`, memory: `${pick(8192)}Mi`, pods: `${pick(6)}` });
      const used = list({ cpu: '10', memory: '4Gi', pods: '5' });
      let states: QuotaState[] = [{ ...quota('team-a', HARD), used }];
      const current = new Map<number, ResourceList>(); // the persisted charge of each binding, once admitted
      let denied = 0;
      for (let n = 0; n < 500;) {
        const size = 1 + pick(16);
        const items: AdmissionItem[] = [];
        const ids: number[] = [];
        for (let i = 0; i < size && n < 500; i++, n++) {
          const id = pick(40);
          const old = current.get(id);
          ids.push(id);
          items.push({
            binding: key(`b${id}`),
            charge: randomCharge(),
            ...(old ? { old: { charge: old, quotas: ['team-a'] } } : {}),
            dryRun: random() < 0.1,
          });
        }
        const result = admit(states, items);
        result.decisions.forEach((decision, i) => {
          const it = items[i] as AdmissionItem;
          if (decision.allowed && !it.dryRun) current.set(ids[i] as number, it.charge);
          if (!decision.allowed) {
            denied++;
            expect(decision.message).toMatch(/^exceeded quota: team-a, requested: /);
          }
        });
        states = result.quotas;
        const total = sumReserved(states[0]?.reservations ?? []);
        for (const k of keys) {
          expect(milli(total[k])).toBeGreaterThanOrEqual(0n);
          expect(milli(used[k]) + milli(total[k])).toBeLessThanOrEqual(milli(hardList[k]));
        }
      }
      // Both outcomes occurred, so the invariant was exercised at the limit.
      expect(denied).toBeGreaterThan(10);
      expect(current.size).toBeGreaterThan(10);
    },
  );

  it.each([5, 77, 31337])(
    'seed %i: batches on the states earlier batches returned decide as on states read back from the wire',
    (seed) => {
      // The webhook decides on the states it wrote (indexes and totals kept by identity, decoded
      // states kept for the objects writes return): they must decide as states decoded afresh.
      const random = prng(seed);
      const pick = (n: number): number => Math.floor(random() * n);
      const wire = (state: QuotaState): KarmadaQuota => ({
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'KarmadaQuota',
        metadata: { name: state.name, namespace: 'team-a', generation: 1 },
        spec: { hard: formatList(state.hard) },
        status: {
          observedGeneration: 1,
          used: formatList(state.used),
          reservations: toWireReservations(state.reservations, 'team-a'),
        },
      });
      const reread = (state: QuotaState): QuotaState => parseQuotaState(wire(state)).state;
      let kept: QuotaState[] = [
        { ...quota('team-a', HARD), used: list({ cpu: '1500m', memory: '1Gi', pods: '2' }) },
      ];
      let decided = 0;
      while (decided < 400) {
        const items = Array.from({ length: 1 + pick(12) }, (): AdmissionItem => {
          const id = pick(30);
          const uid = pick(3) === 0 ? undefined : `u${id}-${pick(2)}`;
          const charge = list({ cpu: `${pick(9000)}m`, memory: `${pick(4096)}Mi`, pods: `${pick(5)}` });
          return {
            binding: key(`b${id}`, uid),
            charge,
            ...(pick(2) === 0
              ? { old: { charge: list({ cpu: `${pick(3000)}m` }), quotas: ['team-a'] } }
              : {}),
            dryRun: pick(10) === 0,
          };
        });
        decided += items.length;
        const fromKept = admit(kept, items);
        const fromWire = admit(kept.map(reread), items);
        expect(fromKept.decisions).toEqual(fromWire.decisions);
        expect(fromKept.quotas.map(wire)).toEqual(fromWire.quotas.map(wire));
        kept = fromKept.quotas;
      }
    },
  );
});

describe('admitBatch: which claims a change relies on, and what a claim records for its retirement', () => {
  /** An UPDATE of `uid` decided against `version`, raising cpu from `old` to `charge`. */
  const update = (charge: string, old: string, version: string | undefined, uid = 'u1'): AdmissionItem => ({
    ...item('web', { cpu: charge }, { uid, old: { cpu: old } }),
    old: { charge: list({ cpu: old }), quotas: ALL_QUOTAS, ...(version ? { resourceVersion: version } : {}) },
  });
  const claim = (extra: Partial<ReservationEntry> = {}): ReservationEntry => ({
    ...reservation('web', { cpu: '3' }, { cpu: '3' }, { uid: 'u1', expirationTime: EXPIRES }),
    ...extra,
  });
  const written = (result: BatchResult) => result.quotas[0]?.reservations[0];

  it('an increase records the version its update was decided against', () => {
    const result = admit([quota('team-a', { cpu: '10' })], [update('3', '1', '42')]);
    expect(written(result)).toMatchObject({ operation: 'Update', resourceVersion: '42' });
  });

  it('an increase of unknown version records none (the claim is held until it expires)', () => {
    const result = admit([quota('team-a', { cpu: '10' })], [update('3', '1', undefined)]);
    expect(written(result)?.operation).toBe('Update');
    expect(written(result)?.resourceVersion).toBeUndefined();
  });

  it.each<[string, Partial<ReservationEntry>, string | undefined, string | undefined]>([
    ['a later version than the claim carries', { operation: 'Update', resourceVersion: '40' }, '42', '42'],
    ['an earlier one (a stale read)', { operation: 'Update', resourceVersion: '40' }, '39', '40'],
    ['the claim carries none', { operation: 'Update' }, '42', undefined],
    ['the update carries none', { operation: 'Update', resourceVersion: '40' }, undefined, undefined],
    ['a create claim of the object', {}, '42', '42'],
  ])('an increase over a claim of %s records the later one', (_what, extra, version, recorded) => {
    const state = quota('team-a', { cpu: '10' }, {}, [claim(extra)]);
    const result = admit([state], [update('5', '1', version)]);
    expect(result.decisions).toEqual([ALLOWED]);
    expect(written(result)?.resourceVersion).toBe(recorded);
    expect(formatList(written(result)!.charge)).toEqual({ cpu: '5' });
  });

  // Only a re-review of the very change a claim is for may rely on it: that change cannot have landed.
  // One that may have (the object updated since its create, or since the claimed update's version)
  // may have shrunk after landing, its pods on their way out still holding the room the claim counts
  // (a create of 4 runs, is scaled 4 -> 0, then 0 -> 4 relying on the create's claim: 4 terminating +
  // 4 new); a claim naming no uid merged two objects' creates, and may be neither this one's.
  it.each<[string, Partial<ReservationEntry>, AdmissionItem, boolean]>([
    ['a re-review of the same CREATE', {}, item('web', { cpu: '3' }, { uid: 'u1' }), true],
    [
      'a re-review of the same UPDATE',
      { operation: 'Update', resourceVersion: '42' },
      update('3', '1', '42'),
      true,
    ],
    [
      "an UPDATE of the object whose create's claim it is (the create landed)",
      {},
      update('3', '1', '42'),
      false,
    ],
    [
      'an UPDATE decided against a later version than the claimed update (it may have landed)',
      { operation: 'Update', resourceVersion: '40' },
      update('3', '1', '42'),
      false,
    ],
    [
      'an UPDATE decided against an earlier version than the claimed update',
      { operation: 'Update', resourceVersion: '43' },
      update('3', '1', '42'),
      false,
    ],
    [
      'an UPDATE of unknown version',
      { operation: 'Update', resourceVersion: '42' },
      update('3', '1', undefined),
      false,
    ],
    ['an update claim of unknown version', { operation: 'Update' }, update('3', '1', '42'), false],
    [
      'a CREATE under a claim naming no uid (two objects merged)',
      { binding: key('web') },
      item('web', { cpu: '3' }, { uid: 'u2' }),
      false,
    ],
    ['a CREATE of another uid', {}, item('web', { cpu: '3' }, { uid: 'u2' }), false],
    ['a CREATE of unknown uid', {}, item('web', { cpu: '3' }), false],
    [
      "a CREATE under an update's claim of its uid",
      { operation: 'Update', resourceVersion: '42' },
      item('web', { cpu: '3' }, { uid: 'u1' }),
      false,
    ],
  ])('%s', (_what, extra, change, relies) => {
    const state = quota('team-a', { cpu: '4' }, {}, [claim(extra)]);
    const result = admit([state], [change]);
    if (relies) {
      expect(result.decisions).toEqual([ALLOWED]);
      expect(result.changed).toEqual([]);
      return;
    }
    // Charged its increase over the stored object, beside the claim: 3 + 2 or 3 + 3 of 4.
    expect(result.decisions[0]).toMatchObject({ allowed: false, exceeded: ['cpu'] });
  });

  it('a change its stored object already covers relies on no claim and writes nothing', () => {
    const state = quota('team-a', { cpu: '3' }, {}, [claim()]);
    const result = admit([state], [update('2', '3', '42')]);
    expect(result.changed).toEqual([]);
  });

  it("an update's claim merged with another object's names no uid (a create's claim would be retired early)", () => {
    const other = reservation(
      'web',
      { cpu: '1' },
      { cpu: '1' },
      { uid: 'u0', expirationTime: '2026-11-22T09:59:00.000Z' },
    );
    const result = admit([quota('team-a', { cpu: '10' }, {}, [other])], [update('3', '1', '42')]);
    expect(written(result)?.binding.uid).toBeUndefined();
    expect(written(result)?.operation).toBeUndefined();
  });

  it('the total starts from status.reserved, not from the claims listed', () => {
    const state: QuotaState = { ...quota('team-a', { cpu: '10' }), reserved: list({ cpu: '8' }) };
    expect(admit([state], [item('web', { cpu: '3' })]).decisions[0]).toMatchObject({
      allowed: false,
      message: 'exceeded quota: team-a, requested: cpu=3, used: cpu=8, limited: cpu=10',
    });
    const fits = admit([state], [item('web', { cpu: '2' })]);
    expect(formatList(fits.quotas[0]!.reserved)).toEqual({ cpu: '10' });
  });
});

describe("admitBatch: the admission owner's hooks (claimed given, claims returned)", () => {
  const wireClaims = (result: BatchResult) =>
    result.claims.map((byQuota) =>
      byQuota === undefined
        ? undefined
        : Object.fromEntries(
            [...byQuota].map(([name, c]) => [
              name,
              { charge: formatList(c.charge), increase: formatList(c.increase) },
            ]),
          ),
    );

  it.each<[string, Record<string, Record<string, string>> | undefined, Decision, Record<string, string>]>([
    // The quota's entry covers this very create; without `claimed` it is relied on.
    ['the entries, when not given', undefined, ALLOWED, {}],
    ["the owner's record instead of the entry: it claims nothing", {}, ALLOWED, { cpu: '4' }],
    ["the owner's record: it claims part", { 'cpu-quota': { cpu: '3' } }, ALLOWED, { cpu: '1' }],
    ["the owner's record: it claims all", { 'cpu-quota': { cpu: '6' } }, ALLOWED, {}],
  ])('weighs %s', (_, claimed, decision, increase) => {
    const covering = reservation('web', { cpu: '4' }, { cpu: '4' }, { uid: 'u1', expirationTime: EXPIRES });
    const web = {
      ...item('web', { cpu: '4' }, { uid: 'u1' }),
      ...(claimed ? { claimed: list2(claimed) } : {}),
    };
    const result = admit([quota('cpu-quota', { cpu: '10' }, { cpu: '2' }, [covering])], [web]);
    expect(result.decisions).toEqual([decision]);
    expect(wireClaims(result)[0]?.['cpu-quota']?.increase ?? {}).toEqual(increase);
  });

  it('returns what each admitted item claims per quota it raises; refused and dry-run items claim nothing', () => {
    const result = admit(
      [quota('cpu-quota', { cpu: '10' }), quota('pod-quota', { pods: '5' })],
      [
        item('a', { cpu: '4', pods: '2' }),
        item('b', { cpu: '3' }, { old: { cpu: '1' }, uid: 'u2', version: '7' }),
        item('c', { cpu: '9' }),
        item('d', { cpu: '1' }, { dryRun: true }),
      ],
    );
    expect(result.decisions.map((d) => d.allowed)).toEqual([true, true, false, true]);
    expect(wireClaims(result)).toEqual([
      {
        'cpu-quota': { charge: { cpu: '4' }, increase: { cpu: '4' } },
        'pod-quota': { charge: { pods: '2' }, increase: { pods: '2' } },
      },
      { 'cpu-quota': { charge: { cpu: '3' }, increase: { cpu: '2' } } },
      undefined,
      undefined,
    ]);
  });
});

/** `claimed` per quota, parsed. */
function list2(raw: Record<string, Record<string, string>>): Record<string, ResourceList> {
  return Object.fromEntries(Object.entries(raw).map(([name, l]) => [name, list(l)]));
}
