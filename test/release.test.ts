import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import yaml from 'js-yaml';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import {
  ensureBinaries,
  ensureNamespace,
  Federation,
  karmadaWorkload,
  kubeConfigFor,
  type ApiEndpoint,
  type KarmadaWorkload,
  freePort,
  ManagedProcess,
  OrphanGuard,
  probe,
  repoRoot,
  waitFor,
  type KubeBinaries,
} from '../tools/federation/src/index.js';
import {
  buildImage,
  localBases,
  mustRun,
  ownedPrefix,
  podman,
  removeOrphans,
  run,
} from './support/containers.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';
import { PodmanKubelet, runJobsAsTheyCome } from './support/kubelet.js';

/**
 * `npm run release` (tools/release) against a local OCI registry (go-containerregistry's
 * cmd/registry from the binaries cache): the image is pushed and the chart, set to run it by
 * digest, pushed beside it; then, as a user would, the chart is pulled from the registry and
 * rendered, and the image pulled back by the digest the chart names. The digest is checked against
 * the registry's own manifest, not against what the release tool says. Last, the released chart is
 * installed from the registry into a karmada-host cluster beside real Karmada, as
 * docs/operating/install.md says (its hook Jobs and Deployments run under podman: the test plays the
 * kubelet), used through Karmada, and uninstalled. Needs podman (runtime runc) and debootstrap, like
 * container-image.test.ts (whose image build cache it shares), and the compiled tool (`npm test`
 * builds first).
 */
const IMAGE = 'localhost/karmada-quota:release-test';
const progress = (message: string): void => void process.stderr.write(`[release-test] ${message}\n`);
const version = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string })
  .version;

let dir: string;
let binaries: KubeBinaries;
let guard: OrphanGuard | undefined;
let registry: ManagedProcess | undefined;
/** `127.0.0.1:PORT/karmada-quota`: what the release pushes under. */
let target: string;
let port: number;
/** The release tool's stdout (its final references). */
let released: string;
/** What the last test pulled, `...@sha256:...`. */
let pulledReference: string | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-release-'));
  binaries = await ensureBinaries();
  guard = OrphanGuard.start(join(dir, 'pids'));
  port = await freePort();
  registry = guard.track(
    ManagedProcess.start('registry', binaries.registry, ['--port', String(port)], {
      logFile: join(dir, 'registry.log'),
    }),
  );
  await waitFor(
    `the OCI registry at 127.0.0.1:${port}`,
    async () => {
      if (!registry!.running) throw new Error(`the registry stopped:\n${registry!.logTail()}`);
      return (await probe(`http://127.0.0.1:${port}/v2/`)) === 200;
    },
    { timeoutMs: 30_000, describe: () => registry!.logTail() },
  );
  target = `127.0.0.1:${port}/karmada-quota`;

  const bases = await localBases();
  const built = Date.now();
  await buildImage(IMAGE, bases.nodeImage);
  progress(`image built in ${Math.round((Date.now() - built) / 1000)} s`);

  const started = Date.now();
  const result = await mustRun(
    'node',
    [
      join(repoRoot(), 'dist', 'tools', 'release', 'src', 'main.js'),
      ...['--registry', target, '--plain-http', '--image', IMAGE, '--helm', binaries.helm],
    ],
    { onLine: (line) => progress(line) },
  );
  progress(`npm run release took ${Math.round((Date.now() - started) / 1000)} s`);
  released = result.stdout;
}, 40 * 60_000);

afterAll(async () => {
  await registry?.stop();
  if (registry) guard?.untrack(registry);
  guard?.dispose();
  // The name the pull gave the image only: the image stays as IMAGE, for the next run's build cache.
  if (pulledReference) await run('podman', ['untag', pulledReference, pulledReference]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The digest of the manifest the registry holds under `repository:tag`, computed from its bytes. */
async function manifestDigest(repository: string, tag: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/${repository}/manifests/${tag}`, {
    headers: {
      accept: [
        'application/vnd.oci.image.manifest.v1+json',
        'application/vnd.oci.image.index.v1+json',
        'application/vnd.docker.distribution.manifest.v2+json',
        'application/vnd.docker.distribution.manifest.list.v2+json',
      ].join(', '),
    },
  });
  expect(response.status).toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  expect(response.headers.get('docker-content-digest')).toBe(digest);
  return digest;
}

const helm = (...args: string[]) => mustRun(binaries.helm, args);

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { image: string }[]; initContainers?: { image: string }[] } } };
}

test('the release prints the chart and the image it pushed, the image by digest', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  expect(released).toMatch(
    new RegExp(`^chart: oci://${target}/charts/karmada-quota:${version} \\(sha256:[0-9a-f]{64}\\)$`, 'm'),
  );
  expect(released).toContain(`\nimage: ${target}/karmada-quota@${digest}\n`);
});

test('the chart pulled from the registry runs exactly the pushed image, by digest, in every Deployment', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  const pulledDir = join(dir, 'pulled');
  mkdirSync(pulledDir);
  await helm(
    'pull',
    `oci://${target}/charts/karmada-quota`,
    '--version',
    version,
    '--plain-http',
    '-d',
    pulledDir,
  );
  expect(readdirSync(pulledDir)).toEqual([`karmada-quota-${version}.tgz`]);
  const archive = join(pulledDir, `karmada-quota-${version}.tgz`);

  const chart = yaml.load((await helm('show', 'chart', archive)).stdout) as Record<string, unknown>;
  expect(chart).toMatchObject({ name: 'karmada-quota', version, appVersion: version });

  const rendered = await helm(
    'template',
    'karmada-quota',
    archive,
    '--set',
    'redis.url=redis://redis.example:6379',
  );
  const deployments = yaml
    .loadAll(rendered.stdout)
    .filter((doc): doc is Deployment => (doc as Deployment | null)?.kind === 'Deployment');
  expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
    'karmada-quota-aggregator',
    'karmada-quota-console',
    'karmada-quota-reconciler',
    'karmada-quota-webhook',
  ]);
  const images = deployments.flatMap((d) =>
    [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers].map((c) => c.image),
  );
  expect(new Set(images)).toEqual(new Set([`${target}/karmada-quota@${digest}`]));
  // Nothing else the chart renders names an image by tag either.
  const everyImage = [...rendered.stdout.matchAll(/^\s*(?:- )?image: *(\S+)/gm)].map((m) => m[1]);
  expect(new Set(everyImage)).toEqual(new Set([`${target}/karmada-quota@${digest}`]));
});

test('the image pulls back from the registry by that digest and is the image released', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  const reference = `${target}/karmada-quota@${digest}`;
  pulledReference = reference;
  await podman('pull', '--tls-verify=false', reference);
  const id = async (ref: string) =>
    (await podman('image', 'inspect', '--format', '{{.Id}}', ref)).stdout.trim();
  expect(await id(reference)).toBe(await id(IMAGE));
  const digests = (await podman('image', 'inspect', '--format', '{{json .RepoDigests}}', IMAGE)).stdout;
  expect(JSON.parse(digests)).toContain(reference);
});

/**
 * Installed as docs/operating/install.md#into-karmada-host says: into the karmada-host cluster, with
 * the Karmada API server's kubeconfig in Secret karmada-kubeconfig and everything else at its
 * defaults but what this machine needs (free ports on the machine's network, the test Redis, the
 * webhook called by URL: this karmada-apiserver is no pod and resolves no Service). Its own Redis
 * database (13) and federation (real Karmada, one member).
 */
describe('installed from the registry into karmada-host', () => {
  const RELEASE = 'karmada-quota';
  const NAMESPACE = 'karmada-system';
  const MEMBER = 'member1';
  let federation: Federation;
  let karmadaHost: ApiEndpoint;
  let kubelet: PodmanKubelet;
  let jobs: { stop: () => Promise<void> } | undefined;
  const jobLogs = new Map<string, { succeeded: boolean; log: string }>();
  /** `<release> <phase>` of each hook Job run, in order. */
  const ranJobs: string[] = [];

  const karmada = () => kubeConfigFor(federation.info.host);
  const hostCluster = () => kubeConfigFor(karmadaHost);
  const installHelm = (...args: string[]) =>
    mustRun(binaries.helm, [...args, '--namespace', NAMESPACE, '--kubeconfig', karmadaHost.kubeconfig], {
      onLine: (line) => progress(`helm: ${line}`),
    });

  beforeAll(async () => {
    await removeOrphans();
    federation = await Federation.start({
      stateDir: join(dir, 'federation'),
      members: 1,
      karmada: true,
      karmadaQuotaCrd: false,
      log: progress,
    });
    karmadaHost = await federation.startKarmadaHostCluster();
    await ensureNamespace(federation.info.host, NAMESPACE);
    await ensureNamespace(karmadaHost, NAMESPACE);
    // As karmadactl init, karmada-operator and Karmada's chart leave it in karmada-host.
    await hostCluster()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedSecret({
        namespace: NAMESPACE,
        body: {
          metadata: { name: 'karmada-kubeconfig' },
          stringData: { kubeconfig: readFileSync(federation.info.host.kubeconfig, 'utf8') },
        },
      });
    const redis = new Redis(testRedisUrl(13));
    await redis.flushdb();
    redis.disconnect();
    kubelet = new PodmanKubelet(hostCluster(), NAMESPACE, ownedPrefix(), join(dir, 'volumes'));
    jobs = runJobsAsTheyCome(hostCluster(), kubelet, NAMESPACE, (job, result) => {
      ranJobs.push(job);
      jobLogs.set(job, result);
      progress(`hook Job ${job} ${result.succeeded ? 'succeeded' : 'failed'}:\n${result.log}`);
    });
  }, 15 * 60_000);

  afterAll(async () => {
    await jobs?.stop();
    await kubelet?.stopAll();
    await federation?.stop();
  });

  test(
    'helm install: hook Jobs apply to the Karmada API server, the services run from the rendered Deployments, and a Deployment through Karmada is admitted, counted and refused past its quota',
    async () => {
      const ports = {
        webhook: await freePort(),
        aggregator: await freePort(),
        reconciler: await freePort(),
        console: await freePort(),
      };
      const installing = installHelm(
        'install',
        RELEASE,
        `oci://${target}/charts/karmada-quota`,
        ...['--version', version, '--plain-http', '--timeout', '5m'],
        ...['--set', 'karmadaKubeconfig.secretName=karmada-kubeconfig'],
        ...['--set', `redis.url=${testRedisUrl(13)}`],
        ...['--set', `webhook.url=https://localhost:${ports.webhook}`],
        ...Object.entries(ports).flatMap(([service, port]) => ['--set', `${service}.port=${port}`]),
        ...['--set', 'crd.keepOnUninstall=false'],
      );
      installing.catch(() => undefined); // awaited below; failing meanwhile is no unhandled rejection
      // As in a cluster, the Deployments' pods start while helm waits for its post-install hook, whose
      // register Job waits for a ready webhook before registering it (else every binding is refused).
      const apps = hostCluster().makeApiClient(k8s.AppsV1Api);
      const deployments = await eventually(
        () => apps.listNamespacedDeployment({ namespace: NAMESPACE }),
        (list) => list.items.length === 4,
        120_000,
      );
      for (const deployment of deployments.items)
        await kubelet.runPod(deployment.metadata!.name!, deployment.spec!.template);
      await installing;
      expect(ranJobs).toEqual([`${RELEASE}-setup`, `${RELEASE}-register`]);
      expect(jobLogs.get(`${RELEASE}-setup`)!.log).toContain(
        'applied CustomResourceDefinition karmadaquotas.quota.karmada.io',
      );

      // In the Karmada API server: the CRD, the RBAC and the registration, by URL.
      const registration = await karmada()
        .makeApiClient(k8s.AdmissionregistrationV1Api)
        .readValidatingWebhookConfiguration({ name: `${RELEASE}-webhook` });
      expect(registration.webhooks!.map((w) => w.clientConfig.url)).toEqual(
        registration.webhooks!.map(() =>
          expect.stringMatching(new RegExp(`^https://localhost:${ports.webhook}/`)),
        ),
      );
      const roles = await karmada()
        .makeApiClient(k8s.RbacAuthorizationV1Api)
        .listClusterRole({ labelSelector: `app.kubernetes.io/instance=${RELEASE}` });
      expect(roles.items.map((r) => r.metadata!.name).sort()).toEqual(
        ['admin', 'aggregator', 'console', 'reconciler', 'view', 'webhook'].map((n) => `${RELEASE}-${n}`),
      );
      // In karmada-host: nothing of the Karmada API server's.
      const hostCrds = await hostCluster()
        .makeApiClient(k8s.ApiextensionsV1Api)
        .listCustomResourceDefinition();
      expect(hostCrds.items).toEqual([]);

      expect(deployments.items.map((d) => d.metadata!.name).sort()).toEqual(
        ['aggregator', 'console', 'reconciler', 'webhook'].map((n) => `${RELEASE}-${n}`),
      );
      expect(jobLogs.get(`${RELEASE}-register`)!.log).toContain(
        `the webhook at https://localhost:${ports.webhook}/readyz is ready`,
      );

      // A team through real Karmada.
      const namespace = uniqueName('installed');
      await karmada()
        .makeApiClient(k8s.CoreV1Api)
        .createNamespace({ body: { metadata: { name: namespace } } });
      const custom = karmada().makeApiClient(k8s.CustomObjectsApi);
      await custom.createNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        body: karmadaQuota(namespace, 'team', { cpu: '2' }),
      });
      await usageCounted(karmada(), namespace, 'team');
      const objects = k8s.KubernetesObjectApi.makeApiClient(karmada());
      const apply = async (workload: KarmadaWorkload) => {
        await objects.create(workload.policy);
        await objects.create(workload.workload);
      };
      const readQuota = () =>
        custom.getNamespacedCustomObject({
          ...KARMADA_QUOTA,
          namespace,
          name: 'team',
        }) as Promise<KarmadaQuota>;
      await apply(karmadaWorkload({ name: 'web', namespace, replicas: 1, cpu: '1500m', clusters: [MEMBER] }));
      await eventually(readQuota, (q) => q.status?.used?.['cpu'] === '1500m', 120_000);
      await apply(karmadaWorkload({ name: 'batch', namespace, replicas: 1, cpu: '1', clusters: [MEMBER] }));
      const refusals = await eventually(
        () => karmada().makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace }),
        (events) =>
          events.items.some(
            (e) => e.involvedObject.name === 'batch' && e.message?.includes('exceeded quota: team'),
          ),
        120_000,
      );
      expect(refusals.items.find((e) => e.message?.includes('exceeded quota'))!.message).toContain(
        'requested: cpu=1, used: cpu=1500m, limited: cpu=2',
      );
      expect((await readQuota()).status?.used?.['cpu']).toBe('1500m');
    },
    20 * 60_000,
  );

  test(
    'helm upgrade: the hook Jobs apply again, and what the release no longer renders leaves the Karmada API server',
    async () => {
      const clusterRoles = async () =>
        (
          await karmada()
            .makeApiClient(k8s.RbacAuthorizationV1Api)
            .listClusterRole({ labelSelector: `app.kubernetes.io/instance=${RELEASE}` })
        ).items.map((r) => r.metadata!.name!);
      expect(await clusterRoles()).toContain(`${RELEASE}-console`);
      const before = ranJobs.length;
      await installHelm(
        'upgrade',
        RELEASE,
        `oci://${target}/charts/karmada-quota`,
        ...['--version', version, '--plain-http', '--timeout', '5m', '--reuse-values'],
        ...['--set', 'console.enabled=false'],
      );
      expect(ranJobs.slice(before)).toEqual([`${RELEASE}-setup`, `${RELEASE}-register`]);
      expect(jobLogs.get(`${RELEASE}-setup`)!.log).toContain(`deleted ClusterRole ${RELEASE}-console`);
      expect((await clusterRoles()).sort()).toEqual(
        ['admin', 'aggregator', 'reconciler', 'view', 'webhook'].map((n) => `${RELEASE}-${n}`),
      );
      const accounts = await karmada()
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedServiceAccount({ namespace: NAMESPACE });
      expect(accounts.items.map((a) => a.metadata!.name)).not.toContain(`${RELEASE}-console`);
    },
    10 * 60_000,
  );

  test(
    'helm uninstall: the removal Job empties the Karmada API server, and nothing is left in karmada-host',
    async () => {
      await installHelm('uninstall', RELEASE, '--timeout', '5m');
      expect(ranJobs.at(-1)).toBe(`${RELEASE}-remove`);
      await jobs!.stop();
      jobs = undefined;
      await kubelet.stopAll();

      const selector = `app.kubernetes.io/instance=${RELEASE}`;
      const left = async (kc: k8s.KubeConfig): Promise<string[]> => {
        const api = k8s.KubernetesObjectApi.makeApiClient(kc);
        const found: string[] = [];
        for (const [apiVersion, kind] of [
          ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
          ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
          ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
          ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
          ['rbac.authorization.k8s.io/v1', 'Role'],
          ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
          ['v1', 'ServiceAccount'],
          ['v1', 'Secret'],
          ['v1', 'ConfigMap'],
          ['v1', 'Service'],
          ['apps/v1', 'Deployment'],
          ['batch/v1', 'Job'],
          ['networking.k8s.io/v1', 'NetworkPolicy'],
          ['policy/v1', 'PodDisruptionBudget'],
        ] as const) {
          const list = await api.list(
            apiVersion,
            kind,
            undefined,
            undefined,
            undefined,
            undefined,
            undefined,
            selector,
          );
          found.push(...list.items.map((o) => `${kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`));
        }
        return found;
      };
      expect(await left(karmada())).toEqual([]);
      expect(await left(hostCluster())).toEqual([]);
      // The CRD (crd.keepOnUninstall=false) and helm's record of the release are gone too.
      const crds = await karmada().makeApiClient(k8s.ApiextensionsV1Api).listCustomResourceDefinition();
      expect(crds.items.map((c) => c.metadata!.name)).not.toContain('karmadaquotas.quota.karmada.io');
      const secrets = await hostCluster()
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedSecret({ namespace: NAMESPACE });
      expect(secrets.items.map((s) => s.metadata!.name)).toEqual(['karmada-kubeconfig']);
    },
    10 * 60_000,
  );
});
