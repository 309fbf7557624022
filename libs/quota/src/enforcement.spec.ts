import type { WouldBeDeniedStatus } from '#api';
import {
  addWouldBeDenied,
  decodeWouldBeDenied,
  enforcementWarning,
  liveWouldBeDenied,
  parseEnforcement,
  WOULD_BE_DENIED_LIMIT,
} from './enforcement.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const entry = (binding: string, minutesAgo = 0, message = 'exceeded quota: q'): WouldBeDeniedStatus => ({
  binding,
  enforcement: 'Warn',
  message,
  at: ago(minutesAgo),
});

describe('parseEnforcement', () => {
  it.each<[unknown, string]>([
    ['Warn', 'Warn'],
    ['DryRun', 'DryRun'],
    ['Deny', 'Deny'],
    [undefined, 'Deny'],
    ['warn', 'Deny'],
    [3, 'Deny'],
  ])('%p is %s', (value, expected) => expect(parseEnforcement(value)).toBe(expected));
});

describe('decodeWouldBeDenied', () => {
  it('keeps readable entries and leaves out the rest, never failing', () => {
    const good = entry('web');
    expect(
      decodeWouldBeDenied([
        good,
        { ...good, binding: 7 },
        { ...good, enforcement: 'Deny' },
        { ...good, at: 'yesterday' },
        { ...good, message: undefined },
        'junk',
      ]),
    ).toEqual([good]);
    expect(decodeWouldBeDenied({ web: good })).toEqual([]);
    expect(decodeWouldBeDenied(undefined)).toEqual([]);
  });
});

describe('addWouldBeDenied and liveWouldBeDenied', () => {
  it('puts the newest first, replacing the same binding’s earlier entry', () => {
    const list = addWouldBeDenied([entry('a', 5), entry('b', 10)], entry('b', 0, 'again'), NOW);
    expect(list.map((e) => [e.binding, e.message])).toEqual([
      ['b', 'again'],
      ['a', 'exceeded quota: q'],
    ]);
  });

  it(`keeps at most ${WOULD_BE_DENIED_LIMIT}, dropping the oldest`, () => {
    const older = Array.from({ length: WOULD_BE_DENIED_LIMIT }, (_, i) => entry(`b${i}`, i + 1));
    const list = addWouldBeDenied(older, entry('new'), NOW);
    expect(list).toHaveLength(WOULD_BE_DENIED_LIMIT);
    expect(list[0]!.binding).toBe('new');
    expect(list.map((e) => e.binding)).not.toContain(`b${WOULD_BE_DENIED_LIMIT - 1}`);
  });

  it('shows an entry for an hour after its admission', () => {
    expect(
      liveWouldBeDenied([entry('a', 59), entry('b', 60), entry('c', 61)], NOW).map((e) => e.binding),
    ).toEqual(['a']);
  });

  it('cuts a message to the CRD’s 1024 characters', () => {
    const [first] = addWouldBeDenied([], entry('a', 0, 'x'.repeat(2000)), NOW);
    expect(first!.message).toHaveLength(1024);
    expect(first!.message.endsWith('...')).toBe(true);
  });
});

it('the warning names the quota, says it is not enforced, and carries the refusal', () => {
  expect(enforcementWarning('team-a', 'exceeded quota: team-a, requested: cpu=1')).toBe(
    'KarmadaQuota team-a would deny this change (spec.enforcement: Warn, not enforced): ' +
      'exceeded quota: team-a, requested: cpu=1',
  );
});
