import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { repoRoot } from '../../tools/federation/src/index.js';

/**
 * `npm run sandbox -- <args>` with its state in `dir`, so a test sandbox runs beside a developer's
 * and never touches it. Redis is at `redisUrl` (the test file's own database), or with `undefined`
 * REDIS_URL is left unset, as on a newcomer's machine: the sandbox then starts a private redis-server.
 */
export function runSandbox(
  dir: string,
  redisUrl: string | undefined,
  ...args: string[]
): SpawnSyncReturns<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_DIR: dir, REDIS_URL: redisUrl };
  if (redisUrl === undefined) delete env.REDIS_URL;
  return spawnSync('npm', ['run', '--silent', 'sandbox', '--', ...args], {
    cwd: repoRoot(),
    encoding: 'utf8',
    env,
    timeout: 600_000,
  });
}
