import { readFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import type { FederationInfo, ApiEndpoint } from '../../tools/federation/src/index.js';
import { kubeConfigFor, redisDatabaseUrl, sleep } from '../../tools/federation/src/index.js';
import type { KarmadaQuota } from '#api';
import { parseQuotaState } from '#quota';

/** Set by global-setup.mjs: the JSON file describing the running test federation. */
const FEDERATION_INFO_ENV = 'KARMADA_QUOTA_TEST_FEDERATION';

export interface TestFederation extends FederationInfo {
  /** The quota webhook (HTTPS), registered on the host; its reservation TTL is 5 s. */
  webhookUrl: string;
}

/** The federation that jest's global setup started. */
export function federation(): TestFederation {
  const file = process.env[FEDERATION_INFO_ENV];
  if (!file)
    throw new Error(`${FEDERATION_INFO_ENV} is not set: run integration tests through jest's global setup`);
  return JSON.parse(readFileSync(file, 'utf8')) as TestFederation;
}

export const client = (endpoint: ApiEndpoint): k8s.KubeConfig => kubeConfigFor(endpoint);

/** A namespace name unique to this test run, so tests never see each other's objects. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Polls `read` until `accept` holds for its result; returns that result or throws with the last one. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (accept(last)) return last;
    } catch (err) {
      lastError = err;
    }
    await sleep(250);
  }
  throw new Error(
    `condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)} ${lastError ?? ''}`,
  );
}

export async function createNamespace(endpoint: ApiEndpoint, name: string): Promise<void> {
  await client(endpoint)
    .makeApiClient(k8s.CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
}

/**
 * The Redis the tests run on: REDIS_URL as given, or the private redis-server jest's global setup
 * starts when none is given (test/support/test-redis.mjs). Never a default address: a test run
 * uses no Redis that nobody named.
 */
export function testRedis(): string {
  const url = process.env.REDIS_URL;
  if (!url)
    throw new Error(
      'REDIS_URL is not set: run the tests through jest, whose global setup starts a private redis-server (test/support/test-redis.mjs)',
    );
  return url;
}

/**
 * A Redis database of a test file's own (karmada-estimator 2, monitoring 5, federated-resource-quota 6, karmada 7, object-count attribution 8,
 * console 9, kubectl-kq 10, aggregator 11, reconciler 12, the reconcile worker's spec 14; the
 * bench uses 15), on testRedis()'s server, so test files never see each other's keys nor, on a
 * REDIS_URL given, a developer's sandbox (db 0). docs/development/tests.md#redis-databases lists them.
 */
export const testRedisUrl = (db: number): string => redisDatabaseUrl(testRedis(), db);

const QUOTA_API = { group: 'quota.karmada.io', version: 'v1alpha1', plural: 'karmadaquotas' };

/**
 * Waits until the reconciler has counted the quota's usage on every key of `spec.hard`, for its
 * current spec: until then the webhook refuses increases ("status unknown for quota"), as
 * ResourceQuota does.
 */
export async function usageCounted(kc: k8s.KubeConfig, namespace: string, name: string): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  await eventually(
    () =>
      api.getNamespacedCustomObject({ ...QUOTA_API, namespace, name }) as Promise<{
        metadata?: { generation?: number };
        spec?: { hard?: Record<string, string> };
        status?: { used?: Record<string, string>; observedGeneration?: number };
      }>,
    (q) =>
      q.status?.observedGeneration === q.metadata?.generation &&
      Object.keys(q.spec?.hard ?? {}).every((key) => q.status?.used?.[key] !== undefined),
  );
}

/**
 * For tests that run no reconciler: records zero usage on every key of `spec.hard`, as the
 * reconciler does for a namespace where nothing runs, so the webhook can admit increases.
 */
export async function countNoUsage(kc: k8s.KubeConfig, namespace: string, name: string): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const quota = (await api.getNamespacedCustomObject({ ...QUOTA_API, namespace, name })) as {
    metadata?: { generation?: number };
    spec?: { hard?: Record<string, string> };
    status?: Record<string, unknown>;
  };
  // Every key the webhook limits: spec.hard's and each member cap's (docs/concepts/member-caps.md).
  const keys = Object.keys(parseQuotaState(quota as KarmadaQuota).state.hard);
  const used = Object.fromEntries(keys.map((key) => [key, '0']));
  // Counted for the spec as read: the webhook trusts a status only for the generation it counted.
  const observedGeneration = quota.metadata?.generation;
  await api.replaceNamespacedCustomObjectStatus({
    ...QUOTA_API,
    namespace,
    name,
    body: { ...quota, status: { ...quota.status, used, observedGeneration } },
  });
}
