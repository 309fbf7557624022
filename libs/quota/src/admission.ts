/**
 * The admission decision for a batch of binding changes against a running total (spec §4). Pure: it
 * takes the quotas' states and returns their new states; the webhook writes them with one CAS per quota.
 *
 * Per item, in order, for every quota that matches it:
 * - `held = max(existing reservation's charge, oldCharge)` per key (absent = 0): what the binding already
 *   holds on this quota, from an earlier admission of the same change or from its persisted old object;
 * - `increase = max(0, charge - held)` on the quota's hard keys;
 * - the quota admits iff every key with a positive increase keeps `used + reserved + increase <= hard`,
 *   `reserved` being the running total of reservations (earlier items of the batch included).
 * The item is admitted only if every matching quota admits it; a denied item changes nothing.
 * On admission of an item that increases something (unless dryRun), per matching quota, the binding's
 * reservation becomes:
 * - `reserved = existing.reserved + increase` (a new one: `increase`);
 * - `charge` = the item's charge on the quota's hard keys;
 * - `expirationTime` = now + ttl, CREATE or UPDATE alike: the admitted `charge` is "pending" until the
 *   reconciler has seen the persisted binding carry it (the reconciler then removes the expiration), and
 *   if the change never lands (a create or an update that failed after admission) the pending part lapses
 *   at the expiration.
 * An item that increases nothing (a decrease, or the retry of a change already held) changes nothing:
 * admission never releases quota. Like ResourceQuota, a decrease is released by the reconciler once the
 * persisted binding shows it (spec §6): concurrent updates of one binding are all admitted but only one
 * persists, and a decrease that loses its race must not free quota that others then take.
 * A reservation of the same namespace/name but another uid belonged to an earlier object of that name:
 * an admitted increase replaces it (its charge is not "held" by the new object).
 * Decreases are always allowed, even over a lowered limit. dryRun items get the same answer as real ones
 * but change neither the state nor the running total.
 *
 * Before any limit, ResourceQuota's "must specify" rule: an item that adds pods (a CREATE, or an
 * UPDATE raising the replicas) is denied by the first matching quota it has `missingRequests` for
 * (a quota tracking cpu or memory, a template without that request). A change that adds no pods
 * passes it, so a workload admitted before such a quota existed can still shrink or be edited.
 *
 * Denial: Kubernetes' `exceeded quota: <quota>, requested: <k=v,...>, used: <k=v,...>, limited: <k=v,...>`,
 * keys sorted, only the exceeded keys, requested = the increase, used = used + reserved before the item,
 * limited = hard, quantities in canonical form. With several quotas denying, the first in the given
 * order is reported.
 */
import {
  addLists,
  formatListInline,
  maskList,
  Quantity,
  removeZeros,
  subtractLists,
  type ResourceList,
} from '#quantity';
import {
  bindingKeyString,
  sumReserved,
  type BindingKey,
  type QuotaState,
  type ReservationEntry,
} from './state.js';

export interface AdmissionItem {
  binding: BindingKey;
  /** The binding's new charge (bindingCharge). */
  charge: ResourceList;
  /** The charge of the persisted old object, for an UPDATE. */
  oldCharge?: ResourceList;
  /**
   * The binding exists in the API server already (UPDATE); false for a CREATE. Informational: CREATE and
   * UPDATE are admitted by the same rule (an increase sets `expirationTime`, see the file comment).
   */
  persisted: boolean;
  dryRun: boolean;
  /**
   * Per quota name, why the binding breaks that quota's "must specify" rule (missingRequestErrors
   * against the quota's hard keys); absent or empty when it declares every tracked request.
   */
  missingRequests?: Readonly<Record<string, readonly string[]>>;
}

export type Decision =
  { allowed: true } | { allowed: false; message: string; quota: string; exceeded: string[] };

export interface AdmitOptions {
  now: Date;
  /** How long an admitted increase stays pending (held without being seen on the persisted binding). */
  ttlSeconds: number;
}

export interface BatchResult {
  /** One per item, in order. */
  decisions: Decision[];
  /** The new states, in the given order (an unchanged quota is returned as given). */
  quotas: QuotaState[];
  /** Names of the quotas whose reservations changed (the ones to write), in the given order. */
  changed: string[];
}

const ZERO = Quantity.zero();

const get = (list: ResourceList, key: string): Quantity =>
  Object.hasOwn(list, key) ? (list[key] as Quantity) : ZERO;

/** Kubernetes' quota denial message. */
export function exceededMessage(
  quota: string,
  requested: ResourceList,
  used: ResourceList,
  hard: ResourceList,
  exceeded: readonly string[],
): string {
  return (
    `exceeded quota: ${quota}, requested: ${formatListInline(requested, exceeded)}, ` +
    `used: ${formatListInline(used, exceeded)}, limited: ${formatListInline(hard, exceeded)}`
  );
}

/** A quota while a batch runs: reservations indexed by binding, and the running reserved total. */
interface WorkingQuota {
  readonly original: QuotaState;
  readonly hardKeys: string[];
  readonly entries: (ReservationEntry | undefined)[];
  readonly index: Map<string, number>;
  total: ResourceList;
  changed: boolean;
}

function workingQuota(state: QuotaState): WorkingQuota {
  const entries = [...state.reservations];
  const index = new Map<string, number>();
  entries.forEach((entry, i) => {
    const key = bindingKeyString(entry.binding);
    if (!index.has(key)) index.set(key, i);
  });
  return {
    original: state,
    hardKeys: Object.keys(state.hard),
    entries,
    index,
    total: sumReserved(entries),
    changed: false,
  };
}

/** What admitting an item would do to one quota. */
interface Plan {
  quota: WorkingQuota;
  /** Position of the binding's existing reservation, if any. */
  position?: number;
  /** The existing reservation belongs to another object of the same name (different uid). */
  replaced: boolean;
  charge: ResourceList;
  increase: ResourceList;
}

function plan(quota: WorkingQuota, item: AdmissionItem): Plan {
  const keys = quota.hardKeys;
  const position = quota.index.get(bindingKeyString(item.binding));
  const existing = position === undefined ? undefined : quota.entries[position];
  const replaced =
    existing !== undefined &&
    existing.binding.uid !== undefined &&
    item.binding.uid !== undefined &&
    existing.binding.uid !== item.binding.uid;
  const charge = removeZeros(maskList(item.charge, keys));
  const fromReservation = existing !== undefined && !replaced ? maskList(existing.charge, keys) : {};
  const fromOld = item.oldCharge === undefined ? {} : maskList(item.oldCharge, keys);
  const increase: ResourceList = {};
  for (const key of keys) {
    const a = get(fromReservation, key);
    const b = get(fromOld, key);
    const held = a.cmp(b) >= 0 ? a : b;
    const wanted = get(charge, key);
    if (wanted.cmp(held) > 0) increase[key] = wanted.sub(held);
  }
  return { quota, position, replaced, charge, increase };
}

/** The keys where `used + reserved + increase > hard`, sorted; [] when the quota admits the plan. */
function exceededKeys(p: Plan): string[] {
  const { hard, used } = p.quota.original;
  return Object.keys(p.increase)
    .filter(
      (key) =>
        get(used, key)
          .add(get(p.quota.total, key))
          .add(p.increase[key] as Quantity)
          .cmp(get(hard, key)) > 0,
    )
    .sort();
}

/** Records an admitted item's increase in its binding's reservation (see the file comment). */
function apply(p: Plan, item: AdmissionItem, options: AdmitOptions): void {
  if (Object.keys(p.increase).length === 0) return; // admission never releases: the reconciler does
  const quota = p.quota;
  const existing = p.position === undefined ? undefined : quota.entries[p.position];
  const kept = existing !== undefined && !p.replaced ? existing : undefined;
  const next: ReservationEntry = {
    binding: { namespace: item.binding.namespace, name: item.binding.name },
    reserved: kept === undefined ? p.increase : addLists(kept.reserved, p.increase),
    charge: p.charge,
    // An increase is pending until the reconciler sees the persisted binding carry it.
    expirationTime: new Date(options.now.getTime() + options.ttlSeconds * 1000).toISOString(),
  };
  const uid = item.binding.uid ?? kept?.binding.uid;
  if (uid !== undefined) next.binding.uid = uid;

  if (existing !== undefined) quota.total = subtractLists(quota.total, existing.reserved);
  quota.total = addLists(quota.total, next.reserved);
  if (p.position !== undefined) {
    quota.entries[p.position] = next;
  } else {
    quota.index.set(bindingKeyString(item.binding), quota.entries.length);
    quota.entries.push(next);
  }
  quota.changed = true;
}

/** A CREATE with replicas, or an UPDATE raising them: what the "must specify" rule applies to. */
function addsPods(item: AdmissionItem): boolean {
  const after = get(item.charge, 'pods');
  return after.sign() > 0 && (item.oldCharge === undefined || after.cmp(get(item.oldCharge, 'pods')) > 0);
}

/**
 * Decides a batch of admissions against the quotas' states (see the file comment). `matches(quota, i)`
 * tells whether quota applies to item i (scopes); `quotas` are evaluated in the given order.
 */
export function admitBatch(
  quotas: readonly QuotaState[],
  items: readonly AdmissionItem[],
  matches: (quotaName: string, itemIndex: number) => boolean,
  options: AdmitOptions,
): BatchResult {
  const working = quotas.map(workingQuota);
  const decisions: Decision[] = items.map((item, i): Decision => {
    const plans = working.filter((w) => matches(w.original.name, i)).map((w) => plan(w, item));
    if (addsPods(item)) {
      for (const { quota } of plans) {
        const missing = item.missingRequests?.[quota.original.name] ?? [];
        if (missing.length > 0)
          return { allowed: false, quota: quota.original.name, exceeded: [], message: missing.join('; ') };
      }
    }
    for (const p of plans) {
      const exceeded = exceededKeys(p);
      if (exceeded.length > 0) {
        const { name, used, hard } = p.quota.original;
        return {
          allowed: false,
          quota: name,
          exceeded,
          message: exceededMessage(name, p.increase, addLists(used, p.quota.total), hard, exceeded),
        };
      }
    }
    if (!item.dryRun) for (const p of plans) apply(p, item, options);
    return { allowed: true };
  });

  const result = working.map((w) =>
    w.changed
      ? { ...w.original, reservations: w.entries.filter((e): e is ReservationEntry => e !== undefined) }
      : w.original,
  );
  return {
    decisions,
    quotas: result,
    changed: working.filter((w) => w.changed).map((w) => w.original.name),
  };
}
