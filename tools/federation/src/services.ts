import { join } from 'node:path';
import type { Federation } from './federation.js';
import { freePort, probe, waitFor } from './net.js';
import { repoRoot } from './paths.js';

export const SERVICES = ['webhook', 'aggregator', 'reconciler'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningService {
  name: ServiceName;
  url: string;
}

/**
 * Starts the compiled product services (`npm run build` first) against the federation's host and
 * waits until each answers /readyz.
 */
export async function startServices(
  federation: Federation,
  options: { redisUrl: string; services?: readonly ServiceName[]; env?: NodeJS.ProcessEnv },
): Promise<RunningService[]> {
  const root = repoRoot();
  return Promise.all(
    (options.services ?? SERVICES).map(async (name) => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const proc = federation.launch(
        name,
        process.execPath,
        [join(root, 'dist', 'apps', name, 'src', 'main.js')],
        {
          ...process.env,
          PORT: String(port),
          BIND_ADDRESS: '127.0.0.1',
          KUBECONFIG: federation.info.host.kubeconfig,
          REDIS_URL: options.redisUrl,
          ...options.env,
        },
      );
      await waitFor(
        `${name} to become ready at ${url}/readyz`,
        async () => {
          if (!proc.running) throw new Error(`${name} exited during start-up; its log:\n${proc.logTail()}`);
          return (await probe(`${url}/readyz`)) === 200;
        },
        { timeoutMs: 60_000, describe: () => proc.logTail() },
      );
      return { name, url };
    }),
  );
}
