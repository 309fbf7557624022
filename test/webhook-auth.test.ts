import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota } from '#api';
import {
  createClientCertificate,
  createClientCertificates,
  createServingCertificate,
  ensureBinaries,
  freePort,
  ManagedProcess,
  probe,
  repoRoot,
  waitFor,
  type ClientCertificate,
} from '../tools/federation/src/index.js';
import { bindingReview, postToWebhook, type WebhookTarget } from './chaos/support/admission.js';
import {
  client,
  countNoUsage,
  createNamespace,
  eventually,
  federation,
  uniqueName,
} from './support/federation.js';
import { binding, karmadaQuota } from './support/fixtures.js';

/**
 * Only the API server may admit: the webhook answers AdmissionReviews only from a client certificate
 * of the host API server's webhook client CA (CLIENT_CA_FILE), which the harness's host presents
 * through its admission configuration. A forged review must not reserve quota.
 */
const fed = federation();
const objects = () => client(fed.host).makeApiClient(k8s.CustomObjectsApi);
let dir: string;
let otherCa: ClientCertificate;
let namespace: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-webhook-auth-'));
  otherCa = await createClientCertificate(dir, 'impostor');
  namespace = await namespaceWithQuota();
});

/** A namespace of its own with quota `team` of 4 CPUs, its usage counted (nothing runs there). */
async function namespaceWithQuota(): Promise<string> {
  const name = uniqueName('wh-auth');
  await createNamespace(fed.host, name);
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace: name,
    body: karmadaQuota(name, 'team', { cpu: '4' }),
  });
  await countNoUsage(client(fed.host), name, 'team');
  return name;
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Who holds a reservation in quota `team` of `where`. */
const reservedNames = async (where = namespace) => {
  const quota = (await objects().getNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace: where,
    name: 'team',
  })) as KarmadaQuota;
  return (quota.status?.reservations ?? []).map((r) => r.reservedBy.name);
};

/** A review asking for the whole quota: allowed, it would hold all 4 CPUs for the reservation TTL. */
const review = (name: string) =>
  JSON.stringify(bindingReview('CREATE', binding(namespace, name, { replicas: 4, cpu: '1' })));
const asCaller = (clientCertificate?: ClientCertificate): WebhookTarget => ({
  url: fed.webhookUrl,
  ...(clientCertificate ? { clientCertificate } : {}),
});

describe('the webhook admits only the API server', () => {
  test('a review without a client certificate is refused with 401 and reserves nothing', async () => {
    const reply = await postToWebhook(asCaller(), '/validate/resourcebindings', review('forged-anonymous'));
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body).message).toMatch(
      /^no client certificate: only the API server may call this endpoint: it presents a client certificate when its admission configuration names a kubeconfig for webhooks/,
    );
    expect(await reservedNames()).toEqual([]);
  });

  test('a review with a certificate of another CA is refused with 403 and reserves nothing', async () => {
    const reply = await postToWebhook(
      asCaller(otherCa),
      '/validate/resourcebindings',
      review('forged-other-ca'),
    );
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body).message).toContain(
      'client certificate not accepted (UNABLE_TO_VERIFY_LEAF_SIGNATURE): it is not from the CA in CLIENT_CA_FILE',
    );
    // The quota endpoint too: every admission path needs the certificate.
    const quotaReview = await postToWebhook(asCaller(otherCa), '/validate/karmadaquotas', review('x'));
    expect(quotaReview.status).toBe(403);
    expect(await reservedNames()).toEqual([]);
  });

  test("the API server's certificate (what the sandbox's env.json names) is answered, and reserves", async () => {
    const reply = await postToWebhook(
      asCaller(fed.webhookClient),
      '/validate/resourcebindings',
      review('direct'),
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).response.allowed).toBe(true);
    // Only this one: the forged reviews above left nothing behind.
    expect(await reservedNames()).toEqual(['direct']);
  });

  test('a ResourceBinding created through the host API server is admitted by the webhook', async () => {
    const team = await namespaceWithQuota();
    const create = (name: string, replicas: number) =>
      objects().createNamespacedCustomObject({
        ...RESOURCE_BINDING,
        namespace: team,
        body: binding(team, name, { replicas, cpu: '1' }),
      });
    await create('through-host', 3);
    expect(await reservedNames(team)).toEqual(['through-host']);
    // And the webhook is what admitted it: the next one exceeds the quota.
    await expect(create('too-much', 2)).rejects.toMatchObject({
      body: expect.stringContaining('exceeded quota: team'),
    });
  });

  test.each(['/healthz', '/readyz', '/metrics'])(
    '%s answers probes that present no certificate',
    async (path) => {
      expect(await get(`${fed.webhookUrl}${path}`)).toBe(200);
    },
  );
});

describe('a webhook of its own', () => {
  let webhook: ManagedProcess | undefined;
  afterEach(async () => {
    await webhook?.stop();
    webhook = undefined;
  });

  /** Starts the webhook with `env` (on the shared host, a serving certificate of its own) until ready. */
  async function startWebhook(label: string, env: NodeJS.ProcessEnv): Promise<WebhookTarget> {
    const tlsDir = join(dir, label);
    mkdirSync(tlsDir);
    const tls = await createServingCertificate(tlsDir, 'webhook');
    const url = `https://127.0.0.1:${await freePort()}`;
    const started = ManagedProcess.start(
      `webhook-${label}`,
      process.execPath,
      [join(repoRoot(), 'dist', 'apps', 'webhook', 'src', 'main.js')],
      {
        logFile: join(tlsDir, 'webhook.log'),
        env: {
          ...process.env,
          PORT: new URL(url).port,
          BIND_ADDRESS: '127.0.0.1',
          KUBECONFIG: fed.host.kubeconfig,
          TLS_CERT_FILE: tls.certFile,
          TLS_KEY_FILE: tls.keyFile,
          ...env,
        },
      },
    );
    webhook = started;
    await waitFor(`webhook-${label} to become ready`, async () => (await probe(`${url}/readyz`)) === 200, {
      timeoutMs: 60_000,
      describe: () => started.logTail(),
    });
    return { url };
  }

  /**
   * The client-certificate settings the Helm chart gives the webhook with `values` (CLIENT_CA_FILE,
   * CLIENT_CERT_ALLOWED_NAMES; unset unless it sets them), the CA it mounts read from `caFile`.
   */
  async function chartClientAuthEnv(caFile: string, ...values: string[]): Promise<NodeJS.ProcessEnv> {
    const { helm } = await ensureBinaries();
    const rendered = spawnSync(
      helm,
      [
        'template',
        'kq',
        join(repoRoot(), 'charts', 'karmada-quota'),
        '--show-only',
        'templates/webhook.yaml',
        ...values.flatMap((value) => ['--set', value]),
      ],
      { encoding: 'utf8' },
    );
    if (rendered.status !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
    type Deployment = {
      kind: string;
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    const deployment = (yaml.loadAll(rendered.stdout) as (Deployment | null)[]).find(
      (doc) => doc?.kind === 'Deployment',
    )!;
    const env = deployment.spec.template.spec.containers[0]!.env.filter((e) => e.name.startsWith('CLIENT_'));
    return {
      CLIENT_CA_FILE: '',
      CLIENT_CERT_ALLOWED_NAMES: '',
      ...Object.fromEntries(env.map((e) => [e.name, e.name === 'CLIENT_CA_FILE' ? caFile : e.value])),
    };
  }

  test("as the chart sets it up: by default it answers any caller (karmada-apiserver needs no change); with webhook.clientAuth.enabled only the API server's certificate", async () => {
    // A dry-run review in a namespace without quotas: allowed, it writes nothing.
    const review = JSON.stringify(
      bindingReview('CREATE', binding(uniqueName('no-quota'), 'rb'), { dryRun: true }),
    );
    const caFile = fed.webhookClient.caFile;
    const byDefault = await startWebhook('chart-default', await chartClientAuthEnv(caFile));
    const answered = await postToWebhook(byDefault, '/validate/resourcebindings', review);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body).response.allowed).toBe(true);
    await webhook!.stop();
    webhook = undefined;

    const hardened = await startWebhook(
      'chart-client-auth',
      await chartClientAuthEnv(caFile, 'webhook.clientAuth.enabled=true'),
    );
    expect((await postToWebhook(hardened, '/validate/resourcebindings', review)).status).toBe(401);
    const fromApiServer = await postToWebhook(
      { ...hardened, clientCertificate: fed.webhookClient },
      '/validate/resourcebindings',
      review,
    );
    expect(fromApiServer.status).toBe(200);
  });

  test('started without CLIENT_CA_FILE, it warns that anyone can post reviews', async () => {
    await startWebhook('no-client-ca', { CLIENT_CA_FILE: '' });
    const warning = webhook!
      .logTail(200)
      .split('\n')
      .find((line) => line.includes('CLIENT_CA_FILE is not set'));
    expect(JSON.parse(warning!)).toMatchObject({
      level: 'warn',
      message: expect.stringContaining('anything that can reach this port can post AdmissionReviews'),
    });
  });

  test('with CLIENT_CERT_ALLOWED_NAMES, a certificate of the same CA under another name is refused', async () => {
    const names = join(dir, 'allowed-names-pki');
    mkdirSync(names);
    const [apiServer, sibling] = await createClientCertificates(names, 'shared-ca', [
      'karmada-apiserver',
      'karmada-controller-manager',
    ]);
    const target = await startWebhook('allowed-names', {
      CLIENT_CA_FILE: apiServer!.caFile,
      CLIENT_CERT_ALLOWED_NAMES: 'karmada-apiserver',
    });
    const review = JSON.stringify(
      bindingReview('CREATE', binding(uniqueName('no-quota'), 'rb'), { dryRun: true }),
    );
    const replyTo = (client: ClientCertificate) =>
      postToWebhook({ ...target, clientCertificate: client }, '/validate/resourcebindings', review);
    expect((await replyTo(apiServer!)).status).toBe(200);
    const refused = await replyTo(sibling!);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).message).toContain(
      'client certificate CN "karmada-controller-manager" is not one of CLIENT_CERT_ALLOWED_NAMES (karmada-apiserver)',
    );
  });

  test('a rotated client CA is trusted without a restart, and the old one no longer', async () => {
    const caFile = join(dir, 'rotated-ca.crt');
    copyFileSync(otherCa.caFile, caFile);
    const target = await startWebhook('rotation', { CLIENT_CA_FILE: caFile, TLS_RELOAD_SECONDS: '1' });
    // A dry-run review in a namespace without quotas: answered, it writes nothing.
    const review = JSON.stringify(
      bindingReview('CREATE', binding(uniqueName('no-quota'), 'rb'), { dryRun: true }),
    );
    const statusAs = async (client: ClientCertificate) =>
      (await postToWebhook({ ...target, clientCertificate: client }, '/validate/resourcebindings', review))
        .status;
    expect(await statusAs(otherCa)).toBe(200);
    expect(await statusAs(fed.webhookClient)).toBe(403);
    copyFileSync(fed.webhookClient.caFile, caFile);
    await eventually(
      () => statusAs(fed.webhookClient),
      (status) => status === 200,
      30_000,
    );
    expect(await statusAs(otherCa)).toBe(403);
  });
});

/** GET without a client certificate; resolves with the HTTP status. */
function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
