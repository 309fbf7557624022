/**
 * The owner protocol's named regression traces (owner-protocol.ts): each an action list the hunt
 * found breaking an invariant, kept with the edit that puts its bug back. owner-protocol.spec.ts replays
 * each (it must pass); mutations.spec.ts replays each with its bug put back (it must fail as `fails` says).
 */
import type { Mutation } from './mutations.js';
import { simulateOwner, type OwnerAction } from './owner-protocol.js';

export interface OwnerRegression {
  actions: OwnerAction[];
  undone: Mutation & { fails: string };
}

/** The bug of two traces: a change counting another attempt of its binding as covered. */
const RELIES_ON_ANOTHER_ATTEMPT: OwnerRegression['undone'] = {
  bug: "a change relies on any attempt's charge that may still land",
  fails: 'LIMIT',
  edits: [
    {
      file: 'libs/quota/src/owner-claims.ts',
      from: 'sameChange(a, change) && a.decidedAt === undefined',
      to: 'a.decidedAt === undefined',
    },
  ],
};

export const OWNER_REGRESSIONS: Record<string, OwnerRegression> = {
  // A handed the Lease over after retiring b1's claim against a count B had not seen: B decided on
  // its older view of the quota, in which b1 was neither counted nor claimed (11 of 10).
  'a successor decides on a count older than the one its predecessor retired claims against': {
    actions: [
      { t: 'lease', process: 1, fault: 'none' },
      { t: 'create', name: 0, cpu: 1, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 0 },
      { t: 'deliverBindings', process: 1, events: 1 },
      { t: 'count' },
      { t: 'deliverQuota', process: 1 },
      { t: 'release', process: 1 },
      { t: 'update', name: 0, cpu: 5, to: 0 },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'decide', request: 0 },
      { t: 'delete', name: 1 },
      { t: 'statusWrite', name: 1 },
      { t: 'answer', request: 0 },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'create', name: 1, cpu: 6, to: 0, twice: false },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'create', name: 0, cpu: 1, to: 0, twice: false },
      { t: 'land', request: 0 },
      { t: 'count' },
      { t: 'decide', request: 0 },
      { t: 'land', request: 0 },
      { t: 'deliverQuota', process: 0 },
      { t: 'answer', request: 0 },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'land', request: 0 },
      { t: 'land', request: 0 },
      { t: 'decide', request: 0 },
      { t: 'deliverBindings', process: 0, events: 1 },
      { t: 'delete', name: 0 },
    ],
    undone: {
      bug: 'a successor decides on any count it sees',
      fails: 'LIMIT',
      edits: [
        {
          file: 'libs/accounting/src/owner-ledger.ts',
          from: 'if (this.newestCount.has(key) && !this.caughtUp.has(key)) return true;',
          to: '',
        },
      ],
    },
  },
  // Review (2026-11-30): b1 2 -> 8 admitted (+6) but beaten by a decrease to 1, answered without the
  // owner; an update 1 -> 8 relied on the record's charge 8 (+0) and landed, the count holding 1: 11 of 10.
  'an update relies on a record whose attempt a decrease has beaten': {
    actions: [
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'create', name: 0, cpu: 2, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 0 },
      { t: 'deliverBindings', process: 0, events: 2 },
      { t: 'count' },
      { t: 'deliverQuota', process: 0 },
      { t: 'update', name: 0, cpu: 8, to: 0 },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'update', name: 0, cpu: 1, to: 0 },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 1 },
      { t: 'land', request: 0 },
      { t: 'update', name: 0, cpu: 8, to: 0 },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'deliverBindings', process: 0, events: 5 },
      { t: 'count' },
      { t: 'deliverQuota', process: 0 },
      { t: 'land', request: 0 },
      { t: 'create', name: 1, cpu: 3, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 0 },
    ],
    undone: RELIES_ON_ANOTHER_ATTEMPT,
  },
  // Review (2026-11-30): as above, with b1 deleted and created again at 8 under a new uid: 12 of 10.
  'a create under a new uid relies on the record of the object deleted before it': {
    actions: [
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'create', name: 0, cpu: 2, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 0 },
      { t: 'deliverBindings', process: 0, events: 2 },
      { t: 'count' },
      { t: 'deliverQuota', process: 0 },
      { t: 'update', name: 0, cpu: 8, to: 0 },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'delete', name: 0 },
      { t: 'land', request: 0 },
      { t: 'create', name: 0, cpu: 8, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'deliverBindings', process: 0, events: 5 },
      { t: 'count' },
      { t: 'deliverQuota', process: 0 },
      { t: 'land', request: 0 },
      { t: 'create', name: 1, cpu: 4, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'land', request: 0 },
    ],
    undone: RELIES_ON_ANOTHER_ATTEMPT,
  },
  // The owner's renew timed out; the API server applied it after the owner's next read, so that write
  // conflicted with the owner's own. Clearing the tenure on the conflict made the owner take its own
  // Lease again with a fresh ledger, forgetting b1's claim: 11 of 10 (found by the search once late
  // writes were modelled, and by the review).
  'an owner whose delayed renew lands first takes its own Lease again and forgets its claims': {
    actions: [
      { t: 'create', name: 0, cpu: 4, to: 0, twice: true },
      { t: 'decide', request: 0 },
      { t: 'lease', process: 1, fault: 'none' },
      { t: 'decide', request: 0 },
      { t: 'create', name: 2, cpu: 3, to: 0, twice: false },
      { t: 'decide', request: 0 },
      { t: 'lease', process: 1, fault: 'late' },
      { t: 'create', name: 1, cpu: 4, to: 0, twice: false },
      { t: 'lease', process: 1, fault: 'none' },
      { t: 'lease', process: 1, fault: 'none' },
      { t: 'answer', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'decide', request: 0 },
      { t: 'delete', name: 0 },
      { t: 'land', request: 0 },
      { t: 'update', name: 0, cpu: 0, to: 0 },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'delete', name: 1 },
      { t: 'statusWrite', name: 0 },
      { t: 'decide', request: 0 },
      { t: 'decide', request: 0 },
      { t: 'count' },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'land', request: 0 },
      { t: 'create', name: 0, cpu: 1, to: 0, twice: false },
      { t: 'answer', request: 0 },
      { t: 'answer', request: 0 },
      { t: 'lease', process: 0, fault: 'none' },
      { t: 'decide', request: 0 },
      { t: 'decide', request: 0 },
      { t: 'land', request: 0 },
      { t: 'deliverQuota', process: 0 },
    ],
    undone: {
      bug: "a conflict on the owner's own Lease write ends its tenure",
      fails: 'LIMIT',
      edits: [
        {
          file: 'libs/accounting/src/admission-lease.ts',
          from: '    } catch {\n      // Even a conflict keeps the tenure',
          to: "    } catch (err) {\n      if ((err as Error).name === 'ConflictError') this.tenure = undefined;\n      // Even a conflict keeps the tenure",
        },
      ],
    },
  },
};

/** Replays one trace: its violation's `invariant at step: message`, none when it passes. */
export async function replayOwner(regression: OwnerRegression): Promise<string[]> {
  const violation = await simulateOwner(regression.actions);
  return violation ? [`${violation.invariant} at step ${violation.step}: ${violation.message}`] : [];
}
