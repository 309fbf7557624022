/**
 * Attribution: which top-level workload a pod belongs to, so its usage can be matched to the
 * ResourceBinding of that workload (`spec.resource` kind/name, spec §5).
 *
 * The chain follows controller ownerReferences only (`controller: true`; Kubernetes allows at most
 * one per object), exactly as the built-in controllers set them:
 *
 * | pod's controller                 | workload                                                      |
 * | -------------------------------- | ------------------------------------------------------------- |
 * | none                             | the pod itself: `{ kind: 'Pod', name }`                       |
 * | ReplicaSet (apps, extensions)    | its Deployment when `replicaSetOwner` knows one, else the RS  |
 * | Job (batch)                      | its CronJob when `jobOwner` knows one, else the Job           |
 * | StatefulSet, DaemonSet, anything | that owner as is (`{ kind, name }` of the ownerReference)     |
 *
 * A Job created by a CronJob in a member cluster stays attributed to the Job unless the caller passes
 * `jobOwner`: Karmada propagates the CronJob, so a caller that watches Jobs can supply the lookup to
 * attribute to the CronJob's binding; without it the usage still counts in the namespace, under the
 * Job's name.
 *
 * Owners of another kind (a Node for static/mirror pods, an Argo Rollout, any CRD) are taken as the
 * workload as they are, one level up: the chain is never walked through a kind this module does not
 * know. A `ReplicaSet`/`Job` kind from a group other than apps/extensions/batch is such an unknown
 * owner. The lookups only ever return a name: the kind is implied (Deployment, CronJob).
 */
import type { V1ObjectMeta, V1OwnerReference, V1Pod } from '@kubernetes/client-node';

/** The top-level workload a pod is attributed to. */
export interface WorkloadRef {
  kind: string;
  name: string;
}

/**
 * Maps the name of a ReplicaSet (or Job) in the pod's namespace to the name of its controlling
 * Deployment (or CronJob), or undefined when unknown or not controlled by one. `namespace` is passed
 * for callers that keep one lookup for all namespaces; a `(name) => ...` function fits too.
 */
export type OwnerLookup = (name: string, namespace: string) => string | undefined;

/** The controller ownerReference (`controller: true`), or undefined; the first if several (invalid). */
export function controllerOf(refs: readonly V1OwnerReference[] | undefined): V1OwnerReference | undefined {
  if (!Array.isArray(refs)) return undefined;
  return refs.find((ref) => ref !== null && typeof ref === 'object' && ref.controller === true);
}

/** The API group of an apiVersion: `apps/v1` -> `apps`, `v1` -> `` (core). */
function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function isKind(ref: V1OwnerReference, kind: string, groups: readonly string[]): boolean {
  return ref.kind === kind && groups.includes(groupOf(ref.apiVersion));
}

const REPLICASET_GROUPS = ['apps', 'extensions'] as const;
const DEPLOYMENT_GROUPS = ['apps', 'extensions'] as const;
const JOB_GROUPS = ['batch'] as const;
const CRONJOB_GROUPS = ['batch'] as const;

/**
 * The name of the Deployment controlling a ReplicaSet, from the ReplicaSet's own metadata: what a
 * caller that watches ReplicaSets stores to answer `replicaSetOwner`.
 */
export function deploymentOf(replicaSet: { metadata?: V1ObjectMeta } | undefined): string | undefined {
  const ref = controllerOf(replicaSet?.metadata?.ownerReferences);
  return ref !== undefined && isKind(ref, 'Deployment', DEPLOYMENT_GROUPS) && nonEmpty(ref.name)
    ? ref.name
    : undefined;
}

/** The name of the CronJob controlling a Job, from the Job's own metadata (for `jobOwner`). */
export function cronJobOf(job: { metadata?: V1ObjectMeta } | undefined): string | undefined {
  const ref = controllerOf(job?.metadata?.ownerReferences);
  return ref !== undefined && isKind(ref, 'CronJob', CRONJOB_GROUPS) && nonEmpty(ref.name)
    ? ref.name
    : undefined;
}

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * The top-level workload of a pod (see the table at the top of this file). Never throws: a pod
 * without a name (or an owner without kind or name) is attributed to the pod, named '' if need be.
 */
export function topLevelWorkload(
  pod: V1Pod,
  replicaSetOwner?: OwnerLookup,
  jobOwner?: OwnerLookup,
): WorkloadRef {
  const meta = pod.metadata;
  const podName = nonEmpty(meta?.name) ? meta.name : '';
  const namespace = nonEmpty(meta?.namespace) ? meta.namespace : '';
  const ref = controllerOf(meta?.ownerReferences);
  if (ref === undefined || !nonEmpty(ref.kind) || !nonEmpty(ref.name)) return { kind: 'Pod', name: podName };
  if (isKind(ref, 'ReplicaSet', REPLICASET_GROUPS)) {
    const deployment = replicaSetOwner?.(ref.name, namespace);
    return nonEmpty(deployment)
      ? { kind: 'Deployment', name: deployment }
      : { kind: 'ReplicaSet', name: ref.name };
  }
  if (isKind(ref, 'Job', JOB_GROUPS)) {
    const cronJob = jobOwner?.(ref.name, namespace);
    return nonEmpty(cronJob) ? { kind: 'CronJob', name: cronJob } : { kind: 'Job', name: ref.name };
  }
  return { kind: ref.kind, name: ref.name };
}
