import { SchedulerRegistry } from '@nestjs/schedule';
import type { KarmadaQuota } from '#api';
import { quotaView } from '#quota-view';
import type { QuotaCache } from './watched-objects.js';
import { SampleRing, TREND_WINDOW_MS, UsageHistory } from './usage-history.js';

describe('SampleRing', () => {
  it.each([
    {
      name: 'keeps the samples of a series oldest first',
      rounds: [
        [10, [['a', 1]]],
        [20, [['a', 2]]],
      ],
      capacity: 3,
      expected: { a: [10, 20] },
    },
    {
      name: 'forgets the oldest once full',
      rounds: [
        [10, [['a', 1]]],
        [20, [['a', 2]]],
        [30, [['a', 3]]],
        [40, [['a', 4]]],
      ],
      capacity: 3,
      expected: { a: [20, 30, 40] },
    },
    {
      name: 'a series missing from a round has a gap there',
      rounds: [
        [
          10,
          [
            ['a', 1],
            ['b', 1],
          ],
        ],
        [20, [['b', 2]]],
        [
          30,
          [
            ['a', 3],
            ['b', 3],
          ],
        ],
      ],
      capacity: 3,
      expected: { a: [10, 30], b: [10, 20, 30] },
    },
    {
      name: 'a series absent for the whole window is dropped',
      rounds: [
        [
          10,
          [
            ['a', 1],
            ['b', 1],
          ],
        ],
        [20, [['b', 2]]],
        [30, [['b', 3]]],
      ],
      capacity: 2,
      expected: { a: [], b: [20, 30] },
    },
  ] as {
    name: string;
    rounds: [number, [string, number][]][];
    capacity: number;
    expected: Record<string, number[]>;
  }[])('$name', ({ rounds, capacity, expected }) => {
    const ring = new SampleRing(capacity);
    for (const [at, readings] of rounds) ring.record(at, readings);
    for (const [key, times] of Object.entries(expected)) {
      expect(ring.samples(key).map((s) => s.at)).toEqual(times);
    }
    expect(ring.size).toBe(Object.values(expected).filter((times) => times.length > 0).length);
  });

  it('keeps percents to a tenth (stored as 32-bit floats)', () => {
    const ring = new SampleRing(2);
    ring.record(10, [['a', 33.3]]);
    expect(ring.samples('a')).toEqual([{ at: 10, percent: 33.3 }]);
  });
});

describe('UsageHistory', () => {
  const quotaAt = (usedCpu: string): KarmadaQuota => ({
    metadata: { namespace: 'ns', name: 'q' },
    spec: { hard: { cpu: '10' } },
    status: { hard: { cpu: '10' }, used: { cpu: usedCpu } },
  });

  it('draws each resource from the samples of the last 24 hours to the reading now', () => {
    let quotas = [quotaAt('1')];
    const history = new UsageHistory(
      { list: () => quotas } as unknown as QuotaCache,
      300,
      new SchedulerRegistry(),
    );
    const start = Date.parse('2026-11-22T12:00:00Z');
    history.sample(start - TREND_WINDOW_MS - 1); // too old to draw
    history.sample(start);
    quotas = [quotaAt('2')];
    history.sample(start + 3600_000);
    const now = new Date(start + 2 * 3600_000);
    const {
      source,
      trends: [cpu],
    } = history.trends(quotaView(quotaAt('5')), now);
    expect(source).toBe('sampled by this console every 300 s since it started');
    expect(cpu).toMatchObject({
      resource: 'cpu',
      first: { at: start, percent: 10 },
      last: { at: now.getTime(), percent: 50 },
      ceiling: 100,
    });
    expect(cpu!.points.split(' ')).toHaveLength(3);
  });

  it('takes no sample before the quotas are loaded', () => {
    const history = new UsageHistory(
      {
        list: () => {
          throw new Error('not synced');
        },
      } as unknown as QuotaCache,
      300,
      new SchedulerRegistry(),
    );
    history.sample(Date.now());
    const [cpu] = history.trends(quotaView(quotaAt('1')), new Date()).trends;
    expect(cpu!.first).toEqual(cpu!.last);
  });
});
