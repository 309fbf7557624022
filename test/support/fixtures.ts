import type * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';

/** A Deployment whose pods each request `cpu` (pods stay Pending: members have no nodes). */
export const deployment = (name: string, replicas: number, cpu: string): k8s.V1Deployment => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] },
    },
  },
});

/** A bare Pod requesting `cpu`, as made directly in a member (no controller owns it). */
export const pod = (name: string, cpu: string): k8s.V1Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] },
});

/** A KarmadaQuota limiting `hard`; `extra` adds to its spec (a scopeSelector, say). */
export const karmadaQuota = (
  namespace: string,
  name: string,
  hard: Record<string, string>,
  extra: object = {},
): KarmadaQuota => ({
  apiVersion: KARMADA_QUOTA.apiVersion,
  kind: KARMADA_QUOTA.kind,
  metadata: { name, namespace },
  spec: { hard, ...extra },
});

export interface BindingShape {
  replicas?: number;
  cpu?: string;
  clusters?: { name: string; replicas: number }[];
  components?: {
    name: string;
    replicas: number;
    replicaRequirements: { resourceRequest: Record<string, string> };
  }[];
  placement?: object;
}

/**
 * A ResourceBinding as Karmada makes it for Deployment `name` (1 replica x 1 CPU unless shaped); one
 * with clusters and no placement is Divided (its replicas split over the clusters).
 */
export function binding(namespace: string, name: string, shape: BindingShape = {}): ResourceBinding {
  const { replicas = 1, cpu = '1', clusters, components } = shape;
  const placement =
    shape.placement ?? (clusters ? { replicaScheduling: { replicaSchedulingType: 'Divided' } } : undefined);
  return {
    apiVersion: RESOURCE_BINDING.apiVersion,
    kind: RESOURCE_BINDING.kind,
    metadata: { name, namespace },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace },
      ...(components ? { components } : { replicas, replicaRequirements: { resourceRequest: { cpu } } }),
      ...(clusters ? { clusters } : {}),
      ...(placement ? { placement } : {}),
    },
  } as ResourceBinding;
}
