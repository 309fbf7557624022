/**
 * A quota's admission state (hard, used, reservations) in decoded form, and its conversion from and to
 * the wire `KarmadaQuota.status.reservations[]`.
 *
 * A reservation records, per binding, `reserved` (capacity admitted but not yet observed in member
 * clusters) and `charge` (the binding's full charge on this quota's keys that was admitted). `charge` is
 * what makes admission idempotent: a change seen twice finds its charge already held. On the wire it is
 * an extra `charge` map next to `reserved`; an entry written without it (older writers) is read with
 * `charge = reserved`, the best lower bound available. While `expirationTime` is set the charge is
 * pending: admitted, not yet seen on the persisted binding (see ReservationEntry.expirationTime).
 */
import {
  Quantity,
  formatList,
  maxLists,
  parseResourceList,
  removeZeros,
  type FieldError,
  type ResourceList,
} from '#quantity';
import {
  CLUSTER_KARMADA_QUOTA,
  type ClusterKarmadaQuota,
  isJsonObject,
  type Enforcement,
  type KarmadaQuota,
  type Reservation,
  RESOURCE_BINDING,
  type WouldBeDeniedStatus,
} from '#api';
import { decodeWouldBeDenied, parseEnforcement } from './enforcement.js';
import { labelsMatch } from './label-selector.js';
import { readMemberCaps, resolveMemberCaps, splitMemberKey, type MemberLabels } from './member-caps.js';

/** Identifies a binding. `uid` is optional: requests for an object not yet created have none. */
export interface BindingKey {
  namespace: string;
  name: string;
  uid?: string;
}

export interface ReservationEntry {
  binding: BindingKey;
  /** Admitted, not yet observed. */
  reserved: ResourceList;
  /** The binding's full charge, masked to the quota's hard keys, that this reservation was admitted for. */
  charge: ResourceList;
  /**
   * RFC 3339; set while `charge` is pending: an admission that increased it (CREATE or UPDATE) sets now +
   * ttl, and the reconciler removes it once the persisted binding carries that charge. A pending change
   * that never lands (the create or update failed after admission) lapses here; a decrease changes nothing.
   */
  expirationTime?: string;
  /**
   * 'Update' when the entry's latest claim was admitted for an UPDATE of the object `binding.uid`
   * (docs/concepts/accounting.md): every pending claim in it is then that object's, which was stored
   * when it was admitted, so none can land once that object is no longer stored. Absent otherwise:
   * the claim may be a create's, held while its binding is missing.
   */
  operation?: 'Update';
  /**
   * On an 'Update' claim: the newest resourceVersion of the object an admission relying on the claim was
   * decided against (docs/concepts/accounting.md, "Claim retirement"). Absent: the claim is held until
   * it expires.
   */
  resourceVersion?: string;
}

export interface QuotaState {
  name: string;
  hard: ResourceList;
  used: ResourceList;
  /**
   * `status.reserved`: what every binding of the quota holds beyond its observed usage, stored or
   * claimed. Never less than the sum of the claims' `reserved`.
   */
  reserved: ResourceList;
  /** Never changed in place: admission keeps summaries of these lists by identity (admission.ts). */
  readonly reservations: readonly ReservationEntry[];
  /** `spec.enforcement`; absent is Deny (enforcement.ts). */
  enforcement?: Enforcement;
  /** `status.wouldBeDenied`, as stored (enforcement.ts); absent is none. */
  wouldBeDenied?: readonly WouldBeDeniedStatus[];
  /**
   * For a quota that caps members by label: the members whose caps `hard` knows. A change that
   * raises what another member runs is refused until the reconciler has resolved it (admission.ts).
   */
  capsResolvedFor?: ReadonlySet<string>;
  /** A ClusterKarmadaQuota's: its records name bindings as `namespace/name`. */
  spansNamespaces?: true;
}

/** Is it a ClusterKarmadaQuota (one quota over many namespaces, docs/concepts/cluster-quotas.md)? */
export function isClusterQuota(quota: KarmadaQuota): boolean {
  return quota?.kind === CLUSTER_KARMADA_QUOTA.kind;
}

/**
 * The quota's name in decisions, refusals and records: a KarmadaQuota's name, or
 * `ClusterKarmadaQuota/<name>`, so that a namespace's batch tells apart the two kinds' quotas of one name.
 */
export function quotaName(quota: KarmadaQuota): string {
  const name = quota?.metadata?.name ?? '';
  return isClusterQuota(quota) ? `${CLUSTER_KARMADA_QUOTA.kind}/${name}` : name;
}

/** Does the ClusterKarmadaQuota select a namespace of these labels (its `spec.namespaceSelector`)? */
export function selectsNamespace(quota: KarmadaQuota, labels: Readonly<Record<string, string>>): boolean {
  return labelsMatch((quota as ClusterKarmadaQuota).spec?.namespaceSelector, labels);
}

/**
 * Does the ClusterKarmadaQuota limit changes in a namespace of these labels? When it selects it, and
 * while its status still counts it: a namespace leaving the selector stays limited until the
 * reconciler counts it out, so that nothing admitted there meanwhile is missing from a count a
 * webhook that never saw it leave still trusts (docs/concepts/cluster-quotas.md).
 */
export function limitsNamespace(
  quota: KarmadaQuota,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): boolean {
  return selectsNamespace(quota, labels) || countedNamespaces(quota).has(namespace);
}

/** The ClusterKarmadaQuota's name, when `name` is one as quotaName gives it; else undefined. */
export function clusterQuotaNamed(name: string): string | undefined {
  const prefix = `${CLUSTER_KARMADA_QUOTA.kind}/`;
  return name.startsWith(prefix) ? name.slice(prefix.length) : undefined;
}

/**
 * The namespaces of the changes a ClusterKarmadaQuota's status lists as waiting (each binding named
 * `namespace/name`): their reconciles settle and requeue them.
 */
export function namespacesWaitingOn(quota: { status?: KarmadaQuota['status'] }): string[] {
  return [...new Set((quota.status?.waiting ?? []).map((w) => w.binding.split('/')[0]!))];
}

/**
 * A namespace a ClusterKarmadaQuota selects, as a webhook's namespace watch shows it. `labelledAt`: the
 * namespace's resourceVersion when the watch last saw its labels change, or first saw it. A count of
 * the namespace made before then may be from before it left the selector and came back, without what
 * was admitted there meanwhile (docs/concepts/cluster-quotas.md, "When a namespace enters or leaves").
 */
export interface SelectedNamespace {
  name: string;
  labelledAt?: string;
}

/**
 * The namespaces a ClusterKarmadaQuota's status says the reconciler counted (`status.namespaces[]`),
 * each with the namespace's resourceVersion it counted (undefined when not written).
 */
export function countedNamespaces(quota: KarmadaQuota): ReadonlyMap<string, string | undefined> {
  const listed: unknown = quota?.status?.namespaces;
  return new Map(
    (Array.isArray(listed) ? listed : []).flatMap((entry: unknown) =>
      isJsonObject(entry) && typeof entry['namespace'] === 'string'
        ? [
            [
              entry['namespace'],
              isResourceVersion(entry['resourceVersion']) ? entry['resourceVersion'] : undefined,
            ],
          ]
        : [],
    ),
  );
}

/** `namespace/name`: reservations are keyed by the binding's name; the uid only tells reuse apart. */
export function bindingKeyString(key: BindingKey): string {
  return `${key.namespace}/${key.name}`;
}

/** The sum of the entries' `reserved` (keys sorted). */
export function sumReserved(entries: readonly ReservationEntry[]): ResourceList {
  const totals = new Map<string, Quantity>();
  for (const entry of entries) {
    for (const [key, amount] of Object.entries(entry.reserved)) {
      const current = totals.get(key);
      totals.set(key, current === undefined ? amount : current.add(amount));
    }
  }
  return Object.fromEntries([...totals.keys()].sort().map((key) => [key, totals.get(key) as Quantity]));
}

/** The batch a ClusterKarmadaQuota is decoded for: its namespace, and those the quota selects in its view. */
export interface ClusterQuotaBatch {
  namespace: string;
  /** Undefined while the view cannot tell. */
  selected: readonly SelectedNamespace[] | undefined;
}

/**
 * Decodes a KarmadaQuota into its admission state. `hard` is `spec.hard` with the member caps under
 * their member keys (member-caps.ts): the limits the admin asked for take effect at once, a lowered
 * limit included. A cap selecting members by label is resolved against `members` (the reconciler's
 * view of their labels); without them, as the reconciler resolved it for this spec (its status' caps
 * of the members `status.capsResolvedFor` lists). `used` is `status.used` when the reconciler counted it
 * for the current spec (`status.observedGeneration == metadata.generation`), else `{}`: after a spec
 * edit (a scope widened, a key removed and added again) the old count may leave out workloads the quota
 * now selects, so no key's usage is known until it is counted again (docs/concepts/accounting.md,
 * "Quota edits"). For a ClusterKarmadaQuota decided for a batch (`batch`: its namespace, and the
 * namespaces the webhook sees the quota select), it is known only once the status lists all of them
 * as counted since their labels last changed in that view: a namespace entering brings usage the
 * total does not hold yet (docs/concepts/cluster-quotas.md). Reservations are those of
 * `status.reservations[]` reserved by a ResourceBinding: in the quota's namespace, or for a
 * ClusterKarmadaQuota in the one each names. Never throws: entries or quantities that cannot be read
 * are reported in `errors` (and left out).
 */
export function parseQuotaState(
  quota: KarmadaQuota,
  members?: MemberLabels,
  batch?: ClusterQuotaBatch,
): { state: QuotaState; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const spansNamespaces = isClusterQuota(quota);
  const ownNamespace = quota?.metadata?.namespace ?? '';
  const name = quotaName(quota);
  const hard = parseResourceList(quota?.spec?.hard, 'spec.hard');
  const used = parseResourceList(quota?.status?.used, 'status.used');
  errors.push(...hard.errors, ...used.errors);
  const capSpec = readMemberCaps(quota, errors);
  const countedForSpec =
    quota?.status?.observedGeneration === quota?.metadata?.generation &&
    (!spansNamespaces || batch === undefined || countsAll(quota, batch));

  const reservations: ReservationEntry[] = [];
  const raw: unknown = quota?.status?.reservations;
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) {
    errors.push({ field: 'status.reservations', message: 'must be a list', value: raw });
  }
  (Array.isArray(raw) ? raw : []).forEach((item: unknown, i) => {
    const field = `status.reservations[${i}]`;
    if (!isJsonObject(item) || !isJsonObject(item['reservedBy'])) {
      errors.push({
        field: `${field}.reservedBy`,
        message: 'Required value: the binding holding this reservation',
      });
      return;
    }
    const by = item['reservedBy'];
    if (by['kind'] !== RESOURCE_BINDING.kind || typeof by['name'] !== 'string' || by['name'] === '') {
      errors.push({
        field: `${field}.reservedBy`,
        message: `must reference a ${RESOURCE_BINDING.kind} by name; this entry is ignored`,
        value: by,
      });
      return;
    }
    const bindingNamespace = spansNamespaces ? by['namespace'] : ownNamespace;
    if (typeof bindingNamespace !== 'string' || bindingNamespace === '') {
      errors.push({
        field: `${field}.reservedBy.namespace`,
        message: `Required value: a ${CLUSTER_KARMADA_QUOTA.kind}'s reservation names its binding's namespace`,
        value: by,
      });
      return;
    }
    const reserved = parseResourceList(item['reserved'], `${field}.reserved`);
    const hasCharge = item['charge'] !== undefined && item['charge'] !== null;
    const charge = hasCharge ? parseResourceList(item['charge'], `${field}.charge`) : reserved;
    errors.push(...reserved.errors, ...(hasCharge ? charge.errors : []));
    const entry: ReservationEntry = {
      binding: { namespace: bindingNamespace, name: by['name'] },
      reserved: removeZeros(reserved.list),
      charge: removeZeros(charge.list),
    };
    if (typeof by['uid'] === 'string' && by['uid'] !== '') entry.binding.uid = by['uid'];
    // Any other value is read as absent: the claim is then held as a create's would be (conservative).
    if (item['operation'] === 'Update' && entry.binding.uid !== undefined) {
      entry.operation = 'Update';
      // Any other value is read as absent: the claim is then held until it expires (conservative).
      if (isResourceVersion(item['resourceVersion'])) entry.resourceVersion = item['resourceVersion'];
    }
    const expiration = item['expirationTime'];
    if (expiration !== undefined && expiration !== null) {
      if (typeof expiration !== 'string' || Number.isNaN(Date.parse(expiration))) {
        errors.push({
          field: `${field}.expirationTime`,
          message: 'must be an RFC 3339 time; the reservation is treated as expired',
          value: expiration,
        });
        entry.expirationTime = String(expiration);
      } else {
        entry.expirationTime = expiration;
      }
    }
    reservations.push(entry);
  });

  const reserved = parseResourceList(quota?.status?.reserved, 'status.reserved');
  errors.push(...reserved.errors);
  const selecting = capSpec.selecting.length > 0;
  const resolvedFor = new Set<string>(
    !selecting ? [] : members !== undefined ? members.keys() : countedForSpec ? resolvedMembers(quota) : [],
  );
  const caps =
    members !== undefined
      ? resolveMemberCaps(capSpec, members)
      : { ...capSpec.named, ...resolvedBySelector(quota, capSpec.names, resolvedFor) };
  const state: QuotaState = {
    name,
    hard: { ...hard.list, ...caps },
    used: countedForSpec ? used.list : {},
    // The claims are part of the sum; a sum written short of them is not trusted.
    reserved: maxLists(removeZeros(reserved.list), sumReserved(reservations)),
    reservations,
  };
  const enforcement = parseEnforcement(quota?.spec?.enforcement);
  if (enforcement !== 'Deny') state.enforcement = enforcement;
  const wouldBeDenied = decodeWouldBeDenied(quota?.status?.wouldBeDenied);
  if (wouldBeDenied.length > 0) state.wouldBeDenied = wouldBeDenied;
  if (selecting) state.capsResolvedFor = resolvedFor;
  if (spansNamespaces) state.spansNamespaces = true;
  return { state, errors };
}

/**
 * Has the ClusterKarmadaQuota's status counted the batch's namespace and every one it selects, each
 * since its labels last changed in the batch's view?
 */
function countsAll(quota: KarmadaQuota, batch: ClusterQuotaBatch): boolean {
  if (batch.selected === undefined) return false;
  const counted = countedNamespaces(quota);
  const since = (ns: SelectedNamespace) => {
    const version = counted.get(ns.name);
    if (ns.labelledAt === undefined) return counted.has(ns.name);
    return isAtOrAfterVersion(version, ns.labelledAt);
  };
  const own = batch.selected.find((ns) => ns.name === batch.namespace) ?? { name: batch.namespace };
  return since(own) && batch.selected.every(since);
}

/** The members the status says its caps were resolved for (`status.capsResolvedFor`). */
function resolvedMembers(quota: KarmadaQuota): string[] {
  const names: unknown = quota?.status?.capsResolvedFor;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
}

/** The status' caps of members a selector capped (`status.hard`'s member keys of members not named). */
function resolvedBySelector(
  quota: KarmadaQuota,
  named: ReadonlySet<string>,
  resolvedFor: ReadonlySet<string>,
): ResourceList {
  const hard = parseResourceList(quota?.status?.hard ?? {}, 'status.hard').list;
  const caps: ResourceList = {};
  for (const [key, amount] of Object.entries(hard)) {
    const split = splitMemberKey(key);
    if (split && resolvedFor.has(split.member) && !named.has(split.member)) caps[key] = amount;
  }
  return caps;
}

/**
 * The wire form of reservations (`status.reservations[]`), in the given order. An entry names its
 * binding's namespace unless it is `quotaNamespace` (a KarmadaQuota's own; a ClusterKarmadaQuota has none).
 */
export function toWireReservations(
  entries: readonly ReservationEntry[],
  quotaNamespace: string,
): Reservation[] {
  return entries.map((entry) => {
    const wire: Reservation = {
      reservedBy: {
        apiVersion: RESOURCE_BINDING.apiVersion,
        kind: RESOURCE_BINDING.kind,
        ...(entry.binding.namespace !== quotaNamespace ? { namespace: entry.binding.namespace } : {}),
        name: entry.binding.name,
      },
      reserved: formatList(entry.reserved),
      charge: formatList(entry.charge),
    };
    if (entry.binding.uid !== undefined) wire.reservedBy.uid = entry.binding.uid;
    if (entry.expirationTime !== undefined) wire.expirationTime = entry.expirationTime;
    if (entry.operation !== undefined) wire.operation = entry.operation;
    if (entry.resourceVersion !== undefined) wire.resourceVersion = entry.resourceVersion;
    return wire;
  });
}

/** Has the reservation expired at `now`? An unreadable expirationTime counts as expired. */
export function isExpired(entry: ReservationEntry, now: Date): boolean {
  if (entry.expirationTime === undefined) return false;
  const at = Date.parse(entry.expirationTime);
  return Number.isNaN(at) || at <= now.getTime();
}

/** When the claim was admitted (its expiration less the ttl), or undefined when unknown. */
export function claimAdmittedAt(claim: { expirationTime?: string }, ttlSeconds: number): number | undefined {
  const expires = typeof claim.expirationTime === 'string' ? Date.parse(claim.expirationTime) : NaN;
  return Number.isNaN(expires) ? undefined : expires - ttlSeconds * 1000;
}

/** A resourceVersion as the API server writes it: an etcd revision, compared as a number. */
export function isResourceVersion(value: unknown): value is string {
  return typeof value === 'string' && /^[1-9][0-9]{0,30}$/.test(value);
}

/**
 * Is `later` a later resourceVersion of one object than `earlier`? Both must read as revisions
 * (isResourceVersion); otherwise nothing can be told, and the answer is false.
 */
export function isLaterVersion(later: string | undefined, earlier: string | undefined): boolean {
  if (!isResourceVersion(later) || !isResourceVersion(earlier)) return false;
  return later.length !== earlier.length ? later.length > earlier.length : later > earlier;
}

/** Is `version` the same as `other`, or a later one (isLaterVersion)? */
export function isAtOrAfterVersion(version: string | undefined, other: string): boolean {
  return version === other || isLaterVersion(version, other);
}
