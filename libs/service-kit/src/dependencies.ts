import * as k8s from '@kubernetes/client-node';
import type { KarmadaApiConfig } from './config.js';
import type { ReadinessCheck } from './health.js';
import type { RedisClient } from './redis.module.js';
import { reuseConnections } from './reuse-connections.js';

/** Nest injection token of the Karmada API server's KubeConfig (as karmadaKubeConfig makes it). */
export const KARMADA_KUBECONFIG = Symbol('KARMADA_KUBECONFIG');

/**
 * The Karmada API server: KUBECONFIG when set, else in-cluster credentials; its API clients keep
 * their connections open between calls, each given up after API_REQUEST_TIMEOUT_SECONDS.
 */
export function karmadaKubeConfig(config: KarmadaApiConfig): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromDefault();
  return reuseConnections(kc, { requestTimeoutMs: config.API_REQUEST_TIMEOUT_SECONDS * 1000 });
}

export function karmadaApiReadiness(kc: k8s.KubeConfig): ReadinessCheck {
  const version = kc.makeApiClient(k8s.VersionApi);
  return {
    name: 'karmada-apiserver',
    probe: async () => {
      await version.getCode();
    },
  };
}

export function redisReadiness(redis: RedisClient): ReadinessCheck {
  return {
    name: 'redis',
    probe: async () => {
      await redis.ping();
    },
  };
}

/** A client-node informer over every namespace (their labels: which ClusterKarmadaQuotas select them). */
export function namespaceInformer(
  kc: k8s.KubeConfig,
): k8s.Informer<k8s.V1Namespace> & k8s.ObjectCache<k8s.V1Namespace> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return k8s.makeInformer<k8s.V1Namespace>(kc, '/api/v1/namespaces', () => core.listNamespace());
}

/**
 * Which namespace events matter to ClusterKarmadaQuotas: a namespace first seen (it may have been read
 * with other labels before), deleted, or whose labels changed.
 */
export class NamespaceLabelChanges {
  private readonly seen = new Map<string, string>();

  /** The namespace's name when this event changes what selects it; undefined otherwise. */
  changed(namespace: k8s.V1Namespace, deleted: boolean): string | undefined {
    const name = namespace.metadata?.name;
    if (!name) return undefined;
    const labels = deleted ? undefined : JSON.stringify(namespace.metadata?.labels ?? {});
    if (labels === this.seen.get(name)) return undefined;
    if (labels === undefined) this.seen.delete(name);
    else this.seen.set(name, labels);
    return name;
  }
}

/** A client-node informer over every object of a custom resource (all namespaces). */
export function customObjectInformer<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  resource: { group: string; version: string; plural: string },
): k8s.Informer<T> & k8s.ObjectCache<T> {
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  const { group, version, plural } = resource;
  const list = () =>
    objects.listClusterCustomObject({ group, version, plural }) as Promise<k8s.KubernetesListObject<T>>;
  return k8s.makeInformer<T>(kc, `/apis/${group}/${version}/${plural}`, list);
}
