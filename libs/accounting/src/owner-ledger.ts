/**
 * What the admission owner keeps in memory (design C, docs/development/plans/admission-owner.md): the
 * claim records by binding (libs/quota owner-claims.ts), their increases summed per quota, and the
 * ghosts taken over with the Lease. A quota is decided on as the reconciler counted it plus all of
 * these; a record's claim leaves the sum once that quota's count holds the record's outcomes.
 */
import { addLists, excessOf, subtractLists, removeZeros, type ResourceList } from '#quantity';
import {
  bindingKeyString,
  claimedFor,
  clusterQuotaNamed,
  decideBy,
  decideByRead,
  isAtOrAfterVersion,
  joinAttempt,
  needsRead,
  retireOn,
  type Attempt,
  type BindingKey,
  type BindingSeen,
  type Change,
  type ClaimRecord,
  type QuotaClaim,
  type QuotaState,
} from '#quota';
import type { ReconcileTarget } from '#usage';

/** A quota's key in the ledger: a ClusterKarmadaQuota's name, a KarmadaQuota's namespace/name. */
export const ledgerKey = (namespace: string, quotaName: string): string =>
  clusterQuotaNamed(quotaName) !== undefined ? quotaName : `${namespace}/${quotaName}`;

/** What a request for a count of a ledger key's quota names: a KarmadaQuota's namespace, or a ClusterKarmadaQuota. */
export function countTargetOf(key: string): ReconcileTarget {
  const clusterQuota = clusterQuotaNamed(key);
  return clusterQuota !== undefined ? { clusterQuota } : { namespace: key.slice(0, key.indexOf('/')) };
}

/**
 * A write of the owner's in-flight budgets with its Lease (docs/concepts/admission-owner.md#budgets):
 * per quota key, the budget written, and what had been retired of this owner's admissions when the
 * write began.
 */
export interface BudgetWrite {
  budgets: Map<string, ResourceList>;
  retired: Map<string, ResourceList>;
  /** Each key's generation as the write began: a quota forgotten meanwhile is not restored. */
  generations: Map<string, number>;
}

/** What an owner takes over with the Lease (AdmissionRecord, decoded). */
export interface TakenOver {
  ghosts: ReadonlyMap<string, ResourceList>;
  /** The predecessor stopped without handing over: every quota refuses increases until settled. */
  unknownInFlight: boolean;
  /** By quota key: the count its predecessors retired claims against (AdmissionRecord.counted). */
  counted: ReadonlyMap<string, string>;
}

export class OwnerLedger {
  private readonly records = new Map<string, { binding: BindingKey; record: ClaimRecord }>();
  /** By quota key: the increases of the records still claiming on it. */
  private readonly pending = new Map<string, ResourceList>();
  /** By quota key: what a predecessor handed over in flight. */
  private readonly ghosts: Map<string, ResourceList>;
  private readonly unknownInFlight: boolean;
  /**
   * A consistent list's resourceVersion, made once this owner had held the Lease a landing window:
   * a quota counted at or past it counts all its predecessors admitted (plan, gap 1).
   */
  private settledFrom?: string;
  /** Quota keys counted since `settledFrom`: no ghost of theirs is left. */
  private readonly settled = new Set<string>();
  /**
   * By quota key: the newest count seen here or by a predecessor, who may have retired claims against
   * it. A quota whose count this owner has not seen that new is decided on from nothing it knows.
   */
  private readonly newestCount: Map<string, string>;
  /** Quota keys whose count this owner has seen at least as new as `newestCount` says. */
  private readonly caughtUp = new Set<string>();
  /** By quota key: every increase this owner admitted, summed. */
  private readonly admittedTotal = new Map<string, ResourceList>();
  /**
   * By quota key: what had left `pending` of admittedTotal when the last write of the budgets known
   * to have landed began. admittedTotal - retired is what a successor may find in flight of this
   * owner's, at most: the budget must cover it.
   */
  private readonly retired = new Map<string, ResourceList>();
  /**
   * By quota key: the least budget any write since the last one known to have landed may have left
   * on the Lease (a write whose answer was lost may have landed too).
   */
  private readonly budgets = new Map<string, ResourceList>();
  /** By quota key: how many times it was forgotten (a quota deleted, perhaps made again). */
  private readonly generation = new Map<string, number>();

  constructor(takenOver: TakenOver = { ghosts: new Map(), unknownInFlight: false, counted: new Map() }) {
    this.ghosts = new Map(takenOver.ghosts);
    this.unknownInFlight = takenOver.unknownInFlight;
    this.newestCount = new Map(takenOver.counted);
  }

  /**
   * Whether the quota refuses every increase for now: a predecessor stopped without handing over,
   * and no count of the quota is known to hold all it admitted yet.
   */
  refusesIncreases(namespace: string, quotaName: string): boolean {
    const key = ledgerKey(namespace, quotaName);
    if (this.newestCount.has(key) && !this.caughtUp.has(key)) return true;
    return this.unknownInFlight && !this.settled.has(key);
  }

  /**
   * This owner has held the Lease a whole landing window (by its own clock) and `listVersion` is
   * the resourceVersion of a consistent list made since: whatever a predecessor admitted has landed
   * or never will, so a count at or past it holds it. Only the first call counts.
   */
  heldLongEnough(listVersion: string): void {
    this.settledFrom ??= listVersion;
  }

  /** Whether heldLongEnough was given its list: quotas settle as their counts reach it. */
  get settling(): boolean {
    return this.settledFrom !== undefined;
  }

  /** Whether a predecessor's ghosts are gone: the Lease need not carry them on. */
  ghostsSettled(quotaKeys: readonly string[]): boolean {
    return this.ghosts.size === 0 && (!this.unknownInFlight || quotaKeys.every((k) => this.settled.has(k)));
  }

  /** The quota as the owner decides on it: the reconciler's count plus what may still land. */
  decidingState(namespace: string, state: QuotaState): QuotaState {
    const key = ledgerKey(namespace, state.name);
    const inFlight = addLists(this.pending.get(key) ?? {}, this.ghosts.get(key) ?? {});
    return { ...state, reserved: addLists(state.reserved, inFlight), reservations: [] };
  }

  /** What `change` of the binding may rely on, on each of the namespace's quotas (an AdmissionItem's `claimed`). */
  claimedBy(
    binding: BindingKey,
    change: Change,
    quotaNames: readonly string[],
  ): Record<string, ResourceList> {
    const record = this.records.get(bindingKeyString(binding))?.record;
    return Object.fromEntries(
      quotaNames.map((name) => [name, claimedFor(record, ledgerKey(binding.namespace, name), change)]),
    );
  }

  /**
   * Records an admitted change that is not a dry run, with what it claimed per quota name
   * (BatchResult.claims): before its answer is sent. One that raised nothing still joins a record
   * its binding has (a re-review of the same change is admitted again, its window starting anew).
   */
  admitted(
    binding: BindingKey,
    attempt: Change & Pick<Attempt, 'admittedAt'>,
    claims: ReadonlyMap<string, QuotaClaim>,
  ): void {
    const id = bindingKeyString(binding);
    const held = this.records.get(id);
    if (held === undefined && claims.size === 0) return;
    const byKey = new Map([...claims].map(([name, claim]) => [ledgerKey(binding.namespace, name), claim]));
    for (const [key, claim] of byKey) {
      this.pending.set(key, addLists(this.pending.get(key) ?? {}, claim.increase));
      this.admittedTotal.set(key, addLists(this.admittedTotal.get(key) ?? {}, claim.increase));
    }
    this.records.set(id, {
      binding: { namespace: binding.namespace, name: binding.name },
      record: joinAttempt(held?.record, attempt, byKey),
    });
  }

  /** The binding watch showed an object of the record's name (or its deletion). */
  seen(binding: BindingKey, seen: BindingSeen): void {
    const held = this.records.get(bindingKeyString(binding));
    if (held) held.record = decideBy(held.record, seen);
  }

  /** Bindings with an attempt the landing window has passed undecided: each needs a consistent read. */
  needingRead(now: number, windowMs: number): BindingKey[] {
    return [...this.records.values()].filter((r) => needsRead(r.record, now, windowMs)).map((r) => r.binding);
  }

  /** A consistent read of the binding at `readVersion`, made at `now`, decides its old attempts. */
  read(binding: BindingKey, readVersion: string, now: number, windowMs: number): void {
    const held = this.records.get(bindingKeyString(binding));
    if (held) held.record = decideByRead(held.record, readVersion, now, windowMs);
  }

  /**
   * The quota's count (its `status.observedBindingsVersion`) as the owner's quota watch shows it:
   * every record whose outcomes it holds stops claiming on it.
   */
  counted(namespace: string, quotaName: string, countedVersion: string | undefined): void {
    const key = ledgerKey(namespace, quotaName);
    if (countedVersion !== undefined) {
      const newest = this.newestCount.get(key);
      if (newest === undefined || isAtOrAfterVersion(countedVersion, newest)) {
        this.newestCount.set(key, countedVersion);
        this.caughtUp.add(key);
      }
    }
    const from = this.settledFrom;
    if (from !== undefined && isAtOrAfterVersion(countedVersion, from)) {
      this.settled.add(key);
      this.ghosts.delete(key);
    }
    for (const [id, held] of this.records) {
      const increase = held.record.increases.get(key);
      if (increase === undefined) continue;
      const next = retireOn(held.record, key, countedVersion);
      if (next === held.record) continue;
      const left = removeZeros(subtractLists(this.pending.get(key) ?? {}, increase));
      if (Object.keys(left).length === 0) this.pending.delete(key);
      else this.pending.set(key, left);
      if (next === undefined) this.records.delete(id);
      else held.record = next;
    }
  }

  /**
   * Quota keys (of `known`, and of the records and ghosts) whose next count lets the ledger move on: a
   * record whose every attempt is decided waits for a count at or past them; once this owner held the
   * Lease long enough, a quota with ghosts or not settled after a crash waits for a count at or past
   * `settledFrom`. A quiet quota's status is not written for its stamp alone, so the owner asks for
   * these counts (plan, gap 8).
   */
  awaitingCount(known: readonly string[]): string[] {
    const keys = new Set<string>();
    for (const { record } of this.records.values())
      if (record.attempts.every((a) => a.decidedAt !== undefined))
        for (const key of record.increases.keys()) keys.add(key);
    if (this.settledFrom !== undefined) {
      for (const key of this.ghosts.keys()) keys.add(key);
      if (this.unknownInFlight) for (const key of known) if (!this.settled.has(key)) keys.add(key);
    }
    return [...keys];
  }

  /**
   * The quota is deleted: it limits nothing now, so nothing is claimed, settled or waited for on it.
   * One made again under its name is a new quota, counted from its own first list (as a quota made
   * while changes land is in every mode).
   */
  forget(namespace: string, quotaName: string): void {
    const key = ledgerKey(namespace, quotaName);
    this.pending.delete(key);
    this.ghosts.delete(key);
    this.newestCount.delete(key);
    this.caughtUp.delete(key);
    this.settled.delete(key);
    this.admittedTotal.delete(key);
    this.retired.delete(key);
    this.budgets.delete(key);
    this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
    for (const [id, held] of this.records) {
      if (!held.record.increases.has(key)) continue;
      const increases = new Map(held.record.increases);
      increases.delete(key);
      if (increases.size === 0) this.records.delete(id);
      else held.record = { ...held.record, increases };
    }
  }

  /**
   * Whether every increase this owner admitted that a successor could find in flight is within the
   * budgets the Lease holds: an admitted change is answered only once it is.
   */
  get withinBudget(): boolean {
    for (const [key, total] of this.admittedTotal) {
      const consumed = subtractLists(total, this.retired.get(key) ?? {});
      if (Object.keys(excessOf(consumed, this.budgets.get(key) ?? {})).length > 0) return false;
    }
    return true;
  }

  /**
   * The budgets to write with the Lease now: twice what this owner has in flight per quota (none
   * where nothing is), so that a burst needs few writes and an idle owner leaves nothing for a
   * successor to charge. Until the write is known to have landed, decisions keep within the lesser of
   * these and the budgets before, counting from the last write known to have landed.
   */
  budgetWrite(): BudgetWrite {
    const write: BudgetWrite = { budgets: new Map(), retired: new Map(), generations: new Map() };
    for (const key of new Set([...this.admittedTotal.keys(), ...this.budgets.keys()])) {
      const pending = excessOf(this.pending.get(key) ?? {}, {});
      write.retired.set(key, subtractLists(this.admittedTotal.get(key) ?? {}, pending));
      write.generations.set(key, this.generation.get(key) ?? 0);
      if (Object.keys(pending).length > 0) write.budgets.set(key, addLists(pending, pending));
      const least = leastOf(this.budgets.get(key) ?? {}, write.budgets.get(key) ?? {});
      if (Object.keys(least).length > 0) this.budgets.set(key, least);
      else this.budgets.delete(key);
    }
    return write;
  }

  /** The write begun by budgetWrite() landed: the Lease holds its budgets (of quotas not forgotten since). */
  budgetWritten(write: BudgetWrite): void {
    for (const [key, generation] of write.generations) {
      if ((this.generation.get(key) ?? 0) !== generation) continue;
      const budget = write.budgets.get(key);
      if (budget) this.budgets.set(key, budget);
      else this.budgets.delete(key);
      this.retired.set(key, write.retired.get(key)!);
    }
  }

  /** Per quota key, what may still land: the pending increases and the ghosts (handed on at release). */
  inFlight(): Map<string, ResourceList> {
    const all = new Map(this.ghosts);
    for (const [key, amount] of this.pending) all.set(key, addLists(all.get(key) ?? {}, amount));
    return all;
  }

  /** Per quota key, the newest count this owner's claims may have been retired against: handed on. */
  countedUpTo(): Map<string, string> {
    return new Map(this.newestCount);
  }

  /** How many bindings have a record: the claims in flight. */
  get size(): number {
    return this.records.size;
  }
}

/** Per resource, the lesser of the two budgets (a resource missing from either: none). */
function leastOf(a: ResourceList, b: ResourceList): ResourceList {
  return removeZeros(subtractLists(a, excessOf(a, b)));
}
