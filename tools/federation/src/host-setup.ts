import * as k8s from '@kubernetes/client-node';
import { CLUSTER, isApiStatus, isJsonObject, KARMADA_QUOTA, type Cluster } from '#api';
import { loadCrds } from '#api/crds';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { ApiEndpoint } from './components.js';
import { waitFor } from './net.js';
import { repoRoot } from './paths.js';

/** Namespace where Karmada keeps member-cluster credential Secrets. */
export const CLUSTER_SECRET_NAMESPACE = 'karmada-cluster';
/** Namespace of karmada-quota's own objects on the host (the aggregator's cluster Leases). */
export const SYSTEM_NAMESPACE = 'karmada-quota-system';

/**
 * The aggregator replica holding each member cluster's Lease on the host (apps/aggregator's
 * cluster-leases.ts names them kq-aggregator.<cluster>); undefined for a Lease nobody holds.
 */
export async function clusterLeaseHolders(host: ApiEndpoint): Promise<Map<string, string | undefined>> {
  const prefix = 'kq-aggregator.';
  const leases = await kubeConfigFor(host)
    .makeApiClient(k8s.CoordinationV1Api)
    .listNamespacedLease({ namespace: SYSTEM_NAMESPACE });
  return new Map(
    leases.items
      .filter((l) => l.metadata!.name!.startsWith(prefix))
      .map((l) => [l.metadata!.name!.slice(prefix.length), l.spec?.holderIdentity || undefined]),
  );
}

/** Creates a namespace on the host unless it exists. */
export async function ensureNamespace(host: ApiEndpoint, name: string): Promise<void> {
  const core = kubeConfigFor(host).makeApiClient(k8s.CoreV1Api);
  await ensure(() => core.createNamespace({ body: { metadata: { name } } }));
}

/** Where karmada-scheduler looks for the members' estimator Services (its default). */
export const KARMADA_SYSTEM_NAMESPACE = 'karmada-system';

/**
 * A Ready Node in a member with room for far more than any test runs (no kubelet runs it): Karmada's
 * own estimates of a member's capacity read its Nodes, and are 0 on a member without any. Members run
 * no node lifecycle controller, so it stays Ready; the not-ready taint the API server gives a new
 * Node is taken off, as that controller would once the kubelet reports.
 */
export async function addRoomyNode(member: ApiEndpoint): Promise<void> {
  const core = kubeConfigFor(member).makeApiClient(k8s.CoreV1Api);
  const name = 'roomy-node';
  const room = { cpu: '1000', memory: '4Ti', pods: '1000' };
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  await ensure(() => core.createNode({ body: { metadata: { name } } }));
  await core.patchNode({ name, body: { spec: { taints: null } } }, merge);
  const now = new Date().toISOString();
  const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'no kubelet: a test Node' };
  await core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          capacity: room,
          allocatable: room,
          conditions: [{ ...ready, lastHeartbeatTime: now, lastTransitionTime: now }],
        },
      },
    },
    merge,
  );
}

export function kubeConfigFor(endpoint: ApiEndpoint): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(endpoint.kubeconfig);
  return kc;
}

/** Creates `create()`'s object, or leaves the existing one (idempotent set-up). */
async function ensure(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isApiStatus(err, 409)) throw err;
  }
}

/**
 * Installs CRDs (by default ours: KarmadaQuota, ResourceBinding, Cluster), leaving any already there,
 * and waits until every one is served.
 */
export async function installCrds(
  host: ApiEndpoint,
  crds: k8s.V1CustomResourceDefinition[] = loadCrds(),
): Promise<void> {
  const api = kubeConfigFor(host).makeApiClient(k8s.ApiextensionsV1Api);
  const objects = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  for (const crd of crds) await ensure(() => api.createCustomResourceDefinition({ body: crd }));
  await Promise.all(
    crds.map(async (crd) => {
      const name = crd.metadata!.name!;
      await waitFor(
        `CRD ${name} to be established`,
        async () => {
          const current = await api.readCustomResourceDefinition({ name });
          return !!current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
        },
        { timeoutMs: 30_000 },
      );
      // Established is not yet served: lists answer 429 while the watch cache initialises.
      const version = crd.spec.versions.find((v) => v.storage)!.name;
      await waitFor(
        `${name} to be served`,
        () =>
          objects
            .listClusterCustomObject({ group: crd.spec.group, version, plural: crd.spec.names.plural })
            .then(
              () => true,
              () => false,
            ),
        { timeoutMs: 30_000 },
      );
    }),
  );
}

/**
 * Registers a member the way `karmadactl join` does: a Secret with `token` and `caBundle` in
 * karmada-cluster, and a Cluster object pointing at the member's API endpoint.
 */
export async function registerMember(host: ApiEndpoint, member: ApiEndpoint): Promise<void> {
  const kc = kubeConfigFor(host);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  await ensureNamespace(host, CLUSTER_SECRET_NAMESPACE);
  await ensure(() =>
    core.createNamespacedSecret({
      namespace: CLUSTER_SECRET_NAMESPACE,
      body: {
        metadata: { name: member.name },
        stringData: { token: member.token, caBundle: readFileSync(member.caFile, 'utf8') },
      },
    }),
  );
  const cluster: Cluster = {
    apiVersion: CLUSTER.apiVersion,
    kind: 'Cluster',
    metadata: { name: member.name },
    spec: {
      apiEndpoint: member.server,
      secretRef: { namespace: CLUSTER_SECRET_NAMESPACE, name: member.name },
      syncMode: 'Push',
    },
  };
  await ensure(() => objects.create(cluster));
}

/** Removes a member's Cluster object and its credential Secret from the host. */
export async function unregisterMember(host: ApiEndpoint, memberName: string): Promise<void> {
  const kc = kubeConfigFor(host);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ignoreMissing = (err: unknown) => {
    if (!isApiStatus(err, 404)) throw err;
  };
  await objects
    .delete({ apiVersion: CLUSTER.apiVersion, kind: 'Cluster', metadata: { name: memberName } })
    .catch(ignoreMissing);
  await core
    .deleteNamespacedSecret({ namespace: CLUSTER_SECRET_NAMESPACE, name: memberName })
    .catch(ignoreMissing);
}

/** Name of the ValidatingWebhookConfiguration the harness registers. */
export const WEBHOOK_CONFIGURATION_NAME = 'karmada-quota';
/** Its webhook for ResourceBindings, as the API server's admission metrics name it. */
export const BINDING_WEBHOOK_NAME = 'resourcebindings.quota.karmada.io';

/** One endpoint of the webhook and what it admits, as the chart's files/webhooks.yaml lists them. */
interface WebhookEndpoint {
  name: string;
  path: string;
  /** `scope`: Namespaced unless given. */
  rules: { group: string; version: string; resource: string; scope?: 'Namespaced' | 'Cluster' }[];
  failurePolicy?: 'Fail' | 'Ignore';
  /** The path of a chart value that must be true for the endpoint to be registered. */
  servedWith?: string;
}

const chartFile = (...path: string[]): unknown =>
  yaml.load(readFileSync(join(repoRoot(), 'charts', 'karmada-quota', ...path), 'utf8'));

/** The chart's list of the webhook's endpoints, so the harness registers what the chart does. */
const chartWebhooks = (): WebhookEndpoint[] => chartFile('files', 'webhooks.yaml') as WebhookEndpoint[];

/** A chart value by its path (as `helm --set` names it): from `values`, else values.yaml's default. */
const chartValue = (path: string, values: Readonly<Record<string, unknown>>): unknown =>
  path in values
    ? values[path]
    : path
        .split('.')
        .reduce<unknown>(
          (value, key) => (isJsonObject(value) ? value[key] : undefined),
          chartFile('values.yaml'),
        );

/** The namespaces the chart's registration checks by default (values.yaml webhook.namespaceSelector). */
const chartNamespaceSelector = (): k8s.V1LabelSelector =>
  (chartFile('values.yaml') as { webhook: { namespaceSelector: k8s.V1LabelSelector } }).webhook
    .namespaceSelector;

/**
 * Registers the quota webhook by URL (the API server reaches it on 127.0.0.1) as the chart does with
 * `values` (paths as `helm --set` names them; the chart's defaults otherwise), from its
 * files/webhooks.yaml: CREATE and UPDATE of ResourceBindings, KarmadaQuotas and ClusterKarmadaQuotas,
 * each in the one version the webhook reads (matchPolicy Equivalent: the API server converts the
 * others' requests), failing closed, of workloads, only warned (failurePolicy Ignore), and of
 * FederatedResourceQuotas when they are served; in the namespaces the chart's default selects (a
 * cluster-scoped object is in none: always checked), no side effects on dry-run.
 * Replaces an earlier registration of the same name.
 */
export async function registerWebhook(
  host: ApiEndpoint,
  baseUrl: string,
  caPem: string,
  values: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  const api = kubeConfigFor(host).makeApiClient(k8s.AdmissionregistrationV1Api);
  const caBundle = Buffer.from(caPem).toString('base64');
  const webhook = ({ name, path, rules, failurePolicy }: WebhookEndpoint): k8s.V1ValidatingWebhook => ({
    name,
    clientConfig: { url: `${baseUrl}${path}`, caBundle },
    rules: rules.map(({ group, version, resource, scope }) => ({
      apiGroups: [group],
      apiVersions: [version],
      operations: ['CREATE', 'UPDATE'],
      resources: [resource],
      scope: scope ?? 'Namespaced',
    })),
    namespaceSelector: chartNamespaceSelector(),
    failurePolicy: failurePolicy ?? 'Fail',
    sideEffects: 'NoneOnDryRun',
    admissionReviewVersions: ['v1'],
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
  });
  const body: k8s.V1ValidatingWebhookConfiguration = {
    metadata: { name: WEBHOOK_CONFIGURATION_NAME },
    webhooks: chartWebhooks()
      .filter(({ servedWith }) => servedWith === undefined || chartValue(servedWith, values) === true)
      .map(webhook),
  };
  await api
    .deleteValidatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME })
    .catch((err: unknown) => {
      if (!isApiStatus(err, 404)) throw err;
    });
  await api.createValidatingWebhookConfiguration({ body });
}

/**
 * A ServiceAccount (on the host `kc` points at) and a bearer token for it (TokenRequest): a user to log in as. With
 * `readQuotas` it may get, list and watch the KarmadaQuotas of its namespace (a Role and binding of
 * its own name); without, it may do nothing karmada-quota serves.
 */
export async function serviceAccountToken(
  kc: k8s.KubeConfig,
  options: { namespace: string; name: string; readQuotas: boolean; expirationSeconds: number },
): Promise<string> {
  const { namespace, name } = options;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  if (options.readQuotas) {
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name },
        rules: [
          {
            apiGroups: [KARMADA_QUOTA.group],
            resources: [KARMADA_QUOTA.plural],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    });
  }
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: options.expirationSeconds } },
  });
  return request.status!.token;
}
