import { histogramMeanMs, metricValue, percentile, ratio, summarizeLatencies } from './stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose
  test.each([
    [hundred, 0.5, 50],
    [hundred, 0.95, 95],
    [hundred, 0.99, 99],
    [hundred, 1, 100],
    [hundred, 0, 1],
    [[7], 0.99, 7],
    [[1, 2], 0.5, 1],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 1000], 0.9, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 1000], 0.91, 1000],
  ])('of %j at %d is %d', (values, q, expected) => {
    expect(percentile(values, q)).toBe(expected);
  });

  test('of nothing is NaN', () => expect(percentile([], 0.5)).toBeNaN());
  test('refuses a quantile outside 0..1', () => expect(() => percentile([1], 99)).toThrow('between 0 and 1'));
});

test('summarizeLatencies rounds to 0.1 ms', () => {
  expect(summarizeLatencies([1.234, 2.25, 3.96])).toEqual({
    samples: 3,
    p50Ms: 2.3,
    p95Ms: 4,
    p99Ms: 4,
    maxMs: 4,
  });
});

test.each([
  [10, 4, 2.5],
  [1, 3, 0.33],
  [1, 0, Number.NaN],
  [Number.NaN, 1, Number.NaN],
])('ratio(%d, %d) is %d', (a, b, expected) => {
  expect(ratio(a, b)).toEqual(expected);
});

test('metricValue sums a metric over its label sets and ignores longer names', () => {
  const exposition = [
    '# HELP karmada_quota_status_conflicts_total ...',
    'karmada_quota_status_conflicts_total{service="webhook"} 3',
    'karmada_quota_status_conflicts_total{service="other"} 2',
    'karmada_quota_status_conflicts_total_created 17',
    'karmada_quota_admission_batch_size_sum 12.5',
  ].join('\n');
  expect(metricValue(exposition, 'karmada_quota_status_conflicts_total')).toBe(5);
  expect(metricValue(exposition, 'karmada_quota_admission_batch_size_sum')).toBe(12.5);
  expect(metricValue(exposition, 'karmada_quota_absent')).toBe(0);
});

test('metricValue keeps only the label sets that carry every label asked for', () => {
  const exposition = [
    'apiserver_admission_webhook_admission_duration_seconds_sum{name="rb.quota",operation="CREATE",rejected="false",type="validating"} 1.5',
    'apiserver_admission_webhook_admission_duration_seconds_sum{name="rb.quota",operation="UPDATE",rejected="false",type="validating"} 7',
    'apiserver_admission_webhook_admission_duration_seconds_sum{name="other",operation="CREATE",rejected="true",type="validating"} 9',
    'apiserver_admission_webhook_admission_duration_seconds_sum{name="rb.quota",operation="CREATE",rejected="true",type="validating"} 0.5',
  ].join('\n');
  const name = 'apiserver_admission_webhook_admission_duration_seconds_sum';
  expect(metricValue(exposition, name, { name: 'rb.quota', operation: 'CREATE' })).toBe(2);
  expect(metricValue(exposition, name, { name: 'rb.quota' })).toBe(9);
  expect(metricValue(exposition, name, { operation: 'DELETE' })).toBe(0);
  expect(metricValue(exposition, name)).toBe(18);
});

test.each([
  { sum: 1.5, count: 3, ms: 500 },
  { sum: 0.12345, count: 1, ms: 123.5 },
  { sum: 0, count: 0, ms: Number.NaN },
])('histogramMeanMs: $sum s over $count observations is $ms ms', ({ sum, count, ms }) => {
  const grown: Record<string, number> = { h_sum: sum, h_count: count };
  expect(histogramMeanMs((metric) => grown[metric] ?? 0, 'h')).toBe(ms);
});
