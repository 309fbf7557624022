import { waveDelays, type Observation } from './convergence-delays.js';

const obs = (...pairs: [number, number][]): Observation[] => pairs.map(([at, count]) => ({ at, count }));

describe('waveDelays', () => {
  test.each([
    {
      what: 'creates, each reflected by the first status at or past its count',
      wave: { since: 100, baseline: 10, direction: 1 as const, completedAt: [110, 105, 120] },
      observations: obs([50, 13], [130, 11], [150, 13]),
      // answers sorted: 105 (-> 11 at 130), 110 (-> 12 at 150), 120 (-> 13 at 150)
      expected: { delaysMs: [25, 40, 30], unobserved: 0 },
    },
    {
      what: 'deletes, counting down',
      wave: { since: 0, baseline: 5, direction: -1 as const, completedAt: [10, 20] },
      observations: obs([15, 4], [40, 3]),
      expected: { delaysMs: [5, 20], unobserved: 0 },
    },
    {
      what: 'a status that got there before the answer arrived',
      wave: { since: 0, baseline: 0, direction: 1 as const, completedAt: [50] },
      observations: obs([40, 1]),
      expected: { delaysMs: [0], unobserved: 0 },
    },
    {
      what: 'writes never reflected',
      wave: { since: 0, baseline: 0, direction: 1 as const, completedAt: [1, 2, 3] },
      observations: obs([10, 1]),
      expected: { delaysMs: [9], unobserved: 2 },
    },
    {
      what: 'observations of an earlier wave, which reached the same counts',
      wave: { since: 100, baseline: 8, direction: 1 as const, completedAt: [110, 120] },
      observations: obs([20, 10], [115, 9], [140, 10]),
      expected: { delaysMs: [5, 20], unobserved: 0 },
    },
  ])('$what', ({ wave, observations, expected }) => {
    expect(waveDelays(wave, observations)).toEqual(expected);
  });
});
