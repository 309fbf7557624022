import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Federation } from './federation.js';
import { registerWebhook } from './host-setup.js';
import { freePort, probe, waitFor } from './net.js';
import { repoRoot } from './paths.js';
import { createServingCertificate, type ClientCertificate, type ServingCertificate } from './pki.js';
import type { ManagedProcess } from './processes.js';

export const SERVICES = ['webhook', 'aggregator', 'reconciler', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningService {
  name: ServiceName;
  url: string;
  process: ManagedProcess;
  /** The webhook's: the CA its serving certificate is from (what its clients trust). */
  caPem?: string;
  /**
   * The webhook's: a client certificate it accepts (the host API server's), for callers that post
   * AdmissionReviews to it directly; it refuses those without one (CLIENT_CA_FILE).
   */
  clientCertificate?: ClientCertificate;
}

/**
 * Starts the compiled product services (`npm run build` first) against the federation's host and
 * waits until each answers /readyz. The webhook serves HTTPS with a certificate from a throwaway CA
 * and is registered on the host as a ValidatingWebhookConfiguration with that CA bundle, unless
 * `register` is false (a client then calls it directly, and the host stores bindings unchecked). It
 * admits only callers with a certificate from the host API server's webhook client CA.
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
    /**
     * Chart values the webhook is registered for (paths as `helm --set` names them, e.g.
     * `reconciler.serveFederatedResourceQuotas`), as files/webhooks.yaml's `servedWith` reads them.
     */
    chartValues?: Readonly<Record<string, unknown>>;
    /** Writes each service's V8 CPU profile (`node --cpu-prof`) here, as `<name>.cpuprofile`, when it exits. */
    cpuProfileDir?: string;
  },
): Promise<RunningService[]> {
  const root = repoRoot();
  return Promise.all(
    (options.services ?? SERVICES).map(async (name) => {
      const port = await freePort();
      const tls = name === 'webhook' ? await webhookCertificate(federation) : undefined;
      const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
      const procName = options.instance ? `${name}-${options.instance}` : name;
      const profile = options.cpuProfileDir
        ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, `--cpu-prof-name=${procName}.cpuprofile`]
        : [];
      const proc = federation.launch(
        procName,
        process.execPath,
        [...profile, join(root, 'dist', 'apps', name, 'src', 'main.js')],
        {
          ...process.env,
          ...(tls
            ? {
                TLS_CERT_FILE: tls.certFile,
                TLS_KEY_FILE: tls.keyFile,
                CLIENT_CA_FILE: federation.info.webhookClient.caFile,
                ADMISSION_PEER_CA_FILE: tls.caFile,
                ADMISSION_PEER_PORT: String(await freePort()),
              }
            : {}),
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
      if (tls && options.register !== false)
        await registerWebhook(federation.info.host, url, tls.caPem, options.chartValues);
      return {
        name,
        url,
        process: proc,
        ...(tls ? { caPem: tls.caPem, clientCertificate: federation.info.webhookClient } : {}),
      };
    }),
  );
}

/** One serving certificate per federation, as one TLS Secret serves every webhook replica. */
const webhookCertificates = new WeakMap<Federation, Promise<ServingCertificate>>();

function webhookCertificate(federation: Federation): Promise<ServingCertificate> {
  let certificate = webhookCertificates.get(federation);
  if (certificate === undefined) {
    const dir = join(federation.stateDir, 'webhook-tls');
    mkdirSync(dir, { recursive: true });
    certificate = createServingCertificate(dir, 'karmada-quota-webhook');
    webhookCertificates.set(federation, certificate);
  }
  return certificate;
}
