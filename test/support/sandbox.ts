import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { repoRoot } from '../../tools/federation/src/index.js';

/**
 * `npm run sandbox -- <args>` with its state in `dir` and Redis at `redisUrl` (the test file's own
 * database), so a test sandbox runs beside a developer's and never touches it.
 */
export function runSandbox(dir: string, redisUrl: string, ...args: string[]): SpawnSyncReturns<string> {
  return spawnSync('npm', ['run', '--silent', 'sandbox', '--', ...args], {
    cwd: repoRoot(),
    encoding: 'utf8',
    env: { ...process.env, SANDBOX_DIR: dir, REDIS_URL: redisUrl },
    timeout: 600_000,
  });
}
