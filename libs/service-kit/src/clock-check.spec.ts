import { clockOffsetLimitMs, clockOffsetMs } from './clock-check.js';

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
