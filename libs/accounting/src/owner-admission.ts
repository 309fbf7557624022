/**
 * Admission by the owner (design C, experimental: ADMISSION_MODE=owner; docs/concepts/admission-owner.md):
 * the process holding the admission Lease decides every change that asks something of a quota from
 * memory, against the quotas as its watch shows them (the reconciler's counts) plus its ledger's
 * claims in flight, with no write to the Karmada API server. Another process forwards such changes
 * to the holder (`forwardTo`; the webhook's admission-peer.ts), and refuses them (fail closed) while
 * no holder is known. `tick()` runs the Lease, the sweep of undecided attempts and the requests for
 * counts.
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { formatList, parseResourceList } from '#quantity';
import { isResourceVersion, quotaName, type QuotaClaim } from '#quota';
import type { AdmissionLease, AdmissionLeaseState, AdmissionRecord, LeaseStep } from './admission-lease.js';
import {
  failClosed,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BindingChange,
} from './admission-strategy.js';
import { decide, projected, type SelectionOf } from './cas-round.js';
import type { ReconcileTarget } from '#usage';
import { CountRequests } from './count-requests.js';
import { ledgerKey, OwnerLedger, type BudgetWrite } from './owner-ledger.js';

/** The quotas as the owner's watches show them. */
export interface OwnerQuotaView {
  /** The quotas limiting the namespace; undefined while the watches are not listed and running. */
  watchedIn(namespace: string): readonly KarmadaQuota[] | undefined;
  /**
   * Every quota watched: a new ledger starts from their counts, and a predecessor's ghosts are settled
   * only once each of them is counted. Undefined while the watches are not listed and running: a
   * quota not known yet may hold a ghost.
   */
  allWatched(): readonly KarmadaQuota[] | undefined;
  selection: SelectionOf;
}

/** What the owner asks of the Karmada API server and the reconciler, off the admission path. */
export interface OwnerHost {
  /** The resourceVersion of a consistent read begun now. */
  consistentVersion(): Promise<string>;
  /** Asks the reconciler for a count of the quota, written even when only its stamp moves. */
  requestCount(target: ReconcileTarget): Promise<void>;
}

export interface OwnerTiming {
  ttlSeconds: number;
  /** The longest an admitted change takes to be stored, or never (the owner's landing window). */
  landingWindowSeconds: number;
  /** Epoch ms, for claim expirations in decisions. */
  clock: () => number;
  /** Monotonic ms (performance.now): the Lease and the landing window are judged by it. */
  monotonic: () => number;
}

export class OwnerAdmission implements AdmissionStrategy {
  private ledger?: OwnerLedger;
  private readonly countRequests: CountRequests;
  private stopping = false;

  constructor(
    private readonly lease: AdmissionLease,
    private readonly view: OwnerQuotaView,
    private readonly host: OwnerHost,
    private readonly timing: OwnerTiming,
    warn: (message: string) => void = () => {},
  ) {
    this.countRequests = new CountRequests((target) => host.requestCount(target), timing.monotonic, warn);
  }

  /**
   * Decided at once, with no await: no two decisions start from one sum of claims in flight. An
   * admitted change beyond the in-flight budget the Lease holds is answered once a larger one is
   * written (its claim recorded meanwhile, so later decisions count it).
   */
  admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome> {
    const [decided, increased] = this.decideNow(change, answerBy);
    const ledger = this.ledger;
    if (!increased || ledger === undefined || ledger.withinBudget) return Promise.resolve(decided);
    return this.budgetRaised(ledger).then((raised) =>
      raised && this.timing.clock() < answerBy && this.lease.owns()
        ? decided
        : failClosed('the admission owner could not write a larger in-flight budget to its Lease in time'),
    );
  }

  /** The outcome, and whether an admitted real change claimed an increase (recorded in the ledger). */
  private decideNow(change: BindingChange, answerBy: number): [AdmissionOutcome, boolean] {
    const now = this.timing.clock();
    if (now >= answerBy) return [failClosed('the admission owner could not decide in time'), false];
    const ledger = this.ledger;
    if (this.stopping)
      return [
        failClosed('this webhook process is stopping and has handed the admission Lease on; retry'),
        false,
      ];
    if (ledger === undefined || !this.lease.owns())
      return [
        failClosed(
          'no webhook process holds the admission Lease now (starting, or taking over from an owner that stopped: about one Lease duration)',
        ),
        false,
      ];
    const { binding } = change.item;
    const { namespace } = binding;
    const oldVersion = change.old?.object.metadata?.resourceVersion;
    if (binding.uid === undefined || (change.old !== undefined && !isResourceVersion(oldVersion)))
      return [
        failClosed(
          'the review lacks the uid or the stored resourceVersion the admission owner tracks changes by',
        ),
        false,
      ];
    const quotas = this.view.watchedIn(namespace);
    if (quotas === undefined)
      return [
        failClosed(
          'the admission owner is not watching the quotas (starting, or its watch of the Karmada API server failed)',
        ),
        false,
      ];
    const projection = projected(quotas, namespace, this.view.selection);
    if (projection === undefined)
      return [
        failClosed(
          `a quota limiting ${namespace} has a status that cannot be read (see the reconciler's log)`,
        ),
        false,
      ];
    const attempt = { uid: binding.uid, ...(change.old ? { oldVersion: oldVersion! } : {}) };
    // Decided as if real, so that a dry run is answered as its change would be (the refusals after a
    // takeover included); only a real one is recorded.
    const result = decide(
      { quotas, states: projection.states.map((state) => ledger.decidingState(namespace, state)) },
      [{ ...change, item: { ...change.item, dryRun: false } }],
      now,
      this.timing,
      [ledger.claimedBy(binding, attempt, quotas.map(quotaName))],
    );
    const decision = result.decisions[0]!;
    if (!decision.allowed) return [decision, false];
    const claims = result.claims[0] ?? new Map<string, QuotaClaim>();
    const waiting = [...claims].find(
      ([quota, claim]) => Object.keys(claim.increase).length > 0 && ledger.refusesIncreases(namespace, quota),
    );
    if (waiting)
      return [
        failClosed(
          `the admission owner took over from the batched webhooks or from an owner that did not hand over, so increases on ${waiting[0]} wait until the reconciler has counted what they admitted (about the landing window)`,
        ),
        false,
      ];
    if (change.item.dryRun) return [decision, false];
    ledger.admitted(binding, { ...attempt, admittedAt: this.timing.monotonic() }, claims);
    return [decision, [...claims.values()].some((claim) => Object.keys(claim.increase).length > 0)];
  }

  /** A quota as the watch reports it: its count retires the claims it holds; a deleted one is forgotten. */
  quotaObserved(quota: KarmadaQuota, deleted = false): void {
    if (deleted) return this.ledger?.forget(quota.metadata?.namespace ?? '', quotaName(quota));
    if (this.ledger) countIn(this.ledger, quota);
  }

  /** A binding as the watch reports it (or its deletion): it decides the attempts of its name it shows. */
  bindingObserved(binding: ResourceBinding, deleted: boolean): void {
    const { namespace, name, uid, resourceVersion } = binding.metadata ?? {};
    if (!namespace || !name || !uid || !isResourceVersion(resourceVersion)) return;
    this.ledger?.seen({ namespace, name }, { uid, resourceVersion, deleted });
  }

  /** One round of the Lease, the sweep and the count requests; not to be run twice at once. */
  async tick(): Promise<LeaseStep> {
    const ledger = this.ledger;
    let write: BudgetWrite | undefined;
    const step = await this.lease.step((carried) => {
      if (ledger === undefined) return carried;
      write = ledger.budgetWrite();
      return recordWith(carried, ledger, write);
    });
    if (step === 'renewed' && write) ledger?.budgetWritten(write);
    if (step === 'acquired') this.ledger = this.takeOver();
    if (step === 'lost') this.ledger = undefined;
    await this.sweep();
    return step;
  }

  /**
   * While deciding: the consistent read that starts settling a predecessor's ghosts, the read of
   * attempts past the landing window, and the requests for counts (part of every tick).
   */
  async sweep(): Promise<void> {
    const ledger = this.ledger;
    if (ledger === undefined || !this.lease.owns()) return;
    const windowMs = this.timing.landingWindowSeconds * 1000;
    const carried = this.lease.carried();
    const carriesGhosts = carried && (carried.unknownInFlight || Object.keys(carried.ghosts).length > 0);
    // With what is in flight unknown, a batched webhook may have read the Lease's mark until the
    // write that took it was answered, and decides until its renew deadline after that read
    // (batched-fence.ts): the landing window runs a Lease duration past the answer, the margin the
    // lease assumption gives clock rates.
    const heldLongEnough = carried?.unknownInFlight
      ? (this.lease.heldSinceAnsweredMs() ?? 0) >= windowMs + this.lease.durationMs
      : (this.lease.tenureMs() ?? 0) >= windowMs;
    if (carriesGhosts && !ledger.settling && heldLongEnough)
      ledger.heldLongEnough(await this.host.consistentVersion());
    const keys = this.view.allWatched()?.map((q) => ledgerKey(q.metadata?.namespace ?? '', quotaName(q)));
    if (carriesGhosts && keys !== undefined && ledger.ghostsSettled(keys)) this.lease.dropGhosts();
    const readAt = this.timing.monotonic();
    const needing = ledger.needingRead(readAt, windowMs);
    if (needing.length > 0) {
      const version = await this.host.consistentVersion();
      for (const binding of needing) ledger.read(binding, version, readAt, windowMs);
    }
    await this.countRequests.ask(ledger.awaitingCount(keys ?? []));
  }

  /** Writes larger budgets until they cover what was admitted; false when a write fails or the Lease is lost. */
  private async budgetRaised(ledger: OwnerLedger): Promise<boolean> {
    while (!ledger.withinBudget) {
      if (this.ledger !== ledger) return false;
      let write: BudgetWrite | undefined;
      const written = await this.lease.persist((carried) => {
        if (ledger.withinBudget) return undefined; // a raise queued before this one covered it
        write = ledger.budgetWrite();
        return recordWith(carried, ledger, write);
      });
      if (!written) return false;
      if (write) ledger.budgetWritten(write);
    }
    return true;
  }

  /** Hands the Lease on with what is in flight (a graceful stop); false when it could not. */
  async release(): Promise<boolean> {
    this.stopping = true;
    const ledger = this.ledger;
    this.ledger = undefined;
    if (ledger === undefined) return false;
    const inFlight = Object.fromEntries([...ledger.inFlight()].map(([key, list]) => [key, formatList(list)]));
    return this.lease.release(inFlight, Object.fromEntries(ledger.countedUpTo()));
  }

  /** Whether this process may decide now: it holds the Lease and renewed it in time. */
  get deciding(): boolean {
    return this.ledger !== undefined && this.lease.owns();
  }

  /** How long until the Lease another process holds expires by this clock, unless renewed meanwhile. */
  get leaseExpiresInMs(): number | undefined {
    return this.lease.expiresInMs();
  }

  /** A version of the Lease its watch delivered (AdmissionLease.observe). */
  leaseObserved(lease: AdmissionLeaseState | undefined): void {
    this.lease.observe(lease);
  }

  /** Where another process holding the Lease answers forwarded changes; undefined while this one decides. */
  get forwardTo(): string | undefined {
    return this.deciding ? undefined : this.lease.holderAddress();
  }

  /** Whether this tenure began by taking the Lease from an owner that stopped without handing over. */
  get refusesAfterTakeover(): boolean {
    return this.lease.carried()?.unknownInFlight ?? false;
  }

  /** How many bindings have claims in flight. */
  get claimsInFlight(): number {
    return this.ledger?.size ?? 0;
  }

  /** A ledger for a new tenure: what the Lease carried, and the counts the watch shows now. */
  private takeOver(): OwnerLedger {
    const carried = this.lease.carried()!;
    const ledger = new OwnerLedger({
      ghosts: new Map(
        Object.entries(carried.ghosts).map(([key, wire]) => [key, parseResourceList(wire, 'ghost').list]),
      ),
      unknownInFlight: carried.unknownInFlight,
      counted: new Map(Object.entries(carried.counted)),
    });
    for (const quota of this.view.allWatched() ?? []) countIn(ledger, quota);
    return ledger;
  }
}

/** The Lease record with the owner's budgets and the newest counts it retired claims against. */
function recordWith(carried: AdmissionRecord, ledger: OwnerLedger, write: BudgetWrite): AdmissionRecord {
  return {
    ...carried,
    counted: Object.fromEntries(ledger.countedUpTo()),
    budgets: Object.fromEntries([...write.budgets].map(([key, list]) => [key, formatList(list)])),
  };
}

/** The quota's count as the watch shows it, given to the ledger. */
function countIn(ledger: OwnerLedger, quota: KarmadaQuota): void {
  ledger.counted(quota.metadata?.namespace ?? '', quotaName(quota), quota.status?.observedBindingsVersion);
}
