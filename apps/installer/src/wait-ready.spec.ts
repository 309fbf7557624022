import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitForReady } from './wait-ready.js';

/** A local server answering 503 until `readyAfter` requests, then 200. */
async function server(readyAfter: number): Promise<{ url: string; server: Server; requests: () => number }> {
  let requests = 0;
  const s = createServer((_req, res) => {
    requests++;
    res.statusCode = requests > readyAfter ? 200 : 503;
    res.end();
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/readyz`, server: s, requests: () => requests };
}

describe('waitForReady (the register phase waits for a ready webhook)', () => {
  it('returns once the webhook answers 200, not before', async () => {
    const { url, server: s, requests } = await server(3);
    const said: string[] = [];
    await waitForReady(url, { timeoutMs: 10_000, intervalMs: 10, log: (m) => said.push(m) });
    expect(requests()).toBe(4);
    expect(said).toEqual([`the webhook at ${url} is ready`]);
    s.close();
  });

  it('fails after its timeout with the last answer, saying the webhook is not registered', async () => {
    const { url, server: s } = await server(Number.POSITIVE_INFINITY);
    await expect(waitForReady(url, { timeoutMs: 100, intervalMs: 10, log: () => undefined })).rejects.toThrow(
      /not ready within 0 s \(last: HTTP 503\); the webhook is not registered/,
    );
    s.close();
  });

  it('counts a refused connection as not ready', async () => {
    const { url, server: s } = await server(0);
    await new Promise((resolve) => s.close(resolve));
    await expect(waitForReady(url, { timeoutMs: 50, intervalMs: 10, log: () => undefined })).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });
});
