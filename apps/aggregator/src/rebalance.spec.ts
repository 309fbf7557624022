import { rebalance, type Rebalance } from './rebalance.js';

/** Clusters c1..cN and their holders, '-' for a free Lease. */
const leases = (...holders: string[]) =>
  new Map(holders.map((holder, i) => [`c${i + 1}`, holder === '-' ? undefined : holder]));

describe('rebalance', () => {
  it.each<[string, string, string[], Map<string, string | undefined>, Rebalance]>([
    [
      'alone, it takes every free cluster',
      'a',
      [],
      leases('-', '-', '-'),
      { share: 3, keep: [], release: [], take: ['c1', 'c2', 'c3'] },
    ],
    [
      'alone, it leaves a Lease that has not expired to its holder, even one with no membership Lease',
      'a',
      ['a'],
      leases('a', 'gone', '-'),
      { share: 3, keep: ['c1'], release: [], take: ['c3'] },
    ],
    [
      'a second replica joins: the first releases half',
      'a',
      ['a', 'b'],
      leases('a', 'a', 'a', 'a'),
      { share: 2, keep: ['c1', 'c2'], release: ['c3', 'c4'], take: [] },
    ],
    [
      'the joining replica waits for released clusters (none free yet)',
      'b',
      ['a', 'b'],
      leases('a', 'a', 'a', 'a'),
      { share: 2, keep: [], release: [], take: [] },
    ],
    [
      'the joining replica takes the released clusters',
      'b',
      ['a', 'b'],
      leases('a', 'a', '-', '-'),
      { share: 2, keep: [], release: [], take: ['c3', 'c4'] },
    ],
    [
      'an odd cluster stays with the replica that holds more (no move back and forth)',
      'a',
      ['a', 'b'],
      leases('a', 'a', 'b'),
      { share: 2, keep: ['c1', 'c2'], release: [], take: [] },
    ],
    [
      'the replica holding fewer gets the smaller share',
      'b',
      ['a', 'b'],
      leases('a', 'a', 'b'),
      { share: 1, keep: ['c3'], release: [], take: [] },
    ],
    [
      'equal holdings: the odd cluster goes to the first identity',
      'a',
      ['b', 'a'],
      leases('-', '-', '-'),
      { share: 2, keep: [], release: [], take: ['c1', 'c2', 'c3'] },
    ],
    [
      'equal holdings: the later identity holds the smaller share',
      'b',
      ['a', 'b'],
      leases('-', '-', '-'),
      { share: 1, keep: [], release: [], take: ['c1', 'c2', 'c3'] },
    ],
    [
      'a third replica joins two with two each: the tie-loser releases one',
      'b',
      ['a', 'b', 'c'],
      leases('a', 'a', 'b', 'b'),
      { share: 1, keep: ['c3'], release: ['c4'], take: [] },
    ],
    [
      'a third replica joins two with two each: the tie-winner keeps both',
      'a',
      ['a', 'b', 'c'],
      leases('a', 'a', 'b', 'b'),
      { share: 2, keep: ['c1', 'c2'], release: [], take: [] },
    ],
    [
      'a replica left cleanly: its clusters are free and the others take up to their share',
      'a',
      ['a', 'b'],
      leases('a', 'b', '-', '-', '-'),
      { share: 3, keep: ['c1'], release: [], take: ['c3', 'c4', 'c5'] },
    ],
    [
      'more replicas than clusters: the holders keep theirs, the others hold none',
      'c',
      ['a', 'b', 'c'],
      leases('a', 'b'),
      { share: 0, keep: [], release: [], take: [] },
    ],
    [
      'more replicas than clusters: a holder keeps its one',
      'b',
      ['a', 'b', 'c'],
      leases('a', 'b'),
      { share: 1, keep: ['c2'], release: [], take: [] },
    ],
    [
      'below its share it lists every free cluster to try, in order, since another may win some',
      'a',
      ['a', 'b'],
      leases('a', '-', '-', 'b'),
      { share: 2, keep: ['c1'], release: [], take: ['c2', 'c3'] },
    ],
    [
      'at its share it takes nothing, however many are free',
      'a',
      ['a', 'b'],
      leases('a', 'a', 'b', '-'),
      { share: 2, keep: ['c1', 'c2'], release: [], take: [] },
    ],
    ['no clusters: nothing to do', 'a', ['a', 'b'], leases(), { share: 0, keep: [], release: [], take: [] }],
    [
      'its own identity counts as alive even when its membership Lease is not seen yet',
      'b',
      ['a'],
      leases('a', 'a'),
      { share: 1, keep: [], release: [], take: [] },
    ],
  ])('%s', (_case, self, replicas, holders, expected) => {
    expect(rebalance({ self, replicas, holders })).toEqual(expected);
  });

  it('every replica computing its share from the same view gives each cluster exactly one place', () => {
    for (let replicas = 1; replicas <= 5; replicas++) {
      for (let clusters = 0; clusters <= 12; clusters++) {
        const names = Array.from({ length: replicas }, (_, i) => `r${i}`);
        const holders = leases(...Array.from({ length: clusters }, (_, i) => names[i % replicas]!));
        const shares = names.map((self) => rebalance({ self, replicas: names, holders }).share);
        expect(shares.reduce((sum, s) => sum + s, 0)).toBe(clusters);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });
});
