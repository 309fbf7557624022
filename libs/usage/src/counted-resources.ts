/**
 * Which quota keys count objects, and which API resource each one counts (ResourceQuota's object
 * count names): the legacy bare names for core kinds and `count/<resource>[.<group>]`.
 */
export interface CountedResource {
  /** API group, '' for core. */
  group: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
}

const LEGACY: Readonly<Record<string, string>> = {
  services: 'services',
  secrets: 'secrets',
  configmaps: 'configmaps',
  persistentvolumeclaims: 'persistentvolumeclaims',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

/**
 * The resource a quota key counts, or undefined when the key is not an object count (`cpu`,
 * `pods` — which comes from the pods themselves —, `services.nodeports`, ...).
 */
export function countedResource(quotaKey: string): CountedResource | undefined {
  const legacy = LEGACY[quotaKey];
  if (legacy) return { group: '', resource: legacy };
  if (!quotaKey.startsWith('count/')) return undefined;
  const name = quotaKey.slice('count/'.length);
  const dot = name.indexOf('.');
  const resource = dot === -1 ? name : name.slice(0, dot);
  const group = dot === -1 ? '' : name.slice(dot + 1);
  if (!resource || (group === '' && resource === 'pods')) return undefined;
  return { group, resource };
}

/** `group/resource` (or `resource` for core): one watch serves every key counting it. */
export const countedResourceId = ({ group, resource }: CountedResource): string =>
  group ? `${resource}.${group}` : resource;
