/**
 * Attribution: which top-level workload a member object (a pod, a ReplicaSet, a counted Service or
 * Deployment...) belongs to, so its usage can be matched to the ResourceBinding of that workload
 * (`spec.resource` kind/name).
 *
 * The rule: follow controller ownerReferences (`controller: true`; Kubernetes allows at most one per
 * object) upwards through every object the caller knows, and take the last one as the workload.
 * - An object without a controller is its own workload (a propagated Deployment, a bare Pod).
 * - An owner the caller does not know is taken as the workload as it is: a pod of ReplicaSet `r`
 *   whose ReplicaSet is owned by `Rollout/canary` is the Rollout's once `r` is known, `ReplicaSet/r`
 *   until then (the caller moves its usage when `r` arrives: UsageLedger.reattribute).
 *
 * Karmada's execution controller applies the template under its own kind and name and stamps the
 * member's top-level object with the binding's name (`resourcebinding.karmada.io/name`) and
 * permanent id. Those name the binding, not its `spec.resource`, so they would not match the
 * published kind/name; the top-level object's kind/name already is the template's, which is what
 * the reconciler matches. Walking ownerReferences is therefore enough, and it attributes objects
 * the member made itself (pods, an operator's Deployments) that carry no Karmada stamp at all.
 *
 * Objects are identified by (namespace, API group, kind, name): the group keeps a Knative `Service`
 * apart from a core `Service` of the same name. Workloads are published as kind/name only, as the
 * binding's `spec.resource` is matched.
 */
import type { V1ObjectMeta, V1OwnerReference, V1Pod } from '@kubernetes/client-node';

/**
 * The top-level workload an object is attributed to. `terminating`: a pod being deleted, still counted
 * in the namespace's usage until it is gone, but never standing in for its workload's binding
 * (docs/concepts/observed-usage.md, "Pods on their way out").
 */
export interface WorkloadRef {
  kind: string;
  name: string;
  terminating?: true;
}

/** A namespaced object as attribution knows it: API group ('' for core), kind and name. */
export interface ObjectRef {
  group: string;
  kind: string;
  name: string;
}

/**
 * A shorthand for callers that only know which Deployment controls each ReplicaSet: maps the name of
 * a ReplicaSet in `namespace` to its Deployment's name, or undefined when unknown.
 */
export type OwnerLookup = (name: string, namespace: string) => string | undefined;

/** The controller ownerReference (`controller: true`), or undefined; the first if several (invalid). */
export function controllerOf(refs: readonly V1OwnerReference[] | undefined): V1OwnerReference | undefined {
  if (!Array.isArray(refs)) return undefined;
  return refs.find((ref) => ref !== null && typeof ref === 'object' && ref.controller === true);
}

/** The API group of an apiVersion: `apps/v1` -> `apps`, `v1` -> `` (core). */
export function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The object's controller as an ObjectRef; undefined without one (or without its kind or name). */
export function controllerRefOf(meta: V1ObjectMeta | undefined): ObjectRef | undefined {
  const ref = controllerOf(meta?.ownerReferences);
  if (ref === undefined || !nonEmpty(ref.kind) || !nonEmpty(ref.name)) return undefined;
  return { group: groupOf(ref.apiVersion), kind: ref.kind, name: ref.name };
}

/** Deep enough for any real chain (pod -> ReplicaSet -> Deployment -> operator CR is 3); stops cycles. */
const MAX_CHAIN = 16;

/**
 * The controller of every known object that has one, to walk from any object to its top-level
 * workload. One string per entry (`<namespace>/<group>/<kind>/<name>` -> `<group>/<kind>/<name>`):
 * no segment can hold a '/', and the walk is string look-ups only.
 */
export class OwnerIndex {
  readonly #controllers = new Map<string, string>();

  /**
   * Records `object`'s controller (undefined: it has none, it is top-level). Returns whether that
   * changed what `object` is attributed to.
   */
  setController(namespace: string, object: ObjectRef, controller: ObjectRef | undefined): boolean {
    const key = `${namespace}/${idOf(object)}`;
    const before = this.#controllers.get(key);
    if (controller === undefined) return this.#controllers.delete(key);
    const id = idOf(controller);
    if (before === id) return false;
    this.#controllers.set(key, id);
    return true;
  }

  /** Forgets a deleted object. */
  forget(namespace: string, object: ObjectRef): void {
    this.#controllers.delete(`${namespace}/${idOf(object)}`);
  }

  /** The top-level workload of `object`: the last known controller up its chain, or itself. */
  workloadOf(namespace: string, object: ObjectRef): WorkloadRef {
    let id = idOf(object);
    for (let depth = 0; depth < MAX_CHAIN; depth++) {
      const controller = this.#controllers.get(`${namespace}/${id}`);
      if (controller === undefined) break;
      id = controller;
    }
    const kindStart = id.indexOf('/') + 1;
    const nameStart = id.indexOf('/', kindStart) + 1;
    return { kind: id.slice(kindStart, nameStart - 1), name: id.slice(nameStart) };
  }

  /** How many objects have a recorded controller. */
  get size(): number {
    return this.#controllers.size;
  }
}

const idOf = (ref: ObjectRef): string => `${ref.group}/${ref.kind}/${ref.name}`;

const REPLICASET_GROUPS: readonly string[] = ['apps', 'extensions'];

/**
 * The top-level workload of a pod: its controller walked up through `owners`, or the pod itself
 * (`{ kind: 'Pod', name }`) without a controller. With an OwnerLookup only the ReplicaSet ->
 * Deployment step is known. Never throws: a pod without a name is attributed to the pod named ''.
 */
export function topLevelWorkload(pod: V1Pod, owners?: OwnerIndex | OwnerLookup): WorkloadRef {
  const meta = pod.metadata;
  const namespace = nonEmpty(meta?.namespace) ? meta.namespace : '';
  const controller = controllerRefOf(meta);
  if (controller === undefined) return { kind: 'Pod', name: nonEmpty(meta?.name) ? meta.name : '' };
  if (owners instanceof OwnerIndex) return owners.workloadOf(namespace, controller);
  if (controller.kind === 'ReplicaSet' && REPLICASET_GROUPS.includes(controller.group)) {
    const deployment = owners?.(controller.name, namespace);
    if (nonEmpty(deployment)) return { kind: 'Deployment', name: deployment };
  }
  return { kind: controller.kind, name: controller.name };
}
