import * as k8s from '@kubernetes/client-node';
import type { HostApiConfig } from './config.js';
import type { ReadinessCheck } from './health.js';
import type { RedisClient } from './redis.module.js';
import { reuseConnections } from './reuse-connections.js';

/**
 * The host (Karmada control plane) cluster: KUBECONFIG when set, else in-cluster credentials; its
 * API clients keep their connections open between calls, each given up after API_REQUEST_TIMEOUT_SECONDS.
 */
export function hostKubeConfig(config: HostApiConfig): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromDefault();
  return reuseConnections(kc, { requestTimeoutMs: config.API_REQUEST_TIMEOUT_SECONDS * 1000 });
}

export function hostApiReadiness(kc: k8s.KubeConfig): ReadinessCheck {
  const version = kc.makeApiClient(k8s.VersionApi);
  return {
    name: 'host-apiserver',
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
