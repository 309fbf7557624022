import { randomUUID } from 'node:crypto';
import { KARMADA_QUOTA, RESOURCE_BINDING, type ResourceBinding } from '#api';

/** What one replica of the benchmark's workloads requests. */
export const REPLICA_REQUEST = { cpu: '250m', memory: '512Mi' } as const;

/** Karmada names a workload's binding `<name>-<kind>`. */
const bindingName = (workload: string) => `${workload}-deployment`;

/** The member clusters a binding is divided over. */
const CLUSTERS = ['member1', 'member2'];

/** The scheduler's result for `replicas` divided by equal static weight over the members. */
export function scheduledClusters(replicas: number): { name: string; replicas: number }[] {
  const first = Math.ceil(replicas / 2);
  return [
    { name: CLUSTERS[0]!, replicas: first },
    { name: CLUSTERS[1]!, replicas: replicas - first },
  ].filter((c) => c.replicas > 0);
}

/**
 * A ResourceBinding as Karmada's detector and scheduler leave it for a Deployment propagated by a
 * PropagationPolicy, divided by static weight over the members: labels, annotations, the applied
 * placement, scheduling results and status. No ownerReference to the Deployment: the host has no
 * such Deployment, so its garbage collector would delete a stored binding that names it.
 */
/** Where a namespace's ResourceBindings are created on the host API server. */
export const bindingsPath = (namespace: string) =>
  `/apis/${RESOURCE_BINDING.group}/${RESOURCE_BINDING.version}/namespaces/${namespace}/${RESOURCE_BINDING.plural}`;

/** Where a namespace's KarmadaQuotas are on the host API server. */
export const quotasPath = (namespace: string) =>
  `/apis/${KARMADA_QUOTA.group}/${KARMADA_QUOTA.version}/namespaces/${namespace}/${KARMADA_QUOTA.plural}`;

export function realisticBinding(namespace: string, workload: string, replicas: number): ResourceBinding {
  const templateUid = randomUUID();
  const placement = {
    clusterAffinity: { clusterNames: CLUSTERS },
    clusterTolerations: [
      {
        key: 'cluster.karmada.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'cluster.karmada.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ],
    replicaScheduling: {
      replicaSchedulingType: 'Divided',
      replicaDivisionPreference: 'Weighted',
      weightPreference: {
        staticWeightList: CLUSTERS.map((name) => ({ targetCluster: { clusterNames: [name] }, weight: 1 })),
      },
    },
  };
  return {
    apiVersion: RESOURCE_BINDING.apiVersion,
    kind: RESOURCE_BINDING.kind,
    metadata: {
      name: bindingName(workload),
      namespace,
      labels: {
        app: workload,
        'propagationpolicy.karmada.io/permanent-id': '6d3f2a1c-6a0e-4e55-9a53-0c9a4d1f2b7e',
        'resourcebinding.karmada.io/permanent-id': randomUUID(),
      },
      annotations: {
        'policy.karmada.io/applied-placement': JSON.stringify(placement),
        'propagationpolicy.karmada.io/name': `${workload}-pp`,
        'propagationpolicy.karmada.io/namespace': namespace,
        'resourcetemplate.karmada.io/generation': '1',
      },
    },
    spec: {
      resource: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace,
        name: workload,
        uid: templateUid,
        resourceVersion: '104729',
      },
      replicas,
      replicaRequirements: {
        nodeClaim: {
          tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
        },
        resourceRequest: { ...REPLICA_REQUEST },
      },
      clusters: scheduledClusters(replicas),
      placement,
      schedulerName: 'default-scheduler',
      conflictResolution: 'Abort',
    },
    status: {
      schedulerObservedGeneration: 1,
      conditions: [
        {
          type: 'Scheduled',
          status: 'True',
          reason: 'Success',
          message: 'Binding has been scheduled successfully.',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    },
  } as ResourceBinding;
}

/**
 * The AdmissionReview the host API server sends the webhook for a CREATE (no `old`) or an UPDATE
 * of `binding` by Karmada's controller manager.
 */
export function admissionReview(binding: ResourceBinding, old?: ResourceBinding): string {
  const gvk = {
    group: RESOURCE_BINDING.group,
    version: RESOURCE_BINDING.version,
    kind: RESOURCE_BINDING.kind,
  };
  const gvr = {
    group: RESOURCE_BINDING.group,
    version: RESOURCE_BINDING.version,
    resource: RESOURCE_BINDING.plural,
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: binding.metadata!.name,
      namespace: binding.metadata!.namespace,
      operation: old ? 'UPDATE' : 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:karmada-system:karmada-controller-manager',
        uid: '2b0c6f0e-6f4e-4b8e-8d59-5f0b8c1f6a11',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:karmada-system', 'system:authenticated'],
      },
      object: binding,
      oldObject: old ?? null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: old ? 'UpdateOptions' : 'CreateOptions' },
    },
  });
}
