import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KARMADA_QUOTA, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  createServingCertificate,
  freePort,
  ManagedProcess,
  probe,
  repoRoot,
  waitFor,
} from '../tools/federation/src/index.js';
import { metricValue } from '../tools/bench/src/stats.js';
import { countNoUsage, client, createNamespace, federation, uniqueName } from './support/federation.js';
import { binding } from './support/fixtures.js';

/**
 * ADMISSION_MODE=cas-per-admission, the simple design `npm run bench` measures batching against: a
 * webhook of its own on the shared federation's host, sent AdmissionReviews directly.
 */
const fed = federation();
let webhook: ManagedProcess;
let url: string;
let ca: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-cas-mode-'));
  const tls = await createServingCertificate(dir, 'webhook');
  ca = tls.caPem;
  const port = await freePort();
  url = `https://127.0.0.1:${port}`;
  webhook = ManagedProcess.start(
    'webhook-cas-per-admission',
    process.execPath,
    [join(repoRoot(), 'dist', 'apps', 'webhook', 'src', 'main.js')],
    {
      logFile: join(dir, 'webhook.log'),
      env: {
        ...process.env,
        PORT: String(port),
        BIND_ADDRESS: '127.0.0.1',
        KUBECONFIG: fed.host.kubeconfig,
        TLS_CERT_FILE: tls.certFile,
        TLS_KEY_FILE: tls.keyFile,
        ADMISSION_MODE: 'cas-per-admission',
      },
    },
  );
  await waitFor(
    'the cas-per-admission webhook to become ready',
    async () => (await probe(`${url}/readyz`, { ca })) === 200,
    {
      timeoutMs: 60_000,
      describe: () => webhook.logTail(),
    },
  );
});

afterAll(async () => {
  await webhook?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function call(method: 'GET' | 'POST', path: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.on('data', (d: Buffer) => (data += d.toString()));
        res.on('end', () => resolve(data));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function admit(rb: ResourceBinding) {
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${rb.metadata!.name}`,
      operation: 'CREATE',
      kind: { group: 'work.karmada.io', version: 'v1alpha2', kind: 'ResourceBinding' },
      namespace: rb.metadata!.namespace,
      name: rb.metadata!.name,
      object: rb,
      dryRun: false,
    },
  };
  const answer = JSON.parse(await call('POST', '/validate/resourcebindings', JSON.stringify(review)));
  return answer.response as { allowed: boolean; status?: { code: number; reason: string; message: string } };
}

test('concurrent admissions each write their own status: never over the limit, losers fail closed, and it fills up to the limit', async () => {
  const namespace = uniqueName('cas');
  await createNamespace(fed.host, namespace);
  const objects = client(fed.host).makeApiClient(k8s.CustomObjectsApi);
  await objects.createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    body: {
      apiVersion: KARMADA_QUOTA.apiVersion,
      kind: KARMADA_QUOTA.kind,
      metadata: { name: 'team', namespace },
      spec: { hard: { cpu: '10' } },
    },
  });
  await countNoUsage(client(fed.host), namespace, 'team');

  const concurrent = await Promise.all(
    Array.from({ length: 30 }, (_, i) => admit(binding(namespace, `rb-${i}`))),
  );
  const admitted = new Set<string>();
  concurrent.forEach((r, i) => {
    if (r.allowed) return void admitted.add(`rb-${i}`);
    if (r.status?.code === 503)
      expect(r.status.message).toContain('kept changing under concurrent writers (5 conflicts in a row)');
    else expect(r.status).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
  });
  expect(admitted.size).toBeGreaterThan(0);
  expect(admitted.size).toBeLessThanOrEqual(10);

  // One at a time, the rest of the quota fills up exactly, then it denies.
  for (let i = 30; admitted.size < 10; i++) {
    const r = await admit(binding(namespace, `rb-${i}`));
    expect(r.allowed).toBe(true);
    admitted.add(`rb-${i}`);
  }
  const full = await admit(binding(namespace, 'one-too-many'));
  expect(full.status?.message).toBe('exceeded quota: team, requested: cpu=1, used: cpu=10, limited: cpu=10');

  const quota = (await objects.getNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    name: 'team',
  })) as KarmadaQuota;
  expect(quota.status?.reserved).toEqual({ cpu: '10' });
  expect(quota.status?.reservations?.map((r) => r.reservedBy.name).sort()).toEqual([...admitted].sort());

  // Every admission was its own "batch" of one.
  const metrics = await call('GET', '/metrics');
  const size = metricValue(metrics, 'karmada_quota_admission_batch_size_sum');
  expect(size).toBeGreaterThan(30);
  expect(size).toBe(metricValue(metrics, 'karmada_quota_admission_batch_size_count'));
});
