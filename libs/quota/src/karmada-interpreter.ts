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

/** A kind Karmada interprets natively: its API group and how its replicas are read from `spec`. */
interface NativeKind {
  group: string;
  replicas: (spec: Readonly<Record<string, unknown>>) => number;
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** `spec.replicas`; Karmada reads 0 when unset (the API server defaults it to 1 before). */
const specReplicas = (spec: Readonly<Record<string, unknown>>): number => count(spec['replicas']) ?? 0;

const NATIVE_KINDS: Readonly<Record<string, NativeKind>> = {
  Deployment: { group: 'apps', replicas: specReplicas },
  ReplicaSet: { group: 'apps', replicas: specReplicas },
  StatefulSet: { group: 'apps', replicas: specReplicas },
  // spec.parallelism, never more than spec.completions (a fixed completion count runs no more).
  Job: {
    group: 'batch',
    replicas: (spec) => {
      const parallelism = count(spec['parallelism']) ?? 0;
      return Math.min(parallelism, count(spec['completions']) ?? parallelism);
    },
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
