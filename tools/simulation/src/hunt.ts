import fc from 'fast-check';
import { actionsArbitrary } from './actions.js';
import type { Violation } from './model.js';
import { simulate } from './simulation.js';

/** The seed of the hunt `npm test` runs (simulation.spec.ts). */
export const HUNT_SEED = 20261123;

export interface HuntResult {
  /** Runs made: all asked for, or up to and including the first that broke an invariant. */
  runs: number;
  violation?: Pick<Violation, 'invariant' | 'step' | 'message'>;
}

/**
 * The seeded search `npm test` runs (same actions, same seed), stopped at the first violation without
 * shrinking: how many runs it takes to find a bug.
 */
export async function hunt(numRuns: number, seed = HUNT_SEED, clusterQuota = true): Promise<HuntResult> {
  let runs = 0;
  let found: Violation | undefined;
  await fc.check(
    fc.asyncProperty(actionsArbitrary, async (actions) => {
      runs++;
      found = await simulate(actions, { clusterQuota });
      return found === undefined;
    }),
    { seed, numRuns, endOnFailure: true },
  );
  if (found === undefined) return { runs };
  const { invariant, step, message } = found;
  return { runs, violation: { invariant, step, message } };
}
