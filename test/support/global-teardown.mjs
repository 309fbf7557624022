import { rmSync } from 'node:fs';
import { releaseTestRedis } from './test-redis.mjs';

/**
 * Stops every process of the test federation, then the test run's private Redis if it was the last
 * user; KEEP_TEST_STATE=1 keeps their logs for a post-mortem.
 */
export default async function globalTeardown() {
  const state = globalThis.karmadaQuotaTest;
  if (state) {
    await state.federation.stop();
    if (process.env.KEEP_TEST_STATE === '1')
      process.stderr.write(`test federation state kept in ${state.stateDir}\n`);
    else rmSync(state.stateDir, { recursive: true, force: true });
  }
  await releaseTestRedis();
}
