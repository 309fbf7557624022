/**
 * Karmada v1.18.2's default interpreter for the kinds it reads replicas from
 * (pkg/resourceinterpreter/default/native/replica.go): how many replicas a resource template declares
 * and the pod spec each replica runs. One table for everyone who must agree with Karmada: the
 * warnings at apply (the binding Karmada will write, libs/usage template-binding.ts) and the priority
 * class of a binding written without Karmada's ResourceQuotaEstimate gate (scopes.ts). Other kinds
 * (DaemonSet, CronJob, custom resources) declare no replicas, or what their own interpreter says:
 * undefined here. Pure.
 */
import { isJsonObject } from '#api';
import { groupOf } from './charge.js';

/**
 * A kind Karmada interprets natively: its API group, how its replicas are read from `spec`, and the
 * field Karmada sets to a target cluster's replicas when it builds that cluster's Work
 * (pkg/resourceinterpreter/default/native/revisereplica.go; none for a Pod).
 */
interface NativeKind {
  group: string;
  replicas: (spec: Readonly<Record<string, unknown>>) => number;
  revisedField?: string;
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** `spec.replicas`; Karmada reads 0 when unset (the API server defaults it to 1 before). */
const specReplicas = (spec: Readonly<Record<string, unknown>>): number => count(spec['replicas']) ?? 0;

const NATIVE_KINDS: Readonly<Record<string, NativeKind>> = {
  Deployment: { group: 'apps', replicas: specReplicas, revisedField: 'replicas' },
  ReplicaSet: { group: 'apps', replicas: specReplicas, revisedField: 'replicas' },
  StatefulSet: { group: 'apps', replicas: specReplicas, revisedField: 'replicas' },
  // spec.parallelism, never more than spec.completions (a fixed completion count runs no more).
  Job: {
    group: 'batch',
    replicas: (spec) => {
      const parallelism = count(spec['parallelism']) ?? 0;
      return Math.min(parallelism, count(spec['completions']) ?? parallelism);
    },
    revisedField: 'parallelism',
  },
  Pod: { group: '', replicas: () => 1 },
};

/** Does Karmada's default interpreter read replicas and a pod template from this kind? */
export function isNativeReplicaKind(apiVersion: unknown, kind: unknown): boolean {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !Object.hasOwn(NATIVE_KINDS, kind))
    return false;
  return NATIVE_KINDS[kind]!.group === groupOf(apiVersion);
}

/** A template as Karmada's default interpreter reads it: replicas and one replica's pod spec. */
export interface InterpretedTemplate {
  replicas: number;
  /** The pod spec as the template carries it (wire JSON; read it, never trust it). */
  podSpec: Record<string, unknown>;
}

/** The template's replicas and pod spec, or undefined for a kind Karmada does not interpret natively. */
export function interpretTemplate(template: unknown): InterpretedTemplate | undefined {
  if (!isJsonObject(template) || !isNativeReplicaKind(template['apiVersion'], template['kind']))
    return undefined;
  const kind = template['kind'] as string;
  const spec = isJsonObject(template['spec']) ? template['spec'] : {};
  const podTemplate = isJsonObject(spec['template']) ? spec['template'] : {};
  const podSpec = kind === 'Pod' ? spec : isJsonObject(podTemplate['spec']) ? podTemplate['spec'] : {};
  return { replicas: NATIVE_KINDS[kind]!.replicas(spec), podSpec };
}

/** The priority class of the template's pods ('' for none), or undefined for a kind not interpreted. */
export function templatePriorityClass(template: unknown): string | undefined {
  const interpreted = interpretTemplate(template);
  if (interpreted === undefined) return undefined;
  const name = interpreted.podSpec['priorityClassName'];
  return typeof name === 'string' ? name : '';
}

/**
 * The template as Karmada sends it to one target cluster before overrides: its replica field set to
 * the cluster's `spec.clusters[].replicas` (a copy; the template itself is not changed). Undefined for
 * a kind not interpreted natively.
 */
export function reviseReplicas(
  template: Readonly<Record<string, unknown>>,
  replicas: number,
): Record<string, unknown> | undefined {
  if (!isNativeReplicaKind(template['apiVersion'], template['kind'])) return undefined;
  const field = NATIVE_KINDS[template['kind'] as string]!.revisedField;
  const copy = structuredClone(template) as Record<string, unknown>;
  if (field === undefined) return copy;
  const spec = isJsonObject(copy['spec']) ? copy['spec'] : {};
  copy['spec'] = { ...spec, [field]: replicas };
  return copy;
}

/**
 * The template's replicas as the member cluster runs it: as interpretTemplate reads them, but an
 * unset or null replica field is 1, as the member's API server defaults it (an OverridePolicy can
 * remove the field, or null it: Karmada drops a zero `value` from its JSON patch).
 */
export function memberReplicas(template: Readonly<Record<string, unknown>>): number | undefined {
  if (!isNativeReplicaKind(template['apiVersion'], template['kind'])) return undefined;
  const native = NATIVE_KINDS[template['kind'] as string]!;
  const spec = isJsonObject(template['spec']) ? template['spec'] : {};
  const field = native.revisedField;
  const unset = field !== undefined && (spec[field] === undefined || spec[field] === null);
  return native.replicas(unset ? { ...spec, [field]: 1 } : spec);
}
