import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it.each([
    ['just set', 0, 'v'],
    ['one millisecond before expiry', 29_999, 'v'],
    ['at expiry', 30_000, undefined],
    ['long after', 90_000, undefined],
  ])('an entry read %s is %s', (_when, elapsed, expected) => {
    const cache = new TtlCache<string>(30_000, 10);
    cache.set('k', 'v', 1_000);
    expect(cache.get('k', 1_000 + elapsed)).toBe(expected);
  });

  it('drops an expired entry when it is read', () => {
    const cache = new TtlCache<string>(10, 10);
    cache.set('k', 'v', 0);
    expect(cache.get('k', 10)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('setting again restarts the entry and makes it the newest', () => {
    const cache = new TtlCache<string>(100, 2);
    cache.set('a', '1', 0);
    cache.set('b', '2', 10);
    cache.set('a', '3', 50);
    cache.set('c', '4', 60); // over the bound: the oldest, b, goes
    expect([cache.get('a', 120), cache.get('b', 60), cache.get('c', 60)]).toEqual(['3', undefined, '4']);
  });

  it('never holds more than maxEntries', () => {
    const cache = new TtlCache<number>(1_000, 3);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i, i);
    expect(cache.size).toBe(3);
    expect(['k7', 'k8', 'k9'].map((k) => cache.get(k, 10))).toEqual([7, 8, 9]);
  });

  it('forgets a deleted entry', () => {
    const cache = new TtlCache<string>(1_000, 3);
    cache.set('k', 'v', 0);
    cache.delete('k');
    expect(cache.get('k', 1)).toBeUndefined();
  });
});
