/**
 * Attribution: which top-level workload a member object (a pod, a ReplicaSet, a counted Service or
 * Deployment...) belongs to, so its usage can be matched to the ResourceBinding of that workload
 * (`spec.resource` kind/name). The rules (controller ownerReferences followed up, owners not known
 * yet, previous incarnations, the pod chains Kubernetes' controllers make) and why Karmada's labels
 * are not used: docs/concepts/observed-usage.md#attribution and the sections under it.
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

/** A controller reference: the object it names and, when given, the uid it names. */
export interface ControllerRef extends ObjectRef {
  uid?: string;
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

/**
 * The object's controller with the uid it names; undefined without one (or without its kind or
 * name). An empty or absent uid (the API server never stores one) is left out: not checked.
 */
export function controllerRefOf(meta: V1ObjectMeta | undefined): ControllerRef | undefined {
  const ref = controllerOf(meta?.ownerReferences);
  if (ref === undefined || !nonEmpty(ref.kind) || !nonEmpty(ref.name)) return undefined;
  const out: ControllerRef = { group: groupOf(ref.apiVersion), kind: ref.kind, name: ref.name };
  if (nonEmpty(ref.uid)) out.uid = ref.uid;
  return out;
}

/**
 * API groups of Kubernetes itself. An owner of one of them is a real pod-chain owner only through
 * the links of REAL_POD_LINKS; an owner of any other group (an operator's kind) is taken as it is.
 */
export function isKubernetesGroup(group: string): boolean {
  return (
    group === '' ||
    group === 'apps' ||
    group === 'extensions' ||
    group === 'batch' ||
    group === 'policy' ||
    group === 'autoscaling' ||
    group === 'k8s.io' ||
    group.endsWith('.k8s.io')
  );
}

/** `<child group>/<child kind><-<owner group>/<owner kind>`: the links Kubernetes' controllers make. */
const REAL_POD_LINKS: ReadonlySet<string> = new Set([
  '/Pod<-apps/ReplicaSet',
  '/Pod<-extensions/ReplicaSet',
  '/Pod<-apps/StatefulSet',
  '/Pod<-apps/DaemonSet',
  '/Pod<-extensions/DaemonSet',
  '/Pod<-batch/Job',
  '/Pod<-/ReplicationController',
  'apps/ReplicaSet<-apps/Deployment',
  'extensions/ReplicaSet<-extensions/Deployment',
  'extensions/ReplicaSet<-apps/Deployment',
  'apps/ReplicaSet<-extensions/Deployment',
  'batch/Job<-batch/CronJob',
]);

/** The core Pod, as the first child of a pod chain. */
export const POD: Readonly<ObjectRef> = Object.freeze({ group: '', kind: 'Pod', name: '' });

/**
 * Whether `owner` controlling `child` is a link a pod's usage may be attributed through: one
 * Kubernetes' controllers make (Pod <- ReplicaSet <- Deployment, Pod <- Job <- CronJob, ...), or any
 * link to an owner of a group that is not Kubernetes' own (custom controllers: a Rollout's
 * ReplicaSets, an operator's Deployments or pods). Anything else (a pod or ReplicaSet claiming a
 * Deployment, a StatefulSet or a Node as its controller directly) was written by hand.
 */
export function realPodLink(
  child: Pick<ObjectRef, 'group' | 'kind'>,
  owner: Pick<ObjectRef, 'group' | 'kind'>,
): boolean {
  if (!isKubernetesGroup(owner.group)) return true;
  return REAL_POD_LINKS.has(`${child.group}/${child.kind}<-${owner.group}/${owner.kind}`);
}

/** Deep enough for any real chain (pod -> ReplicaSet -> Deployment -> operator CR is 3); stops cycles. */
const MAX_CHAIN = 16;

/**
 * What the index knows of one object: its uid, and its controller with the uid that names.
 * `deletedAt`: the object was deleted then (ms), and no other of its name seen since.
 */
interface Known {
  uid?: string;
  controller?: string;
  controllerUid?: string;
  deletedAt?: number;
}

/**
 * The known objects of a member (their uid and controller), to walk from any object to its
 * top-level workload. One entry per object (`<namespace>/<group>/<kind>/<name>` -> uid and
 * `<group>/<kind>/<name>` of its controller): no segment can hold a '/', and the walk is string
 * look-ups only. An object recorded with its uid is the current incarnation of its name: a
 * reference naming another uid is to a previous one. A deleted object recorded with its uid is
 * remembered as deleted (`forget`) until another of its name is recorded or `sweep` drops it:
 * references to it are to a previous incarnation too (its dependents are on their way out, as
 * soon as the garbage collector gets to them).
 */
export class OwnerIndex {
  readonly #objects = new Map<string, Known>();

  /**
   * Records the current `object` of its name: its uid (undefined: not known, never checked) and its
   * controller (undefined: it has none, it is top-level). Returns whether that changed what is known
   * of it, so what is attributed through it may have changed.
   */
  setObject(
    namespace: string,
    object: ObjectRef,
    uid: string | undefined,
    controller: ControllerRef | undefined,
  ): boolean {
    const key = `${namespace}/${idOf(object)}`;
    if (uid === undefined && controller === undefined) return this.#objects.delete(key);
    const before = this.#objects.get(key);
    const id = controller === undefined ? undefined : idOf(controller);
    const controllerUid = controller?.uid;
    if (
      before !== undefined &&
      before.uid === uid &&
      before.controller === id &&
      before.controllerUid === controllerUid &&
      before.deletedAt === undefined
    )
      return false;
    const known: Known = {};
    if (uid !== undefined) known.uid = uid;
    if (id !== undefined) known.controller = id;
    if (controllerUid !== undefined) known.controllerUid = controllerUid;
    this.#objects.set(key, known);
    return true;
  }

  /**
   * Records `object`'s controller, its uid not known (undefined: it has none). Returns whether that
   * changed what `object` is attributed to.
   */
  setController(namespace: string, object: ObjectRef, controller: ControllerRef | undefined): boolean {
    return this.setObject(namespace, object, undefined, controller);
  }

  /**
   * Records that `object` (`uid`, when given: a deletion of another uid than the recorded one is
   * ignored) was deleted at `now` (ms). Known by its uid, it is remembered as deleted
   * (what references it is a previous incarnation's) until another of its name is recorded or
   * `sweep` drops it; otherwise it is forgotten. Returns whether attribution through it changed.
   */
  forget(namespace: string, object: ObjectRef, now = Date.now(), uid?: string): boolean {
    const key = `${namespace}/${idOf(object)}`;
    const known = this.#objects.get(key);
    if (known === undefined || known.deletedAt !== undefined) return false;
    // A deletion of another incarnation than the one recorded (seen late) changes nothing.
    if (uid !== undefined && known.uid !== undefined && known.uid !== uid) return false;
    if (known.uid === undefined) return this.#objects.delete(key);
    known.deletedAt = now;
    return true;
  }

  /** Drops the objects deleted before `before` (ms): references to them are taken by name again. */
  sweep(before: number): number {
    let dropped = 0;
    for (const [key, known] of this.#objects) {
      if (known.deletedAt !== undefined && known.deletedAt < before) {
        this.#objects.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * The top-level workload of `object`: the last known controller up its chain, or itself.
   * `uid`: the uid the reference to `object` names, if any. `terminating` when a reference up the
   * chain (that one included) names a uid other than the current one of its name, or an object
   * deleted since (a previous incarnation). `podChain`: the walk is a pod's, and stops at a link Kubernetes' controllers do
   * not make (realPodLink).
   */
  workloadOf(namespace: string, object: ObjectRef, uid?: string, podChain = false): WorkloadRef {
    let id = idOf(object);
    let expected = uid;
    let previous = false;
    for (let depth = 0; depth < MAX_CHAIN; depth++) {
      const known = this.#objects.get(`${namespace}/${id}`);
      if (known === undefined) break;
      if (known.deletedAt !== undefined) previous = true;
      else if (expected !== undefined && known.uid !== undefined && known.uid !== expected) previous = true;
      const controller = known.controller;
      if (controller === undefined) break;
      if (podChain && !realPodLink(typeOf(id), typeOf(controller))) break;
      id = controller;
      expected = known.controllerUid;
    }
    const kindStart = id.indexOf('/') + 1;
    const nameStart = id.indexOf('/', kindStart) + 1;
    const workload: WorkloadRef = { kind: id.slice(kindStart, nameStart - 1), name: id.slice(nameStart) };
    if (previous) workload.terminating = true;
    return workload;
  }

  /** How many objects are known (those remembered as deleted included). */
  get size(): number {
    return this.#objects.size;
  }
}

/** The group and kind of an index id. */
function typeOf(id: string): Pick<ObjectRef, 'group' | 'kind'> {
  const kindStart = id.indexOf('/') + 1;
  return { group: id.slice(0, kindStart - 1), kind: id.slice(kindStart, id.indexOf('/', kindStart)) };
}

const idOf = (ref: ObjectRef): string => `${ref.group}/${ref.kind}/${ref.name}`;

const REPLICASET_GROUPS: readonly string[] = ['apps', 'extensions'];

/**
 * The top-level workload of a pod: its controller walked up through `owners` along the links
 * Kubernetes' controllers make (realPodLink), each checked against its owner's current uid where
 * `owners` knows it (a previous incarnation's: `terminating`), or the pod itself
 * (`{ kind: 'Pod', name }`) without a controller or with one no controller of pods is (a reference
 * written by hand: to a Deployment, a Node). With an OwnerLookup only the ReplicaSet -> Deployment
 * step is known, and no uid. Never throws: a pod without a name is attributed to the pod named ''.
 */
export function topLevelWorkload(pod: V1Pod, owners?: OwnerIndex | OwnerLookup): WorkloadRef {
  const meta = pod.metadata;
  const namespace = nonEmpty(meta?.namespace) ? meta.namespace : '';
  const controller = controllerRefOf(meta);
  if (controller === undefined || !realPodLink(POD, controller))
    return { kind: 'Pod', name: nonEmpty(meta?.name) ? meta.name : '' };
  if (owners instanceof OwnerIndex) return owners.workloadOf(namespace, controller, controller.uid, true);
  if (controller.kind === 'ReplicaSet' && REPLICASET_GROUPS.includes(controller.group)) {
    const deployment = owners?.(controller.name, namespace);
    if (nonEmpty(deployment)) return { kind: 'Deployment', name: deployment };
  }
  return { kind: controller.kind, name: controller.name };
}
