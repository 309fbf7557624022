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

describe('workloadUsage', () => {
  it.each([
    {
      name: 'a binding fully observed: charged = observed, nothing reserved',
      quota: quota({ used: { cpu: '1', pods: '2' } }),
      bindings: [binding('web', 2, '500m', [{ name: 'm1', replicas: 2 }])],
      rows: [
        {
          binding: 'web',
          charged: { cpu: '1', pods: '2' },
          observed: { cpu: '1', pods: '2' },
          reserved: {},
          clusters: ['m1=2'],
        },
      ],
    },
    {
      name: 'largest share of a limit first; the reserved part is not observed',
      quota: quota({
        used: { cpu: '500m', pods: '1' },
        reservations: [reservation('big', { cpu: '1500m', pods: '3' })],
      }),
      bindings: [
        binding('small', 1, '500m', [{ name: 'm1', replicas: 1 }]),
        binding('big', 3, '500m', [
          { name: 'm1', replicas: 1 },
          { name: 'm2', replicas: 2 },
        ]),
      ],
      rows: [
        {
          binding: 'big',
          charged: { cpu: '1500m', pods: '3' },
          observed: {},
          reserved: { cpu: '1500m', pods: '3' },
          clusters: ['m1=1', 'm2=2'],
        },
        {
          binding: 'small',
          charged: { cpu: '500m', pods: '1' },
          observed: { cpu: '500m', pods: '1' },
          reserved: {},
          clusters: ['m1=1'],
        },
      ],
    },
    {
      name: 'a pending claim above the stored binding (a scale-up admitted, not stored yet) counts its charge',
      quota: quota({
        used: { cpu: '1', pods: '2' },
        reservations: [reservation('web', { cpu: '1', pods: '2' }, { cpu: '2', pods: '4' })],
      }),
      bindings: [binding('web', 2, '500m', [{ name: 'm1', replicas: 2 }])],
      rows: [
        {
          binding: 'web',
          charged: { cpu: '2', pods: '4' },
          observed: { cpu: '1', pods: '2' },
          reserved: { cpu: '1', pods: '2' },
          clusters: ['m1=2'],
        },
      ],
    },
    {
      name: 'a claim whose binding is not stored (a create admitted), and usage no binding accounts for',
      quota: quota({ used: { cpu: '300m', pods: '1' }, reservations: [reservation('new', { cpu: '1' })] }),
      bindings: [],
      rows: [
        { binding: 'new', charged: { cpu: '1' }, observed: {}, reserved: { cpu: '1' }, clusters: [] },
        {
          binding: OTHER_USAGE,
          charged: {},
          observed: { cpu: '300m', pods: '1' },
          reserved: {},
          clusters: [],
        },
      ],
    },
    {
      name: 'a binding outside the quota scopes is not listed',
      quota: quota(
        {},
        { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      ),
      bindings: [binding('low', 1, '1', [], 'low'), binding('high', 1, '1', [], 'high')],
      rows: [
        {
          binding: 'high',
          charged: { cpu: '1', pods: '1' },
          observed: { cpu: '1', pods: '1' },
          reserved: {},
          clusters: [],
        },
      ],
    },
  ])('$name', ({ quota, bindings, rows }) => {
    expect(workloadUsage(quota, bindings)).toEqual({ rows, problems: [] });
  });

  it('reports a binding whose charge cannot be read, naming it', () => {
    const broken = binding('broken', 1, 'lots');
    expect(workloadUsage(quota({}), [broken]).problems).toEqual([
      expect.stringMatching(
        /^ResourceBinding ns\/broken: spec\.replicaRequirements\.resourceRequest\[cpu\]: .*lots/,
      ),
    ]);
  });
});
