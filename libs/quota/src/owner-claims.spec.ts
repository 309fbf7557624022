import { formatList, parseResourceList, type ResourceList } from '#quantity';
import {
  claimedFor,
  decideBy,
  decideByRead,
  joinAttempt,
  needsRead,
  outcomeOf,
  retirable,
  retireOn,
  type Attempt,
  type BindingSeen,
  type ClaimRecord,
  type QuotaClaim,
} from './owner-claims.js';

const list = (wire: Record<string, string>): ResourceList => parseResourceList(wire, 'test').list;
const claim = (charge: Record<string, string>, increase: Record<string, string> = charge): QuotaClaim => ({
  charge: list(charge),
  increase: list(increase),
});
const wire = (l: ResourceList) => formatList(l);

const create = (uid: string, admittedAt = 0): Attempt => ({ uid, admittedAt, charges: new Map() });
const update = (uid: string, oldVersion: string, admittedAt = 0): Attempt => ({
  uid,
  oldVersion,
  admittedAt,
  charges: new Map(),
});
const stored = (uid: string, resourceVersion: string): BindingSeen => ({
  uid,
  resourceVersion,
  deleted: false,
});
const deleted = (uid: string, resourceVersion: string): BindingSeen => ({
  uid,
  resourceVersion,
  deleted: true,
});

describe('outcomeOf: when a watch shows an attempt landed or never will', () => {
  it.each<[string, Attempt, BindingSeen, string | undefined]>([
    ['a create, its uid stored', create('u1'), stored('u1', '12'), '12'],
    ['a create, its uid deleted (it landed before)', create('u1'), deleted('u1', '15'), '15'],
    // Karmada's duplicate create: the other may be stored once this one is gone.
    ['a create, another uid stored: undecided', create('u2'), stored('u1', '12'), undefined],
    ['a create, another uid deleted: undecided', create('u2'), deleted('u1', '15'), undefined],
    ['an update, its object at a later version', update('u1', '10'), stored('u1', '12'), '12'],
    ['an update, later by length', update('u1', '9'), stored('u1', '10'), '10'],
    // A lagging watch shows what the update was decided against, or older.
    [
      'an update, its object at the same version: undecided',
      update('u1', '10'),
      stored('u1', '10'),
      undefined,
    ],
    ['an update, an older version: undecided', update('u1', '10'), stored('u1', '8'), undefined],
    ['an update, its object deleted', update('u1', '10'), deleted('u1', '10'), '10'],
    ['an update, another uid at a later version', update('u1', '10'), stored('u2', '14'), '14'],
    ['an update, another uid deleted later', update('u1', '10'), deleted('u2', '16'), '16'],
    [
      'an update, another uid at an older version: undecided',
      update('u1', '10'),
      stored('u2', '7'),
      undefined,
    ],
  ])('%s', (_, attempt, seen, expected) => {
    expect(outcomeOf(attempt, seen)).toBe(expected);
  });
});

describe('claim records', () => {
  it("a re-review relies on its own change's claim while it may land, never on another attempt's", () => {
    const first = joinAttempt(undefined, create('u1'), new Map([['q', claim({ cpu: '4' })]]));
    expect(wire(claimedFor(first, 'q', { uid: 'u1' }))).toEqual({ cpu: '4' });
    // Karmada's duplicate create, racing the first: a change of its own, charged in full.
    expect(claimedFor(first, 'q', { uid: 'u2' })).toEqual({});
    const second = joinAttempt(first, create('u2'), new Map([['q', claim({ cpu: '6' })]]));
    expect(wire(second.increases.get('q')!)).toEqual({ cpu: '10' });
    expect(second.attempts.map((a) => a.uid)).toEqual(['u1', 'u2']);
    expect(claimedFor(second, 'other', { uid: 'u1' })).toEqual({});
    expect(claimedFor(undefined, 'q', { uid: 'u1' })).toEqual({});
    // An update of the stored object relies on nothing of the create's: a decrease may have been
    // counted since, holding less of it than the create was weighed against (owner protocol search).
    expect(claimedFor(second, 'q', { uid: 'u1', oldVersion: '12' })).toEqual({});
    // Once its outcome is known, not even the same change relies on it.
    expect(claimedFor(decideBy(second, stored('u1', '12')), 'q', { uid: 'u1' })).toEqual({});
  });

  it('a re-invoked review of the same change is one attempt, admitted when last reviewed', () => {
    const once = joinAttempt(
      undefined,
      update('u1', '10', 5),
      new Map([['q', claim({ cpu: '4' }, { cpu: '1' })]]),
    );
    const again = joinAttempt(once, update('u1', '10', 9), new Map([['q', claim({ cpu: '4' }, {})]]));
    expect(again.attempts.map((a) => [a.uid, a.oldVersion, a.admittedAt])).toEqual([['u1', '10', 9]]);
    expect(wire(claimedFor(again, 'q', { uid: 'u1', oldVersion: '10' }))).toEqual({ cpu: '4' });
    expect(wire(again.increases.get('q')!)).toEqual({ cpu: '1' });
    // Another update of the same object is another attempt.
    const other = joinAttempt(again, update('u1', '12', 11), new Map());
    expect(other.attempts).toHaveLength(2);
  });

  it('a watch event decides the attempts it shows, and an event deciding none returns the record as is', () => {
    const record = joinAttempt(joinAttempt(undefined, create('u1'), new Map()), create('u2'), new Map());
    const decided = decideBy(record, stored('u1', '12'));
    expect(decided.attempts.map((a) => a.decidedAt)).toEqual(['12', undefined]);
    // A later event does not move an outcome already known.
    expect(decideBy(decided, deleted('u1', '20')).attempts[0]!.decidedAt).toBe('12');
    expect(decideBy(decided, stored('u3', '30'))).toBe(decided);
  });

  it('a create that died (never stored) is decided by the read after the window, a younger one is not', () => {
    const record = joinAttempt(
      joinAttempt(undefined, create('dead', 1_000), new Map()),
      create('young', 50_000),
      new Map(),
    );
    const WINDOW = 60_000;
    expect(needsRead(record, 60_999, WINDOW)).toBe(false);
    expect(needsRead(record, 61_000, WINDOW)).toBe(true);
    const read = decideByRead(record, '40', 61_000, WINDOW);
    expect(read.attempts.map((a) => a.decidedAt)).toEqual(['40', undefined]);
    expect(needsRead(read, 61_000, WINDOW)).toBe(false);
    expect(decideByRead(read, '41', 61_000, WINDOW)).toBe(read);
  });
});

describe('retirement', () => {
  const decided = (...versions: (string | undefined)[]): ClaimRecord => ({
    attempts: versions.map((v, i) => ({ ...create(`u${i}`), ...(v ? { decidedAt: v } : {}) })),
    increases: new Map([
      ['q', list({ cpu: '4' })],
      ['r', list({ cpu: '2' })],
    ]),
  });

  it.each<[string, ClaimRecord, string | undefined, boolean]>([
    ['every outcome known, counted at the latest', decided('12', '15'), '15', true],
    ['counted past it', decided('12', '15'), '100', true],
    ['counted before the latest outcome', decided('12', '15'), '14', false],
    ['an attempt that may still land', decided('12', undefined), '100', false],
    ['no count stamped', decided('12'), undefined, false],
  ])('%s: %s', (_, record, counted, expected) => {
    expect(retirable(record, counted)).toBe(expected);
  });

  it('retires one quota at a time, by its own count, and the record goes with the last', () => {
    const record = decided('12');
    expect(retireOn(record, 'q', '11')).toBe(record);
    const onR = retireOn(record, 'q', '12')!;
    expect([...onR.increases.keys()]).toEqual(['r']);
    expect(retireOn(onR, 'r', '13')).toBeUndefined();
  });
});
