/**
 * The entry point of a mutant (mutant.ts bundles it with the code under test, mutated or not); prints
 * JSON on stdout.
 *   regressions NAME...  each named trace's failures ([] when it passes), by name
 *   trace NAME           one named trace's run: its violation, if any, and its trace lines
 *   hunt RUNS [SEED] [without-cluster-quota]  the seeded hunt (hunt.ts) stopped at the first violation
 *   owner-hunt RUNS [switching]  the owner protocol's seeded hunt (owner-protocol.ts), likewise;
 *                        `switching`: with switches of mode (the fence)
 *   owner-regressions NAME...  each named owner trace's failures (owner-regressions.ts), by name
 */
import { hunt } from './hunt.js';
import { huntOwner, ownerActionsArbitrary, switchingActionsArbitrary } from './owner-protocol.js';
import { OWNER_REGRESSIONS, replayOwner } from './owner-regressions.js';
import { REGRESSIONS, replay } from './regressions.js';
import { simulate } from './simulation.js';

const [command, ...args] = process.argv.slice(2);
if (command === 'regressions') {
  const failures: Record<string, string[]> = {};
  for (const name of args) {
    const regression = REGRESSIONS[name];
    failures[name] = regression ? await replay(regression) : [`no regression trace named "${name}"`];
  }
  process.stdout.write(JSON.stringify(failures));
} else if (command === 'trace' && REGRESSIONS[args[0] ?? ''] !== undefined) {
  const { actions, countedAtStart, clusterQuota = false } = REGRESSIONS[args[0]!]!;
  const trace: string[] = [];
  const violation = await simulate(actions, { countedAtStart, clusterQuota, trace });
  process.stdout.write(JSON.stringify({ violation: violation && { ...violation, trace: undefined }, trace }));
} else if (command === 'hunt') {
  const seed = args[1] && args[1] !== 'default' ? Number(args[1]) : undefined;
  process.stdout.write(
    JSON.stringify(await hunt(Number(args[0]), seed, args[2] !== 'without-cluster-quota')),
  );
} else if (command === 'owner-regressions') {
  const failures: Record<string, string[]> = {};
  for (const name of args) {
    const regression = OWNER_REGRESSIONS[name];
    failures[name] = regression ? await replayOwner(regression) : [`no owner trace named "${name}"`];
  }
  process.stdout.write(JSON.stringify(failures));
} else if (command === 'owner-hunt') {
  const arbitrary = args[1] === 'switching' ? switchingActionsArbitrary : ownerActionsArbitrary;
  process.stdout.write(JSON.stringify(await huntOwner(Number(args[0]), undefined, arbitrary)));
} else {
  process.stderr.write(
    'usage: mutant regressions NAME... | mutant trace NAME | mutant hunt RUNS [SEED] | mutant owner-hunt RUNS [switching]\n',
  );
  process.exit(2);
}
