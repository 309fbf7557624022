/**
 * `npm run sim -- --seeds N [--seed S] [--path P] [--batched | --owner]`: hunts for accounting bugs
 * with N random interleavings of each search, the batched modes' (simulation.ts) and the admission
 * owner's protocol (owner-protocol.ts: owner changes, budgets), or of the one named, printing
 * progress; a failure prints its seed, the shrunk (shortest) action list and its trace, and
 * `--seed S --path P` with its search's flag replays it.
 */
import fc from 'fast-check';
import { parseArgs } from 'node:util';
import { actionsArbitrary, describeActions } from './actions.js';
import { exercised } from './model.js';
import { ownerExercised, simulateOwner, switchingActionsArbitrary } from './owner-protocol.js';
import { simulate } from './simulation.js';

const USAGE =
  'usage: npm run sim -- --seeds N [--seed S] [--path P] [--batched | --owner]  (N and S whole numbers)';
const values = (() => {
  try {
    return parseArgs({
      options: {
        seeds: { type: 'string', default: '1000' },
        seed: { type: 'string' },
        path: { type: 'string' },
        owner: { type: 'boolean', default: false },
        batched: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const runs = Number(values.seeds);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || (values.owner && values.batched)) {
  console.error(USAGE);
  process.exit(2);
}
if (values.path !== undefined && !values.owner && !values.batched) {
  console.error(`--path replays one search: add --batched or --owner\n${USAGE}`);
  process.exit(2);
}

interface Found {
  invariant: string;
  step: number;
  message: string;
  trace: string[];
}

/** The seeded search over `arbitrary`'s action lists, reported as the file comment says; its exit code. */
async function search<A>(
  name: 'batched' | 'owner',
  arbitrary: fc.Arbitrary<A[]>,
  run: (actions: A[]) => Promise<Found | undefined>,
  counted: object,
): Promise<number> {
  let done = 0;
  let steps = 0;
  const started = Date.now();
  const result = await fc.check(
    fc.asyncProperty(arbitrary, async (actions) => {
      const violation = await run(actions);
      done++;
      steps += actions.length;
      if (done % 100 === 0)
        console.error(
          `${name}: ${done}/${runs} runs, ${steps} steps, ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
      return violation === undefined;
    }),
    { seed, numRuns: runs, ...(values.path ? { path: values.path } : {}) },
  );
  if (!result.failed) {
    console.log(
      `${name}: no violation in ${runs} runs (${steps} steps, seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s): ${JSON.stringify(counted)}`,
    );
    return 0;
  }
  const actions = result.counterexample![0];
  const violation = await run(actions);
  console.log(
    `VIOLATION in ${name} (seed ${seed}, path ${result.counterexamplePath}; replay: npm run sim -- --seeds 1 --seed ${seed} --path ${result.counterexamplePath} --${name})`,
  );
  console.log(`${violation?.invariant} at step ${violation?.step}: ${violation?.message}`);
  console.log(`shortest actions found (${actions.length}): ${describeActions(actions)}`);
  console.log(`trace:\n${violation?.trace.join('\n')}`);
  return 1;
}

// Both searches run even when the first finds a violation; the exit code says whether either did.
const all = !values.owner && !values.batched;
const codes = [
  values.batched || all
    ? await search('batched', actionsArbitrary, (actions) => simulate(actions), exercised)
    : 0,
  values.owner || all
    ? await search('owner', switchingActionsArbitrary, (actions) => simulateOwner(actions), ownerExercised)
    : 0,
];
process.exit(Math.max(...codes));
