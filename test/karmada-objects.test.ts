import * as k8s from '@kubernetes/client-node';
import { RESOURCE_BINDING, type ResourceBinding } from '#api';
import { client, createNamespace, federation, uniqueName } from './support/federation.js';

/**
 * A ResourceBinding as karmada-controller-manager writes it for a Deployment propagated by a
 * Divided, weighted PropagationPolicy and then scheduled, with fields (conflictResolution,
 * failover, suspension, schedulerName, status.aggregatedStatus) that the product never reads.
 */
function karmadaBinding(namespace: string): ResourceBinding & Record<string, unknown> {
  return {
    apiVersion: RESOURCE_BINDING.apiVersion,
    kind: RESOURCE_BINDING.kind,
    metadata: {
      name: 'web-deployment',
      namespace,
      labels: { 'propagationpolicy.karmada.io/permanent-id': '5b4f0c8a-0c3e-4b7e-9a57-1f7b1e5a9f10' },
      annotations: {
        'policy.karmada.io/applied-placement': '{"clusterAffinity":{"clusterNames":["member1","member2"]}}',
      },
    },
    spec: {
      resource: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace,
        name: 'web',
        uid: '0d6f1f9e-6c52-4d2b-9a32-6f7f8e0f2a11',
        resourceVersion: '1234',
      },
      replicas: 3,
      replicaRequirements: {
        resourceRequest: { cpu: '200m', memory: '256Mi', 'nvidia.com/gpu': '1' },
        nodeClaim: {
          nodeSelector: { disktype: 'ssd' },
          tolerations: [{ key: 'dedicated', operator: 'Exists' }],
        },
        priorityClassName: 'high',
        namespace,
      },
      clusters: [
        { name: 'member1', replicas: 2 },
        { name: 'member2', replicas: 1 },
      ],
      placement: {
        clusterAffinity: { clusterNames: ['member1', 'member2'] },
        replicaScheduling: {
          replicaSchedulingType: 'Divided',
          replicaDivisionPreference: 'Weighted',
          weightPreference: {
            staticWeightList: [
              { targetCluster: { clusterNames: ['member1'] }, weight: 2 },
              { targetCluster: { clusterNames: ['member2'] }, weight: 1 },
            ],
          },
        },
      },
      conflictResolution: 'Abort',
      schedulerName: 'default-scheduler',
      failover: { application: { decisionConditions: { tolerationSeconds: 120 }, purgeMode: 'Gracefully' } },
      suspension: { dispatching: false },
      preserveResourcesOnDeletion: false,
      schedulePriority: { priority: 0 },
    },
  } as ResourceBinding & Record<string, unknown>;
}

describe('Karmada objects on the host', () => {
  const fed = federation();
  const objects = () => k8s.KubernetesObjectApi.makeApiClient(client(fed.host));

  test('a ResourceBinding as Karmada writes it is accepted and read back without losing a field', async () => {
    const namespace = uniqueName('rb');
    await createNamespace(fed.host, namespace);
    const binding = karmadaBinding(namespace);
    await objects().create(binding);
    const stored = await client(fed.host)
      .makeApiClient(k8s.CustomObjectsApi)
      .getNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, name: 'web-deployment' });
    expect(stored.spec).toEqual(binding.spec);
    expect(stored.metadata.labels).toEqual(binding.metadata?.labels);

    const status = {
      schedulerObservedGeneration: 1,
      conditions: [
        {
          type: 'Scheduled',
          status: 'True',
          reason: 'Success',
          message: 'Binding has been scheduled successfully.',
          lastTransitionTime: '2026-11-22T10:00:00Z',
        },
      ],
      aggregatedStatus: [
        { clusterName: 'member1', applied: true, health: 'Healthy', status: { readyReplicas: 2 } },
      ],
    };
    const withStatus = await client(fed.host)
      .makeApiClient(k8s.CustomObjectsApi)
      .replaceNamespacedCustomObjectStatus({
        ...RESOURCE_BINDING,
        namespace,
        name: 'web-deployment',
        body: { ...stored, status },
      });
    expect(withStatus.status).toEqual(status);
  });

  test('a ResourceBinding without spec.resource.kind is rejected, as Karmada rejects it', async () => {
    const namespace = uniqueName('rb');
    await createNamespace(fed.host, namespace);
    const binding = karmadaBinding(namespace);
    delete (binding.spec.resource as Partial<typeof binding.spec.resource>).kind;
    await expect(objects().create(binding)).rejects.toMatchObject({ code: 422 });
  });
});
