import { formatList, type ResourceList } from '#quantity';
import type { KarmadaQuota, ResourceBinding } from '#api';
import { admitBatch } from './admission.js';
import { bindingCharge } from './charge.js';
import { observedUsageOf, type ObservedCluster } from './cluster-usage.js';
import { targetClusterNames } from './charge.js';
import { parseQuotaState } from './state.js';
import { computeQuotaStatus } from './status.js';

const NS = 'team-a';
const NOW = new Date('2026-11-22T10:00:00Z');
const EXPIRED = '2026-11-22T09:58:00.000Z';
const SYNC = '2026-11-22T09:59:58Z';

/** Binding `web` for Deployment `web`, 1 cpu a replica, Divided over `clusters` (name -> replicas). */
const web = (clusters: Record<string, number>, evictedFrom: string[] = []): ResourceBinding => {
  const replicas = Object.values(clusters).reduce((a, b) => a + b, 0);
  return {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: { name: 'web', namespace: NS, uid: 'uid-web' },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NS },
      replicas,
      replicaRequirements: { resourceRequest: { cpu: '1' } },
      placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
      clusters: Object.entries(clusters).map(([name, n]) => ({ name, replicas: n })),
      ...(evictedFrom.length > 0
        ? {
            gracefulEvictionTasks: evictedFrom.map((fromCluster) => ({
              fromCluster,
              producer: 'TaintManager',
              reason: 'TaintUntolerated',
            })),
          }
        : {}),
    },
  } as ResourceBinding;
};

/** Whether a further create charged `charge` is admitted against the status just computed. */
const admitsCreate = (quota: KarmadaQuota, status: KarmadaQuota['status'], charge: ResourceList): boolean =>
  admitBatch(
    [parseQuotaState({ ...quota, status }).state],
    [{ binding: { namespace: NS, name: 'x', uid: 'uid-x' }, charge, dryRun: false }],
    () => true,
    { now: NOW, ttlSeconds: 120, landingWindowSeconds: 60 },
  ).decisions[0]!.allowed;

/** A Ready member running Deployment `web` with `cpu` cpu (nothing when 0). */
const member = (name: string, cpu: number): ObservedCluster => ({
  name,
  state: 'Ready',
  lastSyncTime: SYNC,
  used: { cpu: `${cpu}` },
  workloads: cpu > 0 ? [{ kind: 'Deployment', name: 'web', used: { cpu: `${cpu}` } }] : [],
});

describe('targetClusterNames', () => {
  it.each<[string, unknown, string[]]>([
    [
      'the scheduled clusters',
      [{ name: 'member1', replicas: 1 }, { name: 'member2' }],
      ['member1', 'member2'],
    ],
    ['none while unscheduled', undefined, []],
    ['entries without a name are skipped', [null, {}, { name: '' }, { name: 'member3' }], ['member3']],
    ['not a list', 'member1', []],
  ])('%s', (_name, clusters, expected) => {
    const rb = { metadata: { name: 'web' }, spec: { clusters } } as unknown as ResourceBinding;
    expect([...targetClusterNames(rb)]).toEqual(expected);
  });

  it('adds a cluster the binding is being moved away from: its copy is charged while it runs', () => {
    expect([...targetClusterNames(web({ member1: 4 }, ['member2']))]).toEqual(['member1', 'member2']);
  });
});

describe("N4: a binding's observed usage is counted only in the clusters it is scheduled to", () => {
  it.each<[string, ResourceBinding, ObservedCluster[], string]>([
    ['its own copy in its cluster', web({ member1: 4 }), [member('member1', 4)], '4'],
    ['a same-name workload in another member is not its', web({ member1: 4 }), [member('member2', 6)], '0'],
    [
      'split over two members: both',
      web({ member1: 2, member2: 2 }),
      [member('member1', 2), member('member2', 2), member('member3', 5)],
      '4',
    ],
    [
      'a cluster it is being moved away from is, as it is charged for it',
      web({ member1: 4 }, ['member2']),
      [member('member2', 4)],
      '4',
    ],
  ])('%s', (_name, binding, clusters, cpu) => {
    expect(formatList(observedUsageOf(binding, clusters, ['cpu']))).toEqual(cpu === '0' ? {} : { cpu });
  });

  // The review's example: hard cpu=10; member2 runs a hand-made Deployment `web` (6 cpu); Karmada's
  // binding `web` (4 cpu) was admitted for member1 only, which does not run it yet, and its claim expired.
  const quota: KarmadaQuota = {
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'team-a', namespace: NS, generation: 1 },
    spec: { hard: { cpu: '10' } },
    status: {
      used: { cpu: '6' },
      reservations: [
        {
          reservedBy: {
            apiVersion: 'work.karmada.io/v1alpha2',
            kind: 'ResourceBinding',
            name: 'web',
            uid: 'uid-web',
          },
          reserved: { cpu: '4' },
          charge: { cpu: '4' },
          expirationTime: EXPIRED,
        },
      ],
    },
  };

  it.each<
    [string, ResourceBinding, ObservedCluster[], { used: string; reserved?: string; admits4: boolean }]
  >([
    [
      'foreign web in member2, web scheduled to member1 and not running: its 4 cpu stay reserved',
      web({ member1: 4 }),
      [member('member1', 0), member('member2', 6)],
      { used: '6', reserved: '4', admits4: false },
    ],
    [
      'the same once member1 runs it: used, nothing reserved',
      web({ member1: 4 }),
      [member('member1', 4), member('member2', 6)],
      { used: '10', admits4: false },
    ],
    [
      'leaving member2 for member1 (graceful eviction): the old copy does not cover the new one',
      web({ member1: 4 }, ['member2']),
      [member('member1', 0), member('member2', 4)],
      { used: '4', reserved: '4', admits4: false },
    ],
  ])('%s', (_name, binding, clusters, expected) => {
    const result = computeQuotaStatus({ quota, bindings: [binding], clusters, now: NOW });
    expect(result.errors).toEqual([]);
    expect(result.status.used).toEqual({ cpu: expected.used });
    expect(result.status.reserved).toEqual(expected.reserved === undefined ? {} : { cpu: expected.reserved });

    // A further 4-cpu create against the status just written.
    expect(admitsCreate(quota, result.status, bindingCharge(web({ member1: 4 })).charge)).toBe(
      expected.admits4,
    );
  });
});

describe("review 3, new 2: pods on their way out never stand in for a binding's charge", () => {
  /** member1 runs `web`'s pods: `current` cpu of live ones, `leaving` cpu of ones being deleted. */
  const running = (current: number, leaving: number): ObservedCluster => ({
    name: 'member1',
    state: 'Ready',
    lastSyncTime: SYNC,
    used: { cpu: `${current + leaving}` },
    workloads: [
      ...(current > 0 ? [{ kind: 'Deployment', name: 'web', used: { cpu: `${current}` } }] : []),
      ...(leaving > 0
        ? [{ kind: 'Deployment', name: 'web', terminating: true, used: { cpu: `${leaving}` } }]
        : []),
    ],
  });
  const high = (rb: ResourceBinding): ResourceBinding =>
    ({
      ...rb,
      spec: { ...rb.spec, replicaRequirements: { resourceRequest: { cpu: '1' }, priorityClassName: 'high' } },
    }) as ResourceBinding;
  const quotaOf = (scoped: boolean): KarmadaQuota => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'team-a', namespace: NS, generation: 1 },
    spec: {
      hard: { cpu: '10' },
      ...(scoped
        ? {
            scopeSelector: {
              matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
            },
          }
        : {}),
    },
  });

  // Sequence A: web 4 x 1 cpu scaled 4 -> 0 -> 4; its 4 old pods still terminate when the scale-up
  // is stored. Then a 6-cpu create: 4 old + 4 new + 6 would run, 14 of 10.
  it.each<[string, boolean, ObservedCluster, { used: string; reserved?: string; admits6: boolean }]>([
    [
      'unscoped: the old pods count, the new ones stay reserved',
      false,
      running(0, 4),
      { used: '4', reserved: '4', admits6: false },
    ],
    [
      'scoped: the old pods of a workload in scope count in its used',
      true,
      running(0, 4),
      { used: '4', reserved: '4', admits6: false },
    ],
    [
      'two of the new pods started beside the old ones',
      false,
      running(2, 4),
      { used: '6', reserved: '2', admits6: false },
    ],
    [
      'the old pods gone, the new ones running: room for 6',
      false,
      running(4, 0),
      { used: '4', admits6: true },
    ],
  ])('%s', (_name, scoped, cluster, expected) => {
    const quota = quotaOf(scoped);
    const binding = high(web({ member1: 4 }));
    const result = computeQuotaStatus({ quota, bindings: [binding], clusters: [cluster], now: NOW });
    expect(result.errors).toEqual([]);
    expect(result.status.used).toEqual({ cpu: expected.used });
    expect(result.status.reserved).toEqual(expected.reserved === undefined ? {} : { cpu: expected.reserved });
    const live = cluster.workloads.find((w) => !w.terminating)?.used ?? {};
    expect(formatList(observedUsageOf(binding, [cluster], ['cpu']))).toEqual(live);

    expect(admitsCreate(quota, result.status, bindingCharge(high(web({ member1: 6 }))).charge)).toBe(
      expected.admits6,
    );
  });
});
