import type { KarmadaQuota } from '#api';
import { quotaView, type WorkloadRow } from '#quota-view';
import { consoleQuota, MAX_WORKLOAD_ROWS, snapshot, sseFrame } from './snapshot.js';

describe('snapshot', () => {
  const quota: KarmadaQuota = {
    metadata: { namespace: 'team-a', name: 'compute' },
    spec: { hard: { cpu: '10' } },
    status: {
      hard: { cpu: '10' },
      used: { cpu: '1.5' },
      clusters: [
        { name: 'member1', state: 'Ready', lastSyncTime: '2026-11-22T11:59:15Z', used: { cpu: '1.5' } },
        { name: 'member2', state: 'Stale', lastSyncTime: 'never', used: {} },
      ],
    },
  };

  const noDetails = { workloads: { rows: [], problems: [] }, trends: [], trendSource: 'nowhere' };

  it('serves the shared view with each cluster’s age at the time of the snapshot', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const result = snapshot('alice', [consoleQuota(quotaView(quota), now, noDetails)], now);
    expect(result.user).toBe('alice');
    expect(result.generatedAt).toBe('2026-11-22T12:00:00.000Z');
    expect(result.quotas[0]!.resources[0]).toMatchObject({ resource: 'cpu', used: '1500m', hard: '10' });
    expect(result.quotas[0]!.clusters.map((c) => [c.name, c.used.cpu, c.lastSyncAge])).toEqual([
      ['member1', '1500m', '45s'],
      ['member2', '0', '<unknown>'],
    ]);
    expect(result.quotas[0]!.memberCaps).toEqual([]); // the page shows no table of member caps
  });

  it('serves the member caps apart from the resources, by member then resource', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const capped: KarmadaQuota = {
      ...quota,
      status: {
        ...quota.status,
        hard: { cpu: '10', 'cpu@member2': '4', 'pods@member1': '5', 'cpu@member1': '2' },
        used: { cpu: '1.5', 'cpu@member1': '1.5' },
        reserved: { 'cpu@member1': '1', 'pods@member1': '1' },
      },
    };
    const served = snapshot('alice', [consoleQuota(quotaView(capped), now, noDetails)], now).quotas[0]!;
    expect(served.resources.map((r) => r.resource)).toEqual(['cpu']);
    expect(served.memberCaps.map((c) => [c.member, c.resource, c.used, c.reserved, c.hard])).toEqual([
      ['member1', 'cpu', '1500m', '1', '2'],
      ['member1', 'pods', '0', '1', '5'],
      ['member2', 'cpu', '0', '0', '4'],
    ]);
    expect(served.memberCaps[0]).toMatchObject({ usedPercent: 75, reservedPercent: 50, exceeded: true });
    expect(served.memberCaps[1]).toMatchObject({ usedPercent: 0, reservedPercent: 20, exceeded: false });
  });
});

describe('consoleQuota', () => {
  const row = (binding: string): WorkloadRow => ({
    binding,
    charged: {},
    inFlight: {},
    clusters: [],
  });
  const view = quotaView({ metadata: { namespace: 'ns', name: 'q' }, spec: { hard: { cpu: '1' } } });
  const now = new Date('2026-11-22T12:00:00Z');

  it.each([
    [0, 0, 0],
    [3, 3, 0],
    [MAX_WORKLOAD_ROWS, MAX_WORKLOAD_ROWS, 0],
    [MAX_WORKLOAD_ROWS + 1, MAX_WORKLOAD_ROWS, 1],
    [MAX_WORKLOAD_ROWS + 500, MAX_WORKLOAD_ROWS, 500],
  ])('of %s workloads lists the %s largest and counts the %s others', (count, listed, more) => {
    const rows = Array.from({ length: count }, (_, i) => row(`w${i}`));
    const served = consoleQuota(view, now, {
      workloads: { rows, problems: ['p'] },
      trends: [],
      trendSource: 'nowhere',
    });
    expect(served.workloads).toEqual({ rows: rows.slice(0, listed), more, problems: ['p'] });
  });
});

describe('sseFrame', () => {
  it.each([
    ['one line', '{"a":1}', 'event: quotas\ndata: {"a":1}\n\n'],
    ['several lines', 'a\nb\r\nc', 'event: quotas\ndata: a\ndata: b\ndata: c\n\n'],
    ['nothing', '', 'event: quotas\ndata: \n\n'],
  ])('frames %s', (_what, data, expected) => {
    expect(sseFrame('quotas', data)).toBe(expected);
  });
});
