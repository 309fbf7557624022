import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { CRD_FILE_NAMES, crdDir } from '#api';
import { aggregatorEnv } from '../apps/aggregator/src/config.js';
import { consoleEnv } from '../apps/console/src/config.js';
import { reconcilerEnv } from '../apps/reconciler/src/config.js';
import { webhookEnv } from '../apps/webhook/src/config.js';
import { CLUSTER_SECRET_NAMESPACE, ensureBinaries, repoRoot } from '../tools/federation/src/index.js';
import { client, createNamespace, eventually, federation, uniqueName } from './support/federation.js';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [field: string]: unknown;
}
interface Container {
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
}
interface DeploymentManifest extends Manifest {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        containers: Container[];
        volumes?: { secret?: { secretName: string } }[];
      };
    };
  };
}

const root = repoRoot();
const chart = join(root, 'charts', 'karmada-quota');
/** Every service the image runs: the apps with an entry point. */
const SERVICES = readdirSync(join(root, 'apps'))
  .filter((app) => existsSync(join(root, 'apps', app, 'src', 'main.ts')))
  .sort();
/** Each service's environment variables, from its config (KUBECONFIG: in-cluster unless set). */
const SERVICE_ENV: Record<string, string[]> = {
  webhook: Object.keys(webhookEnv),
  aggregator: Object.keys(aggregatorEnv),
  reconciler: Object.keys(reconcilerEnv),
  console: Object.keys(consoleEnv),
};

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
const run = (
  command: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Run =>
  spawnSync(command, args, {
    encoding: 'utf8',
    input: options.input,
    env: { ...process.env, ...options.env },
  });

const loadManifests = (text: string): Manifest[] =>
  yaml.loadAll(text).filter((doc) => doc != null) as Manifest[];
const ofKind = <T extends Manifest = Manifest>(manifests: Manifest[], kind: string): T[] =>
  manifests.filter((m) => m.kind === kind) as T[];

describe('the Helm chart charts/karmada-quota', () => {
  const fed = federation();
  const namespace = uniqueName('kq-helm');
  const release = uniqueName('kqh'); // cluster-scoped names never meet the harness's objects
  const helmHome = mkdtempSync(join(tmpdir(), 'karmada-quota-helm-'));
  let helmPath = '';

  const helm = (...args: string[]): Run =>
    run(helmPath, args, {
      env: {
        HELM_CONFIG_HOME: join(helmHome, 'config'),
        HELM_CACHE_HOME: join(helmHome, 'cache'),
        HELM_DATA_HOME: join(helmHome, 'data'),
      },
    });
  const kubectl = (args: string[], input?: string): Run =>
    run(fed.kubectl, ['--kubeconfig', fed.host.kubeconfig, ...args], { input });
  /** `helm template` for the test namespace and the host's Kubernetes version; fails on any error. */
  const render = (...values: string[]): { text: string; manifests: Manifest[] } => {
    const rendered = helm(
      'template',
      release,
      chart,
      '--namespace',
      namespace,
      '--kube-version',
      fed.kubernetesVersion,
      '--include-crds',
      ...values.flatMap((value) => ['--set', value]),
    );
    if (rendered.status !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
    return { text: rendered.stdout, manifests: loadManifests(rendered.stdout) };
  };
  const dryRun = (manifests: string): Run =>
    kubectl(
      // No -n: every namespaced object names its namespace (the aggregator's Secret Role is elsewhere).
      ['apply', '--server-side', '--dry-run=server', '--field-manager=helm-test', '-f', '-'],
      manifests,
    );
  const deploymentOf = (manifests: Manifest[], service: string): DeploymentManifest => {
    const found = ofKind<DeploymentManifest>(manifests, 'Deployment').find(
      (d) => d.spec.template.spec.containers[0]!.args[0] === service,
    );
    if (!found) throw new Error(`no Deployment runs ${service}`);
    return found;
  };

  beforeAll(async () => {
    helmPath = (await ensureBinaries()).helm; // built and cached by `npm run kube:binaries`
    await createNamespace(fed.host, namespace);
  });

  afterAll(() => {
    const selector = `app.kubernetes.io/instance=${release}`;
    kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', selector, '--ignore-not-found']);
    kubectl([
      'delete',
      'role,rolebinding',
      '-n',
      CLUSTER_SECRET_NAMESPACE,
      '-l',
      selector,
      '--ignore-not-found',
    ]);
    kubectl(['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']);
    rmSync(helmHome, { recursive: true, force: true });
  });

  test('passes helm lint --strict, with generated certificates and with cert-manager', () => {
    for (const values of [[], ['--set', 'certManager.enabled=true']]) {
      const lint = helm('lint', '--strict', chart, ...values);
      expect(lint.stderr).toBe('');
      expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(lint.status).toBe(0);
    }
  });

  test("ships libs/api/crds' KarmadaQuota CRD unchanged", () => {
    const source = join(crdDir(), CRD_FILE_NAMES.karmadaQuota);
    const copy = join(chart, 'crds', CRD_FILE_NAMES.karmadaQuota);
    // On failure: cp libs/api/crds/quota.karmada.io_karmadaquotas.yaml charts/karmada-quota/crds/
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(source, 'utf8'));
    expect(readdirSync(join(chart, 'crds'))).toEqual([CRD_FILE_NAMES.karmadaQuota]);
  });

  test('renders a Deployment per service, each setting every variable of its configuration', () => {
    const { manifests } = render();
    expect(ofKind(manifests, 'Deployment')).toHaveLength(SERVICES.length);
    for (const service of SERVICES) {
      const container = deploymentOf(manifests, service).spec.template.spec.containers[0]!;
      const expected = SERVICE_ENV[service]!.filter((name) => name !== 'KUBECONFIG');
      expect({ service, env: container.env.map((e) => e.name).sort() }).toEqual({
        service,
        env: [...expected].sort(),
      });
    }
    const external = render('hostKubeconfig.existingSecret=karmada-kubeconfig');
    for (const service of SERVICES) {
      const env = deploymentOf(external.manifests, service).spec.template.spec.containers[0]!.env;
      expect(env.map((e) => e.name)).toContain('KUBECONFIG');
    }
  });

  test('registers the webhook as the test harness does, with the generated CA in its caBundle', () => {
    const { manifests } = render();
    const [registration] = ofKind(manifests, 'ValidatingWebhookConfiguration') as (Manifest & {
      webhooks: {
        name: string;
        clientConfig: { caBundle: string; service: { name: string; namespace: string; path: string } };
        rules: { apiGroups: string[]; resources: string[]; operations: string[] }[];
        failurePolicy: string;
        sideEffects: string;
        timeoutSeconds: number;
      }[];
    })[];
    expect(
      registration!.webhooks.map((w) => [
        w.name,
        w.clientConfig.service.path,
        w.rules[0]!.apiGroups[0],
        w.rules[0]!.resources[0],
      ]),
    ).toEqual([
      [
        'resourcebindings.quota.karmada.io',
        '/validate/resourcebindings',
        'work.karmada.io',
        'resourcebindings',
      ],
      ['karmadaquotas.quota.karmada.io', '/validate/karmadaquotas', 'quota.karmada.io', 'karmadaquotas'],
    ]);
    for (const webhook of registration!.webhooks) {
      expect(webhook).toMatchObject({
        failurePolicy: 'Fail',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 10,
      });
      expect(webhook.rules[0]!.operations).toEqual(['CREATE', 'UPDATE']);
    }
    const [secret] = ofKind(manifests, 'Secret') as (Manifest & { data: Record<string, string> })[];
    const webhookPods = deploymentOf(manifests, 'webhook').spec.template.spec;
    expect(webhookPods.volumes?.map((v) => v.secret?.secretName)).toContain(secret!.metadata.name);
    expect(registration!.webhooks[0]!.clientConfig.caBundle).toBe(secret!.data['ca.crt']);
    const service = ofKind(manifests, 'Service').find(
      (s) => s.metadata.name === registration!.webhooks[0]!.clientConfig.service.name,
    );
    expect(service).toBeDefined();
  });

  test('the rendering is accepted by the host API server (server-side dry-run), and nothing is stored', () => {
    const { text, manifests } = render();
    const applied = dryRun(text);
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
    expect(applied.stdout.trim().split('\n')).toHaveLength(manifests.length);
    for (const line of applied.stdout.trim().split('\n'))
      expect(line).toMatch(/serverside-applied \(server dry run\)$/);
    const stored = kubectl([
      'get',
      'deployments,services,serviceaccounts,secrets',
      '-n',
      namespace,
      '-o',
      'name',
    ]);
    expect(stored.stdout).not.toContain(release);
  });

  test('the dry-run validates: manifests the API server must refuse are refused', () => {
    const { manifests } = render();
    const registration = ofKind(manifests, 'ValidatingWebhookConfiguration')[0] as Manifest & {
      webhooks: { failurePolicy: string }[];
    };
    registration.webhooks[0]!.failurePolicy = 'Sometimes';
    const badPolicy = dryRun(yaml.dump(registration));
    expect(badPolicy.status).not.toBe(0);
    expect(badPolicy.stderr).toMatch(/failurePolicy: Unsupported value: "Sometimes"/);

    const deployment = deploymentOf(manifests, 'reconciler');
    deployment.spec.selector.matchLabels = { 'app.kubernetes.io/component': 'elsewhere' };
    const badSelector = dryRun(yaml.dump(deployment));
    expect(badSelector.status).not.toBe(0);
    expect(badSelector.stderr).toMatch(/`selector` does not match template `labels`/);
  });

  test('with cert-manager: a CA Issuer chain, the injected caBundle, and the rest accepted by the host', () => {
    const { manifests } = render('certManager.enabled=true');
    // The host has no cert-manager CRDs: its objects are checked here, every other one by the host.
    const certManager = manifests.filter((m) => m.apiVersion === 'cert-manager.io/v1');
    expect(certManager.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      [
        `Certificate/${release}-karmada-quota-webhook`,
        `Certificate/${release}-karmada-quota-webhook-ca`,
        `Issuer/${release}-karmada-quota-webhook-ca`,
        `Issuer/${release}-karmada-quota-webhook-selfsigned`,
      ].sort(),
    );
    const find = (kind: string, name: string) =>
      certManager.find((m) => m.kind === kind && m.metadata.name === name) as Manifest & {
        spec: Record<string, unknown>;
      };
    const webhookName = `${release}-karmada-quota-webhook`;
    const serving = find('Certificate', webhookName);
    expect(serving.spec).toMatchObject({
      dnsNames: expect.arrayContaining([`${webhookName}.${namespace}.svc`]),
      issuerRef: { kind: 'Issuer', name: `${webhookName}-ca` },
    });
    // Renewing the serving certificate keeps the root CA, so the injected caBundle stays valid.
    expect(find('Issuer', `${webhookName}-ca`).spec).toEqual({ ca: { secretName: `${webhookName}-ca` } });
    expect(find('Certificate', `${webhookName}-ca`).spec).toMatchObject({
      isCA: true,
      secretName: `${webhookName}-ca`,
      issuerRef: { kind: 'Issuer', name: `${webhookName}-selfsigned` },
    });
    expect(find('Issuer', `${webhookName}-selfsigned`).spec).toEqual({ selfSigned: {} });
    const webhookPods = deploymentOf(manifests, 'webhook').spec.template.spec;
    expect(webhookPods.volumes?.map((v) => v.secret?.secretName)).toContain(serving.spec.secretName);
    expect(ofKind(manifests, 'Secret')).toEqual([]);

    const registration = ofKind(manifests, 'ValidatingWebhookConfiguration')[0] as Manifest & {
      webhooks: { clientConfig: { caBundle?: string } }[];
    };
    expect(registration.metadata.annotations).toEqual({
      'cert-manager.io/inject-ca-from': `${namespace}/${webhookName}`,
    });
    for (const webhook of registration.webhooks) expect(webhook.clientConfig.caBundle).toBeUndefined();

    const rest = manifests.filter((m) => m.apiVersion !== 'cert-manager.io/v1');
    const applied = dryRun(rest.map((m) => yaml.dump(m)).join('---\n'));
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
  });

  test('RBAC: each service may make the calls its code makes, and no more', async () => {
    const { manifests } = render();
    const rbacKinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
    const rbac = manifests.filter((m) => rbacKinds.includes(m.kind));
    const applied = kubectl(
      ['apply', '--server-side', '--field-manager=helm-test', '-f', '-'],
      rbac.map((m) => yaml.dump(m)).join('---\n'),
    );
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);

    // What the API server answers for each service's ServiceAccount, as its token would be checked.
    const authorization = client(fed.host).makeApiClient(k8s.AuthorizationV1Api);
    const can = async (service: string, verb: string, resource: string, where = namespace) => {
      const [plural, subresource] = resource.split('/') as [string, string | undefined];
      const [name, ...group] = plural.split('.');
      const review = await authorization.createSubjectAccessReview({
        body: {
          spec: {
            user: `system:serviceaccount:${namespace}:${release}-karmada-quota-${service}`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
            resourceAttributes: {
              verb,
              resource: name,
              group: group.join('.'),
              subresource,
              namespace: where,
            },
          },
        },
      });
      return review.status?.allowed === true;
    };
    const KQ = 'karmadaquotas.quota.karmada.io';
    const table: [string, string, string, string | undefined, boolean][] = [
      // webhook: the quota cache's watch (denial Events take the quota's uid from it),
      // KubeQuotaStore list and the CAS status write; denial Events
      ['webhook', 'watch', KQ, 'team-x', true],
      ['webhook', 'list', KQ, 'team-x', true],
      ['webhook', 'update', `${KQ}/status`, 'team-x', true],
      ['webhook', 'get', KQ, 'team-x', false],
      ['webhook', 'create', 'events', 'team-x', true],
      ['webhook', 'update', KQ, 'team-x', false],
      ['webhook', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      // aggregator: Cluster and quota informers, member credentials, cluster Leases
      ['aggregator', 'watch', 'clusters.cluster.karmada.io', undefined, true],
      ['aggregator', 'list', KQ, 'team-x', true],
      ['aggregator', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, true],
      ['aggregator', 'list', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      ['aggregator', 'get', 'secrets', 'kube-system', false],
      ['aggregator', 'create', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'update', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'delete', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'create', 'leases.coordination.k8s.io', 'kube-system', false],
      ['aggregator', 'update', `${KQ}/status`, 'team-x', false],
      // reconciler: quotas (informer, get after a conflict, status), bindings, Events
      ['reconciler', 'get', KQ, 'team-x', true],
      ['reconciler', 'update', `${KQ}/status`, 'team-x', true],
      ['reconciler', 'watch', 'resourcebindings.work.karmada.io', 'team-x', true],
      ['reconciler', 'update', 'resourcebindings.work.karmada.io', 'team-x', false],
      ['reconciler', 'create', 'events', 'team-x', true],
      ['reconciler', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      // console: viewers' TokenReviews and SubjectAccessReviews, what it shows
      ['console', 'create', 'tokenreviews.authentication.k8s.io', undefined, true],
      ['console', 'create', 'subjectaccessreviews.authorization.k8s.io', undefined, true],
      ['console', 'watch', KQ, 'team-x', true],
      ['console', 'get', KQ, 'team-x', false],
      ['console', 'list', 'clusters.cluster.karmada.io', undefined, false],
      ['console', 'update', `${KQ}/status`, 'team-x', false],
      ['console', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
    ];
    const ask = () =>
      Promise.all(
        table.map(async ([service, verb, resource, where]) => ({
          service,
          verb,
          resource,
          where,
          allowed: await can(service, verb, resource, where),
        })),
      );
    const expected = table.map(([service, verb, resource, where, allowed]) => ({
      service,
      verb,
      resource,
      where,
      allowed,
    }));
    // New bindings reach the authorizer's cache within moments.
    const answers = await eventually(
      ask,
      (got) => JSON.stringify(got) === JSON.stringify(expected),
      30_000,
    ).catch(() => ask());
    expect(answers).toEqual(expected);
  });
});

describe('the Dockerfile and docker-compose.yml', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  test('copy paths that exist into the build', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources)
      expect({ source, exists: existsSync(join(root, source)) }).toEqual({ source, exists: true });
  });

  test('run every service, and only those', () => {
    const entrypoint = /^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!;
    const script = (JSON.parse(entrypoint) as string[])[2]!;
    expect(/case "\$0" in ([\w|]+)\)/.exec(script)![1]!.split('|').sort()).toEqual(SERVICES);
    const compose = yaml.load(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { command?: string[] }>;
    };
    const composed = Object.values(compose.services).flatMap(
      (s) => s.command?.filter((c) => SERVICES.includes(c)) ?? [],
    );
    expect(composed.sort()).toEqual(SERVICES);
  });
});
