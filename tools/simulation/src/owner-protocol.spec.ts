import fc from 'fast-check';
import { describeActions } from './actions.js';
import {
  OWNER_HUNT_SEED,
  ownerActionsArbitrary,
  ownerExercised,
  simulateOwner,
  switchingActionsArbitrary,
  type OwnerAction,
} from './owner-protocol.js';
import { OWNER_REGRESSIONS, replayOwner } from './owner-regressions.js';

/** Seeds `npm test` always runs (a few seconds); `npm run sim -- --owner` hunts further. */
const RUNS = Number(process.env['OWNER_SIM_RUNS'] ?? 3000);

/** RUNS seeded runs of `arbitrary`, each checked after every step; a violation fails with its trace. */
async function searched(arbitrary: fc.Arbitrary<OwnerAction[]>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (actions) => {
      const violation = await simulateOwner(actions);
      if (violation)
        throw new Error(
          `${violation.invariant} violated at step ${violation.step}: ${violation.message}\n` +
            `actions: ${describeActions(actions)}\ntrace:\n${violation.trace.slice(-60).join('\n')}`,
        );
    }),
    { seed: OWNER_HUNT_SEED, numRuns: RUNS },
  );
}

describe('the admission owner protocol', () => {
  it(`${RUNS} seeded random interleavings keep LIMIT and EXCLUSION after every step`, async () => {
    await searched(ownerActionsArbitrary);
    console.log(`owner protocol exercised: ${JSON.stringify(ownerExercised)}`);
    // Owners admitted and the API server stored, late answers were discarded, and some never landed.
    expect(ownerExercised.admitted).toBeGreaterThan(RUNS);
    expect(ownerExercised.stored).toBeGreaterThan(RUNS / 2);
    expect(ownerExercised.notStored).toBeGreaterThan(RUNS / 10);
    expect(ownerExercised.answeredTooLate).toBeGreaterThan(RUNS / 10);
    // The Lease moved: taken over after crashes (the predecessor's budgets charged until settled), and
    // handed over.
    expect(ownerExercised.acquiredAfterCrash).toBeGreaterThan(RUNS / 10);
    expect(ownerExercised.budgetsCharged).toBeGreaterThan(RUNS / 10);
    expect(ownerExercised.handedOver).toBeGreaterThan(RUNS / 10);
    // Forwarded decisions arrived again and were decided as the same change.
    expect(ownerExercised.decidedAgain).toBeGreaterThan(RUNS / 10);
    // Successors held long enough, and a count caught up, to drop what they charged.
    expect(ownerExercised.settled).toBeGreaterThan(0);
  });

  it(`${RUNS} seeded interleavings with switches of mode keep LIMIT and EXCLUSION after every step`, async () => {
    const before = { ...ownerExercised };
    await searched(switchingActionsArbitrary);
    // Modes switched each way: batched webhooks were fenced beside owners, and decided once settled.
    expect(ownerExercised.switched - before.switched).toBeGreaterThan(RUNS);
    expect(ownerExercised.fenced - before.fenced).toBeGreaterThan(RUNS);
    expect(ownerExercised.batchedAdmitted - before.batchedAdmitted).toBeGreaterThan(RUNS / 100);
  });

  it.each(Object.entries(OWNER_REGRESSIONS))('keeps the named trace: %s', async (_name, regression) => {
    expect(await replayOwner(regression)).toEqual([]);
  });
});
