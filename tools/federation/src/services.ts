import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Federation } from './federation.js';
import { registerWebhook } from './host-setup.js';
import { freePort, probe, waitFor } from './net.js';
import { repoRoot } from './paths.js';
import { createServingCertificate } from './pki.js';
import type { ManagedProcess } from './processes.js';

export const SERVICES = ['webhook', 'aggregator', 'reconciler', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningService {
  name: ServiceName;
  url: string;
  process: ManagedProcess;
  /** The webhook's: the CA its serving certificate is from (what its clients trust). */
  caPem?: string;
}

/**
 * Starts the compiled product services (`npm run build` first) against the federation's host and
 * waits until each answers /readyz. The webhook serves HTTPS with a certificate from a throwaway CA
 * and is registered on the host as a ValidatingWebhookConfiguration with that CA bundle, unless
 * `register` is false (a client then calls it directly, and the host stores bindings unchecked).
 */
export async function startServices(
  federation: Federation,
  options: {
    redisUrl: string;
    services?: readonly ServiceName[];
    env?: NodeJS.ProcessEnv;
    /** Distinguishes replicas of one service (their process and log names). */
    instance?: string;
    register?: boolean;
  },
): Promise<RunningService[]> {
  const root = repoRoot();
  return Promise.all(
    (options.services ?? SERVICES).map(async (name) => {
      const port = await freePort();
      const tls = name === 'webhook' ? await webhookCertificate(federation) : undefined;
      const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
      const proc = federation.launch(
        options.instance ? `${name}-${options.instance}` : name,
        process.execPath,
        [join(root, 'dist', 'apps', name, 'src', 'main.js')],
        {
          ...process.env,
          ...(tls ? { TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile } : {}),
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
      if (tls && options.register !== false) await registerWebhook(federation.info.host, url, tls.caPem);
      return { name, url, process: proc, ...(tls ? { caPem: tls.caPem } : {}) };
    }),
  );
}

async function webhookCertificate(federation: Federation) {
  const dir = join(federation.stateDir, 'webhook-tls');
  mkdirSync(dir, { recursive: true });
  return createServingCertificate(dir, 'karmada-quota-webhook');
}
