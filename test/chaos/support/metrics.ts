import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** GET a service URL (the webhook's certificate is from a throwaway CA: not verified here). */
export function get(url: string, timeoutMs = 10_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A service's process figures, from prom-client's default metrics on its /metrics. */
export interface ProcessFigures {
  rssBytes: number;
  heapUsedBytes: number;
  /** Open handles (sockets, timers, ...), when the Node.js version still exposes them. */
  activeHandles?: number;
}

/** The value of an unlabelled-but-for-`service` sample, or undefined when absent. */
export function metricValue(text: string, name: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) return value;
  }
  return undefined;
}

export async function processFigures(serviceUrl: string): Promise<ProcessFigures> {
  const { status, body } = await get(`${serviceUrl}/metrics`);
  if (status !== 200) throw new Error(`${serviceUrl}/metrics answered ${status}`);
  const required = (name: string): number => {
    const value = metricValue(body, name);
    if (value === undefined) throw new Error(`${serviceUrl}/metrics has no ${name}`);
    return value;
  };
  const handles = metricValue(body, 'nodejs_active_handles_total');
  return {
    rssBytes: required('process_resident_memory_bytes'),
    heapUsedBytes: required('nodejs_heap_size_used_bytes'),
    ...(handles === undefined ? {} : { activeHandles: handles }),
  };
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
