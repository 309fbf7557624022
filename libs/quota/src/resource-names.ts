/**
 * Quota resource names: which names exist, which are counts (whole numbers), and how a binding's
 * resource request maps to quota names. Mirrors k8s.io/kubernetes pkg/apis/core/helper
 * (IsStandardQuotaResourceName, IsIntegerResourceName, IsExtendedResourceName) with the product's
 * restriction: only keys it enforces exist (isEnforcedQuotaKey), so no `limits.*` (a ResourceBinding
 * carries only requests), no `requests.storage` (nor claims' storage), no Service counts by type.
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
 * Core kinds Kubernetes also counts under a bare quota name. A binding of such a kind is charged one
 * per copy under this name (charge.ts) and the aggregator counts the members' objects under it.
 */
export const LEGACY_COUNT_NAMES: Readonly<Record<string, string>> = {
  ConfigMap: 'configmaps',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  ReplicationController: 'replicationcontrollers',
  ResourceQuota: 'resourcequotas',
  Secret: 'secrets',
  Service: 'services',
};

/** Charged per replica of a binding, observed per pod in the members that has not finished. */
export const PODS = 'pods';

/**
 * `count/pods` is not enforced: a workload's binding is charged under `pods`, not `count/pods`, and
 * the members' pods are observed under `pods` only (count/pods would also count finished pods).
 */
const POD_OBJECT_COUNT = `${COUNT_PREFIX}pods`;

/**
 * The slash-free quota names this product enforces: `pods`, the compute resources under both names
 * and the legacy object counts. Sorted. Together with hugepages, extended resources and `count/*`
 * (see isEnforcedQuotaKey) these are the only keys validation accepts.
 */
export const STANDARD_QUOTA_RESOURCES: readonly string[] = [
  PODS,
  ...COMPUTE_RESOURCES.flatMap((name) => quotaNamesForRequest(name)),
  ...Object.values(LEGACY_COUNT_NAMES),
].sort();

/** Slash-free quota names that count objects, so their limits must be whole numbers. Sorted. */
export const INTEGER_QUOTA_RESOURCES: readonly string[] = [PODS, ...Object.values(LEGACY_COUNT_NAMES)].sort();

const STANDARD_SET = new Set(STANDARD_QUOTA_RESOURCES);
const INTEGER_SET = new Set(INTEGER_QUOTA_RESOURCES);

/**
 * Whether a quota key is enforced: a binding is charged under it AND the members' usage is observed
 * under it, so a quota limiting it holds. Requests are charged and observed through the same
 * quotaNamesForRequest (charge.ts, libs/usage pod-usage.ts); object counts per copy of the bound
 * object and per object in the members (libs/usage counted-resources.ts). Validation accepts only
 * these keys, so a key can never be accepted and then silently not enforced. The key's syntax (a
 * huge page size, a count's resource name) is checked by validation.
 */
export function isEnforcedQuotaKey(name: string): boolean {
  if (name.startsWith(COUNT_PREFIX)) return name !== POD_OBJECT_COUNT;
  if (STANDARD_SET.has(name)) return true;
  return quotaNamesForRequest(stripRequests(name) ?? name).includes(name);
}

/** An enforced quota name without `/`: STANDARD_QUOTA_RESOURCES or (`requests.`)`hugepages-<size>`. */
export function isStandardQuotaResource(name: string): boolean {
  return !name.includes('/') && isEnforcedQuotaKey(name);
}

/** `hugepages-<anything>`; the size is checked by validation. */
export function isHugePagesName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX) && name.length > HUGEPAGES_PREFIX.length;
}

/** `requests.x` -> `x`; anything else -> undefined. */
export function stripRequests(name: string): string | undefined {
  return name.startsWith(REQUESTS_PREFIX) ? name.slice(REQUESTS_PREFIX.length) : undefined;
}

/** Prefix suffix of ResourceQuota's per-storage-class names (`gold.storageclass.storage.k8s.io/requests.storage`). */
export const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io';

/**
 * An extended resource as a container would request it (`nvidia.com/gpu`): fully qualified, not in
 * the `kubernetes.io/` native namespace, not a quota-only form (`requests.*`, `limits.*`, `count/*`,
 * a per-storage-class name, which limits claims, not containers).
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/')) return false;
  if (name.startsWith(REQUESTS_PREFIX) || name.startsWith(LIMITS_PREFIX) || name.startsWith(COUNT_PREFIX)) {
    return false;
  }
  const prefix = name.slice(0, name.indexOf('/'));
  return (
    prefix !== 'kubernetes.io' && !prefix.endsWith('.kubernetes.io') && !prefix.endsWith(STORAGE_CLASS_SUFFIX)
  );
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
 * [`nvidia.com/gpu`, `requests.nvidia.com/gpu`] (extended resources are charged under both names;
 * Kubernetes' own quota only knows the `requests.` form).
 */
export function quotaNamesForRequest(name: string): string[] {
  if ((COMPUTE_RESOURCES as readonly string[]).includes(name) || isHugePagesName(name)) {
    return [name, REQUESTS_PREFIX + name];
  }
  if (isExtendedResourceName(name)) return [name, REQUESTS_PREFIX + name];
  return [];
}
