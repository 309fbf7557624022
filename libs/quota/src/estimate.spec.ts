import { formatList, parseResourceList, type ResourceList } from '#quantity';
import type { KarmadaQuota } from '#api';
import { NO_ESTIMATE, perReplicaCharge, replicasRoomOn } from './estimate.js';

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
}

const quota = (name: string, q: QuotaShape): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name, namespace: 'team-a', generation: 2 },
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
      name: 'room beyond int32 is clamped',
      perReplica: perReplicaCharge(list({ cpu: '1n' })),
      quotas: [{ clusters: capByName('member1', { cpu: '100' }) }],
      want: 2 ** 31 - 1,
    },
  ];

  it.each(cases)('$name', ({ member, perReplica, quotas, want }) => {
    const objects = quotas.map((q, i) => quota(`q${i}`, q));
    expect(replicasRoomOn(member ?? 'member1', perReplica ?? oneCpu, objects)).toBe(want);
  });
});
