// What the chart's hook Jobs do to the Karmada API server (docs/operating/install.md#into-karmada-host):
// the order objects are applied and deleted in, and which objects an upgrade leaves stale. Pure: the
// Job's main (main.ts) does the API calls.
import type { KubernetesObject } from '@kubernetes/client-node';

/** An object the chart renders for the Karmada API server, decoded and checked. */
export interface KarmadaApiServerObject extends KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

/**
 * The label the chart puts on each object a Job applies: `<release>.<phase>`, so an upgrade's Job
 * finds what an earlier release of the same phase applied and this one no longer renders.
 */
export const INSTALL_PHASE_LABEL = 'quota.karmada.io/install-phase';

/** Kinds the chart applies, in apply order: definitions and identities before what refers to them. */
export const KIND_ORDER = [
  'CustomResourceDefinition',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingWebhookConfiguration',
] as const;

/** The API version each kind is listed under when a Job looks for stale objects. */
export const KIND_API_VERSIONS: Record<(typeof KIND_ORDER)[number], string> = {
  CustomResourceDefinition: 'apiextensions.k8s.io/v1',
  ServiceAccount: 'v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  ValidatingWebhookConfiguration: 'admissionregistration.k8s.io/v1',
};

/** `Kind namespace/name`, as the Job's log and errors name an object. */
export const describeObject = (o: KarmadaApiServerObject): string =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

const rank = (kind: string): number => {
  const index = (KIND_ORDER as readonly string[]).indexOf(kind);
  return index === -1 ? KIND_ORDER.length : index;
};

/**
 * Decodes the documents of the Job's object files: empty documents are skipped, and anything without
 * apiVersion, kind or metadata.name is an error naming the file and document.
 */
export function decodeObjects(files: { name: string; documents: unknown[] }[]): KarmadaApiServerObject[] {
  const objects: KarmadaApiServerObject[] = [];
  for (const file of files) {
    file.documents.forEach((doc, index) => {
      if (doc === null || doc === undefined) return;
      const o = doc as Partial<KarmadaApiServerObject>;
      if (
        typeof o.apiVersion !== 'string' ||
        typeof o.kind !== 'string' ||
        typeof o.metadata?.name !== 'string'
      )
        throw new Error(
          `${file.name}, document ${index + 1}: not a Kubernetes object (apiVersion, kind and metadata.name are required)`,
        );
      objects.push(o as KarmadaApiServerObject);
    });
  }
  return objects;
}

/** Apply order: by KIND_ORDER, then as rendered. Delete order is its reverse. */
export function applyOrder(objects: readonly KarmadaApiServerObject[]): KarmadaApiServerObject[] {
  return objects
    .map((object, index) => ({ object, index }))
    .sort((a, b) => rank(a.object.kind) - rank(b.object.kind) || a.index - b.index)
    .map(({ object }) => object);
}

export const deleteOrder = (objects: readonly KarmadaApiServerObject[]): KarmadaApiServerObject[] =>
  applyOrder(objects).reverse();

const identity = (o: KarmadaApiServerObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * Of the objects found carrying this phase's label, those the Job no longer applies: what an
 * earlier release rendered and this one does not (a namespace dropped from a list, a feature turned
 * off).
 */
export function staleObjects(
  applied: readonly KarmadaApiServerObject[],
  found: readonly KarmadaApiServerObject[],
): KarmadaApiServerObject[] {
  const kept = new Set(applied.map(identity));
  return deleteOrder(found.filter((o) => !kept.has(identity(o))));
}
