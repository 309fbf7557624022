import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServingCertificate,
  freePort,
  probe,
  repoRoot,
  SERVICES,
  sleep,
  waitFor,
} from '../tools/federation/src/index.js';
import { federation, testRedis } from './support/federation.js';
import { logRecords } from './support/logs.js';

const REDIS_URL = testRedis();
// A service's start on a busy 2-core machine (CI runs federations beside it) took over 30 s once:
// the waits bound a hang, they do not measure start-up time.
const START_TIMEOUT_MS = 120_000;
/** The webhook and the console answer from the host alone; these two keep their state in Redis. */
const USES_REDIS: readonly string[] = ['aggregator', 'reconciler'];

/** Starts a service against the test host on `port`, collecting what it writes to stdout and stderr. */
function startService(name: string, port: number, env: Record<string, string>) {
  const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'apps', name, 'src', 'main.js')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      BIND_ADDRESS: '127.0.0.1',
      KUBECONFIG: federation().host.kubeconfig,
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

describe.each(SERVICES)('the %s service', (name) => {
  const main = join(repoRoot(), 'dist', 'apps', name, 'src', 'main.js');

  test('refuses bad configuration with one clear line per bad variable and exit code 2', () => {
    const result = spawnSync(process.execPath, [main], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH,
        PORT: 'http',
        LOG_LEVEL: 'chatty',
        KUBECONFIG: '/nonexistent/kubeconfig',
        REDIS_URL: 'localhost',
      },
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${name}: invalid configuration, fix these environment variables:`);
    expect(result.stderr).toContain('PORT="http": must be a port number');
    expect(result.stderr).toMatch(/LOG_LEVEL="chatty": .*error.*verbose/);
    expect(result.stderr).toContain('KUBECONFIG="/nonexistent/kubeconfig": no such file');
    if (USES_REDIS.includes(name))
      expect(result.stderr).toContain('REDIS_URL="localhost": must be a redis:// or rediss:// URL');
    if (name === 'webhook') expect(result.stderr).toContain('TLS_CERT_FILE="": is required');
  });

  test(
    'boots against the host and Redis, serves /healthz and /readyz, and stops on SIGTERM',
    async () => {
      const port = await freePort();
      const tlsDir = mkdtempSync(join(tmpdir(), 'karmada-quota-tls-'));
      const tls = name === 'webhook' ? await createServingCertificate(tlsDir, 'webhook') : undefined;
      const { child, output } = startService(name, port, {
        REDIS_URL,
        ...(tls ? { TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile } : {}),
      });
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve)); // after all output
      try {
        const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
        const getText = (path: string) =>
          new Promise<string>((resolve, reject) => {
            (tls ? httpsRequest : httpRequest)(`${url}${path}`, { ca: tls?.caPem }, (res) => {
              let data = '';
              res.on('data', (d: Buffer) => (data += d.toString()));
              res.on('end', () => resolve(data));
            })
              .on('error', reject)
              .end();
          });
        const get = async (path: string): Promise<unknown> => JSON.parse(await getText(path));
        await waitFor(
          `${name} readiness`,
          async () => (await probe(`${url}/readyz`, { ca: tls?.caPem })) === 200,
          {
            timeoutMs: START_TIMEOUT_MS,
            describe: output,
          },
        );
        const health = await get('/healthz');
        expect(health).toEqual({ status: 'ok' });
        const ready = (await get('/readyz')) as {
          status: string;
          info: Record<string, unknown>;
        };
        expect(ready.status).toBe('ok');
        const metrics = await getText('/metrics');
        // Node's process metrics under their standard names, so stock dashboards find them.
        expect(metrics).toMatch(new RegExp(`^process_cpu_seconds_total\\{component="${name}"\\} `, 'm'));
        expect(Object.keys(ready.info).sort()).toEqual(
          USES_REDIS.includes(name) ? ['karmada-apiserver', 'redis'] : ['karmada-apiserver'],
        );
        // Structured logs: every line on stdout is a JSON object.
        const lines = output().split('\n').filter(Boolean);
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      } finally {
        child.kill('SIGTERM');
        rmSync(tlsDir, { recursive: true, force: true });
      }
      expect(await exited).toBe(0);
      expect(logRecords(output()).filter((l) => l.message === 'shutting down on a signal')).toEqual([
        expect.objectContaining({ signal: 'SIGTERM' }),
      ]);
    },
    3 * START_TIMEOUT_MS,
  );
});

describe('the webhook serving certificate', () => {
  test(
    'a renewal is served without a restart; a half-written one is not, and the old pair keeps serving',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'karmada-quota-tls-'));
      const renewedDir = mkdtempSync(join(tmpdir(), 'karmada-quota-tls-renewed-'));
      const first = await createServingCertificate(dir, 'webhook');
      const renewed = await createServingCertificate(renewedDir, 'webhook');
      const port = await freePort();
      const url = `https://127.0.0.1:${port}/healthz`;
      const { child, output } = startService('webhook', port, {
        TLS_CERT_FILE: first.certFile,
        TLS_KEY_FILE: first.keyFile,
        TLS_RELOAD_SECONDS: '1',
      });
      try {
        await waitFor(
          'webhook to serve its first certificate',
          async () => (await probe(url, { ca: first.caPem })) === 200,
          {
            timeoutMs: START_TIMEOUT_MS,
            describe: output,
          },
        );
        // The certificate renewed but the key not yet: that pair cannot serve, the old one goes on.
        copyFileSync(renewed.certFile, first.certFile);
        await waitFor(
          'the mismatched pair to be refused',
          async () =>
            logRecords(output()).some(
              (l) =>
                l.message === 'could not load the TLS certificate, serving the previous one' &&
                Array.isArray(l.files) &&
                l.files.includes(first.certFile),
            ),
          {
            timeoutMs: START_TIMEOUT_MS,
            describe: output,
          },
        );
        expect(await probe(url, { ca: renewed.caPem })).toBe(0);
        copyFileSync(renewed.keyFile, first.keyFile);
        await waitFor(
          'the renewed certificate to be served',
          async () => (await probe(url, { ca: renewed.caPem })) === 200,
          {
            timeoutMs: START_TIMEOUT_MS,
            describe: output,
          },
        );
        const renewals = () =>
          logRecords(output()).filter((l) => l.message === 'serving the renewed TLS certificate');
        expect(renewals()).toEqual([expect.objectContaining({ files: [first.certFile, first.keyFile] })]);
        await sleep(1_500); // a further tick finds nothing new: one reload, not one per tick
        expect(renewals()).toHaveLength(1);
        expect(child.exitCode).toBeNull();
      } finally {
        child.kill('SIGTERM');
        rmSync(dir, { recursive: true, force: true });
        rmSync(renewedDir, { recursive: true, force: true });
      }
    },
    3 * START_TIMEOUT_MS,
  );
});
