import * as k8s from '@kubernetes/client-node';
import {
  CLUSTER_KARMADA_QUOTA,
  isApiStatus,
  KARMADA_QUOTA,
  type ClusterKarmadaQuota,
  type KarmadaQuota,
  type LabelSelector,
} from '#api';
import {
  kubeConfigFor,
  sleep,
  WEBHOOK_CONFIGURATION_NAME as WEBHOOK_CONFIGURATION,
  type ApiEndpoint,
} from '../../federation/src/index.js';
import type { HttpsJsonClient } from './https-client.js';
import { metricValue } from './stats.js';

/** The API server's own Prometheus metrics, as text. */
export async function apiServerMetrics(client: HttpsJsonClient): Promise<string> {
  const res = await client.get('/metrics');
  if (res.status !== 200 || typeof res.body !== 'string')
    throw new Error(`the API server's /metrics answered HTTP ${res.status}`);
  return res.body;
}

/** The CPU the API server process has used so far (its process_cpu_seconds_total). */
export const apiServerCpuSeconds = async (client: HttpsJsonClient): Promise<number> =>
  metricValue(await apiServerMetrics(client), 'process_cpu_seconds_total');

export async function createNamespaces(
  endpoint: ApiEndpoint,
  names: readonly string[],
  labels: Record<string, string> = {},
): Promise<void> {
  const core = kubeConfigFor(endpoint).makeApiClient(k8s.CoreV1Api);
  await inParallel(names, 8, async (name) => {
    await core.createNamespace({ body: { metadata: { name, labels } } }).catch((err: unknown) => {
      if (!isApiStatus(err, 409)) throw err;
    });
  });
}

/**
 * The environment of an owner-mode webhook with an admission Lease of its own (its namespace made
 * here): the bench's owners decide on namespaces no other webhook serves, so they need not wait for
 * the batched webhooks the run starts elsewhere (the fence: docs/concepts/admission-owner.md).
 */
export async function ownerModeEnv(
  endpoint: ApiEndpoint,
  leaseNamespace: string,
): Promise<NodeJS.ProcessEnv> {
  await createNamespaces(endpoint, [leaseNamespace]);
  return { ADMISSION_MODE: 'owner', LEASE_NAMESPACE: leaseNamespace };
}

/** The admission protocols the bench can run the product's webhooks in (`--admission-mode`). */
export const BENCH_ADMISSION_MODES = ['batched', 'owner'] as const;
export type BenchAdmissionMode = (typeof BENCH_ADMISSION_MODES)[number];

/**
 * The environment of a webhook in `mode` (an ADMISSION_MODE: hot-quota runs cas-per-admission too);
 * in owner mode, with the admission Lease in `leaseNamespace`.
 */
export const admissionModeEnv = async (
  endpoint: ApiEndpoint,
  mode: string,
  leaseNamespace: string,
): Promise<NodeJS.ProcessEnv> =>
  mode === 'owner' ? ownerModeEnv(endpoint, leaseNamespace) : { ADMISSION_MODE: mode };

export async function createQuota(
  host: ApiEndpoint,
  namespace: string,
  name: string,
  hard: Record<string, string>,
  labels: Record<string, string> = {},
): Promise<void> {
  const body: KarmadaQuota = {
    apiVersion: KARMADA_QUOTA.apiVersion,
    kind: KARMADA_QUOTA.kind,
    metadata: { name, namespace, labels },
    spec: { hard },
  };
  const api = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  await api.createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, body });
  // The webhook refuses increases until the quota's usage is counted. Nothing runs in a bench
  // namespace yet: record zero usage now, as the reconciler would (it may get there first).
  for (;;) {
    const quota = (await api.getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name,
    })) as KarmadaQuota;
    const counted =
      quota.status?.observedGeneration === quota.metadata?.generation &&
      Object.keys(hard).every((key) => quota.status?.used?.[key] !== undefined);
    if (counted) return;
    const used = Object.fromEntries(Object.keys(hard).map((key) => [key, '0']));
    const observedGeneration = quota.metadata?.generation;
    try {
      await api.replaceNamespacedCustomObjectStatus({
        ...KARMADA_QUOTA,
        namespace,
        name,
        body: { ...quota, status: { ...quota.status, used, observedGeneration } },
      });
      return;
    } catch (err) {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
    }
  }
}

/**
 * Deletes every KarmadaQuota on the host (their scenarios are over and audited), so the product's
 * reconciler starts on what the next scenario creates, not on a backlog of finished ones.
 */
export async function deleteEveryQuota(host: ApiEndpoint): Promise<number> {
  const api = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  const { items } = (await api.listClusterCustomObject({ ...KARMADA_QUOTA })) as { items: KarmadaQuota[] };
  await inParallel(items, 8, async (quota) => {
    await api
      .deleteNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace: quota.metadata!.namespace!,
        name: quota.metadata!.name!,
      })
      .catch((err: unknown) => {
        if (!isApiStatus(err, 404)) throw err;
      });
  });
  return items.length;
}

export const FEDERATED_RESOURCE_QUOTA = {
  group: 'policy.karmada.io',
  version: 'v1alpha1',
  plural: 'federatedresourcequotas',
};

/** Karmada's own quota object with `overall` limits, the peer of a KarmadaQuota. */
export async function createFederatedResourceQuota(
  host: ApiEndpoint,
  namespace: string,
  name: string,
  overall: Record<string, string>,
): Promise<void> {
  await kubeConfigFor(host)
    .makeApiClient(k8s.CustomObjectsApi)
    .createNamespacedCustomObject({
      ...FEDERATED_RESOURCE_QUOTA,
      namespace,
      body: {
        apiVersion: `${FEDERATED_RESOURCE_QUOTA.group}/${FEDERATED_RESOURCE_QUOTA.version}`,
        kind: 'FederatedResourceQuota',
        metadata: { name, namespace },
        spec: { overall },
      },
    });
}

/**
 * Creates a ClusterKarmadaQuota over the namespaces `selector` picks (`namespaces`, where nothing runs
 * yet) and records their zero usage, as the reconciler would (it may get there first).
 */
export async function createClusterQuota(
  host: ApiEndpoint,
  name: string,
  hard: Record<string, string>,
  selector: LabelSelector,
  namespaces: readonly string[],
): Promise<void> {
  const body: ClusterKarmadaQuota = {
    apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion,
    kind: CLUSTER_KARMADA_QUOTA.kind,
    metadata: { name },
    spec: { hard, namespaceSelector: selector },
  };
  const api = kubeConfigFor(host).makeApiClient(k8s.CustomObjectsApi);
  await api.createClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, body });
  const used = Object.fromEntries(Object.keys(hard).map((key) => [key, '0']));
  for (;;) {
    const quota = await readClusterQuota(host, name);
    const observedGeneration = quota.metadata?.generation;
    if (quota.status?.observedGeneration === observedGeneration && quota.status?.namespaces?.length) return;
    const counted = namespaces.map((namespace) => ({ namespace, used }));
    try {
      await api.replaceClusterCustomObjectStatus({
        ...CLUSTER_KARMADA_QUOTA,
        name,
        body: { ...quota, status: { ...quota.status, used, observedGeneration, namespaces: counted } },
      });
      return;
    } catch (err) {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
    }
  }
}

export async function readClusterQuota(host: ApiEndpoint, name: string): Promise<KarmadaQuota> {
  const quota = (await kubeConfigFor(host)
    .makeApiClient(k8s.CustomObjectsApi)
    .getClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, name })) as KarmadaQuota;
  return { ...quota, kind: CLUSTER_KARMADA_QUOTA.kind };
}

export async function deleteClusterQuota(host: ApiEndpoint, name: string): Promise<void> {
  await kubeConfigFor(host)
    .makeApiClient(k8s.CustomObjectsApi)
    .deleteClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, name })
    .catch((err: unknown) => {
      if (!isApiStatus(err, 404)) throw err;
    });
}

export async function readQuota(host: ApiEndpoint, namespace: string, name: string): Promise<KarmadaQuota> {
  return (await kubeConfigFor(host)
    .makeApiClient(k8s.CustomObjectsApi)
    .getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name })) as KarmadaQuota;
}

/**
 * Takes the webhook registration away; returns a function that puts it back. Each resolves once
 * `effective()` says the API server acts on the change (its webhook configuration is a cache).
 */
export async function withdrawWebhook(
  host: ApiEndpoint,
  effective: (registered: boolean) => Promise<boolean>,
): Promise<() => Promise<void>> {
  const api = kubeConfigFor(host).makeApiClient(k8s.AdmissionregistrationV1Api);
  const saved = await api.readValidatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION });
  await api.deleteValidatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION });
  await until(`the API server to stop calling the webhook`, () => effective(false));
  return async () => {
    await api.createValidatingWebhookConfiguration({
      body: { metadata: { name: WEBHOOK_CONFIGURATION }, webhooks: saved.webhooks },
    });
    await until(`the API server to call the webhook again`, () => effective(true));
  };
}

/** Polls `check` every 100 ms until it holds; rejects after `timeoutMs` naming `what`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await sleep(100);
  }
}

/** Runs `task` over `items` with at most `limit` at once; rejects with the first failure. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
