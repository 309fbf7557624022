import * as k8s from '@kubernetes/client-node';
import { CLUSTER } from '#api';
import { loadCrds } from '#api/crds';
import { mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ensureKarmadaBinaries, type KarmadaBinaries } from './binaries.js';
import { Component, type ApiEndpoint } from './components.js';
import { installCrds, kubeConfigFor, SYSTEM_NAMESPACE } from './host-setup.js';
import { freePort, waitFor } from './net.js';
import { createServingCertificate } from './pki.js';
import type { OrphanGuard } from './processes.js';

/**
 * Karmada's controllers the PropagationPolicy flow needs (the detector always runs): `cluster` makes
 * the `karmada-es-<cluster>` namespaces, `clusterStatus` marks Clusters Ready, `binding` and
 * `execution` turn scheduled bindings into Works and member objects, `namespace` copies namespaces
 * to the members, `workStatus` and `bindingStatus` bring member status back to the templates.
 */
export const KARMADA_CONTROLLERS = [
  'cluster',
  'clusterStatus',
  'binding',
  'execution',
  'namespace',
  'workStatus',
  'bindingStatus',
];

/** Our own CRD serves ResourceBindings (Karmada writes v1alpha2 only); Karmada's would clash with it. */
const CRDS_WE_SERVE = new Set(['work.karmada.io_resourcebindings.yaml']);

const START_TIMEOUT_MS = 120_000;

/** A Karmada binary run against the host, its metrics and health endpoints on 127.0.0.1. */
abstract class KarmadaComponent extends Component {
  protected metricsPort = 0;
  protected healthPort = 0;

  constructor(
    name: string,
    dir: string,
    guard: OrphanGuard,
    private readonly binary: string,
    private readonly kubeconfig: string,
  ) {
    super(name, dir, guard);
  }

  /** Flags of this component besides the kubeconfig, metrics and health addresses. */
  protected abstract flags(): Promise<string[]>;
  /** What answers 200 once the component is ready. */
  protected abstract readiness(): { url: string; ca?: string };

  protected async pickPorts(): Promise<void> {
    this.metricsPort = await freePort();
    this.healthPort = await freePort();
  }

  protected async launchAndWait(): Promise<void> {
    if (this.healthPort === 0) await this.pickPorts();
    this.launch(this.binary, [
      `--kubeconfig=${this.kubeconfig}`,
      `--metrics-bind-address=127.0.0.1:${this.metricsPort}`, // all three default to :8080
      `--health-probe-bind-address=127.0.0.1:${this.healthPort}`,
      '--v=1',
      ...(await this.flags()),
    ]);
    const { url, ca } = this.readiness();
    await this.awaitHealthy(url, ca ? { ca } : {});
  }
}

/** The feature gate of Karmada's own quota enforcement (FederatedResourceQuota checked on binding writes). */
const QUOTA_ENFORCEMENT_GATE = 'FederatedQuotaEnforcement';

/** karmada-webhook: mutating webhooks that give policies and bindings their permanent ids. */
class KarmadaWebhook extends KarmadaComponent {
  private securePort = 0;
  private caPem = '';
  /** Feature gates to turn on (Karmada's own quota enforcement, say). */
  protected featureGates: string[] = [];

  constructor(
    name: string,
    dir: string,
    guard: OrphanGuard,
    binary: string,
    kubeconfig: string,
    options: { quotaEnforcement?: boolean } = {},
  ) {
    super(name, dir, guard, binary, kubeconfig);
    if (options.quotaEnforcement) this.featureGates = [QUOTA_ENFORCEMENT_GATE];
  }

  get url(): string {
    return `https://127.0.0.1:${this.securePort}`;
  }

  get caBundle(): string {
    return this.caPem;
  }

  protected override async pickPorts(): Promise<void> {
    await super.pickPorts();
    this.securePort = await freePort();
  }

  protected async flags(): Promise<string[]> {
    const certDir = join(this.dir, 'certs');
    mkdirSync(certDir, { recursive: true });
    if (!this.caPem) this.caPem = (await createServingCertificate(certDir, 'karmada-webhook')).caPem;
    return [
      '--bind-address=127.0.0.1',
      `--secure-port=${this.securePort}`,
      `--cert-dir=${certDir}`,
      ...(this.featureGates.length
        ? [`--feature-gates=${this.featureGates.map((g) => `${g}=true`).join(',')}`]
        : []),
    ];
  }

  protected readiness() {
    // Only the secure port answers /readyz/ (the health-probe port's /readyz is 404).
    return { url: `${this.url}/readyz/`, ca: this.caPem };
  }
}

/**
 * karmada-webhook with Karmada's own quota enforcement on (FederatedQuotaEnforcement): its
 * `/validate-resourcebinding` checks ResourceBindings against FederatedResourceQuotas, the peer
 * `npm run bench` measures ours against. Started alone (no controllers): the bench posts
 * AdmissionReviews to it directly.
 */
export class KarmadaQuotaWebhook extends KarmadaWebhook {
  protected override async flags(): Promise<string[]> {
    // Its client defaults to 40 requests/s, ours has no limit: raised so the comparison is fair.
    return [...(await super.flags()), '--kube-api-qps=5000', '--kube-api-burst=10000'];
  }

  /** The Karmada release, e.g. v1.18.2. */
  version = '';

  static async create(host: ApiEndpoint, dir: string, guard: OrphanGuard): Promise<KarmadaQuotaWebhook> {
    const binaries = await ensureKarmadaBinaries();
    await installKarmadaCrds(host, binaries);
    const webhook = new KarmadaQuotaWebhook(
      'karmada-webhook-frq',
      dir,
      guard,
      binaries.webhook,
      host.kubeconfig,
      {
        quotaEnforcement: true,
      },
    );
    webhook.version = binaries.version;
    return webhook;
  }
}

class KarmadaControllerManager extends KarmadaComponent {
  constructor(
    name: string,
    dir: string,
    guard: OrphanGuard,
    binary: string,
    kubeconfig: string,
    private readonly quotaEnforcement: boolean,
    private readonly featureGates: readonly string[],
    private readonly extraControllers: readonly string[],
  ) {
    super(name, dir, guard, binary, kubeconfig);
  }

  protected async flags(): Promise<string[]> {
    // Karmada's quota enforcement recounts FederatedResourceQuota usage in a controller of its own.
    const controllers = [
      ...KARMADA_CONTROLLERS,
      ...(this.quotaEnforcement ? ['federatedResourceQuotaEnforcement'] : []),
      ...this.extraControllers,
    ];
    // Karmada's default feature gates (the promise is kept with Karmada as it ships), but for its own
    // quota enforcement where that is what runs, and the gates a test is about.
    const gates = [
      ...(this.quotaEnforcement ? [`${QUOTA_ENFORCEMENT_GATE}=true`] : []),
      ...this.featureGates.map((gate) => `${gate}=true`),
    ];
    return [
      '--leader-elect=false',
      `--controllers=${controllers.join(',')}`,
      '--cluster-status-update-frequency=2s',
      '--skipped-propagating-apis=quota.karmada.io', // the detector leaves our KarmadaQuotas alone
      ...(gates.length > 0 ? [`--feature-gates=${gates.join(',')}`] : []),
    ];
  }

  protected readiness() {
    // Answers only once its controllers started: a fair readiness signal.
    return { url: `http://127.0.0.1:${this.healthPort}/healthz` };
  }
}

class KarmadaScheduler extends KarmadaComponent {
  constructor(
    name: string,
    dir: string,
    guard: OrphanGuard,
    binary: string,
    kubeconfig: string,
    /** Asks each member's scheduler-estimator (found through its Service in karmada-system). */
    private readonly estimator: boolean,
  ) {
    super(name, dir, guard, binary, kubeconfig);
  }

  protected async flags(): Promise<string[]> {
    return ['--leader-elect=false', ...(this.estimator ? ['--enable-scheduler-estimator'] : [])];
  }

  protected readiness() {
    // Healthy before its informers sync: Karmada.start waits for a first scheduled binding as well.
    return { url: `http://127.0.0.1:${this.healthPort}/healthz` };
  }
}

/**
 * Karmada's own karmada-scheduler-estimator for one member (plaintext gRPC on 127.0.0.1): it answers
 * from the member's Nodes and Pods. Started on its own; the test decides who asks it.
 */
export class KarmadaSchedulerEstimator extends KarmadaComponent {
  private serverPort = 0;

  constructor(
    dir: string,
    guard: OrphanGuard,
    binary: string,
    memberKubeconfig: string,
    private readonly member: string,
  ) {
    super(`karmada-scheduler-estimator-${member}`, dir, guard, binary, memberKubeconfig);
  }

  /** Where it serves its gRPC API. */
  get address(): string {
    return `127.0.0.1:${this.serverPort}`;
  }

  protected override async pickPorts(): Promise<void> {
    await super.pickPorts();
    this.serverPort = await freePort();
  }

  protected async flags(): Promise<string[]> {
    return [`--cluster-name=${this.member}`, `--server-port=${this.serverPort}`];
  }

  protected readiness() {
    return { url: `http://127.0.0.1:${this.healthPort}/healthz` };
  }
}

/**
 * Real Karmada (v1.18) on the federation's host: karmada-webhook, karmada-controller-manager and
 * karmada-scheduler, so a Deployment + PropagationPolicy applied to the host becomes a
 * ResourceBinding, is scheduled and runs in the members. No aggregated API server: our Cluster CRD
 * serves the same paths.
 */
export class Karmada {
  private constructor(
    readonly binaries: KarmadaBinaries,
    private readonly host: ApiEndpoint,
    private readonly webhook: KarmadaWebhook,
    private readonly controllerManager: KarmadaControllerManager,
    private readonly scheduler: KarmadaScheduler,
    readonly quotaEnforcement: boolean,
  ) {}

  get version(): string {
    return this.binaries.version;
  }

  /**
   * Builds (first run only) and starts Karmada against `host`; resolves once a binding got scheduled.
   * `quotaEnforcement` turns on Karmada's own FederatedResourceQuota enforcement in the webhook and
   * the controller manager; it checks bindings once registerQuotaWebhook() registers it.
   */
  static async start(options: {
    host: ApiEndpoint;
    dir: string;
    guard: OrphanGuard;
    log: (message: string) => void;
    quotaEnforcement?: boolean;
    /** Gates turned on in the controller-manager (its detector writes the bindings) beyond the defaults. */
    featureGates?: readonly string[];
    /** Controllers run in the controller-manager beyond KARMADA_CONTROLLERS. */
    controllers?: readonly string[];
    /** karmada-scheduler `--enable-scheduler-estimator`: it asks each member's estimator Service. */
    schedulerEstimator?: boolean;
  }): Promise<Karmada> {
    const { host, dir, guard, log } = options;
    const quotaEnforcement = options.quotaEnforcement ?? false;
    log('checking the Karmada binaries (the first run on a machine builds them: minutes)');
    const binaries = await ensureKarmadaBinaries();
    const kubeconfig = host.kubeconfig;
    const karmada = new Karmada(
      binaries,
      host,
      new KarmadaWebhook('karmada-webhook', join(dir, 'webhook'), guard, binaries.webhook, kubeconfig, {
        quotaEnforcement,
      }),
      new KarmadaControllerManager(
        'karmada-controller-manager',
        join(dir, 'controller-manager'),
        guard,
        binaries.controllerManager,
        kubeconfig,
        quotaEnforcement,
        options.featureGates ?? [],
        options.controllers ?? [],
      ),
      new KarmadaScheduler(
        'karmada-scheduler',
        join(dir, 'scheduler'),
        guard,
        binaries.scheduler,
        kubeconfig,
        options.schedulerEstimator ?? false,
      ),
      quotaEnforcement,
    );
    try {
      log(`installing Karmada ${binaries.version} CRDs`);
      await installKarmadaCrds(host, binaries);
      log('starting karmada-webhook');
      await karmada.webhook.start();
      await registerKarmadaWebhooks(host, karmada.webhook.url, karmada.webhook.caBundle);
      log('starting karmada-controller-manager; waiting for every Cluster to be Ready');
      await karmada.controllerManager.start();
      await clustersReady(host, () => karmada.controllerManager.logTail());
      log('starting karmada-scheduler');
      await karmada.scheduler.start();
      await firstBindingScheduled(host, () => karmada.scheduler.logTail());
      return karmada;
    } catch (err) {
      await karmada.stop();
      throw err;
    }
  }

  /**
   * Registers Karmada's quota check (`/validate-resourcebinding`, as Karmada's chart does) on binding
   * creates and updates: from then on FederatedResourceQuotas are enforced. Needs `quotaEnforcement`.
   */
  async registerQuotaWebhook(): Promise<void> {
    if (!this.quotaEnforcement) throw new Error('Karmada was started without quotaEnforcement');
    await registerValidatingWebhook(this.host, this.webhook.url, this.webhook.caBundle);
  }

  /** Withdraws what registerQuotaWebhook() registered. */
  async withdrawQuotaWebhook(): Promise<void> {
    await kubeConfigFor(this.host)
      .makeApiClient(k8s.AdmissionregistrationV1Api)
      .deleteValidatingWebhookConfiguration({ name: VALIDATING_CONFIGURATION_NAME });
  }

  /**
   * Resolves once karmada-scheduler (run with `schedulerEstimator`) has connected to the estimator of
   * each of `members`. It dials one when the member's Cluster changes (its status does every few
   * seconds) and gives up a dial after 5 s, so a Service registered after it started is found late.
   */
  async estimatorsConnected(members: readonly string[]): Promise<void> {
    const connected = (member: string) =>
      this.scheduler.logTail(Number.MAX_SAFE_INTEGER).includes(`of cluster(${member}) has been established`);
    await waitFor(
      'karmada-scheduler to connect to the scheduler-estimators',
      async () => members.every(connected),
      {
        timeoutMs: START_TIMEOUT_MS,
        intervalMs: 1_000,
        describe: () => `karmada-scheduler log:\n${this.scheduler.logTail()}`,
      },
    );
  }

  /** Stops the scheduler, the controller manager, then the webhook (nothing is left half-written). */
  async stop(): Promise<void> {
    await this.scheduler.stop();
    await this.controllerManager.stop();
    await this.webhook.stop();
  }
}

/** Karmada's CRDs from the module cache, but for the ResourceBinding one we serve ourselves. */
async function installKarmadaCrds(host: ApiEndpoint, binaries: KarmadaBinaries): Promise<void> {
  const files = readdirSync(binaries.crdDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml') && !CRDS_WE_SERVE.has(basename(f)))
    .map((f) => join(binaries.crdDir, f));
  await installCrds(host, loadCrds(files));
}

const MUTATING_CONFIGURATION_NAME = 'karmada-webhook';

/**
 * Registers karmada-webhook's mutating webhooks as Karmada's chart does, by URL. Without them a
 * PropagationPolicy gets no permanent-id label (its bindings are never scheduled) and `Divided`
 * placement is not defaulted.
 */
async function registerKarmadaWebhooks(host: ApiEndpoint, baseUrl: string, caPem: string): Promise<void> {
  const api = kubeConfigFor(host).makeApiClient(k8s.AdmissionregistrationV1Api);
  const caBundle = Buffer.from(caPem).toString('base64');
  const webhook = (
    path: string,
    resource: string,
    group: string,
    version: string,
    scope: 'Namespaced' | 'Cluster',
    operations: string[],
  ): k8s.V1MutatingWebhook => ({
    name: `${resource}.karmada.io`,
    clientConfig: { url: `${baseUrl}/${path}`, caBundle },
    rules: [{ apiGroups: [group], apiVersions: [version], operations, resources: [resource], scope }],
    failurePolicy: 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 10,
  });
  const createUpdate = ['CREATE', 'UPDATE'];
  const body: k8s.V1MutatingWebhookConfiguration = {
    metadata: { name: MUTATING_CONFIGURATION_NAME },
    webhooks: [
      webhook(
        'mutate-propagationpolicy',
        'propagationpolicies',
        'policy.karmada.io',
        'v1alpha1',
        'Namespaced',
        createUpdate,
      ),
      webhook(
        'mutate-clusterpropagationpolicy',
        'clusterpropagationpolicies',
        'policy.karmada.io',
        'v1alpha1',
        'Cluster',
        createUpdate,
      ),
      webhook('mutate-resourcebinding', 'resourcebindings', 'work.karmada.io', 'v1alpha2', 'Namespaced', [
        'CREATE',
      ]),
      webhook(
        'mutate-clusterresourcebinding',
        'clusterresourcebindings',
        'work.karmada.io',
        'v1alpha2',
        'Cluster',
        ['CREATE'],
      ),
      webhook('mutate-work', 'works', 'work.karmada.io', 'v1alpha1', 'Namespaced', createUpdate),
    ],
  };
  await api.createMutatingWebhookConfiguration({ body }).catch(async (err: unknown) => {
    if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
    await api.replaceMutatingWebhookConfiguration({ name: MUTATING_CONFIGURATION_NAME, body });
  });
}

const VALIDATING_CONFIGURATION_NAME = 'karmada-frq';

/** Karmada's validating webhook for ResourceBindings, where its FederatedResourceQuota check runs. */
async function registerValidatingWebhook(host: ApiEndpoint, baseUrl: string, caPem: string): Promise<void> {
  const body: k8s.V1ValidatingWebhookConfiguration = {
    metadata: { name: VALIDATING_CONFIGURATION_NAME },
    webhooks: [
      {
        name: 'resourcebinding.karmada.io',
        clientConfig: {
          url: `${baseUrl}/validate-resourcebinding`,
          caBundle: Buffer.from(caPem).toString('base64'),
        },
        rules: [
          {
            apiGroups: ['work.karmada.io'],
            apiVersions: ['v1alpha2'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['resourcebindings'],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'NoneOnDryRun',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 3,
      },
    ],
  };
  await kubeConfigFor(host)
    .makeApiClient(k8s.AdmissionregistrationV1Api)
    .createValidatingWebhookConfiguration({ body });
}

interface ClusterObject {
  metadata: { name: string };
  spec?: { taints?: { key: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

const NOT_READY_TAINTS = new Set(['cluster.karmada.io/not-ready', 'cluster.karmada.io/unreachable']);

function isReady(cluster: ClusterObject): boolean {
  const ready = cluster.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return ready && !(cluster.spec?.taints ?? []).some((t) => NOT_READY_TAINTS.has(t.key));
}

/** Waits until Karmada reports every Cluster Ready with its not-ready taints removed. */
async function clustersReady(host: ApiEndpoint, log: () => string): Promise<void> {
  const api = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  let notReady: string[] = [];
  await waitFor(
    'Karmada to report every member cluster Ready',
    async () => {
      const list = (await api.listClusterCustomObject({
        group: CLUSTER.group,
        version: CLUSTER.version,
        plural: CLUSTER.plural,
      })) as { items: ClusterObject[] };
      notReady = list.items.filter((c) => !isReady(c)).map((c) => c.metadata.name);
      return list.items.length > 0 && notReady.length === 0;
    },
    {
      timeoutMs: START_TIMEOUT_MS,
      describe: () => `not ready: ${notReady.join(', ')}\nkarmada-controller-manager log:\n${log()}`,
    },
  );
}

const READINESS_PROBE = 'karmada-readiness';

/**
 * The scheduler answers /healthz before its informers sync: propagates a ConfigMap to every member
 * and waits until its binding is scheduled, then removes both.
 */
async function firstBindingScheduled(host: ApiEndpoint, log: () => string): Promise<void> {
  const kc = kubeConfigFor(host);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const namespace = SYSTEM_NAMESPACE;
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: READINESS_PROBE, namespace } };
  const policy = {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name: READINESS_PROBE, namespace },
    spec: {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: READINESS_PROBE }],
      placement: { replicaScheduling: { replicaSchedulingType: 'Duplicated' } },
    },
  };
  await objects.create(policy);
  await objects.create(configMap);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  await waitFor(
    'karmada-scheduler to schedule a first binding',
    async () => {
      try {
        const binding = (await api.getNamespacedCustomObject({
          group: 'work.karmada.io',
          version: 'v1alpha2',
          plural: 'resourcebindings',
          namespace,
          name: `${READINESS_PROBE}-configmap`,
        })) as { spec?: { clusters?: unknown[] } };
        return (binding.spec?.clusters?.length ?? 0) > 0;
      } catch {
        return false;
      }
    },
    { timeoutMs: START_TIMEOUT_MS, describe: () => `karmada-scheduler log:\n${log()}` },
  );
  await objects.delete(configMap);
  await objects.delete(policy);
}
