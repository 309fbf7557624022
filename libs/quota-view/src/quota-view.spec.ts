import type { KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { age, percentOf, quotaView } from './quota-view.js';

const quota = (
  status: KarmadaQuota['status'],
  hard: Record<string, string> = { cpu: '10' },
): KarmadaQuota => ({
  metadata: { namespace: 'team-a', name: 'compute' },
  spec: { hard },
  status,
});

describe('percentOf', () => {
  it.each([
    ['0', '10', 0],
    ['5', '10', 50],
    ['1', '3', 33.3],
    ['2', '3', 66.6],
    ['10', '10', 100],
    ['15', '10', 150],
    ['1m', '1', 0.1],
    ['999u', '1', 0],
    ['1536Mi', '2Gi', 75],
    ['0', '0', 0],
    ['1m', '0', 100],
  ])('%s of %s is %s%%', (part, whole, expected) => {
    expect(percentOf(Quantity.parse(part), Quantity.parse(whole))).toBe(expected);
  });
});

describe('age', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
  it.each([
    [0, '0s'],
    [45, '45s'],
    [119, '119s'],
    [120, '2m'],
    [200, '3m20s'],
    [600, '10m'],
    [179 * 60, '179m'],
    [3 * 3600, '3h'],
    [5 * 3600 + 12 * 60, '5h12m'],
    [20 * 3600, '20h'],
    [4 * 86400 + 3 * 3600, '4d3h'],
    [30 * 86400, '30d'],
    [3 * 365 * 86400 + 45 * 86400, '3y45d'],
    [9 * 365 * 86400, '9y'],
    [-30, '0s'],
  ])('%s seconds ago prints %s', (seconds, expected) => {
    expect(age(ago(seconds), now)).toBe(expected);
  });
  it.each(['', 'yesterday'])('an unreadable time %j prints <unknown>', (time) => {
    expect(age(time, now)).toBe('<unknown>');
  });
});

describe('quotaView', () => {
  it('shows every limited resource canonically, with zero for what is not used or reserved', () => {
    const view = quotaView(
      quota(
        {
          hard: { cpu: '10', memory: '2Gi', pods: '5' },
          used: { cpu: '1.5' },
          reserved: { memory: '1536Mi' },
        },
        { cpu: '1' },
      ),
    );
    expect(view.resources).toEqual([
      {
        resource: 'cpu',
        used: '1500m',
        reserved: '0',
        hard: '10',
        usedPercent: 15,
        reservedPercent: 0,
        exceeded: false,
      },
      {
        resource: 'memory',
        used: '0',
        reserved: '1536Mi',
        hard: '2Gi',
        usedPercent: 0,
        reservedPercent: 75,
        exceeded: false,
      },
      {
        resource: 'pods',
        used: '0',
        reserved: '0',
        hard: '5',
        usedPercent: 0,
        reservedPercent: 0,
        exceeded: false,
      },
    ]);
    expect(view.percentUsed).toBe(75);
    expect(view.problems).toEqual([]);
    expect([view.namespace, view.name]).toEqual(['team-a', 'compute']);
  });

  it('falls back to spec.hard before the first reconcile', () => {
    const view = quotaView(quota(undefined, { cpu: '4' }));
    expect(view.resources.map((r) => [r.resource, r.used, r.hard])).toEqual([['cpu', '0', '4']]);
    expect(view).toMatchObject({
      clusters: [],
      reservations: [],
      waiting: [],
      conditions: [],
      percentUsed: 0,
    });
  });

  it('marks a resource whose used + reserved is over hard, and reports over 100 percent', () => {
    const view = quotaView(quota({ hard: { cpu: '2' }, used: { cpu: '2' }, reserved: { cpu: '1' } }));
    expect(view.resources[0]).toMatchObject({ exceeded: true, usedPercent: 100, reservedPercent: 50 });
    expect(view.percentUsed).toBe(150);
  });

  it('at exactly hard is full, not exceeded', () => {
    const view = quotaView(quota({ hard: { cpu: '2' }, used: { cpu: '1' }, reserved: { cpu: '1000m' } }));
    expect(view.resources[0].exceeded).toBe(false);
    expect(view.percentUsed).toBe(100);
  });

  it('lists clusters with the quota resources canonically, and reservations with their binding', () => {
    const view = quotaView(
      quota({
        hard: { cpu: '10', memory: '1Gi' },
        clusters: [
          { name: 'member1', state: 'Ready', lastSyncTime: '2026-11-22T12:00:00Z', used: { cpu: '0.5' } },
          {
            name: 'member2',
            state: 'Stale',
            lastSyncTime: '2026-11-22T11:00:00Z',
            used: { memory: '1073741824' },
          },
        ],
        reservations: [
          {
            reservedBy: {
              apiVersion: 'work.karmada.io/v1alpha2',
              kind: 'ResourceBinding',
              name: 'web',
              uid: 'u1',
            },
            reserved: { cpu: '2', memory: '0.5Gi' },
            expirationTime: '2026-11-22T12:05:00Z',
          },
        ],
      }),
    );
    expect(view.clusters).toEqual([
      {
        name: 'member1',
        state: 'Ready',
        lastSyncTime: '2026-11-22T12:00:00Z',
        used: { cpu: '500m', memory: '0' },
      },
      {
        name: 'member2',
        state: 'Stale',
        lastSyncTime: '2026-11-22T11:00:00Z',
        used: { cpu: '0', memory: '1073741824' },
      },
    ]);
    expect(view.reservations).toEqual([
      {
        binding: 'web',
        uid: 'u1',
        reserved: { cpu: '2', memory: '512Mi' },
        expirationTime: '2026-11-22T12:05:00Z',
      },
    ]);
  });

  it('lists waiting changes canonically, free on the requested resources, and reports unreadable ones', () => {
    const view = quotaView(
      quota({
        hard: { cpu: '10', memory: '1Gi' },
        waiting: [
          {
            binding: 'web',
            requested: { cpu: '1.5', memory: '0.5Gi' },
            free: { cpu: '0.5', memory: '0' },
            since: '2026-11-22T12:00:00Z',
          },
          { binding: 'bad', requested: { cpu: 'lots' }, free: {}, since: '2026-11-22T12:01:00Z' },
        ],
      }),
    );
    expect(view.waiting).toEqual([
      {
        binding: 'web',
        requested: { cpu: '1500m', memory: '512Mi' },
        free: { cpu: '500m', memory: '0' },
        since: '2026-11-22T12:00:00Z',
      },
      { binding: 'bad', requested: {}, free: {}, since: '2026-11-22T12:01:00Z' },
    ]);
    expect(view.problems).toEqual([
      expect.stringContaining('status.waiting[1].requested[cpu]: invalid quantity'),
    ]);
  });

  it('reads spec.enforcement (Deny unless Warn or DryRun) and status.wouldBeDenied', () => {
    const base: KarmadaQuota = { metadata: { name: 'q', namespace: 'n' }, spec: { hard: { cpu: '1' } } };
    expect(quotaView(base).enforcement).toBe('Deny');
    expect(quotaView(base).wouldBeDenied).toEqual([]);
    const noted = {
      binding: 'big',
      enforcement: 'DryRun' as const,
      message: 'exceeded quota: q',
      at: '2026-11-22T10:00:00Z',
    };
    const view = quotaView({
      ...base,
      spec: { ...base.spec, enforcement: 'DryRun' },
      status: { wouldBeDenied: [noted] },
    });
    expect(view.enforcement).toBe('DryRun');
    expect(view.wouldBeDenied).toEqual([noted]);
  });

  it('keeps conditions with their reason and message', () => {
    const condition = {
      type: 'Ready',
      status: 'True' as const,
      reason: 'Reconciled',
      message: 'all good',
      lastTransitionTime: '2026-11-22T12:00:00Z',
    };
    expect(quotaView(quota({ conditions: [condition] })).conditions).toEqual([
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'all good' },
    ]);
  });

  it('reports an unreadable quantity as a problem and still shows the rest', () => {
    const view = quotaView(quota({ hard: { cpu: '10', memory: 'lots' }, used: { cpu: '1' } }));
    expect(view.resources.map((r) => r.resource)).toEqual(['cpu']);
    expect(view.problems).toEqual([expect.stringMatching(/^status\.hard\[memory\]: .*lots/)]);
  });
});
