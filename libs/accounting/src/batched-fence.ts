/**
 * The fence between the batched modes and the admission owner (docs/concepts/admission-owner.md#switching-modes),
 * so that webhooks of both modes may run at once during a rolling switch. The admission Lease says
 * which mode decides: held by an owner, or free and marked `batched` in its record. A batched webhook
 * decides an increase only while a read (or its own write) that showed the mark began less than the
 * renew deadline ago by its own clock, as an owner stops at its renew deadline; and on a quota only
 * once that quota's count is at or past the version the mark names, so that what an owner admitted
 * before the mark is counted. The mark is written a landing window after the owner's tenure ended
 * (released, or expired by this clock): by then all it admitted has landed or never will. The mark
 * says `unknownInFlight`, so an owner taking it waits a landing window and a count, as after a crash:
 * by then the batched claims written meanwhile are in the statuses it decides on.
 */

import { describeError, type KarmadaQuota } from '#api';
import { isAtOrAfterVersion, quotaName } from '#quota';
import {
  ADMISSION_LEASE_NAME,
  ConflictError,
  type AdmissionLeaseState,
  type AdmissionRecord,
  type LeaseApi,
} from '#service-kit';
import { leaseExpiry } from './admission-lease.js';
import { failClosed, type AdmissionStrategy } from './admission-strategy.js';
import { ledgerKey } from './owner-ledger.js';

export interface BatchedFenceOptions {
  /** The Lease duration this process assumes (the longer of it and the Lease's own is waited). */
  durationMs: number;
  /** A read showing the batched modes' mark is good this long from when it began (below durationMs). */
  renewDeadlineMs: number;
  /** After an owner's tenure ended, how long until all it admitted has landed or never will. */
  landingWindowMs: number;
}

export interface FenceHost {
  /** The resourceVersion of a consistent read of the ResourceBindings (the Karmada API server's now). */
  consistentVersion(): Promise<string>;
}

/** What the last round saw: the mode deciding, or why it is not known. */
export type FenceView =
  | { mode: 'batched'; countedFrom?: string }
  | { mode: 'owner'; holder: string }
  | { mode: 'owner ended'; waitMs: number }
  | { mode: 'unknown'; problem: string };

export class BatchedFence {
  /** The Lease's version as last read, and when it was first seen (own clock): expiry runs from there. */
  private seen?: { resourceVersion: string; at: number };
  /** The last read or write showing the mark: when it began, and the version counts must reach. */
  private marked?: { at: number; countedFrom?: string };
  /** When this process first saw the owner's tenure over, and the Lease's state then (a version, or absent). */
  private ownerEnded?: { state: string; at: number };
  private last: FenceView = { mode: 'unknown', problem: 'the admission Lease has not been read yet' };

  constructor(
    private readonly api: LeaseApi,
    private readonly host: FenceHost,
    private readonly options: BatchedFenceOptions,
    /** Monotonic milliseconds. */
    private readonly clock: () => number,
  ) {}

  /** One round: read the Lease; mark it for the batched modes when absent, or once an owner's tenure has settled. */
  async step(): Promise<FenceView> {
    this.last = await this.round();
    return this.last;
  }

  private async round(): Promise<FenceView> {
    const started = this.clock();
    let lease: AdmissionLeaseState | undefined;
    try {
      lease = await this.api.read();
    } catch (err) {
      return unknown(`the admission Lease could not be read: ${describeError(err)}`);
    }
    const now = this.clock();
    if (lease !== undefined && this.seen?.resourceVersion !== lease.resourceVersion)
      this.seen = { resourceVersion: lease.resourceVersion, at: now };
    const batched = lease?.holder === '' ? lease.record.batched : undefined;
    if (batched !== undefined) {
      this.marked = { at: started, countedFrom: batched.countedFrom };
      this.ownerEnded = undefined;
      return { mode: 'batched', countedFrom: batched.countedFrom };
    }
    // An owner holds it, or held it last: the batched modes decide nothing from this read on.
    this.marked = undefined;
    if (lease !== undefined && lease.holder !== '' && !this.expired(lease, now)) {
      this.ownerEnded = undefined;
      return { mode: 'owner', holder: lease.holder };
    }
    // None this process ever saw: no owner decided that it could know of (deleting the Lease while
    // an owner holds it is outside the protocol, as for client-go's leader election).
    if (lease === undefined && this.seen === undefined) return this.mark(undefined, undefined, started);
    // The owner's tenure ended (released, expired, or the Lease deleted since this process saw it),
    // counted from the first read of the Lease in this state: an owner that took and released it
    // between two reads ended later.
    const state = lease?.resourceVersion ?? 'absent';
    if (this.ownerEnded?.state !== state) this.ownerEnded = { state, at: now };
    const waitMs = this.ownerEnded.at + this.options.landingWindowMs - now;
    if (waitMs > 0) return { mode: 'owner ended', waitMs };
    let countedFrom: string;
    try {
      countedFrom = await this.host.consistentVersion();
    } catch (err) {
      return unknown(
        `the ResourceBindings' version could not be read to mark the admission Lease for the batched modes (the webhook needs list on resourcebindings.work.karmada.io): ${describeError(err)}`,
      );
    }
    return this.mark(lease, countedFrom, this.clock());
  }

  /** Writes the mark over `lease` (compare-and-swap; a create when absent). */
  private async mark(
    lease: AdmissionLeaseState | undefined,
    countedFrom: string | undefined,
    startedAt: number,
  ): Promise<FenceView> {
    const record: AdmissionRecord = {
      ghosts: {},
      unknownInFlight: true,
      counted: {},
      batched: countedFrom === undefined ? {} : { countedFrom },
    };
    try {
      const written = await this.api.write(
        {
          holder: '',
          durationSeconds: lease?.durationSeconds ?? Math.ceil(this.options.durationMs / 1000),
          transitions: lease?.transitions ?? 0,
          record,
        },
        lease?.resourceVersion,
      );
      this.seen = { resourceVersion: written.resourceVersion, at: this.clock() };
      this.marked = { at: startedAt, countedFrom };
      this.ownerEnded = undefined;
      return { mode: 'batched', ...(countedFrom === undefined ? {} : { countedFrom }) };
    } catch (err) {
      // Another process wrote first (an owner taking it, another batched webhook marking it): the
      // next round reads which.
      return unknown(
        err instanceof ConflictError
          ? 'another process wrote the admission Lease while this webhook marked it for the batched modes'
          : `the admission Lease could not be written (the webhook needs create and update on leases in LEASE_NAMESPACE): ${describeError(err)}`,
      );
    }
  }

  private expired(lease: AdmissionLeaseState, now: number): boolean {
    return this.seen !== undefined && now >= leaseExpiry(lease, this.seen.at, this.options.durationMs);
  }

  /**
   * Why an increase on these quotas (those limiting the change's namespace) may not be decided by a
   * batched webhook now, or undefined when it may.
   */
  refusal(quotas: readonly KarmadaQuota[] | undefined): string | undefined {
    const marked = this.marked;
    if (marked === undefined || this.clock() >= marked.at + this.options.renewDeadlineMs)
      return this.closedReason();
    if (quotas === undefined)
      return marked.countedFrom === undefined
        ? undefined
        : 'the batched webhooks took over from the admission owner, and this webhook is not watching the quotas yet to tell which are counted';
    const behind = quotas.find((quota) => !countedPast(quota, marked.countedFrom));
    if (behind === undefined) return undefined;
    return `the batched webhooks took over from the admission owner, so increases on ${quotaName(behind)} wait until the reconciler has counted what the owner admitted`;
  }

  /** Ledger keys of the quotas whose counts are behind the mark: the webhook asks the reconciler for counts. */
  awaitingCount(quotas: readonly KarmadaQuota[]): string[] {
    const from = this.marked?.countedFrom;
    if (from === undefined) return [];
    return quotas
      .filter((quota) => !countedPast(quota, from))
      .map((quota) => ledgerKey(quota.metadata?.namespace ?? '', quotaName(quota)));
  }

  /** The strategy, fenced: a change is decided by it only while the batched modes may decide on its quotas. */
  fenced(
    strategy: AdmissionStrategy,
    quotasOf: (namespace: string) => readonly KarmadaQuota[] | undefined,
  ): AdmissionStrategy {
    return {
      admit: (change, answerBy) => {
        const quotas = quotasOf(change.item.binding.namespace);
        const refused = this.refusal(quotas);
        return refused === undefined
          ? strategy.admit(change, answerBy)
          : Promise.resolve(failClosed(refused));
      },
    };
  }

  private closedReason(): string {
    const view = this.last;
    switch (view.mode) {
      case 'owner':
        return `the admission owner (${view.holder}, Lease ${ADMISSION_LEASE_NAME}) decides increases and this webhook runs a batched ADMISSION_MODE: finish the switch of mode`;
      case 'owner ended':
        return `the admission owner stopped; the batched webhooks decide again once what it admitted has landed (in about ${Math.ceil(view.waitMs / 1000)} s)`;
      case 'unknown':
        return `${view.problem}; the batched webhooks decide only while the admission Lease says no owner decides`;
      case 'batched':
        return 'the admission Lease has not been read in time to know that no owner decides';
    }
  }
}

const unknown = (problem: string): FenceView => ({ mode: 'unknown', problem });

/** Whether the quota's count is at or past `from` (always, when there is none to reach). */
function countedPast(quota: KarmadaQuota, from: string | undefined): boolean {
  return from === undefined || isAtOrAfterVersion(quota.status?.observedBindingsVersion, from);
}
