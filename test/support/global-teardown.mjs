import { rmSync } from 'node:fs';

/** Stops every process of the test federation; KEEP_TEST_STATE=1 keeps its logs for a post-mortem. */
export default async function globalTeardown() {
  const state = globalThis.karmadaQuotaTest;
  if (!state) return;
  await state.federation.stop();
  if (process.env.KEEP_TEST_STATE === '1')
    process.stderr.write(`test federation state kept in ${state.stateDir}\n`);
  else rmSync(state.stateDir, { recursive: true, force: true });
}
