/**
 * The ResourceBinding Karmada's detector would write for a resource template, for the warning a Warn
 * quota gives when the workload is applied (docs/concepts/enforcement.md#at-apply). Karmada's default
 * interpreter for the kinds below: the replicas (Deployment, StatefulSet and ReplicaSet
 * `spec.replicas`, default 1; Job `spec.parallelism`, default 1; a Pod, 1) and one replica's requests
 * (the pod template's, as the scheduler counts them). Other kinds (DaemonSets, CronJobs, custom
 * resources) are left out: their binding is not predictable from the template alone.
 */
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { isJsonObject, RESOURCE_BINDING, type ResourceBinding } from '#api';
import { formatList } from '#quantity';
import { podRequests } from './pod-usage.js';

/** The kinds whose binding can be told from the template, by API group. */
const TEMPLATE_KINDS: Readonly<Record<string, string>> = {
  Deployment: 'apps',
  StatefulSet: 'apps',
  ReplicaSet: 'apps',
  Job: 'batch',
  Pod: '',
};

/** Karmada's name for a template's ResourceBinding: `<name>-<kind>`, lowercased. */
export const templateBindingName = (kind: string, name: string): string => `${name}-${kind}`.toLowerCase();

/** A template's kind, namespace and name, and what its binding would ask per replica. */
interface Interpreted {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  replicas: number;
  podSpec: V1PodSpec | undefined;
}

const count = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;

function interpret(template: unknown): Interpreted | undefined {
  if (!isJsonObject(template) || !isJsonObject(template['metadata'])) return undefined;
  const { apiVersion, kind } = template;
  const { name, namespace } = template['metadata'];
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string')
    return undefined;
  if (typeof namespace !== 'string' || !Object.hasOwn(TEMPLATE_KINDS, kind)) return undefined;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group !== TEMPLATE_KINDS[kind]) return undefined;
  const spec = isJsonObject(template['spec']) ? template['spec'] : {};
  const podTemplate = isJsonObject(spec['template']) ? spec['template'] : {};
  const podSpec = (kind === 'Pod' ? spec : podTemplate['spec']) as V1PodSpec | undefined;
  const replicas = kind === 'Pod' ? 1 : count(spec[kind === 'Job' ? 'parallelism' : 'replicas'], 1);
  return { apiVersion, kind, name, namespace, replicas, podSpec };
}

/**
 * The binding Karmada would write for `template` if none were stored: not yet scheduled. Undefined for
 * a kind whose binding cannot be told from the template.
 */
export function bindingForTemplate(template: unknown): ResourceBinding | undefined {
  const interpreted = interpret(template);
  if (!interpreted) return undefined;
  const { apiVersion, kind, name, namespace, replicas, podSpec } = interpreted;
  const resourceRequest = formatList(podRequests({ spec: podSpec } as V1Pod));
  const priorityClassName = podSpec?.priorityClassName;
  const replicaRequirements = { resourceRequest, ...(priorityClassName ? { priorityClassName } : {}) };
  return {
    apiVersion: RESOURCE_BINDING.apiVersion,
    kind: RESOURCE_BINDING.kind,
    metadata: { name: templateBindingName(kind, name), namespace },
    spec: { resource: { apiVersion, kind, namespace, name }, replicas, replicaRequirements },
  };
}

/**
 * The stored binding as Karmada's detector updates it for the template: its placement and clusters
 * kept, the replicas and requirements of `fromTemplate` (bindingForTemplate's).
 */
export const updatedForTemplate = (
  stored: ResourceBinding,
  fromTemplate: ResourceBinding,
): ResourceBinding => ({
  ...stored,
  spec: {
    ...stored.spec,
    replicas: fromTemplate.spec.replicas,
    replicaRequirements: fromTemplate.spec.replicaRequirements,
  },
});
