/**
 * Runs the simulation with a bug put back (mutations.ts), on a copy of the sources:
 *   npm run build --silent && node dist/tools/simulation/src/mutate.js --trace NAME [--undone I]
 *     a named regression trace (regressions.ts) under its I-th mutation (default 0, `--undone none`:
 *     unmutated): what fails, and its trace
 *   ... mutate.js --hunt NAME [--undone I] [--seeds N --seed S --path P]
 *   ... mutate.js --planted INVARIANT|BUG [--seeds N --seed S --path P]
 *     `npm run sim`'s hunt (main.ts) with that trace's mutation or that planted bug: to find a trace
 *     again when a change of the model lets a named one pass under its bug
 *   ... mutate.js --owner-hunt NAME | --owner-planted BUG [--seeds N --seed S --path P]
 *     the same for the owner protocol (`npm run sim -- --owner`): a named owner trace's undo patch
 *     (owner-regressions.ts) or a planted owner bug (OWNER_PLANTED)
 */
import { parseArgs } from 'node:util';
import { buildMutant } from './mutant.js';
import { OWNER_PLANTED, PLANTED, type Mutation } from './mutations.js';
import { OWNER_REGRESSIONS } from './owner-regressions.js';
import { REGRESSIONS } from './regressions.js';

const { values } = parseArgs({
  options: {
    trace: { type: 'string' },
    hunt: { type: 'string' },
    planted: { type: 'string' },
    'owner-hunt': { type: 'string' },
    'owner-planted': { type: 'string' },
    undone: { type: 'string', default: '0' },
    seeds: { type: 'string' },
    seed: { type: 'string' },
    path: { type: 'string' },
  },
});

function fail(message: string): never {
  process.stderr.write(`mutate: ${message}\n`);
  process.exit(2);
}

function traceMutation(name: string): Mutation | undefined {
  const regression =
    REGRESSIONS[name] ?? fail(`no named trace "${name}"; one of:\n${Object.keys(REGRESSIONS).join('\n')}`);
  if (values.undone === 'none') return undefined;
  return (
    regression.undone[Number(values.undone)] ?? fail(`"${name}" has ${regression.undone.length} mutations`)
  );
}

const simArgs = (['seeds', 'seed', 'path'] as const).flatMap((o) => (values[o] ? [`--${o}`, values[o]] : []));
if (values.trace !== undefined) {
  const mutant = await buildMutant(traceMutation(values.trace));
  try {
    const run = (await mutant.run(['trace', values.trace])) as { trace: string[] };
    const failures = (await mutant.run(['regressions', values.trace])) as Record<string, string[]>;
    console.log(run.trace.join('\n'));
    console.log(`\nfailures: ${JSON.stringify(failures[values.trace], null, 2)}`);
  } finally {
    await mutant.dispose();
  }
} else if (values.hunt !== undefined || values.planted !== undefined) {
  const mutation =
    values.hunt !== undefined
      ? traceMutation(values.hunt)
      : (PLANTED.find((p) => p.invariant === values.planted || p.bug === values.planted) ??
        fail(`no planted bug for "${values.planted}"; one of ${PLANTED.map((p) => p.invariant).join(', ')}`));
  const mutant = await buildMutant(mutation, 'main.ts');
  try {
    process.exitCode = await mutant.exec(['--batched', ...simArgs]);
  } finally {
    await mutant.dispose();
  }
} else if (values['owner-hunt'] !== undefined || values['owner-planted'] !== undefined) {
  const mutation =
    values['owner-hunt'] !== undefined
      ? (OWNER_REGRESSIONS[values['owner-hunt']]?.undone ??
        fail(
          `no owner trace "${values['owner-hunt']}"; one of:\n${Object.keys(OWNER_REGRESSIONS).join('\n')}`,
        ))
      : (OWNER_PLANTED.find((p) => p.bug === values['owner-planted']) ??
        fail(
          `no planted owner bug "${values['owner-planted']}"; one of:\n${OWNER_PLANTED.map((p) => p.bug).join('\n')}`,
        ));
  const mutant = await buildMutant(mutation, 'main.ts');
  try {
    process.exitCode = await mutant.exec(['--owner', ...simArgs]);
  } finally {
    await mutant.dispose();
  }
} else {
  fail(
    'usage: mutate.js --trace NAME [--undone I|none] | --hunt NAME [--undone I] | --planted INVARIANT | --owner-hunt NAME | --owner-planted BUG [--seeds N --seed S --path P]',
  );
}
