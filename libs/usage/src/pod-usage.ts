/**
 * What one pod charges to quota, as Kubernetes' pod quota evaluator computes it
 * (pkg/quota/v1/evaluator/core/pods.go: PodUsageFunc, QuotaV1Pod, podComputeUsageHelper), with the
 * requests of component-helpers' resource.PodRequests. Pure: no clock (the caller passes `now`).
 * Which pods count, how requests add up, under which quota names, what is not modelled and how
 * invalid values are read: docs/concepts/observed-usage.md#what-a-pod-counts.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { Quantity, type ResourceList } from '#quantity';
import { quotaNamesForRequest } from '#quota';
import { topLevelWorkload, type OwnerIndex, type OwnerLookup, type WorkloadRef } from './attribution.js';

/** One pod's contribution: quota-named requests (plus `pods: 1`) and the workload it belongs to. */
export interface PodUsage {
  requests: ResourceList;
  workload: WorkloadRef;
}

const TERMINAL_PHASES: ReadonlySet<string> = new Set(['Succeeded', 'Failed']);

/** QuotaV1Pod: whether the pod is charged to quota at `now`. */
export function isChargeable(pod: V1Pod, now: Date): boolean {
  const phase = pod.status?.phase;
  if (typeof phase === 'string' && TERMINAL_PHASES.has(phase)) return false;
  const deletion = timeOf(pod.metadata?.deletionTimestamp);
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined && typeof grace === 'number' && Number.isFinite(grace)) {
    if (now.getTime() > deletion + grace * 1000) return false;
  }
  return true;
}

/** Milliseconds of a Date or an RFC 3339 string (raw JSON); undefined when absent or unparsable. */
function timeOf(value: unknown): number | undefined {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string') ms = Date.parse(value);
  else return undefined;
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The workload a pod is attributed to, from its metadata alone (so a pod trimmed to its metadata
 * can be attributed again when an owner changes): `owners` resolves the pod's controller to its top-level
 * workload (see attribution); a pod being deleted, or of a previous incarnation of its workload,
 * is attributed to it as `terminating`.
 */
export function podWorkload(pod: V1Pod, owners?: OwnerIndex | OwnerLookup): WorkloadRef {
  const workload = topLevelWorkload(pod, owners);
  // A pod being deleted is on its way out: what it uses still counts, but it is never the room its
  // workload's binding has been given (its replacement may be starting beside it).
  if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null)
    workload.terminating = true;
  return workload;
}

/**
 * The pod's usage at `now`, or undefined when it does not count (terminal, or past its deletion
 * grace period), attributed by podWorkload.
 */
export function podUsage(pod: V1Pod, now: Date, owners?: OwnerIndex | OwnerLookup): PodUsage | undefined {
  if (!isChargeable(pod, now)) return undefined;
  return { requests: quotaRequests(podRequests(pod)), workload: podWorkload(pod, owners) };
}

/**
 * Maps PodRequests (bare resource names) to quota names and adds `pods: 1`. Keys sorted; a name
 * fed by two requests (never the case for valid pods) takes their sum.
 */
export function quotaRequests(requests: ResourceList): ResourceList {
  const out = new Map<string, Quantity>([['pods', Quantity.fromInt(1n)]]);
  for (const name of Object.keys(requests)) {
    const quantity = requests[name] as Quantity;
    for (const quotaName of quotaNamesForRequest(name)) {
      const prior = out.get(quotaName);
      out.set(quotaName, prior === undefined ? quantity : prior.add(quantity));
    }
  }
  return sortedList(out);
}

/**
 * resource.PodRequests with default options: the pod's effective requests under their own
 * (bare) names, keys sorted, every valid entry kept (zeros and names quota ignores included).
 */
export function podRequests(pod: V1Pod): ResourceList {
  const spec = pod.spec;
  const result = new Map<string, Quantity>();
  for (const container of arrayOf<V1Container>(spec?.containers)) {
    addInto(result, readList(container?.resources?.requests));
  }
  const sidecars = new Map<string, Quantity>();
  const initMax = new Map<string, Quantity>();
  for (const container of arrayOf<V1Container>(spec?.initContainers)) {
    const own = readList(container?.resources?.requests);
    let whileRunning: Map<string, Quantity>;
    if (container?.restartPolicy === 'Always') {
      addInto(result, own);
      addInto(sidecars, own);
      whileRunning = sidecars;
    } else {
      whileRunning = new Map(own);
      addInto(whileRunning, sidecars);
    }
    maxInto(initMax, whileRunning);
  }
  maxInto(result, initMax);

  const podLevel = readList(spec?.resources?.requests);
  for (const [name, quantity] of podLevel) {
    if (name === 'cpu' || name === 'memory' || name.startsWith('hugepages-')) result.set(name, quantity);
  }
  addInto(result, readList(spec?.overhead));
  return sortedList(result);
}

function arrayOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

function addInto(target: Map<string, Quantity>, list: ReadonlyMap<string, Quantity>): void {
  for (const [name, quantity] of list) {
    const prior = target.get(name);
    target.set(name, prior === undefined ? quantity : prior.add(quantity));
  }
}

/** Go's maxResourceList: a key absent from `target` is copied, a present one replaced if smaller. */
function maxInto(target: Map<string, Quantity>, list: ReadonlyMap<string, Quantity>): void {
  for (const [name, quantity] of list) {
    const prior = target.get(name);
    if (prior === undefined || quantity.cmp(prior) > 0) target.set(name, quantity);
  }
}

function sortedList(map: ReadonlyMap<string, Quantity>): ResourceList {
  const names = [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(names.map((name) => [name, map.get(name) as Quantity]));
}

/** A wire resource list (`{ cpu: '100m' }`) as quantities, invalid or negative entries left out. */
function readList(raw: unknown): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const name of Object.keys(raw)) {
    const quantity = parseCached((raw as Record<string, unknown>)[name]);
    if (quantity !== undefined) out.set(name, quantity);
  }
  return out;
}

/**
 * Parsed quantities by their text. Pods of one workload repeat the same few strings ("100m",
 * "256Mi"), and parsing is most of podUsage's cost at tens of thousands of events a second. Bounded:
 * cleared when full. Quantities are immutable, so sharing them is safe.
 */
const PARSE_CACHE_LIMIT = 4096;
const parseCache = new Map<string, Quantity | null>();

function parseCached(value: unknown): Quantity | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else return undefined;
  let parsed = parseCache.get(text);
  if (parsed === undefined) {
    parsed = null;
    try {
      // Go's UnmarshalJSON trims surrounding spaces before parsing.
      const quantity = Quantity.parse(text.trim());
      if (quantity.sign() >= 0) parsed = quantity;
    } catch {
      // invalid: cached as null, ignored by the caller
    }
    if (parseCache.size >= PARSE_CACHE_LIMIT) parseCache.clear();
    parseCache.set(text, parsed);
  }
  return parsed ?? undefined;
}
