import { sameJson } from './json.js';

describe('sameJson: equal exactly when key-sorted JSON.stringify is', () => {
  it.each<[string, unknown, unknown]>([
    ['the same scalar', 2, 2],
    ['different scalars', 2, '2'],
    ['null and an object', null, {}],
    [
      'keys in another order',
      { a: 1, b: { c: [1, { d: 2, e: 3 }] } },
      { b: { c: [1, { e: 3, d: 2 }] }, a: 1 },
    ],
    ['a key holding undefined and no key', { a: 1, b: undefined }, { a: 1 }],
    ['one key more', { a: 1, b: 2 }, { a: 1 }],
    ['the same key count, other keys', { a: 1, b: undefined }, { c: 1 }],
    ['an array and an object with its indexes', [1, 2], { 0: 1, 1: 2 }],
    ['arrays in another order', [1, 2], [2, 1]],
    ['arrays of other lengths', [1], [1, 1]],
    ['nested values that differ', { a: { b: [1, { c: 'x' }] } }, { a: { b: [1, { c: 'y' }] } }],
  ])('%s', (_, a, b) => {
    const sorted = (value: unknown): string =>
      JSON.stringify(value, (_key, v: unknown) =>
        typeof v === 'object' && v !== null && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
          : v,
      );
    expect(sameJson(a, b)).toBe(sorted(a) === sorted(b));
    expect(sameJson(b, a)).toBe(sameJson(a, b));
  });
});
