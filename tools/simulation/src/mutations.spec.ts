import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HUNT_SEED, type HuntResult } from './hunt.js';
import { buildMutant, REPO_ROOT } from './mutant.js';
import { applyEdit, OWNER_PLANTED, PLANTED, type Mutation } from './mutations.js';
import { REGRESSIONS, type Undone } from './regressions.js';
import { OWNER_REGRESSIONS } from './owner-regressions.js';
import type { Violation } from './model.js';

/** Every invariant the simulation checks (the `satisfies` fails to compile when one is added). */
const INVARIANTS = Object.keys({
  LIMIT: 0,
  ACCOUNTED: 0,
  RUNS: 0,
  EXACT: 0,
  ERROR: 0,
  DETECTED: 0,
  LIVENESS: 0,
} satisfies Record<Violation['invariant'], 0>);

/** Runs mutant-main.ts in a bundle of the code under test with `mutation` applied (none: as it is). */
async function inMutant(mutation: Mutation | undefined, args: string[]): Promise<unknown> {
  const mutant = await buildMutant(mutation);
  try {
    return await mutant.run(args);
  } finally {
    await mutant.dispose();
  }
}

const undone: [string, string, Undone][] = Object.entries(REGRESSIONS).flatMap(([name, regression]) =>
  regression.undone.map((u): [string, string, Undone] => [name, u.bug, u]),
);

describe('planted bugs', () => {
  it('a patch that no longer applies says so', () => {
    const edit = { file: 'x.ts', from: 'a < b', to: 'a <= b' };
    expect(applyEdit('if (a < b) f();', edit, 'off by one')).toBe('if (a <= b) f();');
    expect(() => applyEdit('if (a <= b) f();', edit, 'off by one')).toThrow(
      /the patch for "off by one" no longer applies: x.ts contains its text nowhere/,
    );
    expect(() => applyEdit('a < b && a < b', edit, 'off by one')).toThrow(/more than once/);
  });

  describe('each named regression trace fails with its fix undone', () => {
    it('every trace passes in a bundle of the code as it is', async () => {
      const failures = await inMutant(undefined, ['regressions', ...Object.keys(REGRESSIONS)]);
      expect(failures).toEqual(Object.fromEntries(Object.keys(REGRESSIONS).map((name) => [name, []])));
    });

    it.each(undone)('%s, with %s', async (name, _bug, mutation) => {
      const failures = (await inMutant(mutation, ['regressions', name])) as Record<string, string[]>;
      expect(failures[name]).toEqual(expect.arrayContaining([expect.stringContaining(mutation.fails)]));
    });
  });

  describe('the seeded hunt finds a planted bug of each invariant within its stated runs', () => {
    it('plants one bug for each invariant, and hunts with the seed npm test uses', async () => {
      expect([...new Set(PLANTED.map((p) => p.invariant))].sort()).toEqual([...INVARIANTS].sort());
      const spec = await readFile(join(REPO_ROOT, 'tools/simulation/src/simulation.spec.ts'), 'utf8');
      expect(spec).toContain(`seed: ${HUNT_SEED}`);
    });

    it.each(PLANTED.map((p): [string, number, string, typeof p] => [p.invariant, p.runs, p.bug, p]))(
      '%s within %i runs: %s',
      async (_invariant, runs, _bug, planted) => {
        const without = planted.withoutClusterQuota ? ['default', 'without-cluster-quota'] : [];
        const result = (await inMutant(planted, ['hunt', String(runs), ...without])) as HuntResult;
        expect(result.violation?.invariant).toBe(planted.invariant);
        console.log(`${planted.invariant} found in run ${result.runs} of ${runs}: ${planted.bug}`);
      },
      // A run takes about 20 ms here, twice that beside the integration tests.
      Math.max(120_000, 50 * Math.max(...PLANTED.map((p) => p.runs))),
    );
  });

  describe("each of the owner protocol's named traces fails with its fix undone", () => {
    it.each(Object.entries(OWNER_REGRESSIONS))('%s', async (name, regression) => {
      const failures = (await inMutant(regression.undone, ['owner-regressions', name])) as Record<
        string,
        string[]
      >;
      expect(failures[name]).toEqual(
        expect.arrayContaining([expect.stringContaining(regression.undone.fails)]),
      );
    });
  });

  describe("the owner protocol's seeded hunt finds each of its planted bugs within its stated runs", () => {
    it.each(OWNER_PLANTED.map((p): [string, number, string, typeof p] => [p.invariant, p.runs, p.bug, p]))(
      '%s within %i runs: %s',
      async (_invariant, runs, _bug, planted) => {
        const result = (await inMutant(planted, [
          'owner-hunt',
          String(runs),
          ...(planted.switching ? ['switching'] : []),
        ])) as HuntResult;
        expect(result.violation?.invariant).toBe(planted.invariant);
        console.log(`${planted.invariant} found in run ${result.runs} of ${runs}: ${planted.bug}`);
      },
    );
  });
});
