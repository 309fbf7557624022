import * as k8s from '@kubernetes/client-node';
import { CLUSTER_KARMADA_QUOTA, KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { isClusterQuota, type QuotaEvent } from '#quota';

export interface QuotaRef {
  /** '' for a cluster-scoped object (a ClusterKarmadaQuota): its Events go to `default`, as Kubernetes' do. */
  namespace: string;
  name: string;
  /** kubectl describe matches events by uid too; without it they still show in `kubectl get events`. */
  uid?: string;
  /** The object's kind when it is not a KarmadaQuota (a FederatedResourceQuota karmada-quota serves). */
  kind?: { apiVersion: string; kind: string };
}

/** The object an Event about the quota names: a KarmadaQuota, or a ClusterKarmadaQuota (no namespace). */
export function quotaRefOf(quota: KarmadaQuota): QuotaRef {
  const ref: QuotaRef = {
    namespace: quota.metadata?.namespace ?? '',
    name: quota.metadata?.name ?? '',
    uid: quota.metadata?.uid,
  };
  if (isClusterQuota(quota))
    ref.kind = { apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion, kind: CLUSTER_KARMADA_QUOTA.kind };
  return ref;
}

/** Writes core/v1 Events about KarmadaQuotas (and the FRQs they serve) on behalf of one component. */
export class QuotaEventWriter {
  private readonly events: k8s.CoreV1Api;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly component: string,
  ) {
    this.events = kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  async write(quota: QuotaRef, event: QuotaEvent, at = new Date()): Promise<void> {
    await this.events.createNamespacedEvent({
      namespace: quota.namespace || 'default',
      body: {
        metadata: { generateName: `${quota.name}.` },
        involvedObject: {
          apiVersion: quota.kind?.apiVersion ?? KARMADA_QUOTA.apiVersion,
          kind: quota.kind?.kind ?? KARMADA_QUOTA.kind,
          name: quota.name,
          ...(quota.namespace ? { namespace: quota.namespace } : {}),
          uid: quota.uid,
        },
        type: event.type,
        reason: event.reason,
        message: event.message,
        firstTimestamp: at,
        lastTimestamp: at,
        count: event.count ?? 1,
        source: { component: this.component },
        reportingComponent: this.component,
      },
    });
  }
}
