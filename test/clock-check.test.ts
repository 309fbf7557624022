import { SchedulerRegistry } from '@nestjs/schedule';
import { Registry } from 'prom-client';
import { ClockCheck } from '#service-kit';
import { client, federation } from './support/federation.js';

/**
 * The clock check against the real host API server's Date header (docs/concepts/accounting.md,
 * "Clocks"): each service's clock within half of L - 34 s of the API server's keeps every pair of them
 * within the bound the claims need.
 */
const fed = federation();

const offsetGauge = async (metrics: Registry) =>
  (await metrics.getSingleMetric('karmada_quota_clock_offset_seconds')!.get()).values[0]?.value;

test('a clock in step with the API server is measured within a second and a half, within the limit', async () => {
  const metrics = new Registry();
  const result = await new ClockCheck(client(fed.host), metrics, new SchedulerRegistry(), 60).check();
  expect(Math.abs(result!.offsetMs)).toBeLessThan(1_500);
  expect(result!.beyondLimit).toBe(false);
  expect(await offsetGauge(metrics)).toBeCloseTo(result!.offsetMs / 1000, 3);
});

test.each([
  ['30 s ahead (a reconciler so far ahead settles claims early)', 30_000],
  ['30 s behind', -30_000],
])('a clock %s is measured and reported beyond the limit', async (_, skewMs) => {
  const metrics = new Registry();
  const check = new ClockCheck(
    client(fed.host),
    metrics,
    new SchedulerRegistry(),
    60,
    () => Date.now() + skewMs,
  );
  const result = await check.check();
  expect(Math.abs(result!.offsetMs - skewMs)).toBeLessThan(1_500);
  expect(result!.beyondLimit).toBe(true);
  expect(await offsetGauge(metrics)).toBeCloseTo(result!.offsetMs / 1000, 3);
});

test('a larger landing window leaves room for the same 30 s (L = 120 s: within 43 s)', async () => {
  const check = new ClockCheck(
    client(fed.host),
    new Registry(),
    new SchedulerRegistry(),
    120,
    () => Date.now() + 30_000,
  );
  expect((await check.check())!.beyondLimit).toBe(false);
});
