import type { KarmadaQuota } from '#api';
import { quotaView } from '#quota-view';
import { snapshot, sseFrame } from './snapshot.js';

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

  it('serves the shared view with each cluster’s age at the time of the snapshot', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const result = snapshot('alice', [quotaView(quota)], now);
    expect(result.user).toBe('alice');
    expect(result.generatedAt).toBe('2026-11-22T12:00:00.000Z');
    expect(result.quotas[0]!.resources[0]).toMatchObject({ resource: 'cpu', used: '1500m', hard: '10' });
    expect(result.quotas[0]!.clusters.map((c) => [c.name, c.used.cpu, c.lastSyncAge])).toEqual([
      ['member1', '1500m', '45s'],
      ['member2', '0', '<unknown>'],
    ]);
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
