// Plain ESM, run by jest's global setups and teardowns natively (not through ts-jest). The unit
// project runs without `npm run build`, so the harness's startPrivateRedis is bundled from its
// TypeScript source with esbuild here, as the simulation bundles its mutants.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Kept on globalThis: every project's setup and teardown runs in jest's one parent process. */
const STATE = Symbol.for('karmada-quota.test-redis');

/**
 * Gives the tests a Redis: the one REDIS_URL names when it is set, as it is; otherwise a private
 * redis-server on a free port of 127.0.0.1, started by the first project's global setup that asks,
 * exported to the test workers as REDIS_URL, and stopped by the last teardown. Nothing ever
 * connects to a Redis nobody named (no default port), and the private one never outlives jest,
 * even when it is killed before its teardown (an orphan guard).
 */
export async function acquireTestRedis() {
  const state = (globalThis[STATE] ??= { users: 0 });
  state.users++;
  if (state.redis || process.env.REDIS_URL) return;
  state.dir = mkdtempSync(join(tmpdir(), 'karmada-quota-test-redis-'));
  try {
    const { startPrivateRedis } = await loadHarness(state.dir);
    state.redis = await startPrivateRedis(join(state.dir, 'server'));
  } catch (err) {
    rmSync(state.dir, { recursive: true, force: true });
    throw err;
  }
  process.env.REDIS_URL = state.redis.url();
  process.stderr.write(
    `[test-redis] no REDIS_URL given: a private redis-server at ${process.env.REDIS_URL}\n`,
  );
}

/** Undoes one acquireTestRedis(); the last one stops the private redis-server, if one was started. */
export async function releaseTestRedis() {
  const state = globalThis[STATE];
  if (!state || --state.users > 0 || !state.redis) return;
  const { redis, dir } = state;
  state.redis = undefined;
  await redis.stop();
  if (process.env.REDIS_URL === redis.url()) delete process.env.REDIS_URL;
  if (process.env.KEEP_TEST_STATE === '1') process.stderr.write(`test Redis state kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}

/** tools/federation/src/private-redis.ts, bundled into `dir` beside a link to node_modules. */
async function loadHarness(dir) {
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const outfile = join(dir, 'private-redis.mjs');
  await build({
    entryPoints: [join(root, 'tools', 'federation', 'src', 'private-redis.ts')],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    outfile,
    logLevel: 'silent',
  });
  return import(pathToFileURL(outfile).href);
}
