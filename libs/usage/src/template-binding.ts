/**
 * The ResourceBinding Karmada's detector would write for a resource template, for the warning a Warn
 * quota gives when the workload is applied (docs/concepts/enforcement.md#at-apply): the replicas and
 * one replica's pod spec as Karmada's default interpreter reads them (libs/quota
 * karmada-interpreter.ts), and that pod's requests as the scheduler counts them. Other kinds
 * (DaemonSets, CronJobs, custom resources) are left out: their binding is not predictable from the
 * template alone.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isJsonObject, RESOURCE_BINDING, type ResourceBinding } from '#api';
import { formatList } from '#quantity';
import { interpretTemplate } from '#quota';
import { podRequests } from './pod-usage.js';

/** Karmada's name for a template's ResourceBinding: `<name>-<kind>`, lowercased. */
export const templateBindingName = (kind: string, name: string): string => `${name}-${kind}`.toLowerCase();

/** A template's kind, namespace and name, and what its binding would ask per replica. */
interface Interpreted {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  replicas: number;
  podSpec: Readonly<Record<string, unknown>>;
}

/** One replica's requests, by the scheduler's rule (podRequests), as a binding's `resourceRequest`. */
export const replicaRequests = (podSpec: Readonly<Record<string, unknown>>): Record<string, string> =>
  formatList(podRequests({ spec: podSpec } as unknown as V1Pod));

function interpret(template: unknown): Interpreted | undefined {
  const interpreted = interpretTemplate(template);
  if (!interpreted || !isJsonObject(template) || !isJsonObject(template['metadata'])) return undefined;
  const { name, namespace } = template['metadata'];
  if (typeof name !== 'string' || typeof namespace !== 'string') return undefined;
  const { apiVersion, kind } = template as { apiVersion: string; kind: string };
  return { apiVersion, kind, name, namespace, replicas: interpreted.replicas, podSpec: interpreted.podSpec };
}

/**
 * The binding Karmada would write for `template` if none were stored: not yet scheduled. Undefined for
 * a kind whose binding cannot be told from the template.
 */
export function bindingForTemplate(template: unknown): ResourceBinding | undefined {
  const interpreted = interpret(template);
  if (!interpreted) return undefined;
  const { apiVersion, kind, name, namespace, replicas, podSpec } = interpreted;
  const resourceRequest = replicaRequests(podSpec);
  const priorityClassName =
    typeof podSpec['priorityClassName'] === 'string' ? podSpec['priorityClassName'] : '';
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
