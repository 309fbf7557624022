import { formatList, parseResourceList, Quantity } from '#quantity';
import type { Condition, KarmadaQuota, KarmadaQuotaStatus, Reservation, ResourceBinding } from '#api';
import { observedUsageOf, type ObservedCluster } from './cluster-usage.js';
import { beingDeleted, checksChangeOn, oldChargeHeld, workloadFinished } from './reservations.js';
import {
  computeQuotaStatus,
  RETIREMENT_COALESCE_MS,
  type QuotaEvent,
  type QuotaStatusResult,
} from './status.js';

const NS = 'team-a';
const NOW = new Date('2026-11-22T10:00:00.250Z');
/** `NOW` as a condition's lastTransitionTime (metav1.Time: whole seconds). */
const NOW_META = '2026-11-22T10:00:00Z';
const UNEXPIRED = '2026-11-22T10:02:00.000Z';
const EXPIRED = '2026-11-22T09:59:00.000Z';
const SYNC = '2026-11-22T09:59:58Z';
const EARLIER_TRANSITION = '2026-11-01T08:00:00Z';

interface RbOptions {
  replicas?: number;
  cpu?: string;
  uid?: string;
  kind?: string;
  workload?: string;
  priorityClassName?: string;
  deleting?: boolean;
  /** Its replicas per cluster it is scheduled to (spec.clusters), Divided; all on member1 unless told. */
  clusters?: Record<string, number>;
}

const rb = (name: string, o: RbOptions = {}): ResourceBinding => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  metadata: {
    name,
    namespace: NS,
    ...(o.uid ? { uid: o.uid } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-11-22T09:59:00Z' as unknown as Date } : {}),
  },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: o.kind ?? 'Deployment', name: o.workload ?? name },
    replicas: o.replicas ?? 1,
    clusters: Object.entries(o.clusters ?? { member1: o.replicas ?? 1 }).map(([cluster, replicas]) => ({
      name: cluster,
      replicas,
    })),
    ...(o.clusters ? { placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } } } : {}),
    replicaRequirements: {
      resourceRequest: { cpu: o.cpu ?? '200m' },
      ...(o.priorityClassName ? { priorityClassName: o.priorityClassName } : {}),
    },
  },
});

const res = (
  name: string,
  reserved: Record<string, string>,
  charge: Record<string, string> = reserved,
  o: { uid?: string; expirationTime?: string; operation?: 'Update' } = {},
): Reservation => ({
  reservedBy: {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    name,
    ...(o.uid ? { uid: o.uid } : {}),
  },
  reserved,
  charge,
  ...(o.expirationTime ? { expirationTime: o.expirationTime } : {}),
  ...(o.operation ? { operation: o.operation } : {}),
});

interface QuotaOptions {
  hard?: Record<string, string>;
  scope?: string[];
  reservations?: Reservation[];
  status?: KarmadaQuotaStatus;
  generation?: number;
}

const kq = (o: QuotaOptions = {}): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'team-a', namespace: NS, generation: o.generation ?? 3 },
  spec: {
    hard: o.hard ?? { cpu: '10', pods: '10' },
    ...(o.scope
      ? {
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: o.scope }],
          },
        }
      : {}),
  },
  status: { ...(o.status ?? {}), ...(o.reservations ? { reservations: o.reservations } : {}) },
});

/** A cluster; workloads keyed `Kind/name`. Quantities as wire strings (what a snapshot holds). */
const cl = (
  name: string,
  used: Record<string, string>,
  workloads: Record<string, Record<string, string>> = {},
  o: { state?: ObservedCluster['state']; lastSyncTime?: string; message?: string } = {},
): ObservedCluster => ({
  name,
  state: o.state ?? 'Ready',
  lastSyncTime: o.lastSyncTime ?? SYNC,
  ...(o.message ? { message: o.message } : {}),
  used,
  workloads: Object.entries(workloads).map(([key, u]) => {
    const [kind, workload] = key.split('/') as [string, string];
    return { kind, name: workload, used: u };
  }),
});

/** The same cluster with decoded quantities (what the reconciler passes). */
const decoded = (c: ObservedCluster): ObservedCluster => ({
  ...c,
  used: parseResourceList(c.used, 'used').list,
  workloads: c.workloads.map((w) => ({ ...w, used: parseResourceList(w.used, 'used').list })),
});

const run = (
  quota: KarmadaQuota,
  bindings: ResourceBinding[] = [],
  clusters: ObservedCluster[] = [],
  now: Date = NOW,
): QuotaStatusResult => computeQuotaStatus({ quota, bindings, clusters, now });

const conditionOf = (result: QuotaStatusResult, type: string): Condition | undefined =>
  result.status.conditions?.find((c) => c.type === type);

/** The quota as the reconciler would have written it. */
const written = (quota: KarmadaQuota, result: QuotaStatusResult): KarmadaQuota => ({
  ...quota,
  status: result.status,
});

// ---------------------------------------------------------------------------------------------------------

describe('computeQuotaStatus: hard and used', () => {
  it.each<
    [string, Record<string, string>, ObservedCluster[], Record<string, string>, Record<string, string>]
  >([
    [
      'sums over clusters, every hard key present',
      { cpu: '10', memory: '8Gi', pods: '10' },
      [cl('member1', { cpu: '1', pods: '2' }), cl('member2', { cpu: '500m', pods: '1' })],
      { cpu: '10', memory: '8Gi', pods: '10' },
      { cpu: '1500m', memory: '0', pods: '3' },
    ],
    [
      'keys outside hard are masked out',
      { cpu: '10' },
      [cl('member1', { cpu: '1', memory: '1Gi', 'count/deployments.apps': '4' })],
      { cpu: '10' },
      { cpu: '1' },
    ],
    [
      'no cluster: every hard key 0',
      { cpu: '10', pods: '5' },
      [],
      { cpu: '10', pods: '5' },
      { cpu: '0', pods: '0' },
    ],
    [
      'hard in canonical form; usage from pods no binding names counts (unscoped)',
      { cpu: '1.5', memory: '1536Mi' },
      [cl('member1', { cpu: '0.5', memory: '1Gi' }, { 'Pod/direct': { cpu: '500m' } })],
      { cpu: '1500m', memory: '1536Mi' },
      { cpu: '500m', memory: '1Gi' },
    ],
  ])('%s', (_name, hard, clusters, expectedHard, expectedUsed) => {
    const result = run(kq({ hard }), [], clusters);
    expect(result.status.hard).toEqual(expectedHard);
    expect(result.status.used).toEqual(expectedUsed);
    // Decoded quantities give the same answer as wire strings.
    expect(run(kq({ hard }), [], clusters.map(decoded)).status.used).toEqual(expectedUsed);
    expect(result.errors).toEqual([]);
  });

  it('per-cluster slices are sorted by name, masked, with every hard key, state and lastSyncTime', () => {
    const result = run(
      kq({ hard: { cpu: '10', pods: '10' } }),
      [],
      [
        cl(
          'member2',
          { cpu: '2', memory: '1Gi' },
          {},
          { state: 'Stale', lastSyncTime: '2026-11-22T09:00:00Z' },
        ),
        cl('member10', {}),
        cl('member1', { pods: '3' }),
      ],
    );
    expect(result.status.clusters).toEqual([
      { name: 'member1', used: { cpu: '0', pods: '3' }, lastSyncTime: SYNC, state: 'Ready' },
      { name: 'member10', used: { cpu: '0', pods: '0' }, lastSyncTime: SYNC, state: 'Ready' },
      {
        name: 'member2',
        used: { cpu: '2', pods: '0' },
        lastSyncTime: '2026-11-22T09:00:00Z',
        state: 'Stale',
      },
    ]);
    expect(result.status.used).toEqual({ cpu: '2', pods: '3' });
  });

  it('observedGeneration is metadata.generation', () => {
    expect(run(kq({ generation: 7 })).status.observedGeneration).toBe(7);
  });
});

describe("computeQuotaStatus: the count's version (observedBindingsVersion)", () => {
  const stamp = (previous: string | undefined, listed: string | undefined) =>
    computeQuotaStatus({
      quota: kq({ status: previous === undefined ? {} : { observedBindingsVersion: previous } }),
      bindings: [],
      ...(listed === undefined ? {} : { bindingsVersion: listed }),
      clusters: [],
      now: NOW,
    }).status.observedBindingsVersion;

  it.each<[string, string | undefined, string | undefined, string | undefined]>([
    ['the first count: the list counted', undefined, '12', '12'],
    ['a later list moves it up', '12', '25', '25'],
    ['a later list, longer in digits', '99', '100', '100'],
    ['an older list never moves it down', '20', '12', '20'],
    ['the same list keeps it', '20', '20', '20'],
    ['a list of unknown version keeps it', '20', undefined, '20'],
    ['nothing stamped and no version: none', undefined, undefined, undefined],
    ['a malformed stamp is replaced by the list', 'x', '7', '7'],
    ['a malformed list version keeps the stamp', '7', 'x', '7'],
  ])('%s', (_, previous, listed, expected) => {
    expect(stamp(previous, listed)).toBe(expected);
  });

  it('moving alone is no change: a status is not written for its stamp only', () => {
    const quota = kq();
    const first = computeQuotaStatus({ quota, bindings: [], bindingsVersion: '12', clusters: [], now: NOW });
    const again = computeQuotaStatus({
      quota: written(quota, first),
      bindings: [],
      bindingsVersion: '30',
      clusters: [],
      now: NOW,
    });
    expect(again.changed).toBe(false);
    expect(again.status.observedBindingsVersion).toBe('30');
  });

  it.each<[string, boolean | undefined, string | undefined, string | undefined, boolean]>([
    ['restamp, a later list: changed', true, '20', '30', true],
    ['restamp, a later list, longer in digits: changed', true, '99', '100', true],
    ['restamp, nothing stamped yet: changed', true, undefined, '30', true],
    ['restamp, the same list: not changed', true, '20', '20', false],
    ['restamp, an older list: not changed (never down)', true, '20', '12', false],
    ['restamp, a list of unknown version: not changed', true, '20', undefined, false],
    ["no restamp, a later list: not changed (today's rule)", undefined, '20', '30', false],
    ['restamp false, a later list: not changed', false, '20', '30', false],
  ])('a count on request: %s', (_, restamp, stamped, listed, changed) => {
    const quota = kq();
    const counted = written(quota, computeQuotaStatus({ quota, bindings: [], clusters: [], now: NOW }));
    const result = computeQuotaStatus({
      quota: {
        ...counted,
        status: { ...counted.status, ...(stamped ? { observedBindingsVersion: stamped } : {}) },
      },
      bindings: [],
      ...(listed === undefined ? {} : { bindingsVersion: listed }),
      clusters: [],
      now: NOW,
      ...(restamp === undefined ? {} : { restamp }),
    });
    expect(result.changed).toBe(changed);
  });
});

describe('computeQuotaStatus: scoped quota', () => {
  const bindings = [
    rb('web', { replicas: 2, priorityClassName: 'high' }),
    rb('batch', { replicas: 3, priorityClassName: 'low' }),
  ];
  const clusters = [
    cl(
      'member1',
      { cpu: '1300m', pods: '5' },
      { 'Deployment/web': { cpu: '200m', pods: '1' }, 'Deployment/batch': { cpu: '600m', pods: '3' } },
    ),
    cl('member2', { cpu: '700m', pods: '2' }, { 'Deployment/web': { cpu: '200m', pods: '1' } }),
  ];

  it.each<[string, string[] | undefined, Record<string, string>, Record<string, string>[]]>([
    [
      'unscoped: all usage, direct pods included',
      undefined,
      { cpu: '2', pods: '7' },
      [
        { cpu: '1300m', pods: '5' },
        { cpu: '700m', pods: '2' },
      ],
    ],
    [
      'scoped to high: only workloads of matching bindings',
      ['high'],
      { cpu: '400m', pods: '2' },
      [
        { cpu: '200m', pods: '1' },
        { cpu: '200m', pods: '1' },
      ],
    ],
    [
      'scoped to low',
      ['low'],
      { cpu: '600m', pods: '3' },
      [
        { cpu: '600m', pods: '3' },
        { cpu: '0', pods: '0' },
      ],
    ],
    [
      'scoped to a class nobody uses',
      ['none'],
      { cpu: '0', pods: '0' },
      [
        { cpu: '0', pods: '0' },
        { cpu: '0', pods: '0' },
      ],
    ],
  ])('%s', (_name, scope, used, perCluster) => {
    const result = run(kq({ ...(scope ? { scope } : {}) }), bindings, clusters);
    expect(result.status.used).toEqual(used);
    expect(result.status.clusters?.map((c) => c.used)).toEqual(perCluster);
  });

  it('a reservation of a binding that left the scope is released; bindings in scope reserve', () => {
    const quota = kq({
      scope: ['high'],
      reservations: [res('batch', { cpu: '600m', pods: '3' })],
    });
    const result = run(quota, bindings, []);
    const inScope = bindings.filter((b) => b.spec?.replicaRequirements?.priorityClassName === 'high');
    expect(result.reservations?.map((r) => r.reservedBy.name)).toEqual(
      inScope.map((b) => b.metadata?.name).sort(),
    );
    expect(result.reservations?.map((r) => r.reservedBy.name)).not.toContain('batch');
  });
});

describe('computeQuotaStatus: reservations shrink as pods appear', () => {
  const quota = (expirationTime?: string) =>
    kq({
      reservations: [
        res(
          'web',
          { cpu: '600m', pods: '3' },
          { cpu: '600m', pods: '3' },
          expirationTime ? { expirationTime } : {},
        ),
      ],
    });
  const binding = rb('web', { replicas: 3, cpu: '200m' });
  const observed = (pods: number) => [
    cl('member1', {}, pods === 0 ? {} : { 'Deployment/web': { cpu: `${200 * pods}m`, pods: `${pods}` } }),
  ];

  it.each<[string, number, Reservation[], Record<string, string>]>([
    ['nothing observed', 0, [res('web', { cpu: '600m', pods: '3' })], { cpu: '600m', pods: '3' }],
    [
      '1 of 3 pods observed',
      1,
      [res('web', { cpu: '400m', pods: '2' }, { cpu: '600m', pods: '3' })],
      { cpu: '400m', pods: '2' },
    ],
    [
      '2 of 3 pods observed: 200m left',
      2,
      [res('web', { cpu: '200m', pods: '1' }, { cpu: '600m', pods: '3' })],
      { cpu: '200m', pods: '1' },
    ],
    ['3 of 3 pods observed: dropped', 3, [], {}],
    ['more pods than charged (a rollout surge): dropped', 4, [], {}],
  ])('%s', (_name, pods, reservations, reserved) => {
    const result = run(quota(), [binding], observed(pods));
    expect(result.reservations).toEqual(reservations);
    expect(result.status.reserved).toEqual(reserved);
  });

  it('a landed claim keeps its expiration until it lapses, and shrinks like any other', () => {
    const result = run(quota(UNEXPIRED), [binding], observed(2));
    expect(result.reservations).toEqual([
      res('web', { cpu: '200m', pods: '1' }, { cpu: '600m', pods: '3' }, { expirationTime: UNEXPIRED }),
    ]);
  });

  it('a fully observed claim is kept (reserving nothing) until it lapses: admissions rely on it', () => {
    const result = run(quota(UNEXPIRED), [binding], observed(3));
    expect(result.reservations).toEqual([
      res('web', {}, { cpu: '600m', pods: '3' }, { expirationTime: UNEXPIRED }),
    ]);
  });

  // Two creates of one name merged into one claim naming no uid: the other object's create lands
  // only once this one is gone, when these pods are on their way out (docs/concepts/accounting.md).
  it("a claim naming no uid beside a stored object holds its whole charge: it may be another object's", () => {
    const stored = rb('web', { replicas: 3, cpu: '200m', uid: 'u0' });
    const result = run(quota(UNEXPIRED), [stored], observed(3));
    expect(result.reservations).toEqual([
      res('web', { cpu: '600m', pods: '3' }, { cpu: '600m', pods: '3' }, { expirationTime: UNEXPIRED }),
    ]);
  });

  it('F5: usage that falls again (evictions, a rollout) is reserved again, with no entry before', () => {
    const result = run(kq(), [binding], observed(1));
    expect(result.reservations).toEqual([res('web', { cpu: '400m', pods: '2' }, { cpu: '600m', pods: '3' })]);
  });

  it('usage is matched by the workload kind and name, summed over the clusters it is scheduled to', () => {
    const result = run(
      quota(),
      [rb('web', { replicas: 3, cpu: '200m', clusters: { member1: 1, member2: 2 } })],
      [
        cl(
          'member1',
          {},
          { 'Deployment/web': { cpu: '200m', pods: '1' }, 'StatefulSet/web': { cpu: '200m', pods: '1' } },
        ),
        cl(
          'member2',
          {},
          { 'Deployment/web': { cpu: '200m', pods: '1' }, 'Deployment/other': { cpu: '1', pods: '1' } },
        ),
        cl('member3', {}, { 'Deployment/web': { cpu: '1', pods: '5' } }),
      ],
    );
    expect(result.reservations).toEqual([res('web', { cpu: '200m', pods: '1' }, { cpu: '600m', pods: '3' })]);
  });

  it('every stored binding reserves what is not observed of its charge, by name after the entries', () => {
    const result = run(
      kq({ reservations: [res('zeta', { cpu: '1' })] }),
      [rb('web', { replicas: 3 }), rb('api'), rb('zeta', { cpu: '1' })],
      [],
    );
    expect(result.reservations).toEqual([
      res('zeta', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }),
      res('api', { cpu: '200m', pods: '1' }, { cpu: '200m', pods: '1' }),
      res('web', { cpu: '600m', pods: '3' }, { cpu: '600m', pods: '3' }),
    ]);
    expect(result.status.reserved).toEqual({ cpu: '1800m', pods: '5' });
  });

  it('reserved is the sum of the reservations', () => {
    const result = run(
      kq({ reservations: [res('a', { cpu: '1' }), res('b', { cpu: '1', pods: '1' })] }),
      [rb('a', { cpu: '1' }), rb('b', { cpu: '1' })],
      [],
    );
    expect(result.status.reserved).toEqual({ cpu: '2', pods: '2' });
    expect(result.reservations?.map((r) => r.reservedBy.name)).toEqual(['a', 'b']);
  });
});

describe('computeQuotaStatus: pending changes', () => {
  // UPDATE admitted from 2 to 3 replicas of 2 CPU: charge 6, reserved 2 (4 observed already).
  const pending = (expirationTime: string | undefined) =>
    kq({
      hard: { cpu: '10', pods: '10' },
      reservations: [
        res(
          'web',
          { cpu: '2', pods: '1' },
          { cpu: '6', pods: '3' },
          expirationTime ? { expirationTime } : {},
        ),
      ],
    });
  const fourObserved = [cl('member1', {}, { 'Deployment/web': { cpu: '4', pods: '2' } })];

  it.each<[string, string | undefined, number, Reservation[]]>([
    [
      'not landed, unexpired: the admitted charge is held, the expiration kept',
      UNEXPIRED,
      2,
      [res('web', { cpu: '2', pods: '1' }, { cpu: '6', pods: '3' }, { expirationTime: UNEXPIRED })],
    ],
    [
      'landed: the claim is kept until it lapses',
      UNEXPIRED,
      3,
      [res('web', { cpu: '2', pods: '1' }, { cpu: '6', pods: '3' }, { expirationTime: UNEXPIRED })],
    ],
    [
      'landed higher than admitted: the persisted charge counts, the claim kept',
      UNEXPIRED,
      4,
      [res('web', { cpu: '4', pods: '2' }, { cpu: '8', pods: '4' }, { expirationTime: UNEXPIRED })],
    ],
    ['not landed but expired: it never will, the persisted charge counts (fully observed)', EXPIRED, 2, []],
    ['no expiration: the persisted charge counts', undefined, 2, []],
    ['an unreadable expiration counts as expired', 'soon', 2, []],
  ])('%s', (_name, expirationTime, replicas, reservations) => {
    const result = run(pending(expirationTime), [rb('web', { replicas, cpu: '2' })], fourObserved);
    expect(result.reservations).toEqual(reservations);
  });

  it('a pending change that lowers one key and raises another holds the larger of each', () => {
    // Admitted: 4 replicas of 500m (cpu 2, pods 4); persisted still 2 replicas of 2 (cpu 4, pods 2).
    const quota = kq({
      reservations: [res('web', { pods: '2' }, { cpu: '2', pods: '4' }, { expirationTime: UNEXPIRED })],
    });
    const result = run(quota, [rb('web', { replicas: 2, cpu: '2' })], fourObserved);
    expect(result.reservations).toEqual([
      res('web', { pods: '2' }, { cpu: '4', pods: '4' }, { expirationTime: UNEXPIRED }),
    ]);
  });
});

describe('computeQuotaStatus: missing bindings', () => {
  it.each<[string, Reservation, ResourceBinding[], Reservation[]]>([
    [
      'orphan CREATE before its expiration: kept as it is',
      res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { expirationTime: UNEXPIRED }),
      [],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { expirationTime: UNEXPIRED })],
    ],
    [
      'orphan CREATE after its expiration: dropped',
      res('web', { cpu: '1' }, { cpu: '1' }, { expirationTime: EXPIRED }),
      [],
      [],
    ],
    ['deleted binding (no expiration): dropped at once', res('web', { cpu: '1' }), [], []],
    [
      'binding being deleted: released at once, even while pending',
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u1', expirationTime: UNEXPIRED }),
      [rb('web', { cpu: '1', uid: 'u1', deleting: true })],
      [],
    ],
    [
      'uid mismatch, no expiration: the persisted object is held, under its uid',
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'old' }),
      [rb('web', { cpu: '1', uid: 'new' })],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'new' })],
    ],
    [
      // A create retried after its answer was lost: admitted under a fresh uid, then AlreadyExists.
      'uid mismatch, expired: falls back to what the persisted object costs, under its uid',
      res('web', { cpu: '2' }, { cpu: '2' }, { uid: 'retried', expirationTime: EXPIRED }),
      [rb('web', { cpu: '1', uid: 'persisted' })],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'persisted' })],
    ],
    [
      'uid mismatch, expired, persisted object being deleted: released',
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'retried', expirationTime: EXPIRED }),
      [rb('web', { cpu: '1', uid: 'persisted', deleting: true })],
      [],
    ],
    [
      "uid mismatch, unexpired: the claim holds the larger of its charge and the stored object's",
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'new', expirationTime: UNEXPIRED }),
      [rb('web', { cpu: '4', uid: 'old' })],
      [
        res(
          'web',
          { cpu: '4', pods: '1' },
          { cpu: '4', pods: '1' },
          { uid: 'new', expirationTime: UNEXPIRED },
        ),
      ],
    ],
    [
      'uid on one side only: the same binding, under its uid',
      res('web', { cpu: '1' }, { cpu: '1' }),
      [rb('web', { cpu: '1', uid: 'u1' })],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'u1' })],
    ],
    [
      "another object's claim outlives the binding of its name being deleted (its create may land)",
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'new', expirationTime: UNEXPIRED }),
      [rb('web', { cpu: '4', uid: 'old', deleting: true })],
      [res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'new', expirationTime: UNEXPIRED })],
    ],
    [
      'a claim of no uid (two objects merged) outlives a binding being deleted until it lapses',
      res('web', { cpu: '1' }, { cpu: '1' }, { expirationTime: UNEXPIRED }),
      [rb('web', { cpu: '1', uid: 'u1', deleting: true })],
      [res('web', { cpu: '1' }, { cpu: '1' }, { expirationTime: UNEXPIRED })],
    ],
    [
      'matching uid: the same binding',
      res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'u1' }),
      [rb('web', { cpu: '1', uid: 'u1' })],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'u1' })],
    ],
    [
      'keys no longer in hard are dropped from a kept entry',
      res('web', { cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }, { expirationTime: UNEXPIRED }),
      [],
      [res('web', { cpu: '1' }, { cpu: '1' }, { expirationTime: UNEXPIRED })],
    ],
  ])('%s', (_name, reservation, bindings, expected) => {
    const result = run(kq({ reservations: [reservation] }), bindings, []);
    expect(result.reservations).toEqual(expected);
    expect(result.errors).toEqual([]);
  });
});

describe('computeQuotaStatus: conditions', () => {
  it('all Ready, within quota, no errors', () => {
    const result = run(kq({ generation: 4 }), [], [cl('member1', { cpu: '1' }), cl('member2', {})]);
    expect(result.status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        observedGeneration: 4,
        lastTransitionTime: NOW_META,
        reason: 'Reconciled',
        message: 'usage and reservations are reconciled',
      },
      {
        type: 'ClustersSynced',
        status: 'True',
        observedGeneration: 4,
        lastTransitionTime: NOW_META,
        reason: 'AllClustersReady',
        message: 'all 2 member clusters are Ready',
      },
      {
        type: 'OverQuota',
        status: 'False',
        observedGeneration: 4,
        lastTransitionTime: NOW_META,
        reason: 'WithinQuota',
        message: 'used+reserved is within hard for every resource',
      },
      {
        type: 'RunningBeyondCharge',
        status: 'False',
        observedGeneration: 4,
        lastTransitionTime: NOW_META,
        reason: 'WithinCharge',
        message: 'every workload runs within what its binding was charged',
      },
    ]);
  });

  it.each<[string, ObservedCluster[], Partial<Condition>]>([
    [
      'one Ready cluster',
      [cl('member1', {})],
      { status: 'True', reason: 'AllClustersReady', message: 'member cluster member1 is Ready' },
    ],
    [
      'no cluster published: synced',
      [],
      {
        status: 'True',
        reason: 'AllClustersReady',
        message: 'no member cluster has published usage for this namespace',
      },
    ],
    [
      'non-Ready clusters are named with their state and since when',
      [
        cl('member3', {}, {}, { state: 'Stale', lastSyncTime: '2026-11-22T09:50:00Z' }),
        cl('member1', {}),
        cl(
          'member2',
          {},
          {},
          { state: 'Unreachable', lastSyncTime: '2026-11-22T09:00:00Z', message: 'connection refused' },
        ),
      ],
      {
        status: 'False',
        reason: 'ClustersNotReady',
        message:
          'member2 Unreachable since 2026-11-22T09:00:00Z (connection refused); member3 Stale since 2026-11-22T09:50:00Z',
      },
    ],
  ])('ClustersSynced: %s', (_name, clusters, expected) => {
    expect(conditionOf(run(kq(), [], clusters), 'ClustersSynced')).toMatchObject(expected);
  });

  it.each<[string, Record<string, string>, Record<string, string>, Reservation[], Partial<Condition>]>([
    [
      'used + reserved above hard',
      { cpu: '100' },
      { cpu: '98' },
      [res('web', { cpu: '4' }, { cpu: '4' }, { expirationTime: UNEXPIRED })],
      {
        status: 'True',
        reason: 'UsageExceedsHard',
        message: 'used+reserved exceeds hard for cpu (used 98, reserved 4, hard 100)',
      },
    ],
    [
      'several keys, sorted, canonical quantities',
      { cpu: '1', memory: '1Gi', pods: '10' },
      { cpu: '1.5', memory: '1536Mi', pods: '1' },
      [],
      {
        status: 'True',
        message:
          'used+reserved exceeds hard for cpu (used 1500m, reserved 0, hard 1); memory (used 1536Mi, reserved 0, hard 1Gi)',
      },
    ],
    [
      'exactly at hard: within',
      { cpu: '100' },
      { cpu: '96' },
      [res('web', { cpu: '4' }, { cpu: '4' }, { expirationTime: UNEXPIRED })],
      { status: 'False', reason: 'WithinQuota' },
    ],
  ])('OverQuota: %s', (_name, hard, used, reservations, expected) => {
    const result = run(kq({ hard, reservations }), [], [cl('member1', used)]);
    expect(conditionOf(result, 'OverQuota')).toMatchObject(expected);
  });

  it('Ready is False with the problems: InvalidSpec for spec.hard, InvalidData otherwise', () => {
    const badSpec = run(kq({ hard: { cpu: 'lots', pods: '10' } }));
    expect(conditionOf(badSpec, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(conditionOf(badSpec, 'Ready')?.message).toContain('spec.hard[cpu]');
    expect(badSpec.status.hard).toEqual({ pods: '10' });

    const badData = run(kq(), [], [cl('member1', { cpu: 'x' })]);
    expect(conditionOf(badData, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidData' });
    expect(conditionOf(badData, 'Ready')?.message).toMatch(
      /^1 problem\(s\): clusters\[member1\]\.used\[cpu\]: /,
    );
  });

  it('a condition whose status did not change keeps its lastTransitionTime; others get now', () => {
    const previous: Condition[] = [
      {
        type: 'Ready',
        status: 'True',
        lastTransitionTime: EARLIER_TRANSITION,
        reason: 'Reconciled',
        message: 'old',
      },
      {
        type: 'ClustersSynced',
        status: 'True',
        lastTransitionTime: EARLIER_TRANSITION,
        reason: 'AllClustersReady',
        message: 'x',
      },
      {
        type: 'OverQuota',
        status: 'False',
        lastTransitionTime: EARLIER_TRANSITION,
        reason: 'WithinQuota',
        message: 'x',
      },
      {
        type: 'example.com/Audited',
        status: 'True',
        lastTransitionTime: EARLIER_TRANSITION,
        reason: 'Done',
        message: 'kept',
      },
    ];
    const result = run(
      kq({ status: { conditions: previous } }),
      [],
      [cl('member1', {}, {}, { state: 'Stale' })],
    );
    expect(result.status.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['Ready', 'True', EARLIER_TRANSITION],
      ['ClustersSynced', 'False', NOW_META],
      ['OverQuota', 'False', EARLIER_TRANSITION],
      ['RunningBeyondCharge', 'False', NOW_META],
      ['example.com/Audited', 'True', EARLIER_TRANSITION],
    ]);
    expect(conditionOf(result, 'Ready')?.message).toBe('usage and reservations are reconciled');
    expect(conditionOf(result, 'example.com/Audited')).toEqual(previous[3]);
  });
});

describe('computeQuotaStatus: events', () => {
  const previousClusters = (states: Record<string, string>) =>
    Object.entries(states).map(([name, state]) => ({
      name,
      used: {},
      lastSyncTime: SYNC,
      state: state as ObservedCluster['state'],
    }));

  it.each<[string, Record<string, string>, ObservedCluster[], QuotaEvent[]]>([
    ['nothing changes', { member1: 'Ready' }, [cl('member1', {})], []],
    [
      'a cluster turns Unreachable',
      { member1: 'Ready', member2: 'Ready' },
      [cl('member1', {}), cl('member2', {}, {}, { state: 'Unreachable', message: 'timeout' })],
      [
        {
          type: 'Warning',
          reason: 'ClusterStale',
          message: `member cluster member2 Unreachable since ${SYNC} (timeout): its last known usage still counts`,
        },
      ],
    ],
    [
      'a cluster appears Stale',
      {},
      [cl('member1', {}, {}, { state: 'Stale' })],
      [
        {
          type: 'Warning',
          reason: 'ClusterStale',
          message: `member cluster member1 Stale since ${SYNC}: its last known usage still counts`,
        },
      ],
    ],
    [
      'Stale to Unreachable: no new event',
      { member1: 'Stale' },
      [cl('member1', {}, {}, { state: 'Unreachable' })],
      [],
    ],
    [
      'a cluster recovers',
      { member1: 'Unreachable' },
      [cl('member1', {})],
      [
        {
          type: 'Normal',
          reason: 'ClusterRecovered',
          message: 'member cluster member1 is Ready again (was Unreachable)',
        },
      ],
    ],
    ['a new Ready cluster: no event', {}, [cl('member1', {})], []],
  ])('%s', (_name, before, clusters, events) => {
    const result = run(kq({ status: { clusters: previousClusters(before) } }), [], clusters);
    expect(result.events).toEqual(events);
  });

  it('OverQuota is reported when it turns True, not while it stays True', () => {
    const quota = kq({ hard: { cpu: '1' } });
    const first = run(quota, [], [cl('member1', { cpu: '2' })]);
    expect(first.events).toEqual([
      {
        type: 'Warning',
        reason: 'OverQuota',
        message: 'used+reserved exceeds hard for cpu (used 2, reserved 0, hard 1)',
      },
    ]);
    const second = run(written(quota, first), [], [cl('member1', { cpu: '3' })]);
    expect(second.events).toEqual([]);
    const back = run(written(quota, second), [], [cl('member1', { cpu: '1' })]);
    expect(back.events).toEqual([]);
    expect(conditionOf(back, 'OverQuota')?.status).toBe('False');
  });
});

describe('computeQuotaStatus: changed', () => {
  const bindings = [rb('web', { replicas: 3, uid: 'u1', clusters: { member1: 1, member2: 2 } })];
  const clusters = [
    cl(
      'member2',
      { cpu: '400m', pods: '2' },
      { 'Deployment/web': { cpu: '400m', pods: '2' } },
      { state: 'Stale' },
    ),
    cl('member1', {}),
  ];
  // An update's claim in flight (naming no resourceVersion: held until it expires), so that the
  // status lists one.
  const quota = kq({
    reservations: [
      res(
        'web',
        { cpu: '600m', pods: '3' },
        { cpu: '600m', pods: '3' },
        { uid: 'u1', operation: 'Update', expirationTime: '2026-11-22T10:10:00.000Z' },
      ),
    ],
  });

  it('is true for a quota never reconciled, false when recomputed from its own result', () => {
    const first = run(quota, bindings, clusters);
    expect(first.changed).toBe(true);
    const second = run(written(quota, first), bindings, clusters, new Date('2026-11-22T10:05:00Z'));
    expect(second.changed).toBe(false);
    expect(second.status).toEqual(first.status);
    expect(second.events).toEqual([]);
  });

  it('compares quantities by value, not by spelling', () => {
    const first = run(quota, bindings, clusters);
    const respelled: KarmadaQuotaStatus = {
      ...first.status,
      hard: { cpu: '10000m', pods: '10' },
      used: { cpu: '0.4', pods: 2 as unknown as string },
      reservations: first.status.reservations?.map((r) => ({ ...r, reserved: { cpu: '0.2', pods: '1' } })),
    };
    expect(run({ ...quota, status: respelled }, bindings, clusters).changed).toBe(false);
  });

  it.each<[string, (s: KarmadaQuotaStatus) => KarmadaQuotaStatus]>([
    ['a different used', (s) => ({ ...s, used: { cpu: '1', pods: '2' } })],
    ['a missing hard key', (s) => ({ ...s, hard: { cpu: '10' } })],
    [
      'another reservation',
      (s) => ({ ...s, reservations: [...(s.reservations ?? []), res('gone', { cpu: '1' })] }),
    ],
    [
      'a reservation without charge (older writer)',
      (s) => ({ ...s, reservations: s.reservations?.map(({ charge: _c, ...r }) => r) }),
    ],
    [
      'another cluster state',
      (s) => ({ ...s, clusters: s.clusters?.map((c) => ({ ...c, state: 'Ready' as const })) }),
    ],
    ['another generation', (s) => ({ ...s, observedGeneration: 2 })],
    ['an unreadable quantity', (s) => ({ ...s, reserved: { cpu: 'x' } })],
    ['no conditions', (s) => ({ ...s, conditions: [] })],
  ])('is true for %s', (_name, edit) => {
    const first = run(quota, bindings, clusters);
    const result = run({ ...quota, status: edit(first.status) }, bindings, clusters);
    expect(result.changed).toBe(true);
  });

  // The aggregator refreshes a Ready member's lastSyncTime every 5 s: that alone rewrites a status
  // only once it has moved by LAST_SYNC_TIME_SLACK_MS (30 s).
  it.each<[string, string, boolean]>([
    ['the same time', SYNC, false],
    ['5 s later', '2026-11-22T10:00:03Z', false],
    ['29 s later', '2026-11-22T10:00:27Z', false],
    ['30 s later', '2026-11-22T10:00:28Z', true],
    ['earlier (another replica)', '2026-11-22T09:59:57Z', true],
  ])('for a Ready member synced %s: changed is %s', (_name, lastSyncTime, changed) => {
    const ready = [cl('member1', {}, {}, { lastSyncTime })];
    const first = run(quota, bindings, [cl('member1', {})]);
    const next = run(written(quota, first), bindings, ready);
    expect(next.changed).toBe(changed);
    expect(next.status.clusters?.[0]?.lastSyncTime).toBe(lastSyncTime);
  });

  it('a write for another reason carries the newer lastSyncTime', () => {
    const first = run(quota, bindings, [cl('member1', {})]);
    const next = run(written(quota, first), bindings, [
      cl('member1', { pods: '1' }, {}, { lastSyncTime: '2026-11-22T10:00:03Z' }),
    ]);
    expect(next.changed).toBe(true);
    expect(next.status.clusters?.[0]).toMatchObject({ lastSyncTime: '2026-11-22T10:00:03Z' });
  });

  it('is true when a pod appears (the reservation shrinks)', () => {
    const first = run(quota, bindings, clusters);
    const more = [
      clusters[0]!,
      cl('member1', { cpu: '200m', pods: '1' }, { 'Deployment/web': { cpu: '200m', pods: '1' } }),
    ];
    const next = run(written(quota, first), bindings, more);
    expect(next.changed).toBe(true);
    expect(next.status.reserved).toEqual({});
  });

  it("one member beyond its share never nets another's share not running yet (review 3, N2 note)", () => {
    const first = run(quota, bindings, clusters);
    // member2 runs 3 where the binding gives it 2 (a surge, an override made after admission);
    // member1's 1 is not running yet: it stays reserved, and web is named running beyond its charge.
    const beyond = [
      cl('member2', { cpu: '600m', pods: '3' }, { 'Deployment/web': { cpu: '600m', pods: '3' } }),
      cl('member1', {}),
    ];
    const next = run(written(quota, first), bindings, beyond);
    expect(next.status.reserved).toEqual({ cpu: '200m', pods: '1' });
    expect(next.status.conditions?.find((c) => c.type === 'RunningBeyondCharge')).toMatchObject({
      status: 'True',
      message: expect.stringContaining('web'),
    });
  });
});

describe('computeQuotaStatus: wouldBeDenied (refusals Warn and DryRun did not enforce)', () => {
  const noted = (binding: string, at: string) => ({
    binding,
    enforcement: 'Warn' as const,
    message: 'exceeded quota: team-a, requested: cpu=1, used: cpu=10, limited: cpu=10',
    at,
  });
  const withNotes = (notes: ReturnType<typeof noted>[]) => ({ ...kq(), status: { wouldBeDenied: notes } });

  it('keeps the webhook’s notes as read, and unchanged notes change nothing', () => {
    const notes = [noted('web', '2026-11-22T09:30:00Z'), noted('api', '2026-11-22T09:10:00Z')];
    const first = run(withNotes(notes));
    expect(first.status.wouldBeDenied).toEqual(notes);
    expect(run(written(kq(), first)).changed).toBe(false);
  });

  it('drops a note an hour after its admission, and writes that', () => {
    const notes = [noted('web', '2026-11-22T09:30:00Z'), noted('api', '2026-11-22T08:59:00Z')];
    const first = run(withNotes(notes));
    expect(first.status.wouldBeDenied).toEqual([notes[0]]);
    const next = run(written(kq(), first), [], [], new Date('2026-11-22T10:31:00Z'));
    expect(next.status.wouldBeDenied).toBeUndefined();
    expect(run({ ...kq(), status: { ...first.status, wouldBeDenied: notes } }).changed).toBe(true);
  });
});

describe('computeQuotaStatus: invalid input is reported, never thrown', () => {
  it('a bad quantity in a binding: reported, the rest of the charge still counts', () => {
    const bad = rb('web', { replicas: 2, cpu: 'lots' });
    const result = run(kq({ reservations: [res('web', { cpu: '1', pods: '2' })] }), [bad], []);
    expect(result.errors).toEqual([
      expect.stringMatching(
        /^ResourceBinding team-a\/web: spec\.replicaRequirements\.resourceRequest\[cpu\]: .*lots/,
      ),
    ]);
    expect(result.reservations).toEqual([res('web', { pods: '2' })]);
    expect(conditionOf(result, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidData' });
  });

  it('bad snapshot data: reported, the readable part counts', () => {
    const result = run(
      kq(),
      [],
      [
        cl('member1', { cpu: '1', pods: 'two' }, { 'Deployment/web': { cpu: '1Q' } }),
        cl(
          'member2',
          { cpu: '1' },
          {},
          { state: 'Asleep' as ObservedCluster['state'], lastSyncTime: 'yesterday' },
        ),
        cl('member2', { cpu: '5' }),
        { name: '', state: 'Ready', lastSyncTime: SYNC, used: { cpu: '1' }, workloads: [] },
      ],
    );
    expect(result.errors).toEqual([
      expect.stringMatching(/^clusters\[member1\]\.used\[pods\]: /),
      expect.stringMatching(/^clusters\[member1\]\.workloads\[0\]\.used\[cpu\]: /),
      'clusters[member2].state: must be one of Ready, Stale, Unreachable, got "Asleep"; read as Stale',
      'clusters[member2].lastSyncTime: must be an RFC 3339 time, got "yesterday"',
      'clusters[member2]: published more than once; only the first is counted',
      "clusters[3].name: must be a non-empty string; this cluster's usage is ignored",
    ]);
    expect(result.status.used).toEqual({ cpu: '2', pods: '0' });
    expect(result.status.clusters).toEqual([
      { name: 'member1', used: { cpu: '1', pods: '0' }, lastSyncTime: SYNC, state: 'Ready' },
      {
        name: 'member2',
        used: { cpu: '1', pods: '0' },
        lastSyncTime: '1970-01-01T00:00:00Z',
        state: 'Stale',
      },
    ]);
  });

  it('an unreadable lastSyncTime keeps the previous one', () => {
    const quota = kq({
      status: { clusters: [{ name: 'member1', used: {}, lastSyncTime: SYNC, state: 'Ready' }] },
    });
    const result = run(quota, [], [cl('member1', {}, {}, { lastSyncTime: '' })]);
    expect(result.status.clusters?.[0]).toMatchObject({ lastSyncTime: SYNC, state: 'Stale' });
  });

  it('malformed reservations: reported; unreadable entries and duplicates dropped', () => {
    const quota = kq({
      reservations: [
        { reserved: { cpu: '1' } } as unknown as Reservation,
        res('web', { cpu: 'x' }, { cpu: '1' }, { expirationTime: UNEXPIRED }),
        res('web', { cpu: '5' }),
      ],
    });
    const result = run(quota, [], []);
    expect(result.errors).toEqual([
      'status.reservations[0].reservedBy: Required value: the binding holding this reservation',
      expect.stringMatching(/^status\.reservations\[1\]\.reserved\[cpu\]: /),
      'status.reservations: more than one reservation for ResourceBinding team-a/web; only the first is kept',
    ]);
    // Pending with no stored binding: the whole charge is reserved.
    expect(result.reservations).toEqual([
      res('web', { cpu: '1' }, { cpu: '1' }, { expirationTime: UNEXPIRED }),
    ]);
    expect(result.status.reserved).toEqual({ cpu: '1' });
  });

  it.each(['used', 'reserved'])('a bad status.%s (about to be replaced) is not a problem', (sum) => {
    expect(run(kq({ status: { [sum]: { cpu: 'x' } } })).errors).toEqual([]);
  });

  it('garbage never throws', () => {
    const garbage = [
      () => computeQuotaStatus({ quota: {} as KarmadaQuota, bindings: [], clusters: [], now: NOW }),
      () =>
        computeQuotaStatus({
          quota: kq({ reservations: 'none' as unknown as Reservation[] }),
          bindings: null as unknown as ResourceBinding[],
          clusters: 'x' as unknown as ObservedCluster[],
          now: NOW,
        }),
      () =>
        computeQuotaStatus({
          quota: kq({ reservations: [res('web', { cpu: '1' })] }),
          bindings: [
            {} as ResourceBinding,
            { metadata: { name: 'web' } } as ResourceBinding,
            null as unknown as ResourceBinding,
          ],
          clusters: [
            null as unknown as ObservedCluster,
            { name: 'm', workloads: [null, { kind: 'Pod' }] } as unknown as ObservedCluster,
          ],
          now: NOW,
        }),
    ];
    for (const call of garbage) {
      expect(call).not.toThrow();
      const result = call();
      expect(result.errors.length).toBeGreaterThan(0);
      expect(conditionOf(result, 'Ready')?.status).toBe('False');
    }
    expect(conditionOf(garbage[0]!(), 'Ready')).toMatchObject({ reason: 'InvalidSpec' });
  });
});

describe('observedUsageOf', () => {
  const clusters = [
    cl(
      'member1',
      {},
      { 'Deployment/web': { cpu: '200m', memory: '1Gi', pods: '1' }, 'Deployment/api': { cpu: '1' } },
    ),
    decoded(
      cl('member2', {}, { 'Deployment/web': { cpu: '400m', pods: '2' }, 'StatefulSet/web': { cpu: '9' } }),
    ),
    cl('member3', {}),
  ];

  it.each<[string, ResourceBinding, string[], Record<string, string>]>([
    [
      'sums the workload over the clusters it is scheduled to, masked',
      rb('web', { clusters: { member1: 1, member2: 2 } }),
      ['cpu', 'pods'],
      { cpu: '600m', pods: '3' },
    ],
    ['not in a cluster it is not scheduled to', rb('web'), ['cpu', 'pods'], { cpu: '200m', pods: '1' }],
    ['nothing while it is scheduled nowhere', rb('web', { clusters: {} }), ['cpu'], {}],
    [
      'matches the kind too',
      rb('web-sts', { kind: 'StatefulSet', workload: 'web', clusters: { member1: 1, member2: 1 } }),
      ['cpu'],
      { cpu: '9' },
    ],
    ['a workload nobody reports', rb('other'), ['cpu'], {}],
    ['no hard keys', rb('web'), [], {}],
  ])('%s', (_name, binding, keys, expected) => {
    expect(formatList(observedUsageOf(binding, clusters, keys))).toEqual(expected);
  });

  it('reports unreadable quantities when asked', () => {
    const errors: string[] = [];
    const usage = observedUsageOf(
      rb('web', { clusters: { m: 1 } }),
      [cl('m', {}, { 'Deployment/web': { cpu: 'x', pods: '1' } })],
      ['cpu', 'pods'],
      errors,
    );
    expect(formatList(usage)).toEqual({ pods: '1' });
    expect(errors).toEqual([expect.stringMatching(/^clusters\[m\]\.workloads\[0\]\.used\[cpu\]: /)]);
    expect(usage['pods']).toBeInstanceOf(Quantity);
  });
});

describe('computeQuotaStatus: a binding seen deleted', () => {
  // A CREATE admitted moments ago: pending (unexpired), its binding not in the list.
  const quota = kq({
    reservations: [res('web', { cpu: '1' }, { cpu: '1' }, { uid: 'uid-web', expirationTime: UNEXPIRED })],
  });

  it.each<[string, ReadonlySet<string> | undefined, number]>([
    ['not known deleted: kept until it expires (it may not be persisted yet)', undefined, 1],
    ['another binding deleted: kept', new Set(['uid-other']), 1],
    ['seen deleted: released at once, not at expiry', new Set(['uid-web']), 0],
  ])('%s', (_name, deletedBindingUids, kept) => {
    const result = computeQuotaStatus({ quota, bindings: [], clusters: [], now: NOW, deletedBindingUids });
    expect(result.reservations).toHaveLength(kept);
  });
});

describe("computeQuotaStatus: an update's claim (operation: Update)", () => {
  const update = { uid: 'u1', expirationTime: UNEXPIRED, operation: 'Update' as const };
  it.each<[string, ResourceBinding[], Reservation[]]>([
    [
      'its object stored: held like any claim, still marked',
      [rb('web', { cpu: '1', uid: 'u1' })],
      [res('web', { cpu: '3', pods: '1' }, { cpu: '3', pods: '1' }, update)],
    ],
    // Named regression (chaos fuzz seed 1690394136): an UPDATE from 999 to 1,000 pods increases by 1
    // and was held at its whole charge of 1,000 while its binding was missing: reserved 1014 > hard 20.
    ['its object missing (deleted after the update read it): dropped at once', [], []],
    [
      'its name stored under another uid: dropped, the stored object derived',
      [rb('web', { cpu: '1', uid: 'u2' })],
      [res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'u2' })],
    ],
  ])('%s', (_name, bindings, expected) => {
    const claim = res('web', { cpu: '1' }, { cpu: '3', pods: '1' }, update);
    const result = run(kq({ reservations: [claim] }), bindings, []);
    expect(result.reservations).toEqual(expected);
    expect(result.errors).toEqual([]);
  });

  it('unmarked, its binding missing: held at its whole charge (it may be a create not stored yet)', () => {
    const claim = res('web', { cpu: '1' }, { cpu: '3' }, { uid: 'u1', expirationTime: UNEXPIRED });
    expect(run(kq({ reservations: [claim] }), [], []).status.reservations).toEqual([
      res('web', { cpu: '3' }, { cpu: '3' }, { uid: 'u1', expirationTime: UNEXPIRED }),
    ]);
  });
});

describe('computeQuotaStatus: claims of another uid (a create retried under a new uid)', () => {
  // Admitted at NOW - 30 s with a 120 s ttl: expires at NOW + 90 s.
  const phantom = res(
    'web',
    { cpu: '2' },
    { cpu: '2' },
    { uid: 'retried', expirationTime: '2026-11-22T10:01:30.250Z' },
  );
  const stored = [rb('web', { cpu: '1', uid: 'stored' })];
  const at = (quota: KarmadaQuota, landingWindowSeconds: number) =>
    computeQuotaStatus({
      quota,
      bindings: stored,
      clusters: [],
      now: NOW,
      timing: { ttlSeconds: 120, landingWindowSeconds },
    });

  it('F4: kept while its create may still land, holding the stored binding too', () => {
    expect(at(kq({ reservations: [phantom] }), 60).status.reservations).toEqual([
      res(
        'web',
        { cpu: '2', pods: '1' },
        { cpu: '2', pods: '1' },
        { uid: 'retried', expirationTime: '2026-11-22T10:01:30.250Z' },
      ),
    ]);
  });

  it('F4: settled against the stored binding once its create has been tried (landing window past)', () => {
    const result = at(kq({ reservations: [phantom] }), 20);
    expect(result.reservations).toEqual([
      res('web', { cpu: '1', pods: '1' }, { cpu: '1', pods: '1' }, { uid: 'stored' }),
    ]);
    expect(result.status.reservations).toEqual([]);
  });
});

describe('workloadFinished', () => {
  const job = (
    statuses: unknown[],
    clusters = ['m1', 'm2'],
    kind = 'Job',
    apiVersion = 'batch/v1',
  ): ResourceBinding =>
    ({
      metadata: { name: 'j', namespace: NS },
      spec: {
        resource: { apiVersion, kind, name: 'j' },
        clusters: clusters.map((name) => ({ name, replicas: 1 })),
      },
      status: { aggregatedStatus: statuses },
    }) as unknown as ResourceBinding;
  const complete = (clusterName: string, type = 'Complete') => ({
    clusterName,
    status: { conditions: [{ type, status: 'True' }] },
  });
  it.each<[string, ResourceBinding, boolean]>([
    ['a Job complete in every scheduled cluster', job([complete('m1'), complete('m2', 'Failed')]), true],
    ['a Job complete in one of two clusters', job([complete('m1')]), false],
    [
      'a Job still running somewhere',
      job([complete('m1'), { clusterName: 'm2', status: { active: 1 } }]),
      false,
    ],
    ['a Job with no aggregated status', job([]), false],
    [
      'a Deployment never finishes',
      job([complete('m1'), complete('m2')], ['m1', 'm2'], 'Deployment', 'apps/v1'),
      false,
    ],
    [
      'a bare Pod that succeeded',
      job([{ clusterName: 'm1', status: { phase: 'Succeeded' } }], ['m1'], 'Pod', 'v1'),
      true,
    ],
    [
      'a bare Pod still running',
      job([{ clusterName: 'm1', status: { phase: 'Running' } }], ['m1'], 'Pod', 'v1'),
      false,
    ],
  ])('%s', (_name, binding, finished) => {
    expect(workloadFinished(binding)).toBe(finished);
  });

  // How the webhook charges a change, by the reconciler's rule: only a deletion is final.
  it.each<[string, ResourceBinding, string[] | undefined, boolean]>([
    ['a running binding, no scopes', rb('web'), undefined, true],
    ['a running binding in scope', rb('web', { priorityClassName: 'high' }), ['high'], true],
    ['a running binding out of scope', rb('web'), ['high'], false],
    ['a binding being deleted', rb('web', { deleting: true }), undefined, false],
    // It holds nothing while finished, as the reconciler counts it.
    ['a finished Job', job([complete('m1'), complete('m2')]), undefined, false],
  ])('checksChangeOn: %s', (_name, binding, scope, checked) => {
    expect(checksChangeOn(kq({ scope }), binding)).toBe(checked);
    expect(beingDeleted(binding)).toBe(binding.metadata?.deletionTimestamp !== undefined);
  });

  const finished = job([complete('m1'), complete('m2')]);
  const running = job([complete('m1')]);
  it.each<[string, ResourceBinding, boolean]>([
    ['running', running, true],
    ['finished: a change that runs it again is charged in full', finished, false],
    ['being deleted', rb('web', { deleting: true }), false],
  ])('oldChargeHeld: %s', (_name, old, held) => {
    expect(oldChargeHeld(old)).toBe(held);
  });

  it('F5: a finished Job holds nothing; a running one reserves what is not observed', () => {
    const finished = job([complete('m1'), complete('m2')]);
    const running = job([complete('m1')]);
    const withCharge = (b: ResourceBinding): ResourceBinding =>
      ({
        ...b,
        spec: {
          ...b.spec,
          replicas: 2,
          replicaRequirements: { resourceRequest: { cpu: '1' } },
          placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
        },
      }) as ResourceBinding;
    expect(run(kq(), [withCharge(finished)]).status.reservations).toEqual([]);
    expect(run(kq(), [withCharge(running)]).status.reserved).toEqual({ cpu: '2', pods: '2' });
  });
});

describe('computeQuotaStatus: running beyond the charge (usage no admission saw)', () => {
  const job = (name: string, o: RbOptions & { finishedIn?: string } = {}): ResourceBinding => {
    const binding = rb(name, { ...o, kind: 'Job' });
    binding.spec!.resource.apiVersion = 'batch/v1';
    binding.spec!.clusters = [{ name: 'member1', replicas: o.replicas ?? 1 }];
    if (o.finishedIn)
      (binding as { status?: unknown }).status = {
        aggregatedStatus: [
          { clusterName: o.finishedIn, status: { conditions: [{ type: 'Complete', status: 'True' }] } },
        ],
      };
    return binding;
  };
  it.each<[string, KarmadaQuota, ResourceBinding[], ObservedCluster[], string | undefined]>([
    [
      'an OverridePolicy raised requests in a member: web (2 x 200m charged) runs 2 x 800m',
      kq(),
      [rb('web', { replicas: 2 })],
      [cl('member1', { cpu: '1600m', pods: '2' }, { 'Deployment/web': { cpu: '1600m', pods: '2' } })],
      'web runs cpu=1600m against a charge of cpu=400m',
    ],
    [
      "a rolling update's surge: 3 pods of a 2-replica binding",
      kq(),
      [rb('web', { replicas: 2 })],
      [cl('member1', { cpu: '600m', pods: '3' }, { 'Deployment/web': { cpu: '600m', pods: '3' } })],
      'web runs cpu=600m,pods=3 against a charge of cpu=400m,pods=2',
    ],
    [
      'a finished Job re-created in a member: charged nothing, runs 1 pod',
      kq(),
      [job('etl', { finishedIn: 'member1' })],
      [cl('member1', { cpu: '200m', pods: '1' }, { 'Job/etl': { cpu: '200m', pods: '1' } })],
      'etl runs cpu=200m,pods=1 against a charge of cpu=0,pods=0',
    ],
    [
      'within the charge: nothing',
      kq(),
      [rb('web', { replicas: 2 })],
      [cl('member1', { cpu: '400m', pods: '2' }, { 'Deployment/web': { cpu: '400m', pods: '2' } })],
      undefined,
    ],
    [
      'a pending claim covers what it was admitted for (a scale-up not stored yet)',
      kq({
        reservations: [
          res('web', { cpu: '200m' }, { cpu: '600m', pods: '3' }, { expirationTime: UNEXPIRED }),
        ],
      }),
      [rb('web', { replicas: 2 })],
      [cl('member1', { cpu: '600m', pods: '3' }, { 'Deployment/web': { cpu: '600m', pods: '3' } })],
      undefined,
    ],
    [
      'a binding being deleted holds nothing while its pods wind down: not flagged',
      kq(),
      [rb('web', { replicas: 2, deleting: true })],
      [cl('member1', { cpu: '400m', pods: '2' }, { 'Deployment/web': { cpu: '400m', pods: '2' } })],
      undefined,
    ],
    [
      'a scoped quota: only the bindings it selects',
      kq({ scope: ['high'] }),
      [rb('web', { replicas: 1 })],
      [cl('member1', { cpu: '1', pods: '5' }, { 'Deployment/web': { cpu: '1', pods: '5' } })],
      undefined,
    ],
  ])('%s', (_name, quota, bindings, clusters, named) => {
    const result = run(quota, bindings, clusters);
    const condition = conditionOf(result, 'RunningBeyondCharge');
    const event = result.events.find((e) => e.reason === 'RunningBeyondCharge');
    if (named === undefined) {
      expect(condition).toMatchObject({ status: 'False', reason: 'WithinCharge' });
      expect(event).toBeUndefined();
    } else {
      expect(condition).toMatchObject({ status: 'True', reason: 'UsageExceedsCharge' });
      expect(condition?.message).toContain(named);
      expect(event).toEqual({ type: 'Warning', reason: 'RunningBeyondCharge', message: condition?.message });
    }
  });

  it('records the Event when another binding starts running beyond, not again for the same ones', () => {
    const clusters = (pods: Record<string, string>) => [
      cl(
        'member1',
        {},
        Object.fromEntries(Object.entries(pods).map(([name, n]) => [`Deployment/${name}`, { pods: n }])),
      ),
    ];
    const bindings = [rb('api'), rb('web')];
    const first = run(kq(), bindings, clusters({ web: '2' }));
    const again = run(kq({ status: first.status }), bindings, clusters({ web: '3' }));
    const another = run(kq({ status: again.status }), bindings, clusters({ web: '3', api: '2' }));
    const beyondEvents = (r: QuotaStatusResult) => r.events.filter((e) => e.reason === 'RunningBeyondCharge');
    expect(beyondEvents(first)).toHaveLength(1);
    expect(beyondEvents(again)).toEqual([]);
    expect(beyondEvents(another)).toHaveLength(1);
    expect(beyondEvents(another)[0]?.message).toMatch(/^api runs pods=2 .*; web runs pods=3 /);
  });
});

describe('computeQuotaStatus: claim retirement (a stored binding is its own record)', () => {
  const stored = (version: string, cpu = '1') => {
    const binding = rb('web', { uid: 'u1', cpu });
    binding.metadata!.resourceVersion = version;
    return binding;
  };
  const claimed = { cpu: '3', pods: '1' };
  const pending = (
    o: { uid?: string; operation?: 'Update'; resourceVersion?: string } = {},
  ): Reservation => ({
    ...res('web', claimed, claimed, { uid: o.uid, expirationTime: UNEXPIRED, operation: o.operation }),
    ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
  });

  it.each<[string, Reservation, ResourceBinding[], boolean]>([
    ["a create's claim, its object stored", pending({ uid: 'u1' }), [stored('7')], true],
    ["a create's claim, its object not stored yet", pending({ uid: 'u1' }), [], false],
    [
      "an update's claim, its object stored past the claim's version",
      pending({ uid: 'u1', operation: 'Update', resourceVersion: '41' }),
      [stored('42')],
      true,
    ],
    [
      "an update's claim, its object at the claim's version (the update may still land)",
      pending({ uid: 'u1', operation: 'Update', resourceVersion: '42' }),
      [stored('42')],
      false,
    ],
    [
      "an update's claim, a list older than the claim's version",
      pending({ uid: 'u1', operation: 'Update', resourceVersion: '42' }),
      [stored('9')],
      false,
    ],
    [
      "an update's claim of no version (held until it expires)",
      pending({ uid: 'u1', operation: 'Update' }),
      [stored('42')],
      false,
    ],
    ['a claim naming no uid (it may be either object of the name)', pending(), [stored('42')], false],
    ["a claim of another object's create", pending({ uid: 'u2' }), [stored('42')], false],
  ])('%s: retired %s', (_what, claim, bindings, retired) => {
    const result = run(kq({ reservations: [claim] }), bindings);
    expect(result.status.reservations).toEqual(
      retired ? [] : [expect.objectContaining({ expirationTime: UNEXPIRED })],
    );
    // Retired, the stored binding holds its own charge: reserved comes from it, not from the claim.
    expect(result.status.reserved).toEqual(retired ? { cpu: '1', pods: '1' } : claimed);
  });

  it("keeps an update's claim's version as read", () => {
    const claim = pending({ uid: 'u1', operation: 'Update', resourceVersion: '42' });
    expect(run(kq({ reservations: [claim] }), [stored('42')]).status.reservations).toEqual([
      { ...claim, reserved: claimed },
    ]);
  });

  it('lists no entry for a stored binding, and sums every binding in reserved', () => {
    const result = run(kq(), [rb('web', { uid: 'u1', cpu: '1' }), rb('api', { uid: 'u2', cpu: '2' })]);
    expect(result.status.reservations).toEqual([]);
    expect(result.status.reserved).toEqual({ cpu: '3', pods: '2' });
    expect(result.reservations.map((r) => r.reservedBy.name)).toEqual(['api', 'web']);
  });
});

describe('computeQuotaStatus: a write that only retires recent claims waits', () => {
  const timing = { ttlSeconds: 120, landingWindowSeconds: 60 };
  const charge = { cpu: '1', pods: '1' };
  /** A create's claim admitted `ago` ms before NOW (its expiration NOW - ago + 120 s). */
  const claimAdmitted = (ago: number) =>
    res('web', charge, charge, {
      uid: 'u1',
      expirationTime: new Date(NOW.getTime() - ago + 120_000).toISOString(),
    });
  const at = (quota: KarmadaQuota, bindings: ResourceBinding[]) =>
    computeQuotaStatus({ quota, bindings, clusters: [], now: NOW, timing });
  /** The status as written while the binding was not stored yet, then the binding stored. */
  const retiring = (ago: number) => {
    const quota = kq({ reservations: [claimAdmitted(ago)] });
    const before = written(quota, at(quota, []));
    return at(before, [rb('web', { uid: 'u1', cpu: '1' })]);
  };

  it.each<[string, number, boolean]>([
    ['admitted 1 s ago: left for a later write', 1_000, false],
    ['admitted 2 s ago: written', RETIREMENT_COALESCE_MS, true],
    ['admitted a minute ago: written', 60_000, true],
  ])('%s', (_what, ago, changed) => {
    const result = retiring(ago);
    // Retired either way: the binding holds its charge, as the claim did.
    expect(result.status.reservations).toEqual([]);
    expect(result.status.reserved).toEqual(charge);
    expect(result.changed).toBe(changed);
  });

  it('without the claim timing, every retirement is written', () => {
    const quota = kq({ reservations: [claimAdmitted(1_000)] });
    const before = written(quota, run(quota, []));
    expect(run(before, [rb('web', { uid: 'u1', cpu: '1' })]).changed).toBe(true);
  });

  it('a retirement with any other change is written', () => {
    const quota = kq({ reservations: [claimAdmitted(1_000)] });
    const before = written(quota, at(quota, []));
    const result = computeQuotaStatus({
      quota: before,
      bindings: [rb('web', { uid: 'u1', cpu: '1' })],
      clusters: [cl('member1', {}, { 'Deployment/web': { cpu: '1', pods: '1' } })],
      now: NOW,
      timing,
    });
    expect(result.changed).toBe(true);
  });
});
