/**
 * Caps per member cluster (`spec.clusters[]`): what one member may run of a quota, inside its global
 * `hard`. Inside the accounting a cap is one more resource key, `<resource>@<member>`: the charge
 * gives it the binding's share on that member (charge.ts memberShares), the member's published usage
 * counts it (cluster-usage.ts), and every rule of admission and release then holds for it unchanged.
 * A cap that selects members by label is resolved by the reconciler, which watches the members'
 * labels, and admission takes it from the status the reconciler writes (state.ts).
 * docs/concepts/member-caps.md says what users see.
 */
import { parseResourceList, type FieldError, type ResourceList } from '#quantity';
import { isJsonObject, type KarmadaQuota } from '#api';
import { labelsMatch } from './label-selector.js';

/** Cannot appear in a resource name or a cluster name: a member key never collides with a resource. */
const SEPARATOR = '@';

/** The key of `resource` capped on `member`, e.g. `requests.cpu@member1`. */
export const memberKey = (resource: string, member: string): string => `${resource}${SEPARATOR}${member}`;

/** The resource and member of a member key; undefined for a plain resource name. */
export function splitMemberKey(key: string): { resource: string; member: string } | undefined {
  const at = key.lastIndexOf(SEPARATOR);
  return at <= 0 ? undefined : { resource: key.slice(0, at), member: key.slice(at + 1) };
}

/** Does any of the keys cap a member? Only then is anything charged per member. */
export const capsAnyMember = (keys: Iterable<string>): boolean => {
  for (const key of keys) if (key.includes(SEPARATOR)) return true;
  return false;
};

/** `list` as charged on `member`: each entry under its member key (only where `keys` has that key). */
export function onMember(list: ResourceList, member: string, keys?: ReadonlySet<string>): ResourceList {
  const result: ResourceList = {};
  for (const [resource, amount] of Object.entries(list)) {
    const key = memberKey(resource, member);
    if (keys === undefined || keys.has(key)) result[key] = amount;
  }
  return result;
}

/** The plain resources `keys` cap on `member` (`requests.cpu` for `requests.cpu@member1`). */
export function cappedOn(keys: Iterable<string>, member: string): string[] {
  const resources: string[] = [];
  for (const key of keys) {
    const split = splitMemberKey(key);
    if (split?.member === member) resources.push(split.resource);
  }
  return resources;
}

/** The entries of `list` that are not member keys. */
export function withoutMemberKeys(list: ResourceList): ResourceList {
  return Object.fromEntries(Object.entries(list).filter(([key]) => !key.includes(SEPARATOR)));
}

/** The entries of `list` capped on `member`, under their plain resource names. */
export function memberPart(list: ResourceList, member: string): ResourceList {
  const result: ResourceList = {};
  for (const [key, amount] of Object.entries(list)) {
    const split = splitMemberKey(key);
    if (split?.member === member) result[split.resource] = amount;
  }
  return result;
}

/** Each member cluster's labels, as its Karmada Cluster object has them: what selects it for caps. */
export type MemberLabels = ReadonlyMap<string, Readonly<Record<string, string>>>;

/** What `spec.clusters[]` caps, read: by name, and by label selector (resolved later, per member). */
export interface MemberCapSpec {
  /** The caps of members named, under their member keys. */
  named: ResourceList;
  /** The members named (a named member takes its own entry alone, never a selector's). */
  names: ReadonlySet<string>;
  /** The entries that select members by label, with their caps under plain resource names. */
  selecting: { selector: unknown; hard: ResourceList }[];
}

/**
 * Reads `spec.clusters[]`. An entry that cannot be read is reported in `errors` and left out
 * (validation.ts refuses such a spec at the API server; here it only must not throw). A member named
 * twice: the first entry counts.
 */
export function readMemberCaps(quota: KarmadaQuota, errors: FieldError[]): MemberCapSpec {
  const spec: MemberCapSpec = { named: {}, names: new Set(), selecting: [] };
  const raw: unknown = quota?.spec?.clusters;
  if (raw === undefined || raw === null) return spec;
  if (!Array.isArray(raw)) {
    errors.push({ field: 'spec.clusters', message: 'must be a list', value: raw });
    return spec;
  }
  const names = new Set<string>();
  raw.forEach((entry: unknown, i) => {
    const field = `spec.clusters[${i}]`;
    const named = isJsonObject(entry) && typeof entry['name'] === 'string' && entry['name'] !== '';
    if (!isJsonObject(entry) || (!named && !isJsonObject(entry['labelSelector']))) {
      errors.push({
        field: `${field}.name`,
        message: 'Required value: the member cluster capped, by name or labelSelector',
      });
      return;
    }
    const hard = parseResourceList(entry['hard'], `${field}.hard`);
    errors.push(...hard.errors);
    if (!named) {
      spec.selecting.push({ selector: entry['labelSelector'], hard: hard.list });
      return;
    }
    const member = entry['name'] as string;
    if (names.has(member)) return;
    names.add(member);
    for (const [resource, amount] of Object.entries(hard.list))
      spec.named[memberKey(resource, member)] = amount;
  });
  spec.names = names;
  return spec;
}

/**
 * The caps in force, under member keys: each named member's own, and for each other member of
 * `members` the smallest cap, per resource, of the selecting entries that match its labels.
 */
export function resolveMemberCaps(spec: MemberCapSpec, members: MemberLabels): ResourceList {
  const caps: ResourceList = { ...spec.named };
  for (const [member, labels] of members) {
    if (spec.names.has(member)) continue;
    for (const { selector, hard } of spec.selecting) {
      if (!labelsMatch(selector, labels)) continue;
      for (const [resource, amount] of Object.entries(hard)) {
        const key = memberKey(resource, member);
        const current = caps[key];
        if (current === undefined || amount.cmp(current) < 0) caps[key] = amount;
      }
    }
  }
  return caps;
}
