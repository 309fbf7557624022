/**
 * The admission decision for a batch of binding changes against a running total (spec §4). Pure: it
 * takes the quotas' states and returns their new states; the webhook writes them with one CAS per quota.
 *
 * Per item, in order, for every quota that matches it:
 * - `held = max(existing reservation's charge, oldCharge)` per key (absent = 0): what the binding already
 *   holds on this quota, from an earlier admission of the same change or from its persisted old object;
 * - `increase = max(0, charge - held)`, `decrease = max(0, held - charge)`, both on the quota's hard keys;
 * - the quota admits iff every key with a positive increase keeps `used + reserved + increase <= hard`,
 *   `reserved` being the running total of reservations (earlier items of the batch included).
 * The item is admitted only if every matching quota admits it; a denied item changes nothing.
 * On admission (unless dryRun), per matching quota, the binding's reservation becomes:
 * - `reserved = existing.reserved + increase - decrease`, per key never below zero (a new one: `increase`);
 * - `charge` = the item's charge on the quota's hard keys;
 * - `expirationTime` = now + ttl whenever the item increases the binding's charge on some key, CREATE or
 *   UPDATE alike: the admitted `charge` is "pending" until the reconciler has seen the persisted binding
 *   carry it (the reconciler then removes the expiration), and if the change never lands (a create or an
 *   update that failed after admission) the pending part lapses at the expiration. An item that increases
 *   nothing (a pure decrease, or the retry of a change already held) neither sets nor extends an
 *   expiration: the existing one, if any, is kept as it is;
 * and it is dropped when nothing is reserved and it has no expiration (nothing left to hold). A new
 * reservation is therefore only created by an item that increases something.
 * A reservation of the same namespace/name but another uid belonged to an earlier object of that name:
 * the admitted item replaces it (its charge is not "held" by the new object).
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
  decrease: ResourceList;
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
  const decrease: ResourceList = {};
  for (const key of keys) {
    const a = get(fromReservation, key);
    const b = get(fromOld, key);
    const held = a.cmp(b) >= 0 ? a : b;
    const wanted = get(charge, key);
    const diff = wanted.cmp(held);
    if (diff > 0) increase[key] = wanted.sub(held);
    else if (diff < 0) decrease[key] = held.sub(wanted);
  }
  return { quota, position, replaced, charge, increase, decrease };
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

function sameEntry(a: ReservationEntry, b: ReservationEntry): boolean {
  const equal = (x: ResourceList, y: ResourceList): boolean => {
    const keys = Object.keys(x);
    return (
      keys.length === Object.keys(y).length &&
      keys.every((k) => Object.hasOwn(y, k) && get(x, k).equals(get(y, k)))
    );
  };
  return (
    a.binding.uid === b.binding.uid &&
    a.expirationTime === b.expirationTime &&
    equal(a.reserved, b.reserved) &&
    equal(a.charge, b.charge)
  );
}

function apply(p: Plan, item: AdmissionItem, options: AdmitOptions): void {
  const quota = p.quota;
  const existing = p.position === undefined ? undefined : quota.entries[p.position];
  const kept = existing !== undefined && !p.replaced ? existing : undefined;

  let reserved: ResourceList;
  if (kept === undefined) {
    reserved = removeZeros(p.increase);
  } else {
    reserved = {};
    for (const key of Object.keys(addLists(addLists(kept.reserved, p.increase), p.decrease)).sort()) {
      const value = get(kept.reserved, key).add(get(p.increase, key)).sub(get(p.decrease, key));
      if (value.sign() > 0) reserved[key] = value;
    }
  }
  const next: ReservationEntry = {
    binding: { namespace: item.binding.namespace, name: item.binding.name },
    reserved,
    charge: p.charge,
  };
  const uid = item.binding.uid ?? kept?.binding.uid;
  if (uid !== undefined) next.binding.uid = uid;
  if (Object.keys(p.increase).length > 0) {
    // An increase is pending until the reconciler sees the persisted binding carry it.
    next.expirationTime = new Date(options.now.getTime() + options.ttlSeconds * 1000).toISOString();
  } else if (kept?.expirationTime !== undefined) {
    // A pure decrease (or nothing new) neither sets nor extends an expiration.
    next.expirationTime = kept.expirationTime;
  }

  // A new entry always reserves what it was created for (its increase); an existing one lives on while
  // it reserves something or is pending.
  const keep = Object.keys(reserved).length > 0 || next.expirationTime !== undefined;

  if (existing !== undefined && (!keep || p.replaced || !sameEntry(existing, next))) {
    quota.total = subtractLists(quota.total, existing.reserved);
  } else if (existing !== undefined) {
    return; // nothing changes
  }
  const key = bindingKeyString(item.binding);
  if (keep) {
    quota.total = addLists(quota.total, next.reserved);
    if (p.position !== undefined) {
      quota.entries[p.position] = next;
    } else {
      quota.index.set(key, quota.entries.length);
      quota.entries.push(next);
    }
    quota.changed = true;
  } else if (p.position !== undefined) {
    quota.entries[p.position] = undefined;
    quota.index.delete(key);
    quota.changed = true;
  }
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
