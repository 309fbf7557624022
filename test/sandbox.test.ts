import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { admissionResponse, bindingReview, postToWebhook } from './chaos/support/admission.js';
import { eventually } from './support/federation.js';
import { binding as karmadaBinding } from './support/fixtures.js';
import { runSandbox } from './support/sandbox.js';
import { isProcessAlive, probe, repoRoot } from '../tools/federation/src/index.js';
import type { SandboxEnv } from '../tools/sandbox/src/sandbox.js';

const canListen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

const portOf = (url: string): number => Number(new URL(url).port);

/** Every process whose command line or environment mentions `dir` (all the sandbox starts do). */
function processesUsing(dir: string): number[] {
  const mentions = (file: string): boolean => {
    try {
      return readFileSync(file).includes(dir);
    } catch {
      return false; // exited meanwhile, or not ours to read
    }
  };
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter(
      (pid) => pid !== process.pid && (mentions(`/proc/${pid}/cmdline`) || mentions(`/proc/${pid}/environ`)),
    );
}

describe('npm run sandbox', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'karmada-quota-sandbox-')), 'sandbox');
  // No REDIS_URL, as on a newcomer's machine: the sandbox runs a Redis of its own (console.test.ts
  // runs one on a REDIS_URL given).
  const sandbox = (...args: string[]) => runSandbox(dir, undefined, ...args);

  afterAll(() => {
    sandbox('down'); // also when a test failed half-way
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  test('up starts a ready federation and writes env.json; down leaves no process and no bound port', async () => {
    const started = sandbox('up', '--members', '1', '--containers');
    expect(started.stderr).not.toMatch(/sandbox:/);
    expect(started.status).toBe(0);
    expect(started.stdout).toContain('karmada-quota sandbox is ready');
    expect(started.stdout).toMatch(/team-a\s+team-a/); // real `kubectl get kq -A` output

    const env = JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')) as SandboxEnv;
    expect(env.members.map((m) => m.name)).toEqual(['member1']);
    // Without REDIS_URL: a private redis-server on a free port, its data in the sandbox's state dir,
    // printed with the other endpoints; never a Redis at a default address.
    expect(env.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+\/0$/);
    expect(portOf(env.redisUrl)).not.toBe(6379);
    expect(started.stdout).toContain(`redis     ${env.redisUrl}  (private to the sandbox, stopped with it)`);
    const redis = new Redis(env.redisUrl);
    try {
      expect(await redis.config('GET', 'dir')).toEqual(['dir', join(dir, 'redis-1')]);
      expect(await redis.config('GET', 'save')).toEqual(['save', '']);
    } finally {
      redis.disconnect();
    }
    // --containers: kubeconfig-containers names the machine as podman does to its containers and
    // checks the certificate against localhost; its credentials and TLS settings work (test/container-
    // image.test.ts reaches it from containers).
    const containerKubeconfig = env.host.containerKubeconfig!;
    expect(readFileSync(containerKubeconfig, 'utf8')).toContain(
      `server: https://host.containers.internal:${portOf(env.host.server)}`,
    );
    const throughLoopback = spawnSync(
      env.kubectl,
      [
        '--kubeconfig',
        containerKubeconfig,
        '--server',
        env.host.server,
        'get',
        'namespace',
        'team-a',
        '-o',
        'name',
      ],
      { encoding: 'utf8' },
    );
    expect(throughLoopback.stdout.trim()).toBe('namespace/team-a');
    expect(env.webhook.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    for (const url of [env.webhook.url, env.aggregator.url, env.reconciler.url, env.console.url]) {
      expect(await probe(`${url}/readyz`)).toBe(200);
    }
    // The webhook answers reviews only with env.json's client certificate (the host API server's).
    const review = JSON.stringify(
      bindingReview('CREATE', karmadaBinding('team-a', 'from-a-tool'), { uid: 'from-a-tool', dryRun: true }),
    );
    const certificate = { certFile: env.webhook.clientCert, keyFile: env.webhook.clientKey };
    const withCertificate = await postToWebhook(
      { url: env.webhook.url, clientCertificate: certificate },
      '/validate/resourcebindings',
      review,
    );
    expect(admissionResponse(withCertificate)).toMatchObject({ uid: 'from-a-tool' });
    expect((await postToWebhook({ url: env.webhook.url }, '/validate/resourcebindings', review)).status).toBe(
      401,
    );
    // The console, with the printed token of the demo viewer: team-a's quota, and nothing without a token.
    expect(env.console.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.stdout).toContain(`Console: ${env.console.url}`);
    expect(started.stdout).toContain(env.console.token);
    const asViewer = await fetch(`${env.console.url}/api/quotas`, {
      headers: { Authorization: `Bearer ${env.console.token}` },
    });
    expect(asViewer.status).toBe(200);
    const seen = (await asViewer.json()) as { user: string; quotas: { namespace: string; name: string }[] };
    expect(seen.user).toBe('system:serviceaccount:team-a:quota-viewer');
    expect(seen.quotas.map((q) => `${q.namespace}/${q.name}`)).toEqual(['team-a/team-a']);
    expect((await fetch(`${env.console.url}/api/quotas`)).status).toBe(401);
    // The printed commands work as printed, with real Karmada: a workload that fits runs in the
    // member and is counted; one over the quota is refused, and the Deployment's Events say why.
    expect(env.karmadaVersion).toBe('v1.18.2');
    const examples = join(dir, 'examples');
    const kubectl = (...args: string[]) =>
      spawnSync(env.kubectl, args, {
        encoding: 'utf8',
        env: {
          ...process.env,
          KUBECONFIG: env.host.kubeconfig,
          PATH: `${join(repoRoot(), 'tools', 'kubectl-kq', 'bin')}:${process.env.PATH}`,
        },
      });
    for (const file of ['web.yaml', 'batch.yaml'])
      expect(started.stdout).toContain(`kubectl apply -f ${join(examples, file)}`);
    expect(kubectl('apply', '-f', join(examples, 'web.yaml')).status).toBe(0);
    const memberPods = () =>
      kubectl('--kubeconfig', env.members[0]!.kubeconfig, 'get', 'pods', '-n', 'team-a', '-o', 'name').stdout;
    await eventually(
      async () => memberPods().split('\n').filter(Boolean).length,
      (n) => n === 2, // web: 2 replicas per member
    );
    await eventually(
      async () => kubectl('kq', 'describe', 'team-a', '-n', 'team-a').stdout,
      (out) => /member1\s.*\b1\b/.test(out) && out.includes('cpu'),
    );
    expect(kubectl('apply', '-f', join(examples, 'batch.yaml')).status).toBe(0);
    const refusal = await eventually(
      async () =>
        kubectl('get', 'events', '-n', 'team-a', '--field-selector', 'involvedObject.name=batch').stdout,
      (out) => out.includes('ApplyPolicyFailed') && out.includes('exceeded quota'),
    );
    expect(refusal).toContain('exceeded quota: team-a, requested: cpu=200, used: cpu=1, limited: cpu=100');
    const waiting = await eventually(
      async () => kubectl('kq', 'describe', 'team-a', '-n', 'team-a').stdout,
      (out) => out.includes('batch-deployment'),
    );
    expect(waiting).toMatch(/Waiting:\n.*\n.*\n\s+batch-deployment\s+cpu=200\s+cpu=99\s/);
    // The services keep their state in the private Redis: published usage, the reconcile queue.
    const used = new Redis(env.redisUrl);
    try {
      expect(await used.dbsize()).toBeGreaterThan(0);
      const clients = (await used.client('LIST')) as string;
      expect(clients.trim().split('\n').length).toBeGreaterThan(3); // the services' connections, and ours
    } finally {
      used.disconnect();
    }

    const ports = [
      env.host.server,
      ...env.members.map((m) => m.server),
      env.redisUrl,
      env.webhook.url,
      env.aggregator.url,
      env.reconciler.url,
      env.console.url,
    ].map(portOf);
    const pids = readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean).map(Number);
    expect(pids.length).toBeGreaterThanOrEqual(1 + 2 * 2 + 3 + 1 + 4); // etcd, 2 API servers + 2 controller managers, Karmada's 3, Redis, 4 services
    for (const port of ports) expect(await canListen(port)).toBe(false);
    expect(processesUsing(dir).length).toBeGreaterThan(0);

    const stopped = sandbox('down');
    expect(stopped.status).toBe(0);
    expect(stopped.stdout).toContain('sandbox stopped');
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(processesUsing(dir)).toEqual([]);
    for (const port of ports) expect(await canListen(port)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  }, 900_000);

  test('down without a running sandbox says so and succeeds', () => {
    const result = sandbox('down');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('no sandbox is running');
  });

  test('without REDIS_URL and without redis-server, up says how to get one before starting anything', () => {
    const missing = join(dir, '..', 'bin', 'redis-server');
    const given = process.env.REDIS_SERVER;
    process.env.REDIS_SERVER = missing; // the sandbox's environment is this process's
    let result;
    try {
      result = sandbox('up', '--members', '1');
    } finally {
      if (given === undefined) delete process.env.REDIS_SERVER;
      else process.env.REDIS_SERVER = given;
    }
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `sandbox: ${missing} was not found: install Redis (e.g. apt-get install redis-server), set REDIS_SERVER to a redis-server binary, or set REDIS_URL to a running Redis to use instead`,
    );
    expect(result.stdout).not.toContain('starting the sandbox');
    expect(existsSync(join(dir, 'supervisor.pid'))).toBe(false);
  });

  test('a bad --members value is refused with a clear message', () => {
    const result = sandbox('up', '--members', 'lots');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('--members must be a whole number from 1 to 10, got "lots"');
  });
});
