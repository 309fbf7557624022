import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { freePort, probe, repoRoot, SERVICES, waitFor } from '../tools/federation/src/index.js';
import { federation } from './support/federation.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

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
    if (name !== 'webhook')
      expect(result.stderr).toContain('REDIS_URL="localhost": must be a redis:// or rediss:// URL');
  });

  test('boots against the host and Redis, serves /healthz and /readyz, and stops on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [main], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(port),
        BIND_ADDRESS: '127.0.0.1',
        KUBECONFIG: federation().host.kubeconfig,
        REDIS_URL,
      },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor(`${name} readiness`, async () => (await probe(`${url}/readyz`)) === 200, {
        timeoutMs: 30_000,
        describe: () => output,
      });
      const health = await (await fetch(`${url}/healthz`)).json();
      expect(health).toEqual({ status: 'ok' });
      const ready = (await (await fetch(`${url}/readyz`)).json()) as {
        status: string;
        info: Record<string, unknown>;
      };
      expect(ready.status).toBe('ok');
      expect(Object.keys(ready.info).sort()).toEqual(
        name === 'webhook' ? ['host-apiserver'] : ['host-apiserver', 'redis'],
      );
      // Structured logs: every line on stdout is a JSON object.
      const lines = output.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('SIGTERM received, shutting down');
  });
});
