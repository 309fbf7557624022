/** A test double of the Lease on the Karmada API server, for the pure cores' table tests. */
import { ConflictError } from '#service-kit';
import type { AdmissionLeaseState, LeaseApi } from '../admission-lease.js';

/** The Lease as the API server keeps it: compare-and-swap on resourceVersion, faults on demand. */
export class StoredLease implements LeaseApi {
  lease?: AdmissionLeaseState;
  private version = 1;
  /** The next write: applied but its answer lost, or not applied at all. */
  fault?: 'answer lost' | 'not applied';
  /** Every read fails (the API server unreachable) while set. */
  failReads = false;
  /** Every write fails without being applied while set. */
  failWrites = false;
  private held?: { until: Promise<void>; reached: () => void };

  /**
   * Holds the next writes: `reached` settles once one is in flight, and it lands (or fails) when
   * `land` is called.
   */
  hold(): { reached: Promise<void>; land: () => void } {
    let land!: () => void;
    let reached!: () => void;
    const until = new Promise<void>((resolve) => (land = resolve));
    const reachedP = new Promise<void>((resolve) => (reached = resolve));
    this.held = { until, reached };
    return {
      reached: reachedP,
      land: () => {
        this.held = undefined;
        land();
      },
    };
  }

  async read() {
    if (this.failReads) throw new Error('connect ECONNREFUSED');
    return this.lease && structuredClone(this.lease);
  }

  async write(next: Omit<AdmissionLeaseState, 'resourceVersion'>, expected: string | undefined) {
    if (this.held) {
      this.held.reached();
      await this.held.until;
    }
    if (this.failWrites) throw new Error('503');
    const fault = this.fault;
    this.fault = undefined;
    if (fault === 'not applied') throw new Error('503');
    if (this.lease?.resourceVersion !== expected) throw new ConflictError('the Lease changed');
    this.lease = { ...structuredClone(next), resourceVersion: String(++this.version) };
    if (fault === 'answer lost') throw new Error('connection reset');
    return structuredClone(this.lease);
  }
}
