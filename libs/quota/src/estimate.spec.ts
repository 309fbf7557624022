import { formatList, parseResourceList, type ResourceList } from '#quantity';
import type { KarmadaQuota, ResourceBinding } from '#api';
import {
  capRoomFor,
  heldEvent,
  heldForRoom,
  heldWaitingStatus,
  NO_ESTIMATE,
  perReplicaCharge,
  replicasRoomOn,
} from './estimate.js';
import type { MemberLabels } from './member-caps.js';

const list = (raw: Record<string, string>): ResourceList => parseResourceList(raw, 'test').list;

interface QuotaShape {
  hard?: Record<string, string>;
  /** status.hard beyond spec.hard (caps resolved by label). */
  resolvedHard?: Record<string, string>;
  used?: Record<string, string>;
  reserved?: Record<string, string>;
  clusters?: KarmadaQuota['spec']['clusters'];
  capsResolvedFor?: string[];
  counted?: boolean;
  enforcement?: 'Deny' | 'Warn' | 'DryRun';
  scoped?: boolean;
  /** A ClusterKarmadaQuota that counted these namespaces (the binding is in team-a). */
  countedNamespaces?: string[];
}

const quota = (name: string, q: QuotaShape): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: q.countedNamespaces ? 'ClusterKarmadaQuota' : 'KarmadaQuota',
  metadata: q.countedNamespaces ? { name, generation: 2 } : { name, namespace: 'team-a', generation: 2 },
  spec: {
    hard: q.hard ?? { cpu: '100' },
    ...(q.clusters ? { clusters: q.clusters } : {}),
    ...(q.enforcement ? { enforcement: q.enforcement } : {}),
    ...(q.scoped
      ? {
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
          },
        }
      : {}),
  },
  status: {
    observedGeneration: q.counted === false ? 1 : 2,
    hard: { ...(q.hard ?? { cpu: '100' }), ...q.resolvedHard },
    used: q.used ?? {},
    reserved: q.reserved ?? {},
    ...(q.capsResolvedFor ? { capsResolvedFor: q.capsResolvedFor } : {}),
    ...(q.countedNamespaces
      ? { namespaces: q.countedNamespaces.map((namespace) => ({ namespace, used: {} })) }
      : {}),
  },
});

const capByName = (name: string, hard: Record<string, string>) => [{ name, hard }];

describe('perReplicaCharge', () => {
  it('charges one pod and each request under every quota name it counts under', () => {
    expect(formatList(perReplicaCharge(list({ cpu: '500m', memory: '1Gi' })))).toEqual({
      cpu: '500m',
      'requests.cpu': '500m',
      memory: '1Gi',
      'requests.memory': '1Gi',
      pods: '1',
    });
  });

  it('leaves out zero requests', () => {
    expect(formatList(perReplicaCharge(list({ cpu: '0' })))).toEqual({ pods: '1' });
  });
});

describe('replicasRoomOn', () => {
  const oneCpu = perReplicaCharge(list({ cpu: '1' }));
  const cases: {
    name: string;
    member?: string;
    perReplica?: ResourceList;
    quotas: QuotaShape[];
    want: number;
  }[] = [
    { name: 'no quota: no opinion', quotas: [], want: NO_ESTIMATE },
    { name: 'no cap on the member: no opinion', quotas: [{}], want: NO_ESTIMATE },
    {
      name: 'a cap on another member: no opinion',
      quotas: [{ clusters: capByName('member2', { cpu: '4' }) }],
      want: NO_ESTIMATE,
    },
    {
      name: 'an empty cap: its whole room',
      quotas: [{ clusters: capByName('member1', { cpu: '4' }) }],
      want: 4,
    },
    {
      name: 'used and reserved on the member are taken',
      quotas: [
        {
          clusters: capByName('member1', { cpu: '10' }),
          used: { 'cpu@member1': '3', cpu: '50' },
          reserved: { 'cpu@member1': '2500m' },
        },
      ],
      want: 4,
    },
    {
      name: 'the global hard is not part of the answer (docs/concepts/scheduler-estimator.md)',
      quotas: [{ hard: { cpu: '2' }, clusters: capByName('member1', { cpu: '8' }), used: { cpu: '2' } }],
      want: 8,
    },
    {
      name: 'a member over its cap (lowered) has no room, never a negative answer',
      quotas: [{ clusters: capByName('member1', { cpu: '2' }), used: { 'cpu@member1': '5' } }],
      want: 0,
    },
    {
      name: 'the smallest room over keys',
      perReplica: perReplicaCharge(list({ cpu: '1', memory: '1Gi' })),
      quotas: [{ clusters: capByName('member1', { cpu: '10', 'requests.memory': '3Gi' }) }],
      want: 3,
    },
    {
      name: 'pods cap a binding without requests',
      perReplica: perReplicaCharge({}),
      quotas: [{ clusters: capByName('member1', { pods: '7' }) }],
      want: 7,
    },
    {
      name: 'a capped resource the binding does not request does not constrain',
      quotas: [{ clusters: capByName('member1', { memory: '1Gi' }) }],
      want: NO_ESTIMATE,
    },
    {
      name: 'the smallest room over quotas',
      quotas: [
        { clusters: capByName('member1', { cpu: '6' }) },
        { clusters: capByName('member1', { cpu: '3' }) },
      ],
      want: 3,
    },
    {
      name: 'fractional requests: whole replicas only',
      perReplica: perReplicaCharge(list({ cpu: '300m' })),
      quotas: [{ clusters: capByName('member1', { cpu: '1' }) }],
      want: 3,
    },
    {
      name: 'a status not counted for the spec: no opinion from that quota',
      quotas: [{ clusters: capByName('member1', { cpu: '4' }), counted: false }],
      want: NO_ESTIMATE,
    },
    {
      name: 'a quota that only warns does not steer',
      quotas: [{ clusters: capByName('member1', { cpu: '4' }), enforcement: 'Warn' }],
      want: NO_ESTIMATE,
    },
    {
      name: 'a quota that only records does not steer',
      quotas: [{ clusters: capByName('member1', { cpu: '4' }), enforcement: 'DryRun' }],
      want: NO_ESTIMATE,
    },
    {
      name: 'a quota scoped by priority class is not consulted (the class is not sent)',
      quotas: [{ clusters: capByName('member1', { cpu: '4' }), scoped: true }],
      want: NO_ESTIMATE,
    },
    {
      name: 'a cap by label, resolved for the member',
      quotas: [
        {
          clusters: [{ labelSelector: { matchLabels: { size: 'small' } }, hard: { cpu: '4' } }],
          resolvedHard: { 'cpu@member1': '4' },
          capsResolvedFor: ['member1'],
        },
      ],
      want: 4,
    },
    {
      name: 'a cap by label not resolved for the member yet: no opinion',
      quotas: [
        {
          clusters: [{ labelSelector: { matchLabels: { size: 'small' } }, hard: { cpu: '4' } }],
          resolvedHard: { 'cpu@member2': '4' },
          capsResolvedFor: ['member2'],
        },
      ],
      want: NO_ESTIMATE,
    },
    {
      name: 'a ClusterKarmadaQuota that counted the namespace steers like a KarmadaQuota',
      quotas: [
        { clusters: capByName('member1', { cpu: '8' }), countedNamespaces: ['team-a', 'team-b'] },
        { clusters: capByName('member1', { cpu: '6' }) },
      ],
      want: 6,
    },
    {
      name: 'the smaller cap of a ClusterKarmadaQuota wins',
      quotas: [
        { clusters: capByName('member1', { cpu: '3' }), countedNamespaces: ['team-a'] },
        { clusters: capByName('member1', { cpu: '6' }) },
      ],
      want: 3,
    },
    {
      name: 'a ClusterKarmadaQuota that has not counted the namespace yet: no opinion',
      quotas: [{ clusters: capByName('member1', { cpu: '3' }), countedNamespaces: ['team-b'] }],
      want: NO_ESTIMATE,
    },
    {
      name: 'room beyond int32 is clamped',
      perReplica: perReplicaCharge(list({ cpu: '1n' })),
      quotas: [{ clusters: capByName('member1', { cpu: '100' }) }],
      want: 2 ** 31 - 1,
    },
  ];

  it.each(cases)('$name', ({ member, perReplica, quotas, want }) => {
    const objects = quotas.map((q, i) => quota(`q${i}`, q));
    expect(replicasRoomOn(member ?? 'member1', perReplica ?? oneCpu, objects, 'team-a')).toBe(want);
  });
});

describe('a binding Karmada left unscheduled for want of room', () => {
  const MEMBERS: MemberLabels = new Map<string, Record<string, string>>([
    ['member1', { size: 'small' }],
    ['member2', { size: 'big' }],
    ['member3', {}],
  ]);
  const SINCE = '2026-11-29T10:00:00Z';
  const binding = (o: {
    message?: string;
    status?: 'True' | 'False';
    clusters?: { name: string; replicas: number }[];
    affinity?: object;
    duplicated?: boolean;
  }): ResourceBinding => ({
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: { name: 'web-deployment', namespace: 'team-a', uid: 'u1' },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      replicas: 6,
      replicaRequirements: { resourceRequest: { cpu: '1' } },
      clusters: o.clusters ?? [],
      placement: {
        ...(o.affinity === undefined ? {} : { clusterAffinity: o.affinity }),
        replicaScheduling: o.duplicated
          ? { replicaSchedulingType: 'Duplicated' }
          : { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' },
      },
    },
    status: {
      conditions: [
        {
          type: 'Scheduled',
          status: o.status ?? 'False',
          reason: 'Unschedulable',
          message:
            o.message ??
            'failed to assign replicas: failed to scale up: Clusters available replicas 5 are not enough to schedule.',
          lastTransitionTime: SINCE,
        },
      ],
    },
  });

  const heldCases: {
    name: string;
    rb: ResourceBinding;
    members?: MemberLabels;
    want?: { unplaced: number; candidates: string[] };
  }[] = [
    {
      name: 'by name',
      rb: binding({ affinity: { clusterNames: ['member1', 'member2'] } }),
      want: { unplaced: 6, candidates: ['member1', 'member2'] },
    },
    {
      name: 'every member, less those excluded',
      rb: binding({ affinity: { exclude: ['member3'] } }),
      members: MEMBERS,
      want: { unplaced: 6, candidates: ['member1', 'member2'] },
    },
    {
      name: 'by Cluster label',
      rb: binding({ affinity: { labelSelector: { matchLabels: { size: 'big' } } } }),
      members: MEMBERS,
      want: { unplaced: 6, candidates: ['member2'] },
    },
    {
      name: 'a scale-up: only the replicas not placed',
      rb: binding({ affinity: { clusterNames: ['member1'] }, clusters: [{ name: 'member1', replicas: 4 }] }),
      want: { unplaced: 2, candidates: ['member1'] },
    },
    { name: 'scheduled: not held', rb: binding({ status: 'True', affinity: { clusterNames: ['member1'] } }) },
    {
      name: 'unscheduled for another reason (a refused write): not held',
      rb: binding({
        message: 'admission webhook denied the request',
        affinity: { clusterNames: ['member1'] },
      }),
    },
    {
      name: 'Duplicated: not held',
      rb: binding({ duplicated: true, affinity: { clusterNames: ['member1'] } }),
    },
    { name: 'members unknown and not named: not held', rb: binding({}) },
    {
      name: 'a field selector cannot be told: not held',
      rb: binding({ affinity: { fieldSelector: { matchExpressions: [] } } }),
      members: MEMBERS,
    },
  ];

  it.each(heldCases)('heldForRoom: $name', ({ rb, members, want }) => {
    const held = heldForRoom(rb, members);
    expect(held && { unplaced: held.unplaced, candidates: [...held.candidates] }).toEqual(want);
    if (held) expect(held).toMatchObject({ name: 'web-deployment', since: SINCE });
  });

  const held = heldForRoom(binding({ affinity: { clusterNames: ['member1', 'member2'] } }), undefined)!;

  it('capRoomFor sums the room on its candidates, and gives none when a candidate is not capped', () => {
    const both = quota('q', {
      clusters: [
        { name: 'member1', hard: { cpu: '4' } },
        { name: 'member2', hard: { cpu: '8' } },
      ],
      used: { 'cpu@member1': '4', 'cpu@member2': '3' },
    });
    expect(capRoomFor(held, [both], 'team-a')).toBe(5);
    const one = quota('q', { clusters: capByName('member1', { cpu: '4' }) });
    expect(capRoomFor(held, [one], 'team-a')).toBeUndefined();
  });

  it('heldWaitingStatus: what its unplaced replicas ask of the capped resources, and what the caps leave', () => {
    const q = quota('q', {
      clusters: [
        { name: 'member1', hard: { cpu: '4' } },
        { name: 'member2', hard: { cpu: '8' } },
      ],
      used: { 'cpu@member1': '5', 'cpu@member2': '3' },
    });
    expect(heldWaitingStatus(held, q)).toEqual({
      binding: 'web-deployment',
      requested: { cpu: '6' },
      free: { cpu: '5' },
      since: SINCE,
    });
    expect(heldWaitingStatus(held, quota('other', {}))).toBeUndefined();
    // A ClusterKarmadaQuota names the binding with its namespace, once it has counted it.
    const spanning = quota('c', {
      clusters: [{ name: 'member1', hard: { cpu: '4' } }],
      used: { 'cpu@member1': '1' },
      countedNamespaces: ['team-a'],
    });
    expect(heldWaitingStatus(held, spanning, 'team-a')).toEqual({
      binding: 'team-a/web-deployment',
      requested: { cpu: '6' },
      free: { cpu: '3' },
      since: SINCE,
    });
    expect(heldWaitingStatus(held, spanning, 'team-b')).toBeUndefined();
  });

  it('heldEvent names the quota, what is asked and what is free', () => {
    expect(
      heldEvent('team', {
        binding: 'web-deployment',
        requested: { cpu: '6' },
        free: { cpu: '5' },
        since: SINCE,
      }),
    ).toEqual({
      type: 'Warning',
      reason: 'WaitingForQuota',
      message:
        'karmada-scheduler cannot place it: the member caps of quota team leave too little room, ' +
        'requested: cpu=6, free: cpu=5; it is placed once they have room',
    });
  });
});
