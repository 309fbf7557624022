import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServingCertificate,
  freePort,
  probe,
  repoRoot,
  SERVICES,
  waitFor,
  type ServiceName,
} from '../tools/federation/src/index.js';
import { admissionResponse, bindingReview, postToWebhook } from './chaos/support/admission.js';
import { federation, uniqueName } from './support/federation.js';
import { binding } from './support/fixtures.js';
import {
  buildImage,
  containerLogTail,
  containerRunning,
  localBases,
  mustRun,
  ownedPrefix,
  podman,
  progress,
  removeOrphans,
  run,
} from './support/containers.js';

/**
 * The image users deploy (Dockerfile) and docker-compose.yml, built and run with podman against the
 * test federation: each service from the image as the chart runs it (its name as the argument),
 * then the compose file under podman-compose with its own Redis on a bridge network, until every
 * service answers /readyz and the webhook admits a review from the host API server's client
 * certificate. No registry is needed: the bases come from tools/container/bases.sh. Needs podman
 * (runtime runc), debootstrap and podman-compose (docs/development/sandbox.md).
 */
const IMAGE = 'localhost/karmada-quota:test';
const fed = federation();
let bases: { nodeImage: string; redisImage: string };
let dir: string;
/**
 * What the services mount: the host kubeconfig (on the host's network), the one for containers on a
 * bridge network (compose), the webhook's TLS files and client CA.
 */
let files: { kubeconfig: string; containerKubeconfig: string; tlsDir: string; clientCa: string };

beforeAll(async () => {
  await removeOrphans();
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-container-image-'));
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  const tls = await createServingCertificate(tlsDir, 'karmada-quota-webhook');
  files = {
    kubeconfig: join(dir, 'kubeconfig'),
    containerKubeconfig: join(dir, 'kubeconfig-containers'),
    tlsDir,
    clientCa: join(dir, 'client-ca.crt'),
  };
  copyFileSync(fed.host.kubeconfig, files.kubeconfig);
  copyFileSync(fed.host.containerKubeconfig!, files.containerKubeconfig);
  copyFileSync(fed.webhookClient.caFile, files.clientCa);
  // Readable by the image's uid 1000 (throwaway test credentials; a real install mounts Secrets).
  for (const file of [files.kubeconfig, files.containerKubeconfig, files.clientCa, tls.certFile, tls.keyFile])
    chmodSync(file, 0o644);
  bases = await localBases();
  await buildImage(IMAGE, bases.nodeImage);
}, 40 * 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const url = (service: ServiceName, port: number) =>
  `${service === 'webhook' ? 'https' : 'http'}://127.0.0.1:${port}/readyz`;

/**
 * The webhook in a container admits a review from the host API server's client certificate (a
 * binding in a namespace without quota) and refuses one without: its TLS files and client CA are
 * mounted and named right.
 */
async function expectWebhookAdmitsOnlyTheApiServer(port: number): Promise<void> {
  const webhook = { url: `https://127.0.0.1:${port}` };
  const review = JSON.stringify(bindingReview('CREATE', binding(uniqueName('no-quota'), 'web')));
  const anonymous = await postToWebhook(webhook, '/validate/resourcebindings', review);
  expect(anonymous.status).toBe(401);
  const fromApiServer = await postToWebhook(
    { ...webhook, clientCertificate: fed.webhookClient },
    '/validate/resourcebindings',
    review,
  );
  expect(admissionResponse(fromApiServer)).toMatchObject({ allowed: true });
}

/** Waits until the container's service answers /readyz; fails early with its log if it stopped. */
async function ready(container: string, service: ServiceName, port: number): Promise<void> {
  await waitFor(
    `${service} (container ${container}) to become ready at ${url(service, port)}`,
    async () => {
      if ((await probe(url(service, port))) === 200) return true;
      if (!(await containerRunning(container)))
        throw new Error(`${service} stopped during start-up; ${containerLogTail(container)}`);
      return false;
    },
    { timeoutMs: 120_000, intervalMs: 1_000, describe: () => containerLogTail(container) },
  );
  progress(`${service} is ready (${container})`);
}

test('the image runs as uid 1000 and refuses an unknown service, naming the ones it has', async () => {
  const user = await podman('image', 'inspect', '--format', '{{.Config.User}}', IMAGE);
  expect(user.stdout.trim()).toBe('1000:1000');
  const unknown = await run('podman', ['run', '--rm', '--pull=never', IMAGE, 'scheduler']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(
    'unknown service "scheduler": the container\'s argument names the service to run, one of aggregator, console, installer, reconciler, webhook',
  );
});

test(
  'every service runs from the image as the chart runs it (its name as the argument) until ready',
  async () => {
    const prefix = `${ownedPrefix()}-run`;
    const redisPort = await freePort();
    const started: string[] = [];
    const start = async (name: string, args: string[]) => {
      started.push(name);
      await podman('run', '--detach', '--pull=never', '--network=host', `--name=${name}`, ...args);
    };
    try {
      await start(`${prefix}-redis`, [
        bases.redisImage,
        ...[
          'redis-server',
          '--bind',
          '127.0.0.1',
          '--port',
          String(redisPort),
          '--save',
          '',
          '--appendonly',
          'no',
        ],
      ]);
      await Promise.all(
        SERVICES.map(async (service) => {
          const port = await freePort();
          const container = `${prefix}-${service}`;
          const env = {
            PORT: String(port),
            BIND_ADDRESS: '127.0.0.1',
            KUBECONFIG: '/config/kubeconfig',
            REDIS_URL: `redis://127.0.0.1:${redisPort}`,
            ...(service === 'webhook'
              ? {
                  TLS_CERT_FILE: '/config/tls/tls.crt',
                  TLS_KEY_FILE: '/config/tls/tls.key',
                  CLIENT_CA_FILE: '/config/client-ca.crt',
                }
              : {}),
          };
          await start(container, [
            `--volume=${files.kubeconfig}:/config/kubeconfig:ro`,
            `--volume=${files.tlsDir}:/config/tls:ro`,
            `--volume=${files.clientCa}:/config/client-ca.crt:ro`,
            ...Object.entries(env).map(([key, value]) => `--env=${key}=${value}`),
            IMAGE,
            service,
          ]);
          await ready(container, service, port);
        }),
      );
    } finally {
      if (started.length) await podman('rm', '--force', '--time=5', ...started);
    }
  },
  10 * 60_000,
);

test(
  'docker-compose.yml comes up under podman-compose with Redis and every service ready, and down again',
  async () => {
    const project = ownedPrefix();
    const ports = Object.fromEntries(
      await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)),
    );
    const env = {
      ...process.env,
      KARMADA_QUOTA_IMAGE: IMAGE,
      REDIS_IMAGE: bases.redisImage,
      WEBHOOK_PORT: String(ports.webhook),
      AGGREGATOR_PORT: String(ports.aggregator),
      RECONCILER_PORT: String(ports.reconciler),
      CONSOLE_PORT: String(ports.console),
      HOST_KUBECONFIG: files.containerKubeconfig,
      WEBHOOK_TLS_DIR: files.tlsDir,
      WEBHOOK_CLIENT_CA: files.clientCa,
      HOST_UID: String(process.getuid!()),
    };
    const compose = (...args: string[]) =>
      mustRun('podman-compose', ['--project-name', project, ...args], { env, cwd: repoRoot() });
    const left = async () => ({
      containers: (
        await podman(
          'ps',
          '-a',
          '--filter',
          `label=io.podman.compose.project=${project}`,
          '--format',
          '{{.Names}}',
        )
      ).stdout
        .split('\n')
        .filter(Boolean),
      networks: (await podman('network', 'ls', '--format', '{{.Name}}')).stdout
        .split('\n')
        .filter((name) => name.startsWith(`${project}_`)),
    });
    let leftAfterDown: Awaited<ReturnType<typeof left>>;
    try {
      progress(`podman-compose up (project ${project})`);
      await compose('up', '--detach', '--no-build');
      await Promise.all(SERVICES.map((s) => ready(`${project}_${s}_1`, s, ports[s]!)));
      await expectWebhookAdmitsOnlyTheApiServer(ports.webhook!);
    } finally {
      await compose('down', '--timeout', '5').catch((err: Error) => progress(err.message));
      leftAfterDown = await left();
      if (leftAfterDown.containers.length) await podman('rm', '--force', ...leftAfterDown.containers);
      // podman-compose 1.0.3 leaves the project's network behind: removing it is the caller's part.
      for (const network of leftAfterDown.networks) await podman('network', 'rm', network);
    }
    expect(leftAfterDown.containers).toEqual([]);
  },
  10 * 60_000,
);
