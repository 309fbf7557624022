import { spawnSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER_KARMADA_QUOTA,
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
} from '#api';
import { CRD_FILE_NAMES, crdDir } from '#api/crds';
import { aggregatorEnv } from '../apps/aggregator/src/config.js';
import { consoleEnv } from '../apps/console/src/config.js';
import { reconcilerEnv } from '../apps/reconciler/src/config.js';
import { webhookEnv } from '../apps/webhook/src/config.js';
import {
  CLUSTER_SECRET_NAMESPACE,
  ensureBinaries,
  ensureKarmadaBinaries,
  repoRoot,
  WEBHOOK_CONFIGURATION_NAME,
} from '../tools/federation/src/index.js';
import {
  type ChartSchema,
  tableCells,
  VALUES_TABLE_END,
  VALUES_TABLE_START,
  valueRows,
  valuesTable,
} from '../tools/chart-readme/src/values-table.js';
import { client, createNamespace, eventually, federation, uniqueName } from './support/federation.js';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
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
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: {
        serviceAccountName: string;
        topologySpreadConstraints?: unknown[];
        containers: Container[];
        volumes?: {
          name: string;
          secret?: { secretName: string; items?: { key: string; path: string }[] };
          configMap?: { name: string };
        }[];
      };
    };
  };
}

const root = repoRoot();
const chart = join(root, 'charts', 'karmada-quota');
/** Every service the image runs: the Nest apps (the installer is the hook Jobs' command, not a service). */
const SERVICES = readdirSync(join(root, 'apps'))
  .filter((app) => existsSync(join(root, 'apps', app, 'src', 'app.module.ts')))
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
  const renderWith = (
    name: string,
    options: string[],
    values: string[],
  ): { text: string; manifests: Manifest[] } => {
    const rendered = helm(
      'template',
      name,
      chart,
      '--namespace',
      namespace,
      ...options,
      ...values.flatMap((value) => ['--set', value]),
    );
    if (rendered.status !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
    return { text: rendered.stdout, manifests: loadManifests(rendered.stdout) };
  };
  const render = (...values: string[]) =>
    renderWith(release, ['--kube-version', fed.kubernetesVersion, '--include-crds'], values);
  /**
   * Release `name` rendered against the host, as `helm upgrade` does: `lookup` sees its objects, and
   * any object of the same name must be the release's (CRDs left out: the host has its own).
   */
  const renderOnHost = (name: string, ...values: string[]) =>
    renderWith(
      name,
      ['--dry-run=server', '--kubeconfig', fed.host.kubeconfig],
      ['crd.install=false', ...values],
    );
  /** The notes `helm install` prints for these values (a client-side dry run: no cluster). */
  const notes = (...values: string[]): string => {
    const installed = helm(
      'install',
      release,
      chart,
      '--dry-run=client',
      '--namespace',
      namespace,
      ...values.flatMap((value) => ['--set', value]),
    );
    if (installed.status !== 0) throw new Error(`helm install --dry-run=client failed: ${installed.stderr}`);
    const at = installed.stdout.indexOf('NOTES:\n');
    if (at < 0) throw new Error(`no NOTES in: ${installed.stdout.slice(-2000)}`);
    return installed.stdout.slice(at);
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

  /** Whether the host lets `user` (in `groups`) make the call, as its authorizer answers a request. */
  const allowed = async (
    user: string,
    groups: string[],
    verb: string,
    resource: string,
    where: string | undefined,
  ): Promise<boolean> => {
    const [plural, subresource] = resource.split('/') as [string, string | undefined];
    const [name, ...group] = plural.split('.');
    const review = await client(fed.host)
      .makeApiClient(k8s.AuthorizationV1Api)
      .createSubjectAccessReview({
        body: {
          spec: {
            user,
            groups,
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
  /** Asks every row of `table` (…, allowed) until the answers match it (new bindings and aggregated rules take moments). */
  const expectAnswers = async <Row extends unknown[]>(
    table: [...Row, boolean][],
    ask: (row: Row) => Promise<boolean>,
  ): Promise<void> => {
    const askAll = () =>
      Promise.all(table.map(async (row) => [...row.slice(0, -1), await ask(row.slice(0, -1) as Row)]));
    const answers = await eventually(
      askAll,
      (got) => JSON.stringify(got) === JSON.stringify(table),
      60_000,
    ).catch(() => askAll());
    expect(answers).toEqual(table);
  };
  const KQ = 'karmadaquotas.quota.karmada.io';
  const CKQ = `${CLUSTER_KARMADA_QUOTA.plural}.${CLUSTER_KARMADA_QUOTA.group}`;
  const WU = 'workloadusages.quota.karmada.io';
  const ACKQ = `${APPLIED_CLUSTER_KARMADA_QUOTA.plural}.${APPLIED_CLUSTER_KARMADA_QUOTA.group}`;

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

  test('passes helm lint --strict (values.schema.json too), with generated certificates, cert-manager and monitoring', () => {
    const variants = [
      [],
      [
        'certManager.enabled=true',
        'certManager.issuerRef.kind=ClusterIssuer',
        'certManager.issuerRef.name=ca',
      ],
      [
        'monitoring.serviceMonitor.enabled=true',
        'monitoring.prometheusRule.enabled=true',
        'monitoring.dashboard.enabled=true',
      ],
      [
        'podDisruptionBudget.maxUnavailable=50%',
        'webhook.topologySpreadConstraints=null',
        'userRoles.enabled=false',
      ],
      ['webhook.clientAuth.enabled=true', 'webhook.networkPolicy.enabled=false'],
      ['karmadaKubeconfig.secretName=karmada-kubeconfig', 'webhook.url=https://10.0.0.9:8443'],
    ];
    for (const values of variants) {
      const lint = helm('lint', '--strict', chart, ...values.flatMap((value) => ['--set', value]));
      expect({ values, stderr: lint.stderr, status: lint.status }).toEqual({ values, stderr: '', status: 0 });
      expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  test('values.schema.json refuses a wrong value with a message naming it', () => {
    const refusals: [string, string][] = [
      ['webhook.replicas=abc', "at '/webhook/replicas': got string, want integer"],
      ['webhook.replicsa=3', "at '/webhook': additional properties 'replicsa' not allowed"],
      ['webhook.admissionMode=fast', "at '/webhook/admissionMode': value must be one of 'batched'"],
      ['logLevel=loud', "at '/logLevel': value must be one of"],
      ['apiRequestTimeoutSeconds=0', "at '/apiRequestTimeoutSeconds': minimum"],
      ['console.service.port=70000', "at '/console/service/port': maximum"],
      ['image.repository=', "at '/image/repository': minLength"],
      ['redis.url=http://redis:6379', "at '/redis/url': 'http://redis:6379' does not match pattern"],
      ['certManager.issuerRef.kind=Issuer', "at '/certManager/issuerRef': properties 'name' required"],
    ];
    const answers = refusals.map(([value]) => {
      const lint = helm('lint', '--strict', chart, '--set', value);
      return { value, failed: lint.status !== 0, output: `${lint.stdout}${lint.stderr}` };
    });
    for (const [i, [value, message]] of refusals.entries()) {
      expect(answers[i]).toMatchObject({ value, failed: true });
      expect(answers[i]!.output).toContain(message);
    }
  });

  test("the chart README lists every value with the schema's type and meaning and values.yaml's default", () => {
    const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as ChartSchema;
    const values = yaml.load(readFileSync(join(chart, 'values.yaml'), 'utf8'));
    const expected = tableCells(
      `${VALUES_TABLE_START}\n${valuesTable(valueRows(schema, values))}\n${VALUES_TABLE_END}`,
      VALUES_TABLE_START,
      VALUES_TABLE_END,
    );
    // On failure: npm run build && node dist/tools/chart-readme/src/main.js && npx prettier --write charts/karmada-quota/README.md
    const readme = readFileSync(join(chart, 'README.md'), 'utf8');
    expect(tableCells(readme, VALUES_TABLE_START, VALUES_TABLE_END)).toEqual(expected);
    // Every leaf of values.yaml is a row or inside one (a map or list value).
    const leaves = (value: unknown, path: string[]): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
        ? Object.entries(value).flatMap(([key, child]) => leaves(child, [...path, key]))
        : [path.join('.')];
    const rows = expected.map((cells) => cells[0]!.replaceAll('`', ''));
    const uncovered = leaves(values, []).filter(
      (leaf) => !rows.some((row) => leaf === row || leaf.startsWith(`${row}.`)),
    );
    expect(uncovered).toEqual([]);
  });

  test("ships libs/api/crds' KarmadaQuota, ClusterKarmadaQuota, AppliedClusterKarmadaQuota and WorkloadUsage CRDs unchanged, kept at uninstall unless told", () => {
    // In the order the chart renders them (files/crds sorted by name).
    const files = [
      CRD_FILE_NAMES.appliedClusterKarmadaQuota,
      CRD_FILE_NAMES.clusterKarmadaQuota,
      CRD_FILE_NAMES.karmadaQuota,
      CRD_FILE_NAMES.workloadUsage,
    ];
    // On failure: cp libs/api/crds/quota.karmada.io_* charts/karmada-quota/files/crds/
    expect(readdirSync(join(chart, 'files', 'crds')).sort()).toEqual([...files].sort());
    for (const file of files)
      expect(readFileSync(join(chart, 'files', 'crds', file), 'utf8')).toBe(
        readFileSync(join(crdDir(), file), 'utf8'),
      );
    // Not in crds/: Helm would install that into the cluster it installs into, karmada-host included.
    expect(existsSync(join(chart, 'crds'))).toBe(false);
    const crdOf = (manifests: Manifest[]) => ofKind(manifests, 'CustomResourceDefinition');
    const kept = crdOf(render().manifests);
    expect(kept).toEqual(
      files.map((file, i) => ({
        ...(yaml.load(readFileSync(join(crdDir(), file), 'utf8')) as object),
        metadata: kept[i]!.metadata,
      })),
    );
    for (const crd of kept) expect(crd.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    for (const crd of crdOf(render('crd.keepOnUninstall=false').manifests))
      expect(crd.metadata.annotations).toBeUndefined();
    expect(crdOf(render('crd.install=false').manifests)).toEqual([]);
  });

  test('into karmada-host: what belongs in the Karmada API server is only in hook ConfigMaps, applied and removed by Jobs of the image', () => {
    const intoHost = [
      'karmadaKubeconfig.secretName=karmada-kubeconfig',
      'webhook.url=https://webhook.example:8443',
    ];
    const { manifests } = render(...intoHost);
    const hooks = manifests.filter((m) => m.metadata.annotations?.['helm.sh/hook']);
    const chartObjects = manifests.filter((m) => !hooks.includes(m));
    // Nothing cluster-scoped, nothing of the Karmada API server's, is a chart object in karmada-host.
    expect(chartObjects.filter((m) => !m.metadata.namespace).map((m) => m.kind)).toEqual([]);
    expect(new Set(chartObjects.map((m) => m.kind))).toEqual(
      new Set(['ServiceAccount', 'Secret', 'Deployment', 'Service', 'NetworkPolicy', 'PodDisruptionBudget']),
    );
    type Job = Manifest & {
      spec: {
        template: {
          spec: {
            containers: (Container & { image: string })[];
            volumes: { configMap?: { name: string } }[];
          };
        };
      };
    };
    const jobs = ofKind<Job>(hooks, 'Job');
    const phases = jobs.map((job) => ({
      name: job.metadata.name,
      hook: job.metadata.annotations!['helm.sh/hook'],
      args: job.spec.template.spec.containers[0]!.args,
    }));
    expect(phases).toEqual(
      expect.arrayContaining([
        {
          name: `${release}-karmada-quota-setup`,
          hook: 'pre-install,pre-upgrade',
          args: ['installer', 'apply'],
        },
        {
          name: `${release}-karmada-quota-register`,
          hook: 'post-install,post-upgrade',
          args: ['installer', 'apply'],
        },
        { name: `${release}-karmada-quota-remove`, hook: 'pre-delete', args: ['installer', 'delete'] },
      ]),
    );
    expect(jobs).toHaveLength(3);
    const [image] = new Set(
      ofKind<DeploymentManifest & { spec: { template: { spec: { containers: { image: string }[] } } } }>(
        manifests,
        'Deployment',
      ).map((d) => d.spec.template.spec.containers[0]!.image),
    );
    for (const job of jobs) {
      expect(job.spec.template.spec.containers[0]!.image).toBe(image);
      expect(job.spec.template.spec.containers[0]!.env).toContainEqual({
        name: 'KUBECONFIG',
        value: '/etc/karmada-quota/karmada-kubeconfig/kubeconfig',
      });
    }
    // Only the register Job waits for a ready webhook (else every binding is refused until one is),
    // and the webhook's NetworkPolicy lets its readiness check in.
    const waitsFor = (job: Job) =>
      job.spec.template.spec.containers[0]!.env.find((e: { name: string }) => e.name === 'WAIT_FOR_READY_URL')
        ?.value;
    expect(Object.fromEntries(jobs.map((job) => [job.metadata.name, waitsFor(job)]))).toEqual({
      [`${release}-karmada-quota-setup`]: undefined,
      [`${release}-karmada-quota-register`]: 'https://webhook.example:8443/readyz',
      [`${release}-karmada-quota-remove`]: undefined,
    });
    // Without webhook.url, through the Service.
    const [register] = ofKind<Job>(render(intoHost[0]!).manifests, 'Job').filter((j) =>
      j.metadata.name.endsWith('-register'),
    );
    expect(waitsFor(register!)).toBe(`https://${release}-karmada-quota-webhook.${namespace}.svc:443/readyz`);
    const [policy] = ofKind<Manifest & { spec: { ingress: { from: unknown[] }[] } }>(
      manifests,
      'NetworkPolicy',
    ).filter((m) => m.metadata.name === `${release}-karmada-quota-webhook`);
    expect(policy!.spec.ingress[0]!.from).toContainEqual({
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'karmada-quota',
          'app.kubernetes.io/instance': release,
          'app.kubernetes.io/component': 'installer',
        },
      },
    });
    const objectsOf = (phase: string) => {
      const map = ofKind<Manifest & { data: Record<string, string> }>(hooks, 'ConfigMap').find(
        (m) => m.metadata.name === `${release}-karmada-quota-${phase}`,
      )!;
      return loadManifests(map.data['objects.yaml']!);
    };
    const setup = objectsOf('setup');
    expect(new Set(setup.map((o) => o.kind))).toEqual(
      new Set([
        'CustomResourceDefinition',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
      ]),
    );
    expect(
      setup
        .filter((o) => o.kind !== 'CustomResourceDefinition')
        .map((o) => o.metadata.labels?.['quota.karmada.io/install-phase']),
    ).toEqual(setup.filter((o) => o.kind !== 'CustomResourceDefinition').map(() => `${release}.setup`));
    const [registration] = objectsOf('register') as (Manifest & {
      webhooks: { clientConfig: { url: string } }[];
    })[];
    expect(registration!.kind).toBe('ValidatingWebhookConfiguration');
    expect(registration!.webhooks[0]!.clientConfig.url).toMatch(/^https:\/\/webhook\.example:8443\//);
    // The URL's host is in the serving certificate.
    const tls = ofKind<Manifest & { data: Record<string, string> }>(manifests, 'Secret')[0]!;
    const certificate = new X509Certificate(Buffer.from(tls.data['tls.crt']!, 'base64'));
    expect(certificate.subjectAltName).toContain('DNS:webhook.example');
    // The CRD is kept at uninstall unless told: the removal deletes it only then.
    expect(objectsOf('remove').map((o) => o.kind)).toEqual(['ValidatingWebhookConfiguration']);
    const removeAll = render(...intoHost, 'crd.keepOnUninstall=false');
    const removed = ofKind<Manifest & { data: Record<string, string> }>(
      removeAll.manifests,
      'ConfigMap',
    ).find((m) => m.metadata.name.endsWith('-remove'))!;
    expect(loadManifests(removed.data['objects.yaml']!).map((o) => o.kind)).toEqual([
      'ValidatingWebhookConfiguration',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
    ]);
    // cert-manager's CA injector cannot reach a registration in the Karmada API server.
    const refused = helm(
      'template',
      release,
      chart,
      ...[...intoHost, 'certManager.enabled=true'].flatMap((v) => ['--set', v]),
    );
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(
      'certManager.enabled needs the webhook registration in the cluster cert-manager runs in',
    );
  });

  test('renders a Deployment per service, each setting every variable of its configuration', () => {
    // The client certificate (CLIENT_CA_FILE, CLIENT_CERT_ALLOWED_NAMES) and the scheduler-estimator
    // (SCHEDULER_ESTIMATOR_PORT, SCHEDULER_ESTIMATOR_ADDRESS) are off by default.
    const { manifests } = render('webhook.clientAuth.enabled=true', 'schedulerEstimator.enabled=true');
    expect(ofKind(manifests, 'Deployment')).toHaveLength(SERVICES.length);
    for (const service of SERVICES) {
      const container = deploymentOf(manifests, service).spec.template.spec.containers[0]!;
      const expected = SERVICE_ENV[service]!.filter((name) => name !== 'KUBECONFIG');
      expect({ service, env: container.env.map((e) => e.name).sort() }).toEqual({
        service,
        env: [...expected].sort(),
      });
    }
    const external = render('karmadaKubeconfig.secretName=karmada-kubeconfig');
    for (const service of SERVICES) {
      const env = deploymentOf(external.manifests, service).spec.template.spec.containers[0]!.env;
      expect(env.map((e) => e.name)).toContain('KUBECONFIG');
    }
  });

  test('registers the webhook as the test harness does, with the generated CA in its caBundle', async () => {
    const { manifests } = render();
    const [registration] = ofKind(manifests, 'ValidatingWebhookConfiguration') as (Manifest & {
      webhooks: {
        name: string;
        clientConfig: { caBundle: string; service: { name: string; namespace: string; path: string } };
        rules: {
          apiGroups: string[];
          apiVersions: string[];
          resources: string[];
          operations: string[];
          scope: string;
        }[];
        failurePolicy: string;
        sideEffects: string;
        matchPolicy: string;
        timeoutSeconds: number;
      }[];
    })[];
    // The one version of each kind the webhook reads (checkKind refuses others); with matchPolicy
    // Equivalent the API server converts a request made through another version to it first. The
    // workloads' webhook only warns: it must not fail closed. A cluster-scoped kind's rule has scope
    // Cluster: a Namespaced one would never match it.
    expect(
      registration!.webhooks.map((w) => [
        w.name,
        w.clientConfig.service.path,
        w.rules.map((r) => [r.apiGroups, r.apiVersions, r.resources]),
        w.failurePolicy,
      ]),
    ).toEqual([
      [
        'resourcebindings.quota.karmada.io',
        '/validate/resourcebindings',
        [[[RESOURCE_BINDING.group], [RESOURCE_BINDING.version], ['resourcebindings']]],
        'Fail',
      ],
      [
        'karmadaquotas.quota.karmada.io',
        '/validate/karmadaquotas',
        [[[KARMADA_QUOTA.group], [KARMADA_QUOTA.version], ['karmadaquotas']]],
        'Fail',
      ],
      [
        'clusterkarmadaquotas.quota.karmada.io',
        '/validate/clusterkarmadaquotas',
        [[[CLUSTER_KARMADA_QUOTA.group], [CLUSTER_KARMADA_QUOTA.version], [CLUSTER_KARMADA_QUOTA.plural]]],
        'Fail',
      ],
      [
        'templates.quota.karmada.io',
        '/validate/templates',
        [
          [['apps'], ['v1'], ['deployments']],
          [['apps'], ['v1'], ['statefulsets']],
          [['apps'], ['v1'], ['replicasets']],
          [['batch'], ['v1'], ['jobs']],
          [[''], ['v1'], ['pods']],
        ],
        'Ignore',
      ],
    ]);
    // webhook.warnAtApply=false leaves the workloads' webhook out.
    const [withoutWarnings] = ofKind(
      render('webhook.warnAtApply=false').manifests,
      'ValidatingWebhookConfiguration',
    ) as (Manifest & {
      webhooks: { name: string }[];
    })[];
    expect(withoutWarnings!.webhooks.map((w) => w.name)).toEqual([
      'resourcebindings.quota.karmada.io',
      'karmadaquotas.quota.karmada.io',
      'clusterkarmadaquotas.quota.karmada.io',
    ]);
    // Each rule's scope is its kind's.
    const namespaced: Record<string, boolean> = {
      resourcebindings: RESOURCE_BINDING.namespaced,
      karmadaquotas: KARMADA_QUOTA.namespaced,
      [CLUSTER_KARMADA_QUOTA.plural]: CLUSTER_KARMADA_QUOTA.namespaced,
    };
    for (const rule of registration!.webhooks.flatMap((w) => w.rules))
      expect({ resources: rule.resources, scope: rule.scope }).toEqual({
        resources: rule.resources,
        scope: (namespaced[rule.resources[0]!] ?? true) ? 'Namespaced' : 'Cluster',
      });
    // Served FRQs (reconciler.serveFederatedResourceQuotas) add theirs: a change of a team's limit
    // takes the right to update KarmadaQuotas (docs/operating/switch-from-frq.md).
    const [withFrq] = ofKind(
      render('reconciler.serveFederatedResourceQuotas=true').manifests,
      'ValidatingWebhookConfiguration',
    ) as (typeof registration)[];
    expect(
      withFrq!.webhooks
        .filter((w) => !registration!.webhooks.some((r) => r.name === w.name))
        .map((w) => [
          w.name,
          w.clientConfig.service.path,
          w.rules.map((r) => [r.apiGroups, r.apiVersions, r.resources]),
          w.failurePolicy,
        ]),
    ).toEqual([
      [
        'federatedresourcequotas.quota.karmada.io',
        '/validate/federatedresourcequotas',
        [[[FEDERATED_RESOURCE_QUOTA.group], [FEDERATED_RESOURCE_QUOTA.version], ['federatedresourcequotas']]],
        'Fail',
      ],
    ]);
    for (const webhook of withFrq!.webhooks) {
      expect(webhook).toMatchObject({
        sideEffects: 'NoneOnDryRun',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 10,
      });
      for (const rule of webhook.rules) expect(rule.operations).toEqual(['CREATE', 'UPDATE']);
    }
    // The registration the harness made on the host, which the other tests run against, is the same
    // but for how the API server reaches the webhook.
    const harness = await client(fed.host)
      .makeApiClient(k8s.AdmissionregistrationV1Api)
      .readValidatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    const matching = (webhooks: object[]) =>
      webhooks.map((w) => {
        const { name, rules, namespaceSelector, failurePolicy, sideEffects, matchPolicy, timeoutSeconds } =
          w as Record<string, unknown>;
        return { name, rules, namespaceSelector, failurePolicy, sideEffects, matchPolicy, timeoutSeconds };
      });
    expect(matching(harness.webhooks ?? [])).toEqual(matching(registration!.webhooks));
    const [secret] = ofKind(manifests, 'Secret') as (Manifest & { data: Record<string, string> })[];
    const webhookPods = deploymentOf(manifests, 'webhook').spec.template.spec;
    expect(webhookPods.volumes?.map((v) => v.secret?.secretName)).toContain(secret!.metadata.name);
    expect(registration!.webhooks[0]!.clientConfig.caBundle).toBe(secret!.data['ca.crt']);
    const service = ofKind(manifests, 'Service').find(
      (s) => s.metadata.name === registration!.webhooks[0]!.clientConfig.service.name,
    );
    expect(service).toBeDefined();
  });

  /** The one NetworkPolicy of a rendering, and the webhook's environment and client CA volume. */
  const webhookProtection = (manifests: Manifest[]) => {
    const pods = deploymentOf(manifests, 'webhook').spec.template.spec;
    return {
      policies: ofKind(manifests, 'NetworkPolicy') as (Manifest & { spec: Record<string, unknown> })[],
      env: pods.containers[0]!.env.map((e) => e.name),
      clientCaVolume: pods.volumes?.find((v) => v.name === 'client-ca'),
      secrets: ofKind(manifests, 'Secret').map((m) => m.metadata.name),
    };
  };

  test("by default only karmada-apiserver's pods reach the webhook (NetworkPolicy, each installer's labels), and no client certificate is required", () => {
    const { manifests } = render();
    const webhook = deploymentOf(manifests, 'webhook');
    const { policies, env, clientCaVolume, secrets } = webhookProtection(manifests);
    // The labels karmadactl init and Karmada's Helm chart (app) and karmada-operator
    // (app.kubernetes.io/name) give karmada-apiserver's pods, in karmada-system: either admits.
    const karmadaSystem = { matchLabels: { 'kubernetes.io/metadata.name': 'karmada-system' } };
    expect(policies.map((p) => p.spec)).toEqual([
      {
        podSelector: { matchLabels: webhook.spec.selector.matchLabels },
        policyTypes: ['Ingress'],
        ingress: [
          {
            ports: [{ protocol: 'TCP', port: 8443 }],
            from: [
              {
                namespaceSelector: karmadaSystem,
                podSelector: { matchLabels: { app: 'karmada-apiserver' } },
              },
              {
                namespaceSelector: karmadaSystem,
                podSelector: { matchLabels: { 'app.kubernetes.io/name': 'karmada-apiserver' } },
              },
            ],
          },
        ],
      },
    ]);
    // Nothing karmada-apiserver must present before it may admit a binding: no CLIENT_CA_FILE.
    expect(env).not.toContain('CLIENT_CA_FILE');
    expect(env).not.toContain('CLIENT_CERT_ALLOWED_NAMES');
    expect(clientCaVolume).toBeUndefined();
    expect(secrets).toEqual([`${release}-karmada-quota-webhook-tls`]);
    expect(ofKind(manifests, 'ConfigMap').map((m) => m.metadata.name)).not.toContain(
      `${release}-karmada-quota-webhook-client-ca`,
    );
  });

  test('admissionMode owner: the webhook pods may reach each other at the peer port, and the mode is set', () => {
    const { manifests } = render('webhook.admissionMode=owner');
    const webhook = deploymentOf(manifests, 'webhook');
    const container = webhook.spec.template.spec.containers[0]!;
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'ADMISSION_MODE', value: 'owner' },
        { name: 'ADMISSION_PEER_PORT', value: '8444' },
        { name: 'ADMISSION_PEER_CA_FILE', value: '/etc/karmada-quota/tls/ca.crt' },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      ]),
    );
    const [policy] = webhookProtection(manifests).policies;
    expect((policy!.spec['ingress'] as unknown[])[1]).toEqual({
      ports: [{ protocol: 'TCP', port: 8444 }],
      from: [{ podSelector: { matchLabels: webhook.spec.selector.matchLabels } }],
    });
    // In the batched modes the peer port is not opened.
    const batched = webhookProtection(render().manifests).policies[0]!;
    expect(batched.spec['ingress']).toHaveLength(1);
    // cert-manager's serving certificate allows client auth in owner mode only (the peers present it).
    const servingUsages = (...values: string[]) =>
      (
        render('certManager.enabled=true', ...values).manifests.find(
          (m) => m.kind === 'Certificate' && m.metadata.name === `${release}-karmada-quota-webhook`,
        ) as Manifest & { spec: { usages?: string[] } }
      ).spec.usages;
    expect(servingUsages('webhook.admissionMode=owner')).toEqual([
      'digital signature',
      'key encipherment',
      'server auth',
      'client auth',
    ]);
    expect(servingUsages()).toBeUndefined();
  });

  test("the default pod selectors match the labels each of Karmada's installers gives karmada-apiserver's pods", async () => {
    // Karmada's source at the version the tests run (go.mod of tools/kube-binaries/karmada), in the
    // Go module cache: crdDir is its charts/karmada/_crds/bases.
    const karmada = resolve((await ensureKarmadaBinaries()).crdDir, '..', '..', '..', '..');
    const source = (path: string) => readFileSync(join(karmada, path), 'utf8');
    const match = (text: string, pattern: RegExp, what: string): RegExpExecArray => {
      const found = pattern.exec(text);
      if (!found) throw new Error(`Karmada's source no longer has ${what} (${pattern})`);
      return found;
    };
    // karmadactl init: apiServerLabels = map[string]string{"app": karmadaAPIServerDeploymentAndServiceName}
    const cmdinit = source('pkg/karmadactl/cmdinit/kubernetes/deployments.go');
    const [, initKey, initConstant] = match(
      cmdinit,
      /\bapiServerLabels\s*=\s*map\[string\]string\{"([^"]+)":\s*(\w+)\}/,
      "karmadactl init's apiServerLabels",
    );
    const [, initValue] = match(
      cmdinit,
      new RegExp(`\\b${initConstant}\\s*=\\s*"([^"]+)"`),
      `karmadactl init's ${initConstant}`,
    );
    // Karmada's Helm chart: the pods get apiServer.labels.
    const helmChart = (
      yaml.load(source('charts/karmada/values.yaml')) as { apiServer: { labels: Record<string, string> } }
    ).apiServer.labels;
    // karmada-operator: the labels of the Deployment's pod template.
    const [, operatorLabels] = match(
      source('operator/pkg/controlplane/apiserver/manifests.go'),
      /\n {2}template:\n {4}metadata:\n {6}labels:\n((?: {8}\S+: [^\n]+\n)+)/,
      "karmada-operator's karmada-apiserver pod labels",
    );
    const podLabels: Record<string, Record<string, string>> = {
      'karmadactl init': { [initKey!]: initValue! },
      "Karmada's Helm chart": helmChart,
      'karmada-operator': Object.fromEntries(
        operatorLabels!
          .trim()
          .split('\n')
          .map((line) => line.trim().split(': ') as [string, string]),
      ),
    };
    const { podSelectors } = (
      yaml.load(readFileSync(join(chart, 'values.yaml'), 'utf8')) as {
        webhook: {
          networkPolicy: { apiServer: { podSelectors: { matchLabels: Record<string, string> }[] } };
        };
      }
    ).webhook.networkPolicy.apiServer;
    const selected = (labels: Record<string, string>) =>
      podSelectors.some((selector) =>
        Object.entries(selector.matchLabels).every(([key, value]) => labels[key] === value),
      );
    expect(Object.entries(podLabels).map(([installer, labels]) => [installer, selected(labels)])).toEqual([
      ['karmadactl init', true],
      ["Karmada's Helm chart", true],
      ['karmada-operator', true],
    ]);
    // What the docs name: app (karmadactl init, the Helm chart) and app.kubernetes.io/name (the operator).
    expect(podLabels['karmadactl init']).toEqual({ app: 'karmada-apiserver' });
    expect(podLabels["Karmada's Helm chart"]).toEqual({ app: 'karmada-apiserver' });
    expect(podLabels['karmada-operator']).toMatchObject({ 'app.kubernetes.io/name': 'karmada-apiserver' });
    // karmadactl init's default namespace, which the default namespaceSelector names.
    expect(source('pkg/karmadactl/cmdinit/cmdinit.go')).toMatch(
      /StringVarP\(&opts\.Namespace, "namespace", "n", "karmada-system"/,
    );
  });

  test("schedulerEstimator: the webhook's estimator port on its pods and Service, karmada-scheduler's pods admitted to it, the reconciler pointing there", () => {
    const off = render();
    expect(JSON.stringify(off.manifests)).not.toContain('estimator');
    const { manifests } = render('schedulerEstimator.enabled=true');
    const webhook = deploymentOf(manifests, 'webhook').spec.template.spec.containers[0]!;
    expect(webhook.env).toContainEqual({ name: 'SCHEDULER_ESTIMATOR_PORT', value: '10352' });
    expect((webhook as unknown as { ports: unknown[] }).ports).toContainEqual({
      name: 'grpc-estimator',
      containerPort: 10352,
    });
    const service = ofKind<Manifest & { spec: { ports: unknown[] } }>(manifests, 'Service').find(
      (m) => m.metadata.name === `${release}-karmada-quota-webhook`,
    )!;
    expect(service.spec.ports).toContainEqual({
      name: 'grpc-estimator',
      port: 10352,
      targetPort: 'grpc-estimator',
    });
    const reconciler = deploymentOf(manifests, 'reconciler').spec.template.spec.containers[0]!;
    expect(reconciler.env).toContainEqual({
      name: 'SCHEDULER_ESTIMATOR_ADDRESS',
      value: `${release}-karmada-quota-webhook.${namespace}.svc:10352`,
    });
    const [policy] = webhookProtection(manifests).policies as (Manifest & {
      spec: { ingress: { ports: unknown[]; from: unknown[] }[] };
    })[];
    const karmadaSystem = { matchLabels: { 'kubernetes.io/metadata.name': 'karmada-system' } };
    expect(policy!.spec.ingress[1]).toEqual({
      ports: [{ protocol: 'TCP', port: 10352 }],
      from: [
        { namespaceSelector: karmadaSystem, podSelector: { matchLabels: { app: 'karmada-scheduler' } } },
        {
          namespaceSelector: karmadaSystem,
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'karmada-scheduler' } },
        },
        { namespaceSelector: karmadaSystem, podSelector: { matchLabels: { app: 'karmada-descheduler' } } },
        {
          namespaceSelector: karmadaSystem,
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'karmada-descheduler' } },
        },
      ],
    });
    const elsewhere = render(
      'schedulerEstimator.enabled=true',
      'schedulerEstimator.address=quota.example.com:4000',
    );
    expect(
      deploymentOf(elsewhere.manifests, 'reconciler').spec.template.spec.containers[0]!.env,
    ).toContainEqual({
      name: 'SCHEDULER_ESTIMATOR_ADDRESS',
      value: 'quota.example.com:4000',
    });
  });

  test('the notes say which protection is active, and warn when there is none', () => {
    const byDefault = notes();
    expect(byDefault).toContain('Who may call the webhook: NetworkPolicy (client certificate off).');
    expect(byDefault).toContain(
      'pods labelled app=karmada-apiserver in namespaces kubernetes.io/metadata.name=karmada-system',
    );
    expect(byDefault).toContain(
      'pods labelled app.kubernetes.io/name=karmada-apiserver in namespaces kubernetes.io/metadata.name=karmada-system',
    );
    expect(byDefault).toContain('CNI enforces NetworkPolicies');
    expect(byDefault).toContain('webhook.clientAuth.enabled=true'); // the hardening step
    expect(byDefault).not.toContain('Until then every ResourceBinding is refused');
    expect(byDefault).not.toContain('WARNING');

    const both = notes('webhook.clientAuth.enabled=true');
    expect(both).toContain('Who may call the webhook: NetworkPolicy and client certificate.');
    expect(both).toContain(
      `from Secret ${release}-karmada-quota-webhook-apiserver-client (tls.crt, tls.key)`,
    );
    expect(both).toContain('Until then every ResourceBinding is refused');
    expect(both).not.toContain('WARNING');

    const certificateOnly = notes('webhook.clientAuth.enabled=true', 'webhook.networkPolicy.enabled=false');
    expect(certificateOnly).toContain('Who may call the webhook: client certificate (NetworkPolicy off).');
    expect(certificateOnly).not.toContain("admits to the webhook's port");
    expect(certificateOnly).not.toContain('WARNING');

    const none = notes('webhook.networkPolicy.enabled=false');
    expect(none).toContain('Who may call the webhook: none.');
    expect(none).toContain(
      'WARNING: neither webhook.networkPolicy nor webhook.clientAuth is enabled: anything that reaches the',
    );

    const byAddress = notes(
      'webhook.networkPolicy.apiServer.podSelectors=null',
      'webhook.networkPolicy.apiServer.namespaceSelector=null',
      'webhook.networkPolicy.apiServer.cidrs={10.0.0.10/32}',
    );
    expect(byAddress).toContain('  - addresses 10.0.0.10/32');
    expect(byAddress).not.toContain('pods labelled');
  });

  test('with clientAuth enabled the API server must present a client certificate: issued for it, its CA', () => {
    const { manifests } = render('webhook.clientAuth.enabled=true');
    const webhook = deploymentOf(manifests, 'webhook');
    const pods = webhook.spec.template.spec;
    expect(pods.containers[0]!.env).toContainEqual({
      name: 'CLIENT_CA_FILE',
      value: '/etc/karmada-quota/client-ca/ca.crt',
    });
    const clientSecretName = `${release}-karmada-quota-webhook-apiserver-client`;
    expect(pods.volumes?.find((v) => v.name === 'client-ca')?.secret).toEqual({
      secretName: clientSecretName,
      items: [{ key: 'ca.crt', path: 'ca.crt' }],
    });
    const clientSecret = ofKind(manifests, 'Secret').find(
      (m) => m.metadata.name === clientSecretName,
    ) as Manifest & {
      data: Record<string, string>;
    };
    const pemOf = (key: string) => Buffer.from(clientSecret.data[key]!, 'base64');
    const ca = new X509Certificate(pemOf('ca.crt'));
    const certificate = new X509Certificate(pemOf('tls.crt'));
    expect(certificate.verify(ca.publicKey)).toBe(true);
    expect(certificate.keyUsage).toContain('1.3.6.1.5.5.7.3.2'); // TLS client authentication
    expect(certificate.checkPrivateKey(createPrivateKey(pemOf('tls.key')))).toBe(true);
    // The NetworkPolicy stays: both locks.
    expect(webhookProtection(manifests).policies).toHaveLength(1);
  });

  test('the client CA from values or a Secret, the API server by address, the off switches, and refusals', () => {
    const clientCaVolume = (manifests: Manifest[]) =>
      deploymentOf(manifests, 'webhook').spec.template.spec.volumes?.find((v) => v.name === 'client-ca');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const inline = render('webhook.clientAuth.enabled=true', `webhook.clientAuth.caBundle=${pem}`).manifests;
    const [configMap] = ofKind(inline, 'ConfigMap') as (Manifest & { data: Record<string, string> })[];
    expect(configMap!.data).toEqual({ 'ca.crt': pem });
    expect(clientCaVolume(inline)?.configMap).toEqual({ name: configMap!.metadata.name });
    expect(ofKind(inline, 'Secret').map((m) => m.metadata.name)).toEqual([
      `${release}-karmada-quota-webhook-tls`,
    ]);

    const existing = render(
      'webhook.clientAuth.enabled=true',
      'webhook.clientAuth.existingSecret=karmada-cert',
      'webhook.clientAuth.existingSecretKey=ca.pem',
    );
    expect(clientCaVolume(existing.manifests)?.secret).toEqual({
      secretName: 'karmada-cert',
      items: [{ key: 'ca.pem', path: 'ca.crt' }],
    });

    const webhookEnv = (manifests: Manifest[]) =>
      deploymentOf(manifests, 'webhook').spec.template.spec.containers[0]!.env;
    expect(webhookEnv(render('webhook.clientAuth.enabled=true').manifests)).toContainEqual({
      name: 'CLIENT_CERT_ALLOWED_NAMES',
      value: '',
    });
    expect(
      webhookEnv(
        render(
          'webhook.clientAuth.enabled=true',
          'webhook.clientAuth.allowedNames={karmada-apiserver,host-apiserver}',
        ).manifests,
      ),
    ).toContainEqual({ name: 'CLIENT_CERT_ALLOWED_NAMES', value: 'karmada-apiserver,host-apiserver' });

    const off = render('webhook.clientAuth.enabled=false', 'webhook.networkPolicy.enabled=false').manifests;
    expect(
      deploymentOf(off, 'webhook').spec.template.spec.containers[0]!.env.map((e) => e.name),
    ).not.toContain('CLIENT_CA_FILE');
    expect(clientCaVolume(off)).toBeUndefined();
    expect(ofKind(off, 'Secret')).toHaveLength(1);
    expect(ofKind(off, 'NetworkPolicy')).toEqual([]);

    const peersOf = (...values: string[]) =>
      (
        ofKind(render(...values).manifests, 'NetworkPolicy') as (Manifest & {
          spec: { ingress: { from: unknown[] }[] };
        })[]
      )[0]!.spec.ingress[0]!.from;
    expect(
      peersOf(
        'webhook.networkPolicy.apiServer.namespaceSelector=null',
        'webhook.networkPolicy.apiServer.podSelectors=null',
        'webhook.networkPolicy.apiServer.cidrs={10.0.0.10/32}',
      ),
    ).toEqual([{ ipBlock: { cidr: '10.0.0.10/32' } }]);
    // Other labels and namespaces: one peer per pod selector, each with the namespace selector.
    expect(
      peersOf(
        'webhook.networkPolicy.apiServer.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=my-karmada',
        'webhook.networkPolicy.apiServer.podSelectors[0].matchLabels.app\\.kubernetes\\.io/instance=one',
      ),
    ).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'my-karmada' } },
        podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'one' } },
      },
    ]);

    const refused = (...values: string[]) =>
      helm('template', release, chart, ...values.flatMap((value) => ['--set', value])).stderr;
    expect(refused('webhook.clientAuth.caBundle=x', 'webhook.clientAuth.existingSecret=y')).toContain(
      'set one of webhook.clientAuth.caBundle and webhook.clientAuth.existingSecret, not both',
    );
    expect(
      refused(
        'webhook.networkPolicy.apiServer.namespaceSelector=null',
        'webhook.networkPolicy.apiServer.podSelectors=null',
      ),
    ).toContain("webhook.networkPolicy: set apiServer's selectors or cidrs to the Karmada API server");
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
    const { manifests } = render('certManager.enabled=true', 'webhook.clientAuth.enabled=true');
    // The host has no cert-manager CRDs: its objects are checked here, every other one by the host.
    const certManager = manifests.filter((m) => m.apiVersion === 'cert-manager.io/v1');
    expect(certManager.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      [
        `Certificate/${release}-karmada-quota-webhook`,
        `Certificate/${release}-karmada-quota-webhook-apiserver-client`,
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
    // The API server's client certificate, from the same issuer; the webhook trusts its Secret's CA.
    const apiServerClient = find('Certificate', `${webhookName}-apiserver-client`);
    expect(apiServerClient.spec).toMatchObject({
      usages: ['digital signature', 'client auth'],
      issuerRef: { kind: 'Issuer', name: `${webhookName}-ca` },
    });
    expect(webhookPods.volumes?.find((v) => v.name === 'client-ca')?.secret).toEqual({
      secretName: apiServerClient.spec.secretName,
      items: [{ key: 'ca.crt', path: 'ca.crt' }],
    });
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
    const can = ([service, verb, resource, where]: [string, string, string, string | undefined]) =>
      allowed(
        `system:serviceaccount:${namespace}:${release}-karmada-quota-${service}`,
        ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        verb,
        resource,
        where ?? namespace,
      );
    const table: [string, string, string, string | undefined, boolean][] = [
      // webhook: the quota cache's watch (denial Events take the quota's uid from it),
      // KubeQuotaStore list and the CAS status write; denial Events
      ['webhook', 'watch', KQ, 'team-x', true],
      ['webhook', 'list', KQ, 'team-x', true],
      ['webhook', 'update', `${KQ}/status`, 'team-x', true],
      ['webhook', 'get', KQ, 'team-x', false],
      ['webhook', 'create', 'events', 'team-x', true],
      // webhook: a create of a stored name is refused before it claims (duplicate creates)
      ['webhook', 'get', 'resourcebindings.work.karmada.io', 'team-x', true],
      // webhook: the bindings' version (the fence), and the admission owner's watch of them
      ['webhook', 'list', 'resourcebindings.work.karmada.io', undefined, true],
      ['webhook', 'watch', 'resourcebindings.work.karmada.io', undefined, true],
      ['webhook', 'update', 'resourcebindings.work.karmada.io', 'team-x', false],
      ['webhook', 'update', KQ, 'team-x', false],
      ['webhook', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      // webhook: ClusterKarmadaQuotas as KarmadaQuotas, one read by name, and the namespaces' labels
      // their selectors pick by ('': cluster-scoped)
      ['webhook', 'watch', CKQ, '', true],
      ['webhook', 'list', CKQ, '', true],
      ['webhook', 'get', CKQ, '', true],
      ['webhook', 'update', `${CKQ}/status`, '', true],
      ['webhook', 'update', CKQ, '', false],
      ['webhook', 'watch', 'namespaces', '', true],
      ['webhook', 'list', 'namespaces', '', true],
      ['webhook', 'get', 'namespaces', '', true],
      ['webhook', 'update', 'namespaces', '', false],
      // webhook: the admission Lease (KubeAdmissionLeaseApi, every mode), in the lease namespace only
      ['webhook', 'get', 'leases.coordination.k8s.io', undefined, true],
      ['webhook', 'create', 'leases.coordination.k8s.io', undefined, true],
      ['webhook', 'update', 'leases.coordination.k8s.io', undefined, true],
      ['webhook', 'delete', 'leases.coordination.k8s.io', undefined, false],
      ['webhook', 'list', 'leases.coordination.k8s.io', undefined, true],
      ['webhook', 'watch', 'leases.coordination.k8s.io', undefined, true],
      ['webhook', 'update', 'leases.coordination.k8s.io', 'kube-system', false],
      // aggregator: Cluster and quota informers, member credentials, cluster and membership Leases
      ['aggregator', 'watch', 'clusters.cluster.karmada.io', undefined, true],
      ['aggregator', 'list', KQ, 'team-x', true],
      ['aggregator', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, true],
      ['aggregator', 'list', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      ['aggregator', 'get', 'secrets', 'kube-system', false],
      ['aggregator', 'list', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'watch', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'create', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'update', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'delete', 'leases.coordination.k8s.io', undefined, true],
      ['aggregator', 'create', 'leases.coordination.k8s.io', 'kube-system', false],
      ['aggregator', 'update', `${KQ}/status`, 'team-x', false],
      ['aggregator', 'list', CKQ, '', true],
      ['aggregator', 'watch', CKQ, '', true],
      ['aggregator', 'update', `${CKQ}/status`, '', false],
      ['aggregator', 'list', 'namespaces', '', false],
      // reconciler: quotas (informer, get after a conflict, status), bindings, Events
      ['reconciler', 'get', KQ, 'team-x', true],
      ['reconciler', 'update', `${KQ}/status`, 'team-x', true],
      ['reconciler', 'watch', 'resourcebindings.work.karmada.io', 'team-x', true],
      ['reconciler', 'update', 'resourcebindings.work.karmada.io', 'team-x', false],
      ['reconciler', 'create', 'events', 'team-x', true],
      ['reconciler', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      // reconciler: ClusterKarmadaQuotas as KarmadaQuotas, and the namespaces their selectors pick
      ['reconciler', 'get', CKQ, '', true],
      ['reconciler', 'list', CKQ, '', true],
      ['reconciler', 'watch', CKQ, '', true],
      ['reconciler', 'update', `${CKQ}/status`, '', true],
      ['reconciler', 'update', CKQ, '', false],
      ['reconciler', 'delete', CKQ, '', false],
      ['reconciler', 'get', 'namespaces', '', true],
      ['reconciler', 'list', 'namespaces', '', true],
      ['reconciler', 'watch', 'namespaces', '', true],
      ['reconciler', 'patch', 'namespaces', '', false],
      // reconciler: the AppliedClusterKarmadaQuotas, listed across namespaces, by server-side apply
      ['reconciler', 'list', ACKQ, '', true],
      ['reconciler', 'get', ACKQ, 'team-x', true],
      ['reconciler', 'create', ACKQ, 'team-x', true],
      ['reconciler', 'patch', ACKQ, 'team-x', true],
      ['reconciler', 'update', ACKQ, 'team-x', true],
      ['reconciler', 'delete', ACKQ, 'team-x', true],
      ['reconciler', 'deletecollection', ACKQ, 'team-x', false],
      ['webhook', 'create', ACKQ, 'team-x', false],
      ['aggregator', 'list', ACKQ, '', false],
      // reconciler: the usage record, by server-side apply
      ['reconciler', 'create', WU, 'team-x', true],
      ['reconciler', 'patch', WU, 'team-x', true],
      ['reconciler', 'delete', WU, 'team-x', false],
      ['reconciler', 'patch', 'configmaps', 'team-x', false],
      // console: viewers' TokenReviews and SubjectAccessReviews, what it shows
      ['console', 'create', 'tokenreviews.authentication.k8s.io', undefined, true],
      ['console', 'create', 'subjectaccessreviews.authorization.k8s.io', undefined, true],
      ['console', 'watch', KQ, 'team-x', true],
      ['console', 'watch', 'resourcebindings.work.karmada.io', 'team-x', true],
      ['console', 'update', 'resourcebindings.work.karmada.io', 'team-x', false],
      ['console', 'get', KQ, 'team-x', false],
      ['console', 'list', 'clusters.cluster.karmada.io', undefined, false],
      ['console', 'update', `${KQ}/status`, 'team-x', false],
      ['console', 'get', 'secrets', CLUSTER_SECRET_NAMESPACE, false],
      ['console', 'get', WU, 'team-x', true],
      ['console', 'patch', WU, 'team-x', false],
      ['console', 'list', CKQ, '', true],
      ['console', 'watch', CKQ, '', true],
      ['console', 'get', CKQ, '', false],
      ['console', 'update', `${CKQ}/status`, '', false],
      ['console', 'list', 'namespaces', '', false],
    ];
    // The estimator Services karmada-scheduler finds, only with schedulerEstimator.enabled.
    table.push(['reconciler', 'create', 'services', 'karmada-system', false]);
    const FRQ = 'federatedresourcequotas.policy.karmada.io';
    const serving: [string, string, string, string | undefined][] = [
      ['reconciler', 'watch', FRQ, 'team-x'],
      ['reconciler', 'update', `${FRQ}/status`, 'team-x'],
      ['reconciler', 'create', KQ, 'team-x'],
      ['reconciler', 'update', KQ, 'team-x'],
      ['reconciler', 'delete', KQ, 'team-x'],
      // the webhook asks whether a writer of an FRQ's limit may update KarmadaQuotas
      ['webhook', 'create', 'subjectaccessreviews.authorization.k8s.io', undefined],
    ];
    await expectAnswers(
      [...table, ...serving.map((call) => [...call, false] as (typeof table)[number])],
      can,
    );
    // Serving Karmada's FederatedResourceQuotas (docs/operating/switch-from-frq.md) grants those.
    const withFrq = render('reconciler.serveFederatedResourceQuotas=true').manifests.filter((m) =>
      rbacKinds.includes(m.kind),
    );
    const reapplied = kubectl(
      ['apply', '--server-side', '--field-manager=helm-test', '-f', '-'],
      withFrq.map((m) => yaml.dump(m)).join('---\n'),
    );
    expect(reapplied.status).toBe(0);
    await expectAnswers(
      [
        ...serving.map((call) => [...call, true] as (typeof table)[number]),
        ['reconciler', 'update', FRQ, 'team-x', false],
        ['reconciler', 'update', `${KQ}/status`, 'team-x', true],
        ['reconciler', 'create', CKQ, '', false],
      ],
      can,
    );
    // Karmada's namespace, where karmada-scheduler looks for the estimator Services.
    kubectl(['create', 'namespace', 'karmada-system']);
    const withEstimator = render('schedulerEstimator.enabled=true').manifests.filter((m) =>
      rbacKinds.includes(m.kind),
    );
    expect(
      kubectl(
        ['apply', '--server-side', '--field-manager=helm-test', '-f', '-'],
        withEstimator.map((m) => yaml.dump(m)).join('---\n'),
      ).status,
    ).toBe(0);
    await expectAnswers(
      [
        ...(['get', 'list', 'create', 'update', 'delete'] as const).map(
          (verb) => ['reconciler', verb, 'services', 'karmada-system', true] as (typeof table)[number],
        ),
        ['reconciler', 'create', 'services', 'team-x', false],
        ['reconciler', 'patch', 'services', 'karmada-system', false],
      ],
      can,
    );
  });

  test('roles for people: reading KarmadaQuotas, ClusterKarmadaQuotas and their projections aggregated into view, edit and admin; writing quotas in a role aggregated nowhere', () => {
    // test/tenant-roles.test.ts applies these roles to the host and writes quotas as each user.
    const aggregatedInto = (m: Manifest) =>
      Object.keys(m.metadata.labels ?? {})
        .filter((l) => l.startsWith('rbac.authorization.k8s.io/aggregate-to-'))
        .map((l) => l.slice('rbac.authorization.k8s.io/aggregate-to-'.length));
    const userRoles = (manifests: Manifest[]) =>
      (ofKind(manifests, 'ClusterRole') as (Manifest & { rules: unknown[] })[])
        .filter((m) =>
          [`${release}-karmada-quota-view`, `${release}-karmada-quota-admin`].includes(m.metadata.name),
        )
        .map((m) => [m.metadata.name, aggregatedInto(m), m.rules]);
    expect(userRoles(render('userRoles.enabled=false').manifests)).toEqual([]);
    const quotas = {
      apiGroups: [KARMADA_QUOTA.group],
      resources: [KARMADA_QUOTA.plural, CLUSTER_KARMADA_QUOTA.plural],
    };
    const usageRecord = {
      apiGroups: [KARMADA_QUOTA.group],
      resources: ['workloadusages'],
      verbs: ['get', 'list', 'watch'],
    };
    const applied = {
      apiGroups: [KARMADA_QUOTA.group],
      resources: [APPLIED_CLUSTER_KARMADA_QUOTA.plural],
      verbs: ['get', 'list', 'watch'],
    };
    expect(userRoles(render().manifests)).toEqual([
      [
        `${release}-karmada-quota-view`,
        ['view', 'edit', 'admin'],
        [{ ...quotas, verbs: ['get', 'list', 'watch'] }, applied, usageRecord],
      ],
      [
        `${release}-karmada-quota-admin`,
        [],
        [
          {
            ...quotas,
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
          },
          applied,
          usageRecord,
        ],
      ],
    ]);
    // No other role of the chart is aggregated into the built-in ones.
    expect(
      ofKind(render().manifests, 'ClusterRole')
        .filter((m) => aggregatedInto(m).length > 0)
        .map((m) => m.metadata.name),
    ).toEqual([`${release}-karmada-quota-view`]);
  });

  test('the generated certificates are kept when rendered against the cluster, renewed when stale or for other names', () => {
    // A release of its own: the other tests' objects here are no release's.
    const keptRelease = uniqueName('kqk');
    const servingName = `${keptRelease}-karmada-quota-webhook-tls`;
    const clientName = `${keptRelease}-karmada-quota-webhook-apiserver-client`;
    type Secret = Manifest & { data: Record<string, string> };
    const certificates = (manifests: Manifest[]) => {
      const secret = (name: string) =>
        ofKind<Secret>(manifests, 'Secret').find((m) =>
          m.metadata.name.endsWith(name.slice(keptRelease.length)),
        )!;
      const registration = ofKind(manifests, 'ValidatingWebhookConfiguration')[0] as Manifest & {
        webhooks: { clientConfig: { caBundle: string } }[];
      };
      return {
        serving: secret(servingName).data['tls.crt']!,
        client: secret(clientName).data['tls.crt']!,
        clientCa: secret(clientName).data['ca.crt']!,
        caBundle: registration.webhooks[0]!.clientConfig.caBundle,
        rollout: deploymentOf(manifests, 'webhook').spec.template.metadata.annotations?.[
          'karmada-quota.io/tls-checksum'
        ],
      };
    };
    /** The CAs of a base64 PEM bundle, and whether one of them signed a base64 PEM certificate. */
    const authorities = (bundle: string) =>
      (
        Buffer.from(bundle, 'base64')
          .toString()
          .match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []
      ).map((pem) => new X509Certificate(pem));
    const trusts = (bundle: string, certificate: string) =>
      authorities(bundle).some((ca) =>
        new X509Certificate(Buffer.from(certificate, 'base64')).verify(ca.publicKey),
      );
    // With the client certificate, which is off by default.
    const withClientAuth = 'webhook.clientAuth.enabled=true';
    // Without a cluster nothing can be looked up: every render generates anew.
    expect(certificates(render(withClientAuth).manifests).serving).not.toBe(
      certificates(render(withClientAuth).manifests).serving,
    );

    const onHost = () => renderOnHost(keptRelease, withClientAuth);
    const first = onHost();
    const secrets = ofKind<Secret>(first.manifests, 'Secret');
    // As `helm install` stores them: owned by the release, so a later render may reuse them.
    for (const secret of secrets)
      Object.assign(secret.metadata.annotations!, {
        'meta.helm.sh/release-name': keptRelease,
        'meta.helm.sh/release-namespace': namespace,
      });
    const stored = kubectl(
      ['apply', '--server-side', '--field-manager=helm-test', '-f', '-'],
      secrets.map((m) => yaml.dump(m)).join('---\n'),
    );
    expect(stored.stderr).toBe('');
    const kept = certificates(first.manifests);
    expect(kept.caBundle).toBe(secrets.find((m) => m.metadata.name === servingName)!.data['ca.crt']);
    expect(certificates(onHost().manifests)).toEqual(kept);

    const annotate = (name: string, annotation: string) =>
      expect(kubectl(['annotate', '--overwrite', '-n', namespace, `secret/${name}`, annotation]).stderr).toBe(
        '',
      );
    // Issued for another Service name: a new serving certificate, CA and rollout; the client one stays.
    annotate(servingName, 'karmada-quota.io/names=elsewhere.example.svc');
    const renamed = certificates(onHost().manifests);
    expect(renamed.client).toBe(kept.client);
    for (const field of ['serving', 'caBundle', 'rollout'] as const)
      expect(renamed[field]).not.toBe(kept[field]);
    // The API server trusts the new certificate and, until the pods reload, the old one: no refusals.
    expect(authorities(kept.caBundle)).toHaveLength(1);
    expect(authorities(renamed.caBundle)).toHaveLength(2);
    expect([trusts(renamed.caBundle, renamed.serving), trusts(renamed.caBundle, kept.serving)]).toEqual([
      true,
      true,
    ]);
    // In the last third of its validity (3650 days): renewed, and the webhook still trusts the API
    // server's old client certificate until it presents the new one.
    const soon = new Date(Date.now() + 24 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    annotate(clientName, `karmada-quota.io/not-after=${soon}`);
    const renewed = certificates(onHost().manifests);
    expect(renewed.client).not.toBe(kept.client);
    expect([trusts(renewed.clientCa, renewed.client), trusts(renewed.clientCa, kept.client)]).toEqual([
      true,
      true,
    ]);
    expect(trusts(kept.clientCa, renewed.client)).toBe(false);
  });

  test('spreads the webhook over zones and nodes where it can, and keeps all but one up in a disruption', () => {
    const { manifests } = render();
    const webhook = deploymentOf(manifests, 'webhook');
    const selector = { matchLabels: webhook.spec.selector.matchLabels };
    expect(webhook.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        labelSelector: selector,
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
      },
      {
        labelSelector: selector,
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
      },
    ]);
    const budgets = (m: Manifest[]) =>
      (ofKind(m, 'PodDisruptionBudget') as (Manifest & { spec: Record<string, unknown> })[]).filter(
        (b) => b.metadata.name === webhook.metadata.name,
      );
    expect(budgets(manifests).map((b) => b.spec)).toEqual([{ maxUnavailable: 1, selector }]);
    expect(budgets(render('webhook.replicas=1').manifests)).toEqual([]);

    const strict = render(
      'webhook.topologySpreadConstraints[0].maxSkew=1',
      'webhook.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname',
      'webhook.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
    ).manifests;
    expect(deploymentOf(strict, 'webhook').spec.template.spec.topologySpreadConstraints).toEqual([
      {
        labelSelector: selector,
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
      },
    ]);
    const off = render('webhook.topologySpreadConstraints=null').manifests;
    expect(deploymentOf(off, 'webhook').spec.template.spec.topologySpreadConstraints).toBeUndefined();
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
    const entrypoint = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!) as string[];
    expect(entrypoint).toEqual(['node', 'dist/apps/main.js']);
    // Without an argument it names what it runs: the services and the installer of the chart's hook
    // Jobs (the build is in dist/ for the integration tests).
    const listed = run(process.execPath, [join(root, entrypoint[1]!)]);
    expect(listed.status).toBe(2);
    expect(listed.stderr).toContain(`one of ${[...SERVICES, 'installer'].sort().join(', ')} `);
    const compose = yaml.load(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { command?: string[] }>;
    };
    const composed = Object.values(compose.services).flatMap(
      (s) => s.command?.filter((c) => SERVICES.includes(c)) ?? [],
    );
    expect(composed.sort()).toEqual(SERVICES);
  });
});
