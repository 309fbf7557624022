/**
 * What the real-Karmada suites (karmada.test.ts, karmada-failover.test.ts) do to their federation as
 * users do: a namespace with a quota, a workload and its PropagationPolicy, and the reads of what
 * Karmada and the members made of them.
 */
import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { Quantity } from '#quantity';
import { kubeConfigFor, type Federation, type KarmadaWorkload } from '../../tools/federation/src/index.js';
import { eventually, uniqueName, usageCounted } from './federation.js';
import { karmadaQuota } from './fixtures.js';

/** Millicores of a quantity ('0' when absent). */
export const cpu = (s: string | undefined): number => Number(Quantity.parse(s ?? '0').milliValue());

/** The binding's Scheduled condition, as Karmada's scheduler writes it. */
export function scheduledCondition(
  rb: ResourceBinding,
): { status: string; reason?: string; message?: string } | undefined {
  const conditions = (
    rb.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] }
  )?.conditions;
  return conditions?.find((c) => c.type === 'Scheduled');
}

/** The helpers, for the federation `current()` returns (started in a beforeAll). */
export function karmadaSuite(current: () => Federation, namespacePrefix: string) {
  const host = () => kubeConfigFor(current().info.host);
  const member = (name: string) => kubeConfigFor(current().info.members.find((m) => m.name === name)!);
  const objects = () => k8s.KubernetesObjectApi.makeApiClient(host());
  const custom = () => host().makeApiClient(k8s.CustomObjectsApi);

  /**
   * A namespace on the host only, as users make it (Karmada copies it to the members), with quota
   * `team`, capping members as `clusters` says.
   */
  async function teamWithQuota(
    hard: Record<string, string>,
    clusters?: KarmadaQuota['spec']['clusters'],
  ): Promise<string> {
    const namespace = uniqueName(namespacePrefix);
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    const body = karmadaQuota(namespace, 'team', hard);
    if (clusters) body.spec.clusters = clusters;
    await custom().createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, body });
    await usageCounted(host(), namespace, 'team');
    return namespace;
  }

  async function apply(workload: KarmadaWorkload): Promise<void> {
    await objects().create(workload.policy);
    await objects().create(workload.workload);
  }

  const readQuota = (namespace: string) =>
    custom().getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name: 'team',
    }) as Promise<KarmadaQuota>;

  const readBinding = (namespace: string, name: string) =>
    custom().getNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace,
      name: `${name}-deployment`,
    }) as Promise<ResourceBinding>;

  /** The pods of the namespace in one member; `leaving: false` leaves out those being deleted. */
  const podCount = async (cluster: string, namespace: string, { leaving = true } = {}) =>
    (await member(cluster).makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace })).items.filter(
      (p) => leaving || !p.metadata?.deletionTimestamp,
    ).length;

  async function eventsOn(namespace: string, name: string, reason: string): Promise<k8s.CoreV1Event[]> {
    const events = await host().makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace });
    return events.items.filter((e) => e.involvedObject.name === name && e.reason === reason);
  }

  /** The first Warning Karmada's detector records on the template when our webhook refuses its binding. */
  async function detectorRefusal(namespace: string, name: string): Promise<k8s.CoreV1Event> {
    // (Karmada's detector may also report its own duplicate-create race as ApplyPolicyFailed.)
    const [refusal] = await eventually(
      () =>
        eventsOn(namespace, name, 'ApplyPolicyFailed').then((events) =>
          events.filter((e) => e.message?.includes('exceeded quota')),
        ),
      (events) => events.length > 0,
    );
    return refusal!;
  }

  return {
    host,
    member,
    objects,
    custom,
    teamWithQuota,
    apply,
    readQuota,
    readBinding,
    podCount,
    eventsOn,
    detectorRefusal,
  };
}
