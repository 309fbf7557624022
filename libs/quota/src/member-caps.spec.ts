import { formatList, parseResourceList, type FieldError, type ResourceList } from '#quantity';
import type { KarmadaQuota, ResourceBinding } from '#api';
import { admitBatch, type AdmissionItem, type Decision } from './admission.js';
import { bindingCharge, memberShares, withMemberShares } from './charge.js';
import {
  cappedOn,
  capsAnyMember,
  readMemberCaps,
  resolveMemberCaps,
  memberKey,
  memberPart,
  onMember,
  splitMemberKey,
  withoutMemberKeys,
} from './member-caps.js';
import { parseQuotaState } from './state.js';
import { computeQuotaStatus } from './status.js';
import { validateKarmadaQuota } from './validation.js';
import type { ObservedCluster } from './cluster-usage.js';

const NS = 'team-a';
const NOW = new Date('2026-11-29T10:00:00Z');

const list = (raw: Record<string, string>): ResourceList => parseResourceList(raw, 'test').list;
const wire = (l: ResourceList): Record<string, string> => formatList(l);

interface RbOptions {
  replicas?: number;
  /** Per member, Divided; absent: not scheduled yet. */
  clusters?: Record<string, number>;
  duplicated?: boolean;
  evictedFrom?: string;
  components?: boolean;
  uid?: string;
  resourceVersion?: string;
}

const rb = (name: string, o: RbOptions = {}): ResourceBinding =>
  ({
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: {
      name,
      namespace: NS,
      uid: o.uid ?? `uid-${name}`,
      ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
    },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      ...(o.components
        ? {
            components: [
              { name: 'a', replicas: 1, replicaRequirements: { resourceRequest: { cpu: '1' } } },
              { name: 'b', replicas: 2, replicaRequirements: { resourceRequest: { cpu: '2' } } },
            ],
          }
        : {
            replicas: o.replicas ?? 1,
            replicaRequirements: { resourceRequest: { cpu: '1' } },
          }),
      placement: {
        replicaScheduling: { replicaSchedulingType: o.duplicated ? 'Duplicated' : 'Divided' },
      },
      ...(o.clusters
        ? { clusters: Object.entries(o.clusters).map(([cluster, replicas]) => ({ name: cluster, replicas })) }
        : {}),
      ...(o.evictedFrom
        ? { gracefulEvictionTasks: [{ fromCluster: o.evictedFrom, reason: 'TaintUntolerated' }] }
        : {}),
    },
  }) as unknown as ResourceBinding;

const kq = (
  hard: Record<string, string>,
  caps: Record<string, Record<string, string>>,
  status: KarmadaQuota['status'] = undefined,
): KarmadaQuota =>
  ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'team-a', namespace: NS, generation: 1 },
    spec: { hard, clusters: Object.entries(caps).map(([name, h]) => ({ name, hard: h })) },
    ...(status ? { status } : {}),
  }) as unknown as KarmadaQuota;

describe('member keys', () => {
  it.each([
    ['requests.cpu@member1', { resource: 'requests.cpu', member: 'member1' }],
    ['example.com/gpu@big', { resource: 'example.com/gpu', member: 'big' }],
    ['cpu', undefined],
    ['@member1', undefined],
  ])('%s splits into %j', (key, split) => {
    expect(splitMemberKey(key)).toEqual(split);
  });

  it('round-trips a key', () => {
    expect(splitMemberKey(memberKey('count/deployments.apps', 'm-2'))).toEqual({
      resource: 'count/deployments.apps',
      member: 'm-2',
    });
  });

  it('tells, moves and strips member keys', () => {
    const l = list({ cpu: '3', 'cpu@m1': '2', 'pods@m1': '1', 'cpu@m2': '5' });
    expect(capsAnyMember(['cpu', 'pods'])).toBe(false);
    expect(capsAnyMember(['cpu', 'cpu@m1'])).toBe(true);
    expect(cappedOn(Object.keys(l), 'm1').sort()).toEqual(['cpu', 'pods']);
    expect(wire(memberPart(l, 'm1'))).toEqual({ cpu: '2', pods: '1' });
    expect(wire(withoutMemberKeys(l))).toEqual({ cpu: '3' });
    expect(wire(onMember(list({ cpu: '1', pods: '2' }), 'm3'))).toEqual({ 'cpu@m3': '1', 'pods@m3': '2' });
    expect(wire(onMember(list({ cpu: '1', pods: '2' }), 'm3', new Set(['pods@m3'])))).toEqual({
      'pods@m3': '2',
    });
  });
});

describe('readMemberCaps and resolveMemberCaps', () => {
  const caps = (quota: KarmadaQuota, members: Record<string, Record<string, string>>) =>
    wire(resolveMemberCaps(readMemberCaps(quota, []), new Map(Object.entries(members))));

  it('reads each named member once, under member keys', () => {
    const errors: FieldError[] = [];
    const quota = kq({ cpu: '10' }, {});
    quota.spec.clusters = [
      { name: 'm1', hard: { cpu: '4' } },
      { name: 'm2', hard: { cpu: '8', pods: '5' } },
      { name: 'm1', hard: { cpu: '1' } },
    ] as unknown as KarmadaQuota['spec']['clusters'];
    expect(wire(readMemberCaps(quota, errors).named)).toEqual({
      'cpu@m1': '4',
      'cpu@m2': '8',
      'pods@m2': '5',
    });
    expect(errors).toEqual([]);
  });

  it('caps each member a selector matches on its own; a named member takes its own entry alone; the smallest of several selectors', () => {
    const quota = kq({ cpu: '100' }, {});
    quota.spec.clusters = [
      { labelSelector: {}, hard: { cpu: '60' } },
      { labelSelector: { matchLabels: { size: 'small' } }, hard: { cpu: '20', pods: '9' } },
      { name: 'big', hard: { cpu: '80' } },
    ] as unknown as KarmadaQuota['spec']['clusters'];
    expect(caps(quota, { big: { size: 'small' }, a: { size: 'small' }, b: {} })).toEqual({
      'cpu@a': '20',
      'pods@a': '9',
      'cpu@b': '60',
      'cpu@big': '80',
    });
  });

  it.each([
    ['not a list', { name: 'x' }, 'spec.clusters'],
    ['an entry with neither name nor selector', [{ hard: { cpu: '1' } }], 'spec.clusters[0].name'],
    ['an unreadable cap', [{ name: 'm1', hard: { cpu: 'lots' } }], 'spec.clusters[0].hard[cpu]'],
  ])('reports %s and never throws', (_, clusters, field) => {
    const errors: FieldError[] = [];
    const quota = kq({ cpu: '10' }, {});
    (quota.spec as unknown as Record<string, unknown>)['clusters'] = clusters;
    expect(readMemberCaps(quota, errors).named).toEqual({});
    expect(errors.map((e) => e.field)).toEqual([field]);
  });

  it('puts the caps beside spec.hard in the admission state', () => {
    const { state } = parseQuotaState(kq({ cpu: '10' }, { m1: { cpu: '4', pods: '3' } }));
    expect(wire(state.hard)).toEqual({ cpu: '10', 'cpu@m1': '4', 'pods@m1': '3' });
    expect(state.capsResolvedFor).toBeUndefined();
  });

  it("without the members, takes a selector's caps as the reconciler resolved them for the members its status lists", () => {
    const quota = kq({ cpu: '10' }, {});
    quota.spec.clusters = [
      { labelSelector: {}, hard: { cpu: '3' } },
      { name: 'm2', hard: { cpu: '5' } },
    ] as unknown as KarmadaQuota['spec']['clusters'];
    quota.status = {
      observedGeneration: 1,
      hard: { cpu: '10', 'cpu@m1': '3', 'cpu@m2': '9', 'cpu@m3': '3' },
      used: { cpu: '0', 'cpu@m1': '0', 'cpu@m2': '0', 'cpu@m3': '0' },
      capsResolvedFor: ['m1', 'm2'],
    } as unknown as KarmadaQuota['status'];
    const { state } = parseQuotaState(quota);
    // m2 is named: its spec cap; m3 is not in capsResolvedFor: not resolved for admission.
    expect(wire(state.hard)).toEqual({ cpu: '10', 'cpu@m1': '3', 'cpu@m2': '5' });
    expect([...state.capsResolvedFor!].sort()).toEqual(['m1', 'm2']);
    // Not counted for this spec: nothing is resolved.
    quota.metadata!.generation = 2;
    expect([...parseQuotaState(quota).state.capsResolvedFor!]).toEqual([]);
  });
});

describe('memberShares', () => {
  it.each<[string, RbOptions, Record<string, string>]>([
    ['not scheduled yet: nothing on any member', { replicas: 6 }, {}],
    [
      'Divided: each member its replicas',
      { replicas: 6, clusters: { m1: 4, m2: 2 } },
      {
        'count/deployments.apps@m1': '1',
        'count/deployments.apps@m2': '1',
        'cpu@m1': '4',
        'cpu@m2': '2',
        'pods@m1': '4',
        'pods@m2': '2',
        'requests.cpu@m1': '4',
        'requests.cpu@m2': '2',
      },
    ],
    [
      'Duplicated: each member the full replicas',
      { replicas: 3, duplicated: true, clusters: { m1: 0, m2: 0 } },
      {
        'count/deployments.apps@m1': '1',
        'count/deployments.apps@m2': '1',
        'cpu@m1': '3',
        'cpu@m2': '3',
        'pods@m1': '3',
        'pods@m2': '3',
        'requests.cpu@m1': '3',
        'requests.cpu@m2': '3',
      },
    ],
    [
      'an evicted copy still counts on the member it leaves',
      { replicas: 2, clusters: { m2: 2 }, evictedFrom: 'm1' },
      {
        'count/deployments.apps@m1': '1',
        'count/deployments.apps@m2': '1',
        'cpu@m1': '2',
        'cpu@m2': '2',
        'pods@m1': '2',
        'pods@m2': '2',
        'requests.cpu@m1': '2',
        'requests.cpu@m2': '2',
      },
    ],
  ])('%s', (_, options, expected) => {
    expect(wire(memberShares(rb('web', options)))).toEqual(expected);
  });

  it('charges a binding with components its whole charge on each target (not split)', () => {
    const binding = rb('flink', { components: true, clusters: { m1: 0, m2: 0 } });
    const whole = bindingCharge(binding).charge;
    const shares = memberShares(binding);
    expect(wire(memberPart(shares, 'm1'))).toEqual(wire(whole));
    expect(wire(memberPart(shares, 'm2'))).toEqual(wire(whole));
  });

  it('adds only the member keys a quota caps, and nothing for a quota without caps', () => {
    const binding = rb('web', { replicas: 6, clusters: { m1: 4, m2: 2 } });
    const charge = bindingCharge(binding).charge;
    expect(withMemberShares(binding, charge, ['cpu', 'pods'])).toBe(charge);
    expect(wire(withMemberShares(binding, charge, ['cpu', 'cpu@m1']))).toEqual({
      ...wire(charge),
      'cpu@m1': '4',
    });
  });
});

describe('admission against member caps', () => {
  const OPTIONS = { now: NOW, ttlSeconds: 120, landingWindowSeconds: 60 };
  /** Counted for the current spec: every hard key used as given, 0 otherwise. */
  const counted = (hard: Record<string, string>, caps: Record<string, Record<string, string>>, used = {}) => {
    const quota = kq(hard, caps);
    const keys = Object.keys(parseQuotaState(quota).state.hard);
    quota.status = {
      observedGeneration: 1,
      used: { ...Object.fromEntries(keys.map((k) => [k, '0'])), ...used },
    } as unknown as KarmadaQuota['status'];
    return parseQuotaState(quota).state;
  };
  const change = (object: ResourceBinding, old?: ResourceBinding): AdmissionItem => ({
    binding: { namespace: NS, name: object.metadata!.name!, uid: object.metadata!.uid! },
    charge: bindingCharge(object).charge,
    dryRun: false,
    ...(old ? { old: { charge: bindingCharge(old).charge, quotas: ['team-a'] } } : {}),
  });
  /** What cas-round's itemFor gives admitBatch: the charges with the quota's member shares. */
  const decide = (state: ReturnType<typeof counted>, object: ResourceBinding, old?: ResourceBinding) => {
    const keys = Object.keys(state.hard);
    const item = change(object, old);
    const withShares: AdmissionItem = {
      ...item,
      charge: withMemberShares(object, item.charge, keys),
      ...(item.old && old
        ? { old: { ...item.old, charge: withMemberShares(old, item.old.charge, keys) } }
        : {}),
    };
    return admitBatch([state], [withShares], () => true, OPTIONS).decisions[0]!;
  };
  const refused = (d: Decision) => (d.allowed ? 'admitted' : d.message);

  const unscheduled = rb('web', { replicas: 6, resourceVersion: '10' });

  it('admits a create before scheduling on the global limit alone', () => {
    expect(decide(counted({ cpu: '10' }, { m1: { cpu: '4' } }), unscheduled)).toEqual({ allowed: true });
  });

  it('refuses scheduling over a member cap, naming the member and its cap', () => {
    const state = counted({ cpu: '10' }, { m1: { cpu: '4' } }, { cpu: '6' });
    const scheduled = rb('web', { replicas: 6, clusters: { m1: 6 } });
    expect(refused(decide(state, scheduled, unscheduled))).toBe(
      'exceeded quota: team-a on member cluster m1, requested: cpu=6, used: cpu=0, limited: cpu=4',
    );
  });

  it('admits a split within every cap', () => {
    const state = counted({ cpu: '10' }, { m1: { cpu: '4' }, m2: { cpu: '8' } }, { cpu: '6' });
    expect(decide(state, rb('web', { replicas: 6, clusters: { m1: 4, m2: 2 } }), unscheduled)).toEqual({
      allowed: true,
    });
  });

  it('checks a move between members on the member it moves to', () => {
    const state = counted(
      { cpu: '10' },
      { m1: { cpu: '4' }, m2: { cpu: '8' } },
      { cpu: '6', 'cpu@m1': '3', 'cpu@m2': '2' },
    );
    const before = rb('web', { replicas: 6, clusters: { m1: 1, m2: 5 }, resourceVersion: '11' });
    expect(refused(decide(state, rb('web', { replicas: 6, clusters: { m1: 3, m2: 3 } }), before))).toBe(
      'exceeded quota: team-a on member cluster m1, requested: cpu=2, used: cpu=3, limited: cpu=4',
    );
  });

  it('keeps the global limit when the caps sum to more', () => {
    const state = counted({ cpu: '10' }, { m1: { cpu: '8' }, m2: { cpu: '8' } });
    expect(refused(decide(state, rb('big', { replicas: 12, clusters: { m1: 6, m2: 6 } })))).toBe(
      'exceeded quota: team-a, requested: cpu=12, used: cpu=0, limited: cpu=10',
    );
  });

  it('caps a resource the global hard does not name', () => {
    const state = counted({ cpu: '10' }, { m1: { pods: '2' } });
    expect(refused(decide(state, rb('web', { replicas: 3, clusters: { m1: 3 } })))).toBe(
      'exceeded quota: team-a on member cluster m1, requested: pods=3, used: pods=0, limited: pods=2',
    );
  });

  it('refuses a change that raises what a member runs whose cap by label is not resolved yet', () => {
    const quota = kq({ cpu: '10' }, {});
    quota.spec.clusters = [
      { labelSelector: {}, hard: { cpu: '4' } },
    ] as unknown as KarmadaQuota['spec']['clusters'];
    const state = parseQuotaState(quota, new Map([['m1', {}]])).state;
    const zero = parseResourceList({ x: '0' }, 'x').list['x']!;
    const counted = { ...state, used: Object.fromEntries(Object.keys(state.hard).map((k) => [k, zero])) };
    // What cas-round's itemFor gives a quota capping by label: every member's share.
    const everyShare = (object: ResourceBinding, old?: ResourceBinding): AdmissionItem => {
      const item = change(object, old);
      return {
        ...item,
        charge: { ...item.charge, ...memberShares(object) },
        ...(item.old && old
          ? { old: { ...item.old, charge: { ...item.old.charge, ...memberShares(old) } } }
          : {}),
      };
    };
    const decide = (item: AdmissionItem) => admitBatch([counted], [item], () => true, OPTIONS).decisions[0]!;
    expect(refused(decide(everyShare(rb('web', { replicas: 2, clusters: { m2: 2 } }))))).toMatch(
      /^status unknown for quota: team-a, member cluster: m2: the quota caps members by label/,
    );
    expect(decide(everyShare(rb('web', { replicas: 2, clusters: { m1: 2 } })))).toEqual({ allowed: true });
    // A move onto m2 with the same total: refused too, though no global key grows.
    const before = rb('web', { replicas: 2, clusters: { m1: 2 }, resourceVersion: '7' });
    expect(refused(decide(everyShare(rb('web', { replicas: 2, clusters: { m2: 2 } }), before)))).toMatch(
      /member cluster: m2/,
    );
  });

  it('refuses while a member cap has not been counted (a cap just added)', () => {
    const quota = kq({ cpu: '10' }, { m1: { cpu: '4' } });
    quota.status = { observedGeneration: 1, used: { cpu: '0' } } as unknown as KarmadaQuota['status'];
    const state = parseQuotaState(quota).state;
    expect(refused(decide(state, rb('web', { replicas: 1, clusters: { m1: 1 } })))).toMatch(
      /^status unknown for quota: team-a, resources: cpu@m1:/,
    );
  });
});

describe('status against member caps', () => {
  const cluster = (name: string, cpu: string, workloads: Record<string, string> = {}): ObservedCluster => ({
    name,
    state: 'Ready',
    lastSyncTime: '2026-11-29T09:59:58Z',
    used: { cpu },
    workloads: Object.entries(workloads).map(([workload, used]) => ({
      kind: 'Deployment',
      name: workload,
      used: { cpu: used },
    })),
  });

  it('counts each capped member on its own keys and shows its caps, usage and reservations', () => {
    const quota = kq({ cpu: '10' }, { m1: { cpu: '4', pods: '5' } });
    const bindings = [rb('web', { replicas: 6, clusters: { m1: 4, m2: 2 } })];
    // web runs 1 of its 4 on m1 and both of its 2 on m2.
    const result = computeQuotaStatus({
      quota,
      bindings,
      clusters: [cluster('m1', '1', { web: '1' }), cluster('m2', '2', { web: '2' })],
      now: NOW,
    });
    expect(result.errors).toEqual([]);
    expect(result.status.hard).toEqual({ cpu: '10', 'cpu@m1': '4', 'pods@m1': '5' });
    expect(result.status.used).toEqual({ cpu: '3', 'cpu@m1': '1', 'pods@m1': '0' });
    expect(result.status.reserved).toEqual({ cpu: '3', 'cpu@m1': '3', 'pods@m1': '4' });
    expect(result.status.clusters).toEqual([
      expect.objectContaining({
        name: 'm1',
        used: { cpu: '1', pods: '0' },
        hard: { cpu: '4', pods: '5' },
        reserved: { cpu: '3', pods: '4' },
      }),
      expect.not.objectContaining({ hard: expect.anything() }),
    ]);
    expect(result.status.clusters?.[1]).toEqual(expect.objectContaining({ name: 'm2', used: { cpu: '2' } }));
  });

  it('resolves caps that select members by label against the members it is given, in status.hard', () => {
    const quota = kq({ cpu: '10' }, {});
    quota.spec.clusters = [
      { labelSelector: { matchLabels: { tier: 'edge' } }, hard: { cpu: '2' } },
    ] as unknown as KarmadaQuota['spec']['clusters'];
    const result = computeQuotaStatus({
      quota,
      bindings: [],
      clusters: [cluster('m1', '0'), cluster('m2', '0')],
      now: NOW,
      members: new Map<string, Record<string, string>>([
        ['m1', { tier: 'edge' }],
        ['m2', {}],
      ]),
    });
    expect(result.status.hard).toEqual({ cpu: '10', 'cpu@m1': '2' });
    expect(result.status.capsResolvedFor).toEqual(['m1', 'm2']);
    expect(result.status.clusters?.map((c) => c.hard)).toEqual([{ cpu: '2' }, undefined]);
  });

  it('does not let a member running beyond its share net another member’s cap', () => {
    const quota = kq({ cpu: '10' }, { m1: { cpu: '4' } });
    // web's 2 on m1 have not started; m2 runs 4 (a surge beyond its share of 2).
    const result = computeQuotaStatus({
      quota,
      bindings: [rb('web', { replicas: 4, clusters: { m1: 2, m2: 2 } })],
      clusters: [cluster('m1', '0'), cluster('m2', '4', { web: '4' })],
      now: NOW,
    });
    expect(result.status.reserved).toEqual({ cpu: '2', 'cpu@m1': '2' });
  });
});

describe('validation of spec.clusters', () => {
  const errorsOf = (clusters: unknown) =>
    validateKarmadaQuota({ spec: { hard: { cpu: '10' }, clusters } }).map((e) => `${e.field}: ${e.message}`);

  it('accepts named members with caps', () => {
    expect(
      errorsOf([
        { name: 'member1', hard: { cpu: '60' } },
        { name: 'big', hard: { cpu: '80' } },
      ]),
    ).toEqual([]);
  });

  it.each([
    ['not a list', { name: 'm1' }, /^spec.clusters: must be a list/],
    ['no name', [{ hard: { cpu: '1' } }], /^spec.clusters\[0\]: Required value/],
    [
      'a name no Cluster can have',
      [{ name: 'Member_1', hard: { cpu: '1' } }],
      /^spec.clusters\[0\].name: must be the name/,
    ],
    [
      'a member twice',
      [
        { name: 'm1', hard: { cpu: '1' } },
        { name: 'm1', hard: { cpu: '2' } },
      ],
      /^spec.clusters\[1\].name: Duplicate value/,
    ],
    ['no hard', [{ name: 'm1' }], /^spec.clusters\[0\].hard: Required value/],
    ['a bad quantity', [{ name: 'm1', hard: { cpu: 'lots' } }], /^spec.clusters\[0\].hard\[cpu\]: /],
    [
      'a bad resource name',
      [{ name: 'm1', hard: { 'cpu@m2': '1' } }],
      /^spec.clusters\[0\].hard\[cpu@m2\]: /,
    ],
  ])('refuses %s', (_, clusters, message) => {
    const errors = errorsOf(clusters);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  it('accepts members selected by label', () => {
    expect(
      errorsOf([
        { labelSelector: {}, hard: { cpu: '60' } },
        {
          labelSelector: { matchExpressions: [{ key: 'size', operator: 'In', values: ['big'] }] },
          hard: { cpu: '80' },
        },
      ]),
    ).toEqual([]);
  });

  it.each([
    [
      'both name and selector',
      [{ name: 'm1', labelSelector: {}, hard: { cpu: '1' } }],
      /^spec.clusters\[0\]: Invalid value: set name or labelSelector, not both/,
    ],
    [
      'a selector that is no object',
      [{ labelSelector: 'big', hard: { cpu: '1' } }],
      /^spec.clusters\[0\].labelSelector: must be a label selector/,
    ],
    [
      'In without values',
      [{ labelSelector: { matchExpressions: [{ key: 'size', operator: 'In' }] }, hard: { cpu: '1' } }],
      /^spec.clusters\[0\].labelSelector.matchExpressions\[0\].values: Required value/,
    ],
    [
      'an unknown operator',
      [
        {
          labelSelector: { matchExpressions: [{ key: 'size', operator: 'Gt', values: ['1'] }] },
          hard: { cpu: '1' },
        },
      ],
      /operator: Unsupported value/,
    ],
  ])('refuses %s', (_, clusters, message) => {
    const errors = errorsOf(clusters);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  it('refuses a member key in spec.hard', () => {
    const errors = validateKarmadaQuota({ spec: { hard: { 'cpu@m1': '1' } } });
    expect(errors.map((e) => e.field)).toEqual(['spec.hard[cpu@m1]']);
  });
});
