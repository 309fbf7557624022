import * as k8s from '@kubernetes/client-node';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  WORKLOAD_USAGE,
  type ApiResourceInfo,
  type Cluster,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { recordedObservations, USAGE_RECORD_NAME, type WorkloadObservations } from '#quota-view';
import type { QueryCommand } from './args.js';
import { CliError, explainError, isObjectNotFound, type RequestTarget } from './errors.js';
import { isApplied, type QuotaDetails } from './format.js';
import type { Connection } from './kubeconfig.js';

/** kubectl's name for a resource in messages, e.g. `karmadaquotas.quota.karmada.io`. */
export const resourceName = (info: ApiResourceInfo) => `${info.plural}.${info.group}`;
const coordinates = (info: ApiResourceInfo) => ({
  group: info.group,
  version: info.version,
  plural: info.plural,
});
const QUOTAS = coordinates(KARMADA_QUOTA);
const APPLIED = coordinates(APPLIED_CLUSTER_KARMADA_QUOTA);

/**
 * A NAME naming a ClusterKarmadaQuota, as the webhook's refusals do (`ClusterKarmadaQuota/team`, or
 * `ckq/team`): its AppliedClusterKarmadaQuota in the namespace is read; else undefined.
 */
export function clusterQuotaNamed(name: string): string | undefined {
  const slash = name.indexOf('/');
  if (slash < 0) return undefined;
  const kind = name.slice(0, slash).toLowerCase();
  const names = [
    CLUSTER_KARMADA_QUOTA.kind.toLowerCase(),
    CLUSTER_KARMADA_QUOTA.singular,
    ...CLUSTER_KARMADA_QUOTA.shortNames,
  ];
  return names.includes(kind) ? name.slice(slash + 1) : undefined;
}

const target = (
  connection: Connection,
  verb: RequestTarget['verb'],
  resource: string,
  namespace?: string,
  name?: string,
): RequestTarget => ({
  server: connection.server,
  context: connection.context,
  verb,
  resource,
  namespace,
  name,
});

export interface Fetched {
  /** The KarmadaQuotas, then the AppliedClusterKarmadaQuotas (the ClusterKarmadaQuotas selecting the namespace). */
  quotas: KarmadaQuota[];
  /** The AppliedClusterKarmadaQuotas could not be listed: why (the KarmadaQuotas are still shown). */
  warnings?: string[];
  /** One message per named quota that does not exist; the others are still shown, as kubectl does. */
  notFound: string[];
  /** Of the list (or of the one named quota): where a watch starts. */
  resourceVersion: string;
}

/** A listed AppliedClusterKarmadaQuota, its kind set (a list's items may lack it). */
const asApplied = (quota: KarmadaQuota): KarmadaQuota =>
  ({
    ...quota,
    apiVersion: APPLIED_CLUSTER_KARMADA_QUOTA.apiVersion,
    kind: APPLIED_CLUSTER_KARMADA_QUOTA.kind,
  }) as unknown as KarmadaQuota;

export async function fetchQuotas(command: QueryCommand, connection: Connection): Promise<Fetched> {
  const api = connection.kc.makeApiClient(k8s.CustomObjectsApi);
  const { namespace } = connection;
  const resource = resourceName(KARMADA_QUOTA);
  const scope = command.allNamespaces ? undefined : namespace;
  if (command.names.length === 0) {
    let fetched: Fetched;
    try {
      const list = (await (command.allNamespaces
        ? api.listClusterCustomObject(QUOTAS)
        : api.listNamespacedCustomObject({ ...QUOTAS, namespace }))) as {
        items: KarmadaQuota[];
        metadata?: { resourceVersion?: string };
      };
      fetched = { quotas: list.items, notFound: [], resourceVersion: list.metadata?.resourceVersion ?? '' };
    } catch (err) {
      throw new CliError(explainError(err, target(connection, 'list', resource, scope)));
    }
    // A watch follows the KarmadaQuotas only: the projections are listed for tables and describe.
    if (command.watch) return fetched;
    try {
      const applied = (await (command.allNamespaces
        ? api.listClusterCustomObject(APPLIED)
        : api.listNamespacedCustomObject({ ...APPLIED, namespace }))) as { items: KarmadaQuota[] };
      fetched.quotas.push(...applied.items.map(asApplied));
    } catch (err) {
      const failure = target(connection, 'list', resourceName(APPLIED_CLUSTER_KARMADA_QUOTA), scope);
      fetched.warnings = [
        `Warning: the ClusterKarmadaQuotas selecting the namespace are not shown: ${explainError(err, failure).replace(/^error: /, '')}`,
      ];
    }
    return fetched;
  }
  const fetched: Fetched = { quotas: [], notFound: [], resourceVersion: '' };
  for (const name of command.names) {
    const clusterQuota = clusterQuotaNamed(name);
    if (clusterQuota !== undefined) {
      try {
        const applied = (await api.getNamespacedCustomObject({
          ...APPLIED,
          namespace,
          name: clusterQuota,
        })) as KarmadaQuota;
        fetched.quotas.push(asApplied(applied));
      } catch (err) {
        const failure = target(
          connection,
          'get',
          resourceName(APPLIED_CLUSTER_KARMADA_QUOTA),
          namespace,
          clusterQuota,
        );
        const message = explainError(err, failure);
        if (!isObjectNotFound(err)) throw new CliError(message);
        fetched.notFound.push(message);
      }
      continue;
    }
    try {
      const quota = (await api.getNamespacedCustomObject({ ...QUOTAS, namespace, name })) as KarmadaQuota;
      fetched.quotas.push(quota);
      fetched.resourceVersion = quota.metadata?.resourceVersion ?? '';
    } catch (err) {
      const message = explainError(err, target(connection, 'get', resource, namespace, name));
      if (!isObjectNotFound(err)) throw new CliError(message); // the next name would fail the same way
      fetched.notFound.push(message);
    }
  }
  return fetched;
}

/**
 * What describe shows beside each quota: the member clusters, the bindings and Events of its
 * namespace. One that cannot be read is left out of the details with a warning saying why; the
 * rest is still shown.
 */
export async function fetchDetails(
  quotas: KarmadaQuota[],
  connection: Connection,
): Promise<{ details: QuotaDetails[]; warnings: string[] }> {
  const objects = connection.kc.makeApiClient(k8s.CustomObjectsApi);
  const core = connection.kc.makeApiClient(k8s.CoreV1Api);
  // Requests overlap, so each warning keeps the place its request was started in: the same
  // failures always print in the same order.
  const warningSlots: (string | undefined)[] = [];
  const attempt = async <T>(
    what: string,
    request: () => Promise<T>,
    failure: RequestTarget,
  ): Promise<T | undefined> => {
    const slot = warningSlots.push(undefined) - 1;
    try {
      return await request();
    } catch (err) {
      warningSlots[slot] =
        `Warning: ${what} not shown: ${explainError(err, failure).replace(/^error: /, '')}`;
      return undefined;
    }
  };
  const clusterResource = resourceName(CLUSTER);
  const clusters = await attempt(
    'member clusters without usage in the namespace are',
    async () => ((await objects.listClusterCustomObject(coordinates(CLUSTER))) as { items: Cluster[] }).items,
    target(connection, 'list', clusterResource),
  );
  const bindingsOf = new Map<string, Promise<ResourceBinding[] | undefined>>();
  const usageOf = new Map<string, Promise<WorkloadObservations>>();
  const details: QuotaDetails[] = [];
  for (const quota of quotas) {
    const namespace = quota.metadata?.namespace ?? '';
    const name = quota.metadata?.name ?? '';
    if (!bindingsOf.has(namespace)) {
      bindingsOf.set(
        namespace,
        attempt(
          `the usage by workload in ${namespace} is`,
          async () =>
            (
              (await objects.listNamespacedCustomObject({ ...coordinates(RESOURCE_BINDING), namespace })) as {
                items: ResourceBinding[];
              }
            ).items,
          target(connection, 'list', resourceName(RESOURCE_BINDING), namespace),
        ),
      );
    }
    if (!usageOf.has(namespace)) usageOf.set(namespace, usageRecord(objects, connection, namespace));
    // A ClusterKarmadaQuota's Events are in the default namespace (describe them with kubectl
    // describe clusterkarmadaquota): its projection has none of its own.
    const events = isApplied(quota)
      ? []
      : await attempt(
          `the Events of KarmadaQuota ${namespace}/${name} are`,
          async () =>
            (
              await core.listNamespacedEvent({
                namespace,
                fieldSelector: `involvedObject.kind=${KARMADA_QUOTA.kind},involvedObject.name=${name}`,
              })
            ).items,
          target(connection, 'list', 'events', namespace),
        );
    // An event without a uid is still about this quota; one with another uid was about a quota of
    // the same name deleted since.
    const uid = quota.metadata?.uid;
    details.push({
      quota,
      clusters,
      bindings: await bindingsOf.get(namespace),
      usage: await usageOf.get(namespace),
      events: events?.filter((e) => !e.involvedObject.uid || !uid || e.involvedObject.uid === uid),
    });
  }
  return { details, warnings: warningSlots.filter((w): w is string => w !== undefined) };
}

/** The namespace's usage record (the reconciler writes it): the split of each workload's charge. */
async function usageRecord(
  objects: k8s.CustomObjectsApi,
  connection: Connection,
  namespace: string,
): Promise<WorkloadObservations> {
  try {
    const name = USAGE_RECORD_NAME;
    const record: unknown = await objects.getNamespacedCustomObject({
      ...coordinates(WORKLOAD_USAGE),
      namespace,
      name,
    });
    return recordedObservations(record, new Date());
  } catch (err) {
    if (isObjectNotFound(err)) return recordedObservations(undefined, new Date());
    const failure = target(connection, 'get', resourceName(WORKLOAD_USAGE), namespace, USAGE_RECORD_NAME);
    return { problem: explainError(err, failure).replace(/^error: /, '') };
  }
}

/** Names for shell completion: the namespaces, and the quotas of one namespace. */
export async function listNamespaces(connection: Connection): Promise<string[]> {
  const list = await connection.kc.makeApiClient(k8s.CoreV1Api).listNamespace();
  return list.items.map((n) => n.metadata?.name ?? '').filter(Boolean);
}

export async function listQuotaNames(connection: Connection): Promise<string[]> {
  const list = (await connection.kc
    .makeApiClient(k8s.CustomObjectsApi)
    .listNamespacedCustomObject({ ...QUOTAS, namespace: connection.namespace })) as { items: KarmadaQuota[] };
  return list.items.map((q) => q.metadata?.name ?? '').filter(Boolean);
}

/** The path a watch of the command's quotas uses, and its field selector for one named quota. */
export function watchRequest(command: QueryCommand, connection: Connection) {
  const base = `/apis/${KARMADA_QUOTA.group}/${KARMADA_QUOTA.version}`;
  const path = command.allNamespaces
    ? `${base}/${KARMADA_QUOTA.plural}`
    : `${base}/namespaces/${connection.namespace}/${KARMADA_QUOTA.plural}`;
  const name = command.names[0];
  return { path, fieldSelector: name === undefined ? undefined : `metadata.name=${name}` };
}
