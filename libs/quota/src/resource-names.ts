/**
 * Quota resource names: which names exist, which are counts (whole numbers), and how a binding's
 * resource request maps to quota names. Mirrors k8s.io/kubernetes pkg/apis/core/helper
 * (IsStandardQuotaResourceName, IsIntegerResourceName, IsExtendedResourceName) with the product's
 * restrictions (no `limits.*`: a ResourceBinding carries only requests).
 */

/** Prefix of quota names that track a request (`requests.cpu`, `requests.nvidia.com/gpu`). */
export const REQUESTS_PREFIX = 'requests.';
/** Prefix of quota names that track a limit; rejected by this product. */
export const LIMITS_PREFIX = 'limits.';
/** Prefix of object-count quota names (`count/deployments.apps`). */
export const COUNT_PREFIX = 'count/';
/** Prefix of huge page resources (`hugepages-2Mi`). */
export const HUGEPAGES_PREFIX = 'hugepages-';

/** The bare (un-prefixed, slash-free) compute resources a workload requests. */
export const COMPUTE_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'] as const;

/**
 * Slash-free quota names this product accepts (spec §2), besides `hugepages-<size>` and
 * `requests.hugepages-<size>`. Sorted.
 */
export const STANDARD_QUOTA_RESOURCES: readonly string[] = [
  'configmaps',
  'cpu',
  'ephemeral-storage',
  'memory',
  'persistentvolumeclaims',
  'pods',
  'replicationcontrollers',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
  'requests.storage',
  'resourcequotas',
  'secrets',
  'services',
  'services.loadbalancers',
  'services.nodeports',
];

/** Slash-free quota names that count objects, so their limits must be whole numbers. */
export const INTEGER_QUOTA_RESOURCES: readonly string[] = [
  'configmaps',
  'persistentvolumeclaims',
  'pods',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'services',
  'services.loadbalancers',
  'services.nodeports',
];

const STANDARD_SET = new Set(STANDARD_QUOTA_RESOURCES);
const INTEGER_SET = new Set(INTEGER_QUOTA_RESOURCES);

export function isStandardQuotaResource(name: string): boolean {
  return STANDARD_SET.has(name) || isHugePagesName(name) || isHugePagesName(stripRequests(name) ?? '');
}

/** `hugepages-<anything>`; the size is checked by validation. */
export function isHugePagesName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX) && name.length > HUGEPAGES_PREFIX.length;
}

/** `requests.x` -> `x`; anything else -> undefined. */
export function stripRequests(name: string): string | undefined {
  return name.startsWith(REQUESTS_PREFIX) ? name.slice(REQUESTS_PREFIX.length) : undefined;
}

/**
 * An extended resource as a container would request it (`nvidia.com/gpu`): fully qualified, not in
 * the `kubernetes.io/` native namespace, not a quota-only form (`requests.*`, `limits.*`, `count/*`).
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/')) return false;
  if (name.startsWith(REQUESTS_PREFIX) || name.startsWith(LIMITS_PREFIX) || name.startsWith(COUNT_PREFIX)) {
    return false;
  }
  const prefix = name.slice(0, name.indexOf('/'));
  return prefix !== 'kubernetes.io' && !prefix.endsWith('.kubernetes.io');
}

/**
 * Quota names whose limits must be whole numbers: object counts (`pods`, `services`, ..., every
 * `count/*`) and extended resources in both forms (`nvidia.com/gpu`, `requests.nvidia.com/gpu`),
 * since Kubernetes only accepts whole-number requests for extended resources.
 */
export function isIntegerQuotaResource(name: string): boolean {
  if (INTEGER_SET.has(name) || name.startsWith(COUNT_PREFIX)) return true;
  if (isExtendedResourceName(name)) return true;
  const bare = stripRequests(name);
  return bare !== undefined && isExtendedResourceName(bare);
}

/**
 * The quota names a per-replica request of `name` is charged under, or [] for a name quota cannot
 * track (e.g. `storage`, `pods`, `kubernetes.io/...`). `cpu` -> [`cpu`, `requests.cpu`],
 * `hugepages-2Mi` -> [`hugepages-2Mi`, `requests.hugepages-2Mi`], `nvidia.com/gpu` ->
 * [`nvidia.com/gpu`, `requests.nvidia.com/gpu`] (spec §3 charges extended resources under both names;
 * Kubernetes' own quota only knows the `requests.` form).
 */
export function quotaNamesForRequest(name: string): string[] {
  if ((COMPUTE_RESOURCES as readonly string[]).includes(name) || isHugePagesName(name)) {
    return [name, REQUESTS_PREFIX + name];
  }
  if (isExtendedResourceName(name)) return [name, REQUESTS_PREFIX + name];
  return [];
}
