import type { KarmadaQuota, ResourceBinding } from '#api';
import { OTHER_USAGE, workloadUsage } from './workload-usage.js';

const binding = (
  name: string,
  replicas: number,
  cpu: string,
  clusters: { name: string; replicas?: number }[] = [],
  priorityClassName?: string,
): ResourceBinding => ({
  metadata: { namespace: 'ns', name, uid: `uid-${name}` },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas,
    replicaRequirements: { resourceRequest: { cpu }, priorityClassName },
    placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
    clusters,
  },
});

const reservation = (name: string, reserved: Record<string, string>, charge?: Record<string, string>) => ({
  reservedBy: { apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding', name, uid: `uid-${name}` },
  reserved,
  ...(charge ? { charge } : {}),
});

const quota = (status: KarmadaQuota['status'], scopeSelector?: KarmadaQuota['spec']['scopeSelector']) =>
  ({
    metadata: { namespace: 'ns', name: 'q' },
    spec: { hard: { cpu: '4', pods: '10' }, ...(scopeSelector ? { scopeSelector } : {}) },
    status: { hard: { cpu: '4', pods: '10' }, ...status },
  }) as KarmadaQuota;

const claim = (name: string, reserved: Record<string, string>, charge?: Record<string, string>) => ({
  ...reservation(name, reserved, charge),
  expirationTime: '2026-11-22T10:02:00Z',
});

/** Member m1's usage of the named Deployments (cpu in millicores, one pod per 500m). */
const onM1 = (cpuByWorkload: Record<string, number>) => ({
  clusters: [
    {
      name: 'm1',
      state: 'Ready' as const,
      lastSyncTime: '2026-11-22T09:59:59Z',
      used: {},
      workloads: Object.entries(cpuByWorkload).map(([name, milli]) => ({
        kind: 'Deployment',
        name,
        used: { cpu: `${milli}m`, pods: String(milli / 500) },
      })),
    },
  ],
  now: new Date('2026-11-22T10:00:00Z'),
});

describe('workloadUsage', () => {
  it.each([
    {
      name: 'a stored binding: charged, nothing in flight',
      quota: quota({ used: { cpu: '1', pods: '2' } }),
      bindings: [binding('web', 2, '500m', [{ name: 'm1', replicas: 2 }])],
      rows: [{ binding: 'web', charged: { cpu: '1', pods: '2' }, inFlight: {}, clusters: ['m1=2'] }],
    },
    {
      name: 'largest share of a limit first',
      quota: quota({ used: { cpu: '500m', pods: '1' } }),
      bindings: [
        binding('small', 1, '500m', [{ name: 'm1', replicas: 1 }]),
        binding('big', 3, '500m', [
          { name: 'm1', replicas: 1 },
          { name: 'm2', replicas: 2 },
        ]),
      ],
      rows: [
        { binding: 'big', charged: { cpu: '1500m', pods: '3' }, inFlight: {}, clusters: ['m1=1', 'm2=2'] },
        { binding: 'small', charged: { cpu: '500m', pods: '1' }, inFlight: {}, clusters: ['m1=1'] },
      ],
    },
    {
      name: 'a claim above the stored binding (a scale-up admitted, not stored yet): charged at the claim',
      quota: quota({ reservations: [claim('web', { cpu: '1', pods: '2' }, { cpu: '2', pods: '4' })] }),
      bindings: [binding('web', 2, '500m', [{ name: 'm1', replicas: 2 }])],
      rows: [
        {
          binding: 'web',
          charged: { cpu: '2', pods: '4' },
          inFlight: { cpu: '1', pods: '2' },
          clusters: ['m1=2'],
        },
      ],
    },
    {
      name: 'a claim whose binding is not stored (a create admitted)',
      quota: quota({ used: { cpu: '300m', pods: '1' }, reservations: [claim('new', { cpu: '1' })] }),
      bindings: [],
      rows: [{ binding: 'new', charged: { cpu: '1' }, inFlight: { cpu: '1' }, clusters: [] }],
    },
    {
      name: 'an entry with no expirationTime (an older status) is no claim',
      quota: quota({ reservations: [reservation('gone', { cpu: '1' })] }),
      bindings: [],
      rows: [],
    },
    {
      name: 'a binding outside the quota scopes is not listed',
      quota: quota(
        {},
        { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      ),
      bindings: [binding('low', 1, '1', [], 'low'), binding('high', 1, '1', [], 'high')],
      rows: [{ binding: 'high', charged: { cpu: '1', pods: '1' }, inFlight: {}, clusters: [] }],
    },
  ])('$name', ({ quota, bindings, rows }) => {
    expect(workloadUsage(quota, bindings)).toEqual({ rows, problems: [] });
  });

  it('with the members usage, splits each charge as the reconciler does, and shows usage no binding accounts for', () => {
    const stored = [
      binding('web', 3, '500m', [{ name: 'm1', replicas: 3 }]),
      binding('api', 1, '500m', [{ name: 'm2', replicas: 1 }]),
    ];
    // web runs 2 of its 3 pods; api runs none (m2 published nothing); a pod no binding owns runs on m1.
    const used = quota({ used: { cpu: '1500m', pods: '3' } });
    expect(workloadUsage(used, stored, onM1({ web: 1000, 'hand-made': 500 })).rows).toEqual([
      {
        binding: 'web',
        charged: { cpu: '1500m', pods: '3' },
        inFlight: {},
        observed: { cpu: '1', pods: '2' },
        reserved: { cpu: '500m', pods: '1' },
        clusters: ['m1=3'],
      },
      {
        binding: OTHER_USAGE,
        charged: {},
        inFlight: {},
        observed: { cpu: '500m', pods: '1' },
        reserved: {},
        clusters: [],
      },
      {
        binding: 'api',
        charged: { cpu: '500m', pods: '1' },
        inFlight: {},
        observed: {},
        reserved: { cpu: '500m', pods: '1' },
        clusters: ['m2=1'],
      },
    ]);
  });

  it('says when the usage it split by was read, or why there is no split', () => {
    const stored = [binding('web', 1, '500m', [{ name: 'm1', replicas: 1 }])];
    const recorded = { ...onM1({ web: 500 }), observedAt: '2026-11-22T09:59:50Z' };
    expect(workloadUsage(quota({}), stored, recorded)).toMatchObject({
      usageAsOf: '2026-11-22T09:59:50Z',
    });
    expect(workloadUsage(quota({}), stored, onM1({ web: 500 })).usageAsOf).toBe('2026-11-22T10:00:00.000Z');
    const without = workloadUsage(quota({}), stored, { problem: 'no record yet' });
    expect(without).toMatchObject({ usageNotShown: 'no record yet' });
    expect(without.rows[0]).not.toHaveProperty('observed');
    expect(without).not.toHaveProperty('usageAsOf');
  });

  it('reports a binding whose charge cannot be read, naming it', () => {
    const broken = binding('broken', 1, 'lots');
    expect(workloadUsage(quota({}), [broken]).problems).toEqual([
      expect.stringMatching(
        /^ResourceBinding ns\/broken: spec\.replicaRequirements\.resourceRequest\[cpu\]: .*lots/,
      ),
    ]);
  });

  it('judges the bindings as the reconciler did: its template class, its overrides', () => {
    const high = {
      matchExpressions: [{ scopeName: 'PriorityClass' as const, operator: 'In' as const, values: ['high'] }],
    };
    // As Karmada writes them with its default gates: no class; the reconciler read `high` off web's template.
    const stored = [
      binding('web', 2, '500m', [{ name: 'm1', replicas: 2 }]),
      binding('api', 1, '500m', [{ name: 'm1', replicas: 1 }]),
    ];
    const judged = [
      { name: 'web', uid: 'uid-web', priorityClassName: 'high' },
      {
        name: 'api',
        uid: 'uid-api',
        overrides: [{ cluster: 'm1', replicas: 3, policies: ['OverridePolicy ns/api'] }],
      },
      // Another object of the name: judged before it was re-created, so not this one's.
      { name: 'gone', uid: 'uid-old', priorityClassName: 'high' },
    ];
    const usage = { ...onM1({}), judged };
    const rows = (q: KarmadaQuota, observations?: Parameters<typeof workloadUsage>[2]) =>
      workloadUsage(
        q,
        [...stored, binding('gone', 1, '500m', [{ name: 'm1', replicas: 1 }])],
        observations,
      ).rows.map((r) => [r.binding, r.charged]);
    expect(rows(quota({}, high), usage)).toEqual([['web', { cpu: '1', pods: '2' }]]);
    expect(rows(quota({}, high), { problem: 'no record yet' })).toEqual([]);
    expect(rows(quota({}), usage)).toEqual([
      ['api', { cpu: '1500m', pods: '3' }],
      ['web', { cpu: '1', pods: '2' }],
      ['gone', { cpu: '500m', pods: '1' }],
    ]);
  });
});
