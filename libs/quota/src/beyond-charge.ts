/**
 * Usage no admission saw: per stored binding a quota counts, what its workload runs in the members
 * beyond what the binding holds on the quota (docs/concepts/accounting.md, "The limit").
 * The webhook charges what a ResourceBinding says; Karmada may make the members run more (an
 * OverridePolicy raising replicas or requests, a rolling update's surge, a member HPA, a finished Job
 * re-created in a member), and only the usage the aggregator observes can show it. Pure.
 */
import { excessOf, maskList, maxLists, type ResourceList } from '#quantity';
import { observedAgainstShares, observedIn, compareNames } from './cluster-usage.js';
import { beingDeleted, holdsNothing, storedCharge, type SettleInput } from './reservations.js';
import { isExpired, type ReservationEntry } from './state.js';

export interface BeyondCharge {
  /** The binding's name. */
  binding: string;
  /** Its workload's usage the quota counts, on the quota's keys. */
  running: ResourceList;
  /** What it holds: its stored charge, or its pending claim's charge while larger. */
  charged: ResourceList;
  /** `running` beyond `charged`, the keys where it is beyond only. */
  beyond: ResourceList;
}

export type BeyondChargeInput = Pick<
  SettleInput,
  'quota' | 'hardKeys' | 'views' | 'bindings' | 'countsUsageOf' | 'now'
> & {
  /** The quota's reservations as settled now: a pending claim covers what it was admitted for. */
  reservations: readonly ReservationEntry[];
};

/** The bindings running beyond their charge, by name; none when every one runs within it. */
export function runningBeyondCharge(input: BeyondChargeInput): BeyondCharge[] {
  const pending = new Map(
    input.reservations
      .filter((entry) => entry.expirationTime !== undefined && !isExpired(entry, input.now))
      .map((entry) => [entry.binding.name, entry.charge]),
  );
  const found: BeyondCharge[] = [];
  for (const [name, rb] of input.bindings) {
    // A binding being deleted holds nothing while its pods wind down: not an excess of its charge.
    if (beingDeleted(rb) || !input.countsUsageOf(rb)) continue;
    const running = maskList(observedIn(rb, input.views), input.hardKeys);
    const stored = storedCharge(rb, { ...input, errors: [] });
    const claimed = pending.get(name) ?? {};
    const charged = maxLists(stored, claimed);
    // Per target cluster against its share, so one member's excess is never hidden by another's
    // share not running yet; a pending claim covers what it adds to the stored charge. A binding that
    // holds nothing (its workload finished) holds none of what runs again.
    const beyond = holdsNothing(rb)
      ? excessOf(running, claimed)
      : excessOf(
          maskList(observedAgainstShares(rb, input.views).beyond, input.hardKeys),
          excessOf(claimed, stored),
        );
    if (Object.keys(beyond).length > 0) found.push({ binding: name, running, charged, beyond });
  }
  return found.sort((a, b) => compareNames(a.binding, b.binding));
}
