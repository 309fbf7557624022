import { clockDistrust, clockOffsetLimitMs, clockOffsetMs } from './clock-check.js';

const at = (iso: string) => Date.parse(iso);

describe('clockOffsetMs: this clock minus the API server’s, from one call', () => {
  it.each<[string, number, number, string | undefined, number | undefined]>([
    // The server's second 12:00:00 covers [12:00:00.000, 12:00:01.000): its midpoint is .500.
    [
      'in step: the call straddles the server’s second',
      at('2026-11-27T12:00:00.400Z'),
      at('2026-11-27T12:00:00.600Z'),
      'Fri, 27 Nov 2026 12:00:00 GMT',
      0,
    ],
    [
      '30 s ahead',
      at('2026-11-27T12:00:30.400Z'),
      at('2026-11-27T12:00:30.600Z'),
      'Fri, 27 Nov 2026 12:00:00 GMT',
      30_000,
    ],
    [
      '30 s behind',
      at('2026-11-27T11:59:30.400Z'),
      at('2026-11-27T11:59:30.600Z'),
      'Fri, 27 Nov 2026 12:00:00 GMT',
      -30_000,
    ],
    ['no Date header', 0, 10, undefined, undefined],
    ['an unreadable Date header', 0, 10, 'yesterday-ish', undefined],
  ])('%s', (_, sentAt, receivedAt, date, expected) => {
    expect(clockOffsetMs(sentAt, receivedAt, date)).toBe(expected);
  });
});

describe('clockOffsetLimitMs: how far one service may be from the API server', () => {
  it.each<[number, number]>([
    [60, 13_000], // the default L: the pair within 26 s
    [120, 43_000],
    [34, 0], // no room left: any difference is reported
    [10, 0],
  ])('L = %i s: %i ms', (landingWindowSeconds, expected) => {
    expect(clockOffsetLimitMs(landingWindowSeconds)).toBe(expected);
  });
});

describe('clockDistrust: a reconciler whose clock may be off judges no claim (review 3, new 6)', () => {
  const measured = (offsetMs: number, uncertaintyMs = 600) => ({
    offsetMs,
    uncertaintyMs,
    wallAt: 1_000_000,
    monotonicAt: 5_000,
  });
  // [case, measurement, wall clock now, monotonic now, trusted]
  it.each<[string, ReturnType<typeof measured> | undefined, number, number, boolean]>([
    ['not measured yet', undefined, 1_000_000, 5_000, true],
    ['in step', measured(200), 1_060_000, 65_000, true],
    ['12 s ahead, within 13 s with its error', measured(12_000, 600), 1_000_000, 5_000, true],
    ['12.5 s ahead: with its error it may be past 13 s', measured(12_500, 600), 1_000_000, 5_000, false],
    ['20 s behind', measured(-20_000), 1_000_000, 5_000, false],
    // A step of the wall clock since the measurement shows at once against the monotonic clock.
    ['in step when measured, the wall clock stepped 30 s ahead since', measured(0), 1_090_000, 65_000, false],
    ['in step when measured, stepped 30 s back', measured(0), 1_030_000, 65_000, false],
    [
      '20 s behind when measured, stepped 20 s ahead since: in step',
      measured(-20_000),
      1_080_000,
      65_000,
      true,
    ],
  ])('%s', (_name, measurement, wallNow, monotonicNow, trusted) => {
    const why = clockDistrust(measurement, wallNow, monotonicNow, 13_000);
    // A landing window that leaves no room (34 s or less, as tests set it): only the warning reports.
    expect(clockDistrust(measurement, wallNow, monotonicNow, 0)).toBeUndefined();
    expect(why === undefined).toBe(trusted);
    if (!trusted) expect(why).toContain('settles and expires no claim');
  });
});
