/**
 * The admission owner's Lease (design C, docs/development/plans/admission-owner.md, "The Lease"): one
 * coordination.k8s.io Lease names the webhook process that decides every increase from memory. As
 * in client-go's leader election, expiry is judged by each process's own monotonic clock from when it
 * first saw the Lease's current version, and the holder stops deciding at its renew deadline, before
 * anyone may take over: sound while clock rates differ by less than duration / renew deadline.
 * The Lease also carries what the next owner must charge (the ghosts), fenced by the same writes.
 */

import { addLists, excessOf, formatList, parseResourceList } from '#quantity';
import type { AdmissionLeaseState, AdmissionRecord, LeaseApi } from '#service-kit';

// The Lease's wire contract lives beside its Kubernetes implementation (KubeAdmissionLeaseApi), as
// QuotaStore does: service-kit holds the adapters and may not depend on this lib.
export {
  ADMISSION_ANNOTATION,
  ADMISSION_LEASE_NAME,
  type AdmissionLeaseState,
  type AdmissionRecord,
  type LeaseApi,
} from '#service-kit';

export interface AdmissionLeaseOptions {
  identity: string;
  address: string;
  durationMs: number;
  /** Below durationMs: the holder decides nothing once this long has passed since its last renew began. */
  renewDeadlineMs: number;
}

/** This process's tenure: from its acquisition, by its own clock. */
interface Tenure {
  since: number;
  /** When the last successful write of the Lease began (a renew counts from its start). */
  renewedAt: number;
  /** When the write that took the Lease was answered: another read may have been served until then. */
  answeredAt: number;
  resourceVersion: string;
  transitions: number;
  record: AdmissionRecord;
}

export type LeaseStep = 'acquired' | 'renewed' | 'lost' | 'held elsewhere' | 'unreachable';

/**
 * One process's view of the admission Lease. `step()` renews it when held, or takes it when free or
 * expired; `owns()` says whether an increase may be decided now; `release()` hands it on.
 */
export class AdmissionLease {
  private tenure?: Tenure;
  /** The Lease's version as last read, and when it was first seen (own clock): its expiry runs from there. */
  private seen?: { resourceVersion: string; at: number };
  /** The Lease as last read, when another process held it. */
  private heldElsewhere?: AdmissionLeaseState;
  private releasing = false;
  /** The Lease's reads and writes, one at a time: a write is a compare-and-swap on the version last written. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly api: LeaseApi,
    private readonly options: AdmissionLeaseOptions,
    /** Monotonic milliseconds (performance.now in the webhook). */
    private readonly clock: () => number,
  ) {}

  /** Whether this process may decide an increase now: it holds the Lease and renewed it in time. */
  owns(): boolean {
    return (
      !this.releasing &&
      this.tenure !== undefined &&
      this.clock() < this.tenure.renewedAt + this.options.renewDeadlineMs
    );
  }

  /** How long this process has held the Lease without interruption; undefined when it does not. */
  tenureMs(): number | undefined {
    return this.owns() ? this.clock() - this.tenure!.since : undefined;
  }

  /**
   * How long since the write that took the Lease was answered, while this process holds it: reads
   * of the Lease served before the answer may still have shown its state before.
   */
  heldSinceAnsweredMs(): number | undefined {
    return this.owns() ? this.clock() - this.tenure!.answeredAt : undefined;
  }

  /** The Lease duration this process assumes. */
  get durationMs(): number {
    return this.options.durationMs;
  }

  /** The ghosts this owner carries (taken over with the Lease, until it drops them). */
  carried(): AdmissionRecord | undefined {
    return this.tenure?.record;
  }

  /**
   * Where the process holding the Lease answers forwarded decisions, as last read: undefined while this
   * process holds it, while it is free or expired, or unread (the caller then fails closed).
   */
  holderAddress(): string | undefined {
    const lease = this.heldElsewhere;
    if (lease === undefined || this.expired(lease, this.clock())) return undefined;
    return lease.record.address;
  }

  /**
   * How long until the Lease another process holds expires by this process's clock, unless it is
   * renewed meanwhile (a round then may take it); undefined when none holds it elsewhere.
   */
  expiresInMs(): number | undefined {
    const lease = this.heldElsewhere;
    if (lease === undefined || this.seen === undefined) return undefined;
    return leaseExpiry(lease, this.seen.at, this.options.durationMs) - this.clock();
  }

  /**
   * A version of the Lease seen between rounds (its watch): expiry runs from when a version was first
   * seen, so seeing a renew sooner than the next read lets a successor take over sooner after a crash.
   * A version older than one a round read starts over (its expiry only later); the next round reads.
   */
  observe(lease: AdmissionLeaseState | undefined): void {
    this.see(lease, this.clock());
  }

  /** Forgets the ghosts carried: the next renew writes the record without them. */
  dropGhosts(): void {
    if (this.tenure) this.tenure.record = { ...this.tenure.record, ghosts: {}, unknownInFlight: false };
  }

  /**
   * One round: renew, or acquire when the Lease is free or expired by this process's clock. A renew
   * writes `next(carried())` when given (the holder's budgets and counts, made as the write begins).
   */
  step(next?: (carried: AdmissionRecord) => AdmissionRecord): Promise<LeaseStep> {
    return this.exclusive(() => this.round(next));
  }

  /**
   * Writes `next(carried())` to the Lease held now, as a renew does, without waiting for the next
   * round (a larger budget before it is used); false when not held or the write failed. `next`
   * returns undefined when there is nothing to write any more (a write queued before covered it).
   */
  persist(next: (carried: AdmissionRecord) => AdmissionRecord | undefined): Promise<boolean> {
    return this.exclusive(async () => {
      const tenure = this.tenure;
      if (tenure === undefined || !this.owns()) return false;
      const started = this.clock();
      const record = next(tenure.record);
      if (record === undefined) return true;
      return this.write(
        {
          holder: this.options.identity,
          transitions: tenure.transitions,
          resourceVersion: tenure.resourceVersion,
        },
        record,
        started,
      );
    });
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  private async round(next?: (carried: AdmissionRecord) => AdmissionRecord): Promise<LeaseStep> {
    if (this.releasing) return 'held elsewhere';
    const started = this.clock();
    let lease: AdmissionLeaseState | undefined;
    try {
      lease = await this.api.read();
    } catch {
      return 'unreachable'; // the holder's address stays known until the Lease would expire
    }
    const now = this.clock();
    this.see(lease, now);

    // Only this process writes its identity (one per process): a Lease naming it is this one's, even
    // when the answer to its last write was lost.
    if (lease?.holder === this.options.identity) {
      const renewing = this.tenure !== undefined;
      const record = this.tenure ? (next?.(this.tenure.record) ?? this.tenure.record) : lease.record;
      const written = await this.write(lease, record, started);
      if (written) return renewing ? 'renewed' : 'acquired';
      return this.tenure === undefined ? 'lost' : 'unreachable';
    }
    if (this.tenure !== undefined) {
      this.tenure = undefined;
      return 'lost';
    }
    if (lease !== undefined && lease.holder !== '' && !this.expired(lease, now)) return 'held elsewhere';
    // A holder that let the Lease expire did not hand over: what it admitted may still land, within
    // its budgets when it wrote them.
    const crashed = lease !== undefined && lease.holder !== '';
    const budgets = crashed ? lease?.record.budgets : {};
    const record: AdmissionRecord = {
      address: this.options.address,
      ghosts: addWireLists(lease?.record.ghosts ?? {}, budgets ?? {}),
      unknownInFlight: budgets === undefined || (lease?.record.unknownInFlight ?? false),
      counted: lease?.record.counted ?? {},
      budgets: {}, // nothing admitted yet
    };
    return (await this.write(lease, record, this.clock())) ? 'acquired' : 'held elsewhere';
  }

  /**
   * Hands the Lease on (a graceful stop): decides nothing more, then writes it free with `inFlight`
   * (per quota key, what may still land: the ledger's claims and the ghosts it has not settled), and
   * `counted` (per quota key, the count its claims were retired against: the ledger's countedUpTo).
   */
  release(
    inFlight: Record<string, Record<string, string>>,
    counted: Record<string, string>,
  ): Promise<boolean> {
    this.releasing = true;
    return this.exclusive(() => this.handOver(inFlight, counted));
  }

  private async handOver(
    inFlight: Record<string, Record<string, string>>,
    counted: Record<string, string>,
  ): Promise<boolean> {
    const tenure = this.tenure;
    if (tenure === undefined) return false;
    const lease = await this.api.read().catch(() => undefined);
    if (lease?.holder !== this.options.identity || lease.resourceVersion !== tenure.resourceVersion)
      return false;
    try {
      await this.api.write(
        {
          holder: '',
          durationSeconds: lease.durationSeconds,
          transitions: lease.transitions,
          record: {
            ghosts: inFlight,
            unknownInFlight: tenure.record.unknownInFlight,
            counted,
          },
        },
        lease.resourceVersion,
      );
      this.tenure = undefined;
      return true;
    } catch {
      return false; // it expires instead, and the successor treats it as a crash
    }
  }

  private see(lease: AdmissionLeaseState | undefined, now: number): void {
    if (lease !== undefined && this.seen?.resourceVersion !== lease.resourceVersion)
      this.seen = { resourceVersion: lease.resourceVersion, at: now };
    if (lease === undefined) this.seen = undefined;
    this.heldElsewhere =
      lease !== undefined && lease.holder !== '' && lease.holder !== this.options.identity
        ? lease
        : undefined;
  }

  /** Whether the Lease's version has not changed for its duration, as this process saw it. */
  private expired(lease: AdmissionLeaseState, now: number): boolean {
    return this.seen !== undefined && now >= leaseExpiry(lease, this.seen.at, this.options.durationMs);
  }

  /** Writes the Lease held by this process; false when another write came first or it failed. */
  private async write(
    lease: Pick<AdmissionLeaseState, 'holder' | 'transitions' | 'resourceVersion'> | undefined,
    record: AdmissionRecord,
    startedAt: number,
  ): Promise<boolean> {
    const taking = lease?.holder !== this.options.identity;
    try {
      const written = await this.api.write(
        {
          holder: this.options.identity,
          durationSeconds: Math.ceil(this.options.durationMs / 1000),
          transitions: (lease?.transitions ?? 0) + (taking && lease !== undefined ? 1 : 0),
          record,
        },
        lease?.resourceVersion,
      );
      this.seen = { resourceVersion: written.resourceVersion, at: this.clock() };
      this.tenure = {
        since: this.tenure?.since ?? startedAt,
        renewedAt: startedAt,
        answeredAt: this.tenure?.answeredAt ?? this.clock(),
        resourceVersion: written.resourceVersion,
        transitions: written.transitions,
        record,
      };
      return true;
    } catch {
      // Even a conflict keeps the tenure: this process's own write, delayed past its timeout, may have
      // landed first. The next read tells (lost if another holds it), and owns() ends at the deadline.
      return false;
    }
  }
}

/**
 * When a Lease whose version this process first saw at `seenAt` (its monotonic clock) expires unless
 * renewed: after the longer of the Lease's own duration and `ownDurationMs`, the one this process
 * assumes. Expiry is never judged on the Lease's wall-clock times.
 */
export function leaseExpiry(
  lease: Pick<AdmissionLeaseState, 'durationSeconds'>,
  seenAt: number,
  ownDurationMs: number,
): number {
  return seenAt + Math.max(lease.durationSeconds * 1000, ownDurationMs);
}

/** Per quota key, the sum of two records' lists (ghosts and budgets), in wire form. */
function addWireLists(
  a: Record<string, Record<string, string>>,
  b: Record<string, Record<string, string>>,
): Record<string, Record<string, string>> {
  const sum: Record<string, Record<string, string>> = { ...a };
  // Only what is above zero is charged: a negative budget would free room.
  for (const [key, list] of Object.entries(b))
    sum[key] = formatList(
      addLists(
        parseResourceList(sum[key] ?? {}, 'ghost').list,
        excessOf(parseResourceList(list, 'budget').list, {}),
      ),
    );
  return sum;
}
