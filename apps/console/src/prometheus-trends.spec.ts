import { parseQueryRange, trendQuery } from './prometheus-trends.js';

describe('trendQuery', () => {
  it('asks for used / hard in percent per resource of one quota, one series whatever the replicas', () => {
    expect(trendQuery('team-a', 'compute')).toBe(
      '100 * max by (resource) (karmada_quota_used{namespace="team-a",quota="compute"})' +
        ' / max by (resource) (karmada_quota_hard{namespace="team-a",quota="compute"})',
    );
  });
});

describe('parseQueryRange', () => {
  const matrix = (result: unknown) => ({ status: 'success', data: { resultType: 'matrix', result } });

  it.each([
    { name: 'nothing recorded', body: matrix([]), series: {} },
    {
      name: 'samples per resource, seconds to milliseconds',
      body: matrix([
        {
          metric: { resource: 'cpu' },
          values: [
            [1700000000, '5'],
            [1700000300.5, '25.5'],
          ],
        },
        { metric: { resource: 'pods' }, values: [[1700000000, '10']] },
      ]),
      series: {
        cpu: [
          { at: 1700000000000, percent: 5 },
          { at: 1700000300500, percent: 25.5 },
        ],
        pods: [{ at: 1700000000000, percent: 10 }],
      },
    },
    {
      name: 'a zero limit (+Inf, NaN) draws nothing there',
      body: matrix([
        {
          metric: { resource: 'gpu' },
          values: [
            [1, '+Inf'],
            [2, 'NaN'],
            [3, '0'],
          ],
        },
      ]),
      series: { gpu: [{ at: 3000, percent: 0 }] },
    },
    {
      name: 'a series without a resource label is not ours',
      body: matrix([{ metric: {}, values: [[1, '1']] }]),
      series: {},
    },
  ])('$name', ({ body, series }) => {
    expect(Object.fromEntries(parseQueryRange(body))).toEqual(series);
  });

  it.each([
    [
      'an error answer',
      { status: 'error', errorType: 'bad_data', error: 'parse error at char 5' },
      'Prometheus answered "parse error at char 5"',
    ],
    ['an instant vector', { status: 'success', data: { resultType: 'vector', result: [] } }, 'no matrix'],
    ['not an answer at all', 'Service Unavailable', 'Prometheus answered "Service Unavailable"'],
  ])('says what is wrong with %s', (_what, body, message) => {
    expect(() => parseQueryRange(body)).toThrow(message);
  });
});
