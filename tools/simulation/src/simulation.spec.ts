import fc from 'fast-check';
import { actionsArbitrary, describeActions } from './actions.js';
import { exercised, type Action } from './model.js';
import { simulate } from './simulation.js';

/** Seeds `npm test` always runs; `npm run sim` hunts further. */
const RUNS = Number(process.env['SIM_RUNS'] ?? 1000);
/**
 * A run takes about 60 ms alone on 2 cores and twice that beside the integration tests (1,000 runs
 * took over jest's default 120 s there in CI): the timeout follows the runs, with room.
 */
const TIMEOUT_MS = Math.max(120_000, 300 * RUNS);

describe('accounting simulation', () => {
  it(
    `${RUNS} seeded random interleavings keep every invariant after every step`,
    async () => {
      await fc.assert(
        fc.asyncProperty(actionsArbitrary, async (actions: Action[]) => {
          const violation = await simulate(actions);
          if (violation) {
            throw new Error(
              `${violation.invariant} violated at step ${violation.step}: ${violation.message}\n` +
                `actions: ${describeActions(actions)}\ntrace:\n${violation.trace.slice(-60).join('\n')}`,
            );
          }
        }),
        { seed: 20261123, numRuns: RUNS },
      );
      // The runs reached the limits, raced, and stored: the invariants were tested where they can break.
      expect(exercised.denied).toBeGreaterThan(RUNS);
      // (Fewer fit since Duplicated bindings are charged on each member.)
      expect(exercised.allowed).toBeGreaterThan(RUNS * 4);
      // (Fewer than before the 34 s landing limit: a change left unlanded longer is abandoned.)
      expect(exercised.stored).toBeGreaterThan(RUNS * 2);
      expect(exercised.notStored).toBeGreaterThan(0);
      expect(exercised.conflicts).toBeGreaterThan(0);
      expect(exercised.refusedOnArrival).toBeGreaterThan(0);
      expect(exercised.failedClosed).toBeGreaterThan(0);
      expect(exercised.hostFaults).toBeGreaterThan(RUNS / 2);
      // The reconciler both trusted its lagging cache and was sent to the host by it.
      expect(exercised.reconcilesSkipped).toBeGreaterThan(RUNS / 2);
      expect(exercised.reconcilesFromCacheToHost).toBeGreaterThan(RUNS);
      // Bindings held by a finalizer were changed, and those changes stored, while being deleted.
      expect(exercised.storedWhileDeleting).toBeGreaterThan(0);
      // Admins edited quotas, and changes were refused until the edited spec was counted.
      expect(exercised.actions.edit).toBeGreaterThan(RUNS);
      // Processes ran on clocks apart.
      expect(exercised.actions.skew).toBeGreaterThan(RUNS);
      expect(exercised.statusUnknown).toBeGreaterThan(RUNS / 10);
      // Bindings were stored on both members and Duplicated, and counts read usage outside the federation.
      expect(exercised.storedOnBothMembers).toBeGreaterThan(RUNS / 10);
      expect(exercised.storedDuplicated).toBeGreaterThan(RUNS / 10);
      expect(exercised.outsideCounted).toBeGreaterThan(RUNS / 10);
      // DaemonSet bindings were refused; members ran what no admission saw, and the reconciler had to
      // name it in RunningBeyondCharge; finished Jobs were re-created and charged again.
      expect(exercised.refusedUnbounded).toBeGreaterThan(RUNS / 2);
      expect(exercised.detectionsBeyond).toBeGreaterThan(RUNS / 2);
      expect(exercised.unadmitted.jobRecreated).toBeGreaterThan(RUNS / 50);
      expect(exercised.unadmitted.jobRunsAgain).toBeGreaterThan(RUNS / 100);
      // Refusals waited, Karmada re-sent the writes the reconciler requeued, and retried refused ones
      // on its own back-off.
      expect(exercised.waitingRecorded).toBeGreaterThan(RUNS);
      expect(exercised.requeueResent).toBeGreaterThan(RUNS / 2);
      expect(exercised.retried).toBeGreaterThan(RUNS / 5);
      // Pods went away terminating (scaled down, deleted, moved off a member, evicted, hand-made ones),
      // ran on until 'terminate' finished them, and RUNS counted them; workloads were created again
      // while their old pods terminated.
      expect(exercised.terminating.scaledDown).toBeGreaterThan(RUNS / 2);
      // (Fewer since the ClusterKarmadaQuota, tighter than `all`, refuses more.)
      expect(exercised.terminating.deleted).toBeGreaterThan(RUNS / 3);
      expect(exercised.terminating.moved).toBeGreaterThan(RUNS / 10);
      expect(exercised.terminating.evicted).toBeGreaterThan(RUNS / 20);
      expect(exercised.terminating.handMade).toBeGreaterThan(RUNS / 10);
      expect(exercised.actions.terminate).toBeGreaterThan(RUNS);
      expect(exercised.terminated).toBeGreaterThan(RUNS / 2);
      expect(exercised.runsTerminating).toBeGreaterThan(RUNS);
      // (Fewer since a claim that may be another object's holds its whole charge: a re-create of the
      // name while the first create's claim is pending is refused more often.)
      expect(exercised.recreatedWhileTerminating).toBeGreaterThan(RUNS / 500);
      // Counts read snapshots that did not show what the members were given (usage not published yet).
      expect(exercised.unpublished).toBeGreaterThan(RUNS / 50);
      // Bindings carry no priority class (Karmada's default gates): the services gave them their
      // templates', so the quotas scoped to `high` selected them.
      expect(exercised.templateClassed).toBeGreaterThan(RUNS);
      expect(exercised.overridden).toBeGreaterThan(RUNS);
      expect(exercised.unadmitted.override).toBeGreaterThan(0);
      // The ClusterKarmadaQuota weighed changes in both namespaces, refused some (some for usage not
      // counted in a namespace yet), and namespaces entered and left it while the webhook's views lagged.
      expect(exercised.cluster.allowed).toBeGreaterThan(RUNS);
      expect(exercised.cluster.refused).toBeGreaterThan(RUNS / 2);
      expect(exercised.cluster.statusUnknown).toBeGreaterThan(RUNS / 10);
      expect(exercised.cluster.storedWithoutIt).toBeGreaterThan(0);
      expect(exercised.cluster.entered).toBeGreaterThan(RUNS / 10);
      expect(exercised.cluster.written).toBeGreaterThan(RUNS);
      console.log(`simulation exercised: ${JSON.stringify(exercised)}`);
    },
    TIMEOUT_MS,
  );
});
