/**
 * UsageLedger: the aggregator's in-memory accounting for ONE member cluster, per namespace and per
 * (namespace, top-level workload). Pure and synchronous; the caller feeds it watch events and says
 * which workload each pod and counted object belongs to (see attribution). How it keeps a pod in
 * about 120 bytes, its keys and object counts, dirty tracking and relists:
 * docs/concepts/observed-usage.md#the-aggregators-ledger.
 */
import { Quantity, type ResourceList } from '#quantity';
import type { PodUsage } from './pod-usage.js';
import type { WorkloadRef } from './attribution.js';

/** What the aggregator publishes for one namespace of one cluster. */
export interface NamespaceUsage {
  /** Canonical quantities, keys sorted, zero entries omitted; includes `pods` and object counts. */
  used: Record<string, string>;
  /** Every workload with at least one counted pod or object, sorted by kind then name. */
  workloads: WorkloadUsage[];
}

export interface WorkloadUsage {
  kind: string;
  name: string;
  /** The workload's pods being deleted, apart from its others (WorkloadRef.terminating). */
  terminating?: true;
  used: Record<string, string>;
}

/** The relist scope of pods; any other scope is an object-count resource name. */
export const PODS = 'pods';

interface Vector {
  key: string;
  names: string[];
  nanos: bigint[];
  refs: number;
}

interface Workload {
  namespace: string;
  kind: string;
  name: string;
  terminating?: true;
  key: string;
  pods: number;
  /** vector index -> number of this workload's pods with that vector */
  vectors: Map<number, number>;
  /** object resource name -> how many of this workload's objects it counts; made on the first */
  objects?: Map<string, number>;
}

interface NamespaceState {
  pods: Map<string, number>;
  workloads: Map<string, number>;
  totals: Map<string, bigint>;
  /** object resource name -> uid -> workload index */
  objects: Map<string, Map<string, number>>;
}

const INITIAL_SLOTS = 1024;
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class UsageLedger {
  readonly #namespaces = new Map<string, NamespaceState>();
  readonly #dirty = new Set<string>();

  readonly #vectorIndex = new Map<string, number>();
  readonly #vectors: (Vector | undefined)[] = [];
  readonly #freeVectors: number[] = [];

  readonly #workloads: (Workload | undefined)[] = [];
  readonly #freeWorkloads: number[] = [];

  #slotWorkload = new Int32Array(INITIAL_SLOTS);
  #slotVector = new Int32Array(INITIAL_SLOTS);
  #slotSeen = new Uint8Array(INITIAL_SLOTS);
  #slotCount = 0;
  readonly #freeSlots: number[] = [];
  #pods = 0;

  #podRelist = false;
  /** object resource name -> namespace -> uids not yet seen since beginRelist */
  readonly #objectRelists = new Map<string, Map<string, Set<string>>>();

  /**
   * Sets the pod's contribution, replacing any previous one (its workload may change, e.g. once its
   * ReplicaSet's Deployment is known). `undefined` removes the pod (terminal or past its grace
   * period), as `deletePod` does. Returns whether anything changed. The uid is kept as given: pass it
   * as parsed from JSON, not a slice of a larger string (docs/concepts/observed-usage.md#the-aggregators-ledger).
   */
  upsertPod(namespace: string, uid: string, usage: PodUsage | undefined): boolean {
    if (usage === undefined) return this.deletePod(namespace, uid);
    const vectorKey = keyOf(usage.requests);
    const workloadKey = workloadKeyOf(usage.workload);
    let ns = this.#namespaces.get(namespace);
    const slot = ns?.pods.get(uid);
    if (ns !== undefined && slot !== undefined) {
      this.#slotSeen[slot] = 1;
      if (
        this.#vectorIndex.get(vectorKey) === this.#slotVector[slot] &&
        ns.workloads.get(workloadKey) === this.#slotWorkload[slot]
      ) {
        return false;
      }
    }
    ns ??= this.#namespace(namespace);
    const vector = this.#internVector(vectorKey, usage.requests);
    const workload = this.#internWorkload(ns, namespace, workloadKey, usage.workload);
    if (slot === undefined) {
      const fresh = this.#allocateSlot();
      ns.pods.set(uid, fresh);
      this.#pods++;
      this.#attach(ns, fresh, workload, vector);
    } else {
      const oldWorkload = this.#slotWorkload[slot] as number;
      const oldVector = this.#slotVector[slot] as number;
      // attach first, so a vector or workload shared by the old and new state is never freed
      this.#attach(ns, slot, workload, vector);
      this.#detach(ns, oldWorkload, oldVector);
    }
    this.#dirty.add(namespace);
    return true;
  }

  /**
   * Moves every pod and object counted under workload `from` to `to`, keeping what each counts:
   * what was seen before its owner (a pod before its ReplicaSet, a ReplicaSet's pods before the
   * Deployment, a Deployment before its operator's resource) was counted under the owner's kind and
   * name as far as it was known, and moves up once the next owner is known. Returns whether
   * anything changed.
   */
  reattribute(namespace: string, from: WorkloadRef, to: WorkloadRef): boolean {
    const ns = this.#namespaces.get(namespace);
    const source = ns?.workloads.get(workloadKeyOf(from));
    if (ns === undefined || source === undefined || workloadKeyOf(from) === workloadKeyOf(to)) return false;
    const target = this.#internWorkload(ns, namespace, workloadKeyOf(to), to);
    const moving = this.#workloads[source] as Workload;
    let podsLeft = moving.pods;
    for (const slot of ns.pods.values()) {
      if (podsLeft === 0) break;
      if (this.#slotWorkload[slot] !== source) continue;
      podsLeft--;
      const vector = this.#slotVector[slot] as number;
      this.#attach(ns, slot, target, vector);
      this.#detach(ns, source, vector);
    }
    for (const [resourceName, uids] of ns.objects) {
      let objectsLeft = moving.objects?.get(resourceName) ?? 0;
      for (const [uid, index] of uids) {
        if (objectsLeft === 0) break;
        if (index !== source) continue;
        objectsLeft--;
        uids.set(uid, target);
        this.#countObject(target, resourceName, 1);
        this.#countObject(source, resourceName, -1);
      }
    }
    this.#dirty.add(namespace);
    return true;
  }

  /**
   * Moves one tracked pod to `workload`, keeping what it requests: an owner of the pod changed (a
   * Deployment re-created under its name makes the old one's pods a previous incarnation's), and
   * the caller, holding only the pod's metadata, attributes it again. A no-op (false) when the pod
   * is not tracked or already counts under `workload`.
   */
  setPodWorkload(namespace: string, uid: string, workload: WorkloadRef): boolean {
    const ns = this.#namespaces.get(namespace);
    const slot = ns?.pods.get(uid);
    if (ns === undefined || slot === undefined) return false;
    const key = workloadKeyOf(workload);
    const before = this.#slotWorkload[slot] as number;
    if (ns.workloads.get(key) === before) return false;
    const target = this.#internWorkload(ns, namespace, key, workload);
    const vector = this.#slotVector[slot] as number;
    // attach first, so the vector is never freed in between
    this.#attach(ns, slot, target, vector);
    this.#detach(ns, before, vector);
    this.#dirty.add(namespace);
    return true;
  }

  /** Removes the pod's contribution; a no-op (false) when the pod is not tracked. */
  deletePod(namespace: string, uid: string): boolean {
    const ns = this.#namespaces.get(namespace);
    const slot = ns?.pods.get(uid);
    if (ns === undefined || slot === undefined) return false;
    ns.pods.delete(uid);
    this.#pods--;
    this.#detach(ns, this.#slotWorkload[slot] as number, this.#slotVector[slot] as number);
    this.#freeSlots.push(slot);
    this.#dirty.add(namespace);
    this.#dropIfEmpty(namespace, ns);
    return true;
  }

  /**
   * Counts an object under `resourceName` (`services`, `count/deployments.apps`, ...) and under
   * `workload`, replacing where it was counted before. Idempotent per uid. Returns whether anything
   * changed.
   */
  upsertObject(namespace: string, resourceName: string, uid: string, workload: WorkloadRef): boolean {
    if (resourceName === PODS) throw new RangeError(`'${PODS}' is counted from upsertPod, not as an object`);
    this.#objectRelists.get(resourceName)?.get(namespace)?.delete(uid);
    const ns = this.#namespaces.get(namespace) ?? this.#namespace(namespace);
    let uids = ns.objects.get(resourceName);
    if (uids === undefined) ns.objects.set(resourceName, (uids = new Map()));
    const before = uids.get(uid);
    const key = workloadKeyOf(workload);
    if (before !== undefined && ns.workloads.get(key) === before) return false;
    const index = this.#internWorkload(ns, namespace, key, workload);
    uids.set(uid, index);
    // count first, so a workload shared by the old and new state is never freed
    this.#countObject(index, resourceName, 1);
    if (before !== undefined) this.#countObject(before, resourceName, -1);
    this.#dirty.add(namespace);
    return true;
  }

  /** Uncounts an object; a no-op (false) when it is not counted. */
  deleteObject(namespace: string, resourceName: string, uid: string): boolean {
    this.#objectRelists.get(resourceName)?.get(namespace)?.delete(uid);
    const ns = this.#namespaces.get(namespace);
    const uids = ns?.objects.get(resourceName);
    const index = uids?.get(uid);
    if (ns === undefined || uids === undefined || index === undefined) return false;
    uids.delete(uid);
    if (uids.size === 0) ns.objects.delete(resourceName);
    this.#countObject(index, resourceName, -1);
    this.#dirty.add(namespace);
    this.#dropIfEmpty(namespace, ns);
    return true;
  }

  /**
   * Starts a relist of pods (`PODS`, the default) or of the objects counted under `resourceName`.
   * A second begin for the same scope restarts it.
   */
  beginRelist(scope: string = PODS): void {
    if (scope === PODS) {
      this.#slotSeen.fill(0, 0, this.#slotCount);
      this.#podRelist = true;
      return;
    }
    const pending = new Map<string, Set<string>>();
    for (const [name, ns] of this.#namespaces) {
      const uids = ns.objects.get(scope);
      if (uids !== undefined) pending.set(name, new Set(uids.keys()));
    }
    this.#objectRelists.set(scope, pending);
  }

  /**
   * Ends a relist: removes every pod (or object of `scope`) not upserted or deleted since
   * `beginRelist(scope)`. Returns how many were removed; 0 without a matching begin.
   */
  endRelist(scope: string = PODS): number {
    let removed = 0;
    if (scope === PODS) {
      if (!this.#podRelist) return 0;
      this.#podRelist = false;
      for (const [name, ns] of [...this.#namespaces]) {
        for (const [uid, slot] of [...ns.pods]) {
          if (this.#slotSeen[slot] === 0 && this.deletePod(name, uid)) removed++;
        }
      }
      return removed;
    }
    const pending = this.#objectRelists.get(scope);
    if (pending === undefined) return 0;
    this.#objectRelists.delete(scope);
    for (const [name, uids] of pending) {
      for (const uid of uids) if (this.deleteObject(name, scope, uid)) removed++;
    }
    return removed;
  }

  /** The namespace's usage now; an unknown or emptied namespace gives `{ used: {}, workloads: [] }`. */
  snapshot(namespace: string): NamespaceUsage {
    const ns = this.#namespaces.get(namespace);
    if (ns === undefined) return { used: {}, workloads: [] };
    const used = new Map(ns.totals);
    for (const [name, uids] of ns.objects) {
      used.set(name, (used.get(name) ?? 0n) + BigInt(uids.size) * NANO);
    }
    const workloads: WorkloadUsage[] = [];
    for (const index of ns.workloads.values()) {
      const workload = this.#workloads[index] as Workload;
      const totals = new Map<string, bigint>();
      for (const [vectorIndex, count] of workload.vectors) {
        const vector = this.#vectors[vectorIndex] as Vector;
        const times = BigInt(count);
        vector.names.forEach((name, i) => {
          totals.set(name, (totals.get(name) ?? 0n) + (vector.nanos[i] as bigint) * times);
        });
      }
      for (const [name, count] of workload.objects ?? []) {
        totals.set(name, (totals.get(name) ?? 0n) + BigInt(count) * NANO);
      }
      workloads.push({
        kind: workload.kind,
        name: workload.name,
        ...(workload.terminating ? { terminating: true as const } : {}),
        used: format(totals),
      });
    }
    workloads.sort(
      (a, b) =>
        compare(a.kind, b.kind) ||
        compare(a.name, b.name) ||
        Number(!!a.terminating) - Number(!!b.terminating),
    );
    return { used: format(used), workloads };
  }

  /** Namespaces holding at least one pod or counted object, sorted. */
  namespaces(): string[] {
    return [...this.#namespaces.keys()].sort(compare);
  }

  /** Namespaces changed since the last `clearDirty()`, sorted (including ones that became empty). */
  dirtyNamespaces(): string[] {
    return [...this.#dirty].sort(compare);
  }

  clearDirty(): void {
    this.#dirty.clear();
  }

  trackedPods(): number {
    return this.#pods;
  }

  /** Sizes of the interning tables, for metrics and tests. */
  stats(): { pods: number; namespaces: number; workloads: number; vectors: number } {
    return {
      pods: this.#pods,
      namespaces: this.#namespaces.size,
      workloads: this.#workloads.length - this.#freeWorkloads.length,
      vectors: this.#vectorIndex.size,
    };
  }

  // -- internals ---------------------------------------------------------------------------------

  #namespace(name: string): NamespaceState {
    const ns: NamespaceState = {
      pods: new Map(),
      workloads: new Map(),
      totals: new Map(),
      objects: new Map(),
    };
    this.#namespaces.set(name, ns);
    return ns;
  }

  #dropIfEmpty(name: string, ns: NamespaceState): void {
    if (ns.pods.size === 0 && ns.objects.size === 0) this.#namespaces.delete(name);
  }

  #internVector(key: string, requests: ResourceList): number {
    const known = this.#vectorIndex.get(key);
    if (known !== undefined) return known;
    const names: string[] = [];
    const nanos: bigint[] = [];
    for (const name of Object.keys(requests).sort(compare)) {
      const value = (requests[name] as Quantity).nanoValue();
      if (value !== 0n) {
        names.push(name);
        nanos.push(value);
      }
    }
    const index = this.#freeVectors.pop() ?? this.#vectors.length;
    this.#vectors[index] = { key, names, nanos, refs: 0 };
    this.#vectorIndex.set(key, index);
    return index;
  }

  #internWorkload(ns: NamespaceState, namespace: string, key: string, ref: WorkloadRef): number {
    const known = ns.workloads.get(key);
    if (known !== undefined) return known;
    const index = this.#freeWorkloads.pop() ?? this.#workloads.length;
    this.#workloads[index] = {
      namespace,
      kind: ref.kind,
      name: ref.name,
      ...(ref.terminating ? { terminating: true as const } : {}),
      key,
      pods: 0,
      vectors: new Map(),
    };
    ns.workloads.set(key, index);
    return index;
  }

  /** Adds `delta` (1 or -1) to what the workload counts of `resourceName`. */
  #countObject(workloadIndex: number, resourceName: string, delta: number): void {
    const workload = this.#workloads[workloadIndex] as Workload;
    // made on demand: most workloads count pods only, and an empty Map costs ~180 bytes
    const objects = (workload.objects ??= new Map());
    const count = (objects.get(resourceName) ?? 0) + delta;
    if (count > 0) objects.set(resourceName, count);
    else objects.delete(resourceName);
    this.#freeIfEmpty(workloadIndex);
  }

  #freeIfEmpty(workloadIndex: number): void {
    const workload = this.#workloads[workloadIndex] as Workload;
    if (workload.pods > 0 || (workload.objects?.size ?? 0) > 0) return;
    (this.#namespaces.get(workload.namespace) as NamespaceState).workloads.delete(workload.key);
    this.#workloads[workloadIndex] = undefined;
    this.#freeWorkloads.push(workloadIndex);
  }

  #allocateSlot(): number {
    const reused = this.#freeSlots.pop();
    const slot = reused ?? this.#slotCount++;
    if (slot >= this.#slotWorkload.length) {
      const size = this.#slotWorkload.length * 2;
      this.#slotWorkload = grow(this.#slotWorkload, new Int32Array(size));
      this.#slotVector = grow(this.#slotVector, new Int32Array(size));
      this.#slotSeen = grow(this.#slotSeen, new Uint8Array(size));
    }
    this.#slotSeen[slot] = 1;
    return slot;
  }

  #attach(ns: NamespaceState, slot: number, workloadIndex: number, vectorIndex: number): void {
    this.#slotWorkload[slot] = workloadIndex;
    this.#slotVector[slot] = vectorIndex;
    const vector = this.#vectors[vectorIndex] as Vector;
    vector.refs++;
    const workload = this.#workloads[workloadIndex] as Workload;
    workload.pods++;
    workload.vectors.set(vectorIndex, (workload.vectors.get(vectorIndex) ?? 0) + 1);
    const totals = ns.totals;
    for (let i = 0; i < vector.names.length; i++) {
      const name = vector.names[i] as string;
      totals.set(name, (totals.get(name) ?? 0n) + (vector.nanos[i] as bigint));
    }
  }

  #detach(ns: NamespaceState, workloadIndex: number, vectorIndex: number): void {
    const vector = this.#vectors[vectorIndex] as Vector;
    const totals = ns.totals;
    for (let i = 0; i < vector.names.length; i++) {
      const name = vector.names[i] as string;
      const next = (totals.get(name) ?? 0n) - (vector.nanos[i] as bigint);
      if (next === 0n) totals.delete(name);
      else totals.set(name, next);
    }
    const workload = this.#workloads[workloadIndex] as Workload;
    const count = (workload.vectors.get(vectorIndex) ?? 0) - 1;
    if (count > 0) workload.vectors.set(vectorIndex, count);
    else workload.vectors.delete(vectorIndex);
    workload.pods--;
    this.#freeIfEmpty(workloadIndex);
    if (--vector.refs === 0) {
      this.#vectorIndex.delete(vector.key);
      this.#vectors[vectorIndex] = undefined;
      this.#freeVectors.push(vectorIndex);
    }
  }
}

const NANO = 1_000_000_000n;

function grow<T extends Int32Array | Uint8Array>(old: T, next: T): T {
  next.set(old);
  return next;
}

/** The interning key of a request vector: sorted `name=nanos` pairs, zeros left out. */
function keyOf(requests: ResourceList): string {
  const names = Object.keys(requests);
  if (names.length > 1) names.sort(compare);
  let key = '';
  for (const name of names) {
    const nanos = (requests[name] as Quantity).nanoValue();
    if (nanos !== 0n) key += `${name}=${nanos}\n`;
  }
  return key;
}

/** Kinds never contain '/' or ' ', so the key is unambiguous. */
function workloadKeyOf(ref: WorkloadRef): string {
  return ref.terminating ? `${ref.kind}/${ref.name} terminating` : `${ref.kind}/${ref.name}`;
}

const BYTE_RESOURCES = new Set(['memory', 'ephemeral-storage', 'storage']);

/** Whether a quota name measures bytes (`memory`, `requests.hugepages-2Mi`, ...). */
function isBytes(name: string): boolean {
  const bare = name.startsWith('requests.') ? name.slice('requests.'.length) : name;
  return BYTE_RESOURCES.has(bare) || bare.startsWith('hugepages-');
}

/**
 * Totals as canonical quantity strings, keys sorted, zeros omitted. Byte-valued resources print in
 * whichever canonical form is shorter, BinarySI or DecimalSI (`3Gi`, `1500M`); every other resource
 * in DecimalSI (`1500m`, `12`, `1k`), as Kubernetes prints counts. The value is exact either way.
 */
function format(totals: ReadonlyMap<string, bigint>): Record<string, string> {
  const entries: [string, string][] = [];
  for (const name of [...totals.keys()].sort(compare)) {
    const nanos = totals.get(name) as bigint;
    if (nanos === 0n) continue;
    const decimal = Quantity.fromNano(nanos).toCanonicalString();
    const binary = isBytes(name) ? Quantity.fromNano(nanos, 'BinarySI').toCanonicalString() : decimal;
    entries.push([name, binary.length < decimal.length ? binary : decimal]);
  }
  // fromEntries defines own properties, so even a resource named "__proto__" is plain data
  return Object.fromEntries(entries);
}
