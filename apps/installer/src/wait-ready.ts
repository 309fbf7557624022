// Before the register phase applies the ValidatingWebhookConfiguration, the webhook must answer:
// registered first, every binding would be refused (failurePolicy Fail) until a webhook pod is
// ready, which `helm install` without `--wait` does not wait for. Like kubelet's HTTPS probes, the
// readiness check does not verify the serving certificate (its CA may be injected only later).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

/** One GET of `url`: its status code, or the error that kept it from answering. */
function probe(url: URL, timeoutMs: number): Promise<number> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Waits until `url` answers 200, polling every `intervalMs`, and says so every 10 s; throws, with the
 * last answer, after `timeoutMs`.
 */
export async function waitForReady(
  url: string,
  options: { timeoutMs: number; intervalMs?: number; log: (message: string) => void },
): Promise<void> {
  const target = new URL(url);
  const interval = options.intervalMs ?? 1_000;
  const started = Date.now();
  let lastSaid = started;
  let last: string;
  for (;;) {
    try {
      const status = await probe(target, Math.min(5_000, options.timeoutMs));
      if (status === 200) return options.log(`the webhook at ${url} is ready`);
      last = `HTTP ${status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    const waited = Date.now() - started;
    if (waited >= options.timeoutMs)
      throw new Error(
        `the webhook at ${url} was not ready within ${Math.round(options.timeoutMs / 1000)} s (last: ${last}); ` +
          'the webhook is not registered, so nothing is refused for it: check the webhook pods ' +
          '(kubectl get pods -l app.kubernetes.io/component=webhook) and their logs, then upgrade again',
      );
    if (Date.now() - lastSaid >= 10_000) {
      options.log(`waiting for the webhook at ${url} to be ready (${Math.round(waited / 1000)} s: ${last})`);
      lastSaid = Date.now();
    }
    await sleep(interval);
  }
}
