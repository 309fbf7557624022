/**
 * What the member clusters published for a namespace, as the reconciler reads it: each cluster's health,
 * its namespace usage and its per-workload usage, validated and masked to a quota's hard keys, and the
 * usage observed for a binding's workload. Never throws: what cannot be read is reported in `errors`.
 */
import {
  addLists,
  describeFieldError,
  excessOf,
  maskList,
  parseResourceList,
  Quantity,
  type ResourceList,
} from '#quantity';
import {
  CLUSTER_USAGE_STATES,
  type ClusterUsage,
  type ClusterUsageState,
  isJsonObject,
  type ResourceBinding,
} from '#api';
import { bindingCharge, chargeByCluster, targetClusterNames, withMemberShares } from './charge.js';
import { cappedOn, capsAnyMember, onMember, splitMemberKey } from './member-caps.js';

/** Usage as the caller has it: decoded quantities, or the wire strings of a snapshot (parsed here). */
export type UsageList = ResourceList | Readonly<Record<string, string>>;

/**
 * One workload's usage in one cluster (a WorkloadSnapshot). `terminating`: its pods being deleted,
 * counted in the cluster's `used` but never as the binding's (observedIn).
 */
export interface ObservedWorkload {
  kind: string;
  name: string;
  terminating?: boolean;
  used: UsageList;
}

/** What one member cluster published for the namespace, with its health. */
export interface ObservedCluster {
  name: string;
  state: ClusterUsageState;
  /** RFC 3339. */
  lastSyncTime: string;
  message?: string;
  /** This namespace's usage in the cluster (ClusterNamespaceSnapshot.used). */
  used: UsageList;
  workloads: ObservedWorkload[];
}

/** lastSyncTime written for a cluster whose own cannot be read and that had none before. */
const UNKNOWN_TIME = '1970-01-01T00:00:00Z';

export const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A usage list as JSON carries it: quantities as strings, checked when parsed. */
export const isWireList = (value: unknown): value is Record<string, string> =>
  isJsonObject(value) && Object.values(value).every((v) => typeof v === 'string');

export const isTime = (value: unknown): value is string =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));

/**
 * A usage list from the caller, masked to `keys`: Quantity values are taken as they are, anything else is
 * parsed as a wire quantity; what cannot be read is reported (`<field>[<key>]: ...`) and left out.
 */
function readUsage(raw: unknown, field: string, keys: readonly string[], errors: string[]): ResourceList {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) {
    errors.push(...parseResourceList(raw, field).errors.map(describeFieldError));
    return {};
  }
  const decoded: [string, Quantity][] = [];
  const wire: [string, unknown][] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (value instanceof Quantity) decoded.push([key, value]);
    else wire.push([key, value]);
  }
  const parsed = parseResourceList(Object.fromEntries(wire), field);
  errors.push(...parsed.errors.map(describeFieldError));
  return maskList(Object.fromEntries([...decoded, ...Object.entries(parsed.list)]), keys);
}

const workloadKey = (kind: string, name: string): string => `${kind}/${name}`;

/** The key of the workload a binding propagates (`spec.resource` kind/name), if it names one. */
export function bindingWorkloadKey(rb: ResourceBinding): string | undefined {
  const resource: unknown = rb?.spec?.resource;
  if (!isJsonObject(resource)) return undefined;
  const { kind, name } = resource;
  return typeof kind === 'string' && kind !== '' && typeof name === 'string' && name !== ''
    ? workloadKey(kind, name)
    : undefined;
}

/** A cluster's input, validated and masked to the hard keys. */
export interface ClusterView {
  name: string;
  state: ClusterUsageState;
  lastSyncTime: string;
  message?: string;
  used: ResourceList;
  /** Workload key -> usage of its pods not being deleted (several entries of one workload summed). */
  workloads: Map<string, ResourceList>;
  /** Workload key -> usage of its pods being deleted: never a binding's, counted in `used` only. */
  terminating: Map<string, ResourceList>;
}

function readWorkloads(
  raw: unknown,
  field: string,
  keys: readonly string[],
  errors: string[],
): Pick<ClusterView, 'workloads' | 'terminating'> {
  const workloads = new Map<string, ResourceList>();
  const terminating = new Map<string, ResourceList>();
  if (raw === undefined || raw === null) return { workloads, terminating };
  if (!Array.isArray(raw)) {
    errors.push(`${field}: must be a list`);
    return { workloads, terminating };
  }
  raw.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isJsonObject(item) || typeof item['kind'] !== 'string' || item['kind'] === '') {
      errors.push(`${at}.kind: must be a non-empty string`);
      return;
    }
    if (typeof item['name'] !== 'string' || item['name'] === '') {
      errors.push(`${at}.name: must be a non-empty string`);
      return;
    }
    const key = workloadKey(item['kind'], item['name']);
    const used = readUsage(item['used'], `${at}.used`, keys, errors);
    const into = item['terminating'] === true ? terminating : workloads;
    const current = into.get(key);
    into.set(key, current === undefined ? used : addLists(current, used));
  });
  return { workloads, terminating };
}

/**
 * Validates the clusters. A cluster without a name, or a second one of a name, is reported and ignored; an
 * unknown state is reported and read as Stale; an unreadable lastSyncTime is reported, the cluster read as
 * Stale (unless Unreachable) with the previous status' lastSyncTime for it (else the Unix epoch).
 */
export function readClusters(
  raw: unknown,
  keys: readonly string[],
  previous: ReadonlyMap<string, ClusterUsage>,
  errors: string[],
): ClusterView[] {
  if (!Array.isArray(raw)) {
    if (raw !== undefined && raw !== null) errors.push('clusters: must be a list');
    return [];
  }
  const views = new Map<string, ClusterView>();
  const plain = keys.filter((key) => splitMemberKey(key) === undefined);
  const readKeys = (member: string): readonly string[] =>
    capsAnyMember(keys) ? [...new Set([...plain, ...cappedOn(keys, member)])] : keys;
  raw.forEach((item: unknown, i) => {
    if (!isJsonObject(item) || typeof item['name'] !== 'string' || item['name'] === '') {
      errors.push(`clusters[${i}].name: must be a non-empty string; this cluster's usage is ignored`);
      return;
    }
    const name = item['name'];
    const field = `clusters[${name}]`;
    if (views.has(name)) {
      errors.push(`${field}: published more than once; only the first is counted`);
      return;
    }
    let state: ClusterUsageState;
    if ((CLUSTER_USAGE_STATES as readonly unknown[]).includes(item['state'])) {
      state = item['state'] as ClusterUsageState;
    } else {
      errors.push(
        `${field}.state: must be one of ${CLUSTER_USAGE_STATES.join(', ')}, got ${JSON.stringify(item['state'])}; read as Stale`,
      );
      state = 'Stale';
    }
    let lastSyncTime: string;
    if (isTime(item['lastSyncTime'])) {
      lastSyncTime = item['lastSyncTime'];
    } else {
      errors.push(
        `${field}.lastSyncTime: must be an RFC 3339 time, got ${JSON.stringify(item['lastSyncTime'])}`,
      );
      const before = previous.get(name)?.lastSyncTime;
      lastSyncTime = isTime(before) ? before : UNKNOWN_TIME;
      if (state === 'Ready') state = 'Stale';
    }
    const view: ClusterView = {
      name,
      state,
      lastSyncTime,
      ...onCapsOf(
        name,
        keys,
        readUsage(item['used'], `${field}.used`, readKeys(name), errors),
        readWorkloads(item['workloads'], `${field}.workloads`, readKeys(name), errors),
      ),
    };
    if (typeof item['message'] === 'string' && item['message'] !== '') view.message = item['message'];
    views.set(name, view);
  });
  return [...views.values()].sort((a, b) => compareNames(a.name, b.name));
}

/**
 * A member's usage with what its caps count (member-caps.ts): each list also under the member keys of
 * `keys`, then masked to `keys`. The lists as read when no key caps a member.
 */
function onCapsOf(
  member: string,
  keys: readonly string[],
  used: ResourceList,
  workloads: Pick<ClusterView, 'workloads' | 'terminating'>,
): Pick<ClusterView, 'used' | 'workloads' | 'terminating'> {
  if (!capsAnyMember(keys)) return { used, ...workloads };
  const capped = new Set(keys);
  const counted = (list: ResourceList): ResourceList =>
    maskList({ ...list, ...onMember(list, member, capped) }, keys);
  const each = (lists: Map<string, ResourceList>) =>
    new Map([...lists].map(([key, list]) => [key, counted(list)]));
  return {
    used: counted(used),
    workloads: each(workloads.workloads),
    terminating: each(workloads.terminating),
  };
}

/**
 * The usage observed for the binding: its workload's (`spec.resource` kind/name) in the clusters its
 * charge covers (targetClusterNames), pods being deleted left out. A workload of that kind and name in
 * any other cluster was not put there by Karmada for this binding (one made in a member by hand), and
 * a pod on its way out holds room its replacement will need: both count in `used`, never as this
 * binding's.
 */
export function observedIn(rb: ResourceBinding, views: readonly ClusterView[]): ResourceList {
  const key = bindingWorkloadKey(rb);
  if (key === undefined) return {};
  const targets = targetClusterNames(rb);
  let total: ResourceList = {};
  for (const view of views) {
    const used = targets.has(view.name) ? view.workloads.get(key) : undefined;
    if (used !== undefined) total = addLists(total, used);
  }
  return total;
}

/**
 * How the binding's observed usage stands against its charge split by cluster (chargeByCluster): the
 * usage within each cluster's share, which nets the charge, and what runs beyond the shares and the
 * unsplit rest. One member running beyond its share (a surge, an override made after admission) then
 * never stands in for another member's share not running yet (docs/concepts/accounting.md,
 * "Reserved"). A binding whose charge is not split is compared summed.
 */
export function observedAgainstShares(
  rb: ResourceBinding,
  views: readonly ClusterView[],
): { within: ResourceList; beyond: ResourceList } {
  const split = chargeByCluster(rb);
  const key = bindingWorkloadKey(rb);
  if (split === undefined || key === undefined) {
    const observed = observedIn(rb, views);
    const beyond = excessOf(observed, withMemberShares(rb, bindingCharge(rb).charge, Object.keys(observed)));
    return { within: excessOf(observed, beyond), beyond };
  }
  let within: ResourceList = {};
  let over: ResourceList = {};
  for (const view of views) {
    const used = split.clusters.has(view.name) ? view.workloads.get(key) : undefined;
    if (used === undefined) continue;
    const share = split.clusters.get(view.name)!;
    // The member keys of `used` are this member's caps: its share counts on them too.
    const excess = excessOf(used, { ...share, ...onMember(share, view.name) });
    within = addLists(within, excessOf(used, excess));
    over = addLists(over, excess);
  }
  return { within, beyond: excessOf(over, split.rest) };
}

/**
 * The usage of a binding's workload (the `spec.resource` kind/name) summed over the clusters it is
 * scheduled to (observedIn), masked to `hardKeys` (only keys some cluster reports). Unreadable quantities are appended to `errors` and left out.
 */
export function observedUsageOf(
  binding: ResourceBinding,
  clusters: readonly ObservedCluster[],
  hardKeys: Iterable<string>,
  errors: string[] = [],
): ResourceList {
  return observedIn(binding, readClusters(clusters, [...hardKeys], new Map(), errors));
}
