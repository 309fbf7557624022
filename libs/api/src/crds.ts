/**
 * The CRD files, for the tools and tests that install or inspect them. Imported as `#api/crds`, not
 * through the `#api` barrel, so the services do not load js-yaml and client-node's serializer.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
// Not re-exported by the package root; needed to turn wire JSON into client-node's model objects (see loadCrds).
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import yaml from 'js-yaml';
import { apiFile } from './files.js';

/** File names in libs/api/crds, by kind. */
export const CRD_FILE_NAMES = {
  karmadaQuota: 'quota.karmada.io_karmadaquotas.yaml',
  clusterKarmadaQuota: 'quota.karmada.io_clusterkarmadaquotas.yaml',
  appliedClusterKarmadaQuota: 'quota.karmada.io_appliedclusterkarmadaquotas.yaml',
  workloadUsage: 'quota.karmada.io_workloadusages.yaml',
  resourceBinding: 'work.karmada.io_resourcebindings.yaml',
  cluster: 'cluster.karmada.io_clusters.yaml',
} as const;

/** An OpenAPI v3 schema node as written in a CRD (wire form: `x-kubernetes-*` keys). */
export interface JsonSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchemaProps>;
  items?: JsonSchemaProps;
  additionalProperties?: JsonSchemaProps | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  anyOf?: JsonSchemaProps[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  [keyword: string]: unknown;
}

/** A CustomResourceDefinition (apiextensions.k8s.io/v1) as plain JSON, exactly as in the YAML file. */
export interface CrdManifest {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; [field: string]: unknown };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never>; scale?: unknown };
      additionalPrinterColumns?: {
        name: string;
        type: string;
        jsonPath: string;
        description?: string;
        format?: string;
        priority?: number;
      }[];
      schema: { openAPIV3Schema: JsonSchemaProps };
    }[];
    [field: string]: unknown;
  };
}

/** Absolute path of libs/api/crds. */
export const crdDir = (): string => dirname(apiFile('crds', CRD_FILE_NAMES.karmadaQuota));

/**
 * Absolute paths of the CRD files, in install order: KarmadaQuota, ClusterKarmadaQuota,
 * AppliedClusterKarmadaQuota, WorkloadUsage, ResourceBinding, Cluster.
 */
export function crdFiles(): string[] {
  const dir = crdDir();
  return Object.values(CRD_FILE_NAMES).map((name) => join(dir, name));
}

/**
 * The CRDs as plain JSON (wire form), for raw HTTP, server-side apply, kubectl or schema inspection:
 * ours by default, or those of `files` (Karmada's own, say).
 */
export function loadCrdManifests(files: string[] = crdFiles()): CrdManifest[] {
  return files.map((file) => {
    const docs = yaml.loadAll(readFileSync(file, 'utf8')).filter((doc) => doc != null);
    const doc = docs[0] as Partial<CrdManifest> | undefined;
    if (docs.length !== 1 || doc?.kind !== 'CustomResourceDefinition') {
      throw new Error(`${file}: expected exactly one CustomResourceDefinition document`);
    }
    return doc as CrdManifest;
  });
}

/**
 * The CRDs as client-node model objects, ready for ApiextensionsV1Api (create/replace).
 *
 * client-node's models name JSON-schema extensions `x_kubernetes_preserve_unknown_fields` etc. and its
 * serializer drops keys it does not know, so passing the raw YAML (`x-kubernetes-...`) to a typed API would
 * silently strip them. These objects are deserialized through client-node's ObjectSerializer, so serializing
 * them back yields exactly the YAML content.
 */
export function loadCrds(files: string[] = crdFiles()): V1CustomResourceDefinition[] {
  return loadCrdManifests(files).map(
    (manifest) =>
      ObjectSerializer.deserialize(manifest, 'V1CustomResourceDefinition', '') as V1CustomResourceDefinition,
  );
}

/** Inverse of loadCrds' conversion: a client-node CRD model as wire JSON. */
export function crdToManifest(crd: V1CustomResourceDefinition): CrdManifest {
  return ObjectSerializer.serialize(crd, 'V1CustomResourceDefinition', '') as CrdManifest;
}
