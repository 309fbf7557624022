import { createServer } from 'node:net';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; no fixed ports). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('could not allocate a free port');
  return address.port;
}

export interface ProbeOptions {
  /** PEM CA bundle to trust; omit to skip verification (self-signed component certs). */
  ca?: string;
  token?: string;
}

/** GET `url` and resolve with the status code (0 when the connection failed). */
export function probe(url: string, options: ProbeOptions = {}): Promise<number> {
  return new Promise((resolve) => {
    const isHttps = url.startsWith('https:');
    const headers: Record<string, string> = options.token ? { Authorization: `Bearer ${options.token}` } : {};
    const req = (isHttps ? request : httpRequest)(
      url,
      { headers, timeout: 2_000, ...(isHttps ? { ca: options.ca, rejectUnauthorized: !!options.ca } : {}) },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Polls `check` until it returns true; throws `describe()` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; describe?: () => string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      const detail = options.describe ? `\n${options.describe()}` : '';
      throw new Error(`timed out after ${options.timeoutMs / 1000}s waiting for ${what}${detail}`);
    }
    await sleep(options.intervalMs ?? 200);
  }
}
