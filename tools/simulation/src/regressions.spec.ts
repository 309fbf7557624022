import { simulate, type Action } from './simulation.js';

/**
 * Named regression traces: each an interleaving that once broke the accounting (the search's shrunk
 * counterexamples, and the accounting review's cases), replayed through the simulation, which checks
 * every invariant after every step. `shows`/`hides` prove a case still reaches its race.
 * The review's other cases are not interleavings: F3's rollback no longer exists (nothing is ever
 * restored from an older copy; multi-quota conflicts are in every random run, `high` and `all` both
 * charging high-priority bindings), F7 is the aggregator's attribution
 * (test/object-count-attribution.test.ts), F10 the charge (charge.spec.ts), F11 validation
 * (validation.spec.ts, test/unenforceable-keys.test.ts).
 */
interface Regression {
  actions: Action[];
  countedAtStart?: boolean;
  /** Fragments the run's trace must contain, so the case still exercises what it is named for. */
  shows: string[];
  /** Fragments it must not contain. */
  hides?: string[];
}

const create = (b: number, replicas: number, high = false): Action => ({
  t: 'create',
  b,
  replicas,
  high,
  replica: 0,
  dryRun: false,
});
const update = (b: number, replicas: number, high = false, replica = 0): Action => ({
  t: 'update',
  b,
  replicas,
  high,
  replica,
});
const complete = (i = 0): Action => ({ t: 'complete', i });
const land = (i = 0): Action => ({ t: 'land', i });
const tick = (ms: number): Action => ({ t: 'tick', ms });

const REGRESSIONS: Record<string, Regression> = {
  // Found by the search: the claim on the scoped quota subtracted the pods' usage, which that quota
  // did not count yet (the stored binding was still low priority).
  'a running workload moved into a scoped quota reserves all of it there': {
    actions: [
      create(3, 0),
      complete(),
      land(),
      update(3, 1),
      complete(),
      complete(),
      land(),
      { t: 'pods', b: 3, n: 1 },
      update(3, 1, true),
      { t: 'publish' },
      complete(),
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      land(),
      complete(),
      complete(),
      { t: 'deliver' },
    ],
    shows: ['UPDATE b3 1->1 high', 'stored: UPDATE b3 1->1 high'],
  },
  // Found by the search: two identical scale-ups in one batch; the second relied on the first's claim
  // and was answered before the claim was written.
  'an item relying on a claim of its own batch waits for the write': {
    actions: [
      create(3, 0),
      create(0, 0),
      complete(),
      land(),
      update(3, 1),
      update(3, 1),
      complete(),
      complete(),
      land(),
      land(),
    ],
    shows: ['request 2 UPDATE b3 0->1', 'request 3 UPDATE b3 0->1'],
  },
  // Found by the search (the review's F4, Karmada's duplicate create): a create retried under a new
  // uid took over the stored object's pending claim; the stored object was deleted, the retry stored.
  "a create retried under a new uid never takes the stored object's claim": {
    actions: [
      create(0, 0),
      complete(),
      land(),
      create(0, 1),
      update(0, 1),
      { t: 'delete', b: 0 },
      complete(),
      complete(),
      { t: 'reconcile' },
      complete(),
      complete(3),
      complete(),
      land(),
      complete(),
      complete(),
    ],
    shows: ['CREATE b0 (uid-1)', 'DELETE b0 (uid-0)'],
  },
  // Found by the search: a pending claim of no stored binding kept a reserved net of the usage of the
  // deleted object of its name.
  'a pending claim whose binding is gone reserves its whole charge': {
    actions: [
      create(4, 0),
      complete(),
      land(),
      update(4, 1),
      complete(),
      complete(),
      land(),
      { t: 'pods', b: 4, n: 1 },
      { t: 'publish' },
      create(4, 1),
      complete(),
      complete(),
      { t: 'reconcile' },
      complete(),
      complete(),
      { t: 'delete', b: 4 },
      { t: 'reconcile' },
      { t: 'publish' },
      complete(),
      complete(),
      complete(),
      complete(),
      land(),
      create(0, 0),
    ],
    shows: ['CREATE b4 (uid-', 'DELETE b4 (uid-0)'],
  },
  // Review F1: an admission relied on a pending charge without a write while the reconciler, with a
  // binding list older than the store, let that charge lapse.
  'F1: a claim about to lapse is not relied on, and lapses only against a list started after it': {
    actions: [
      create(1, 0),
      complete(),
      land(),
      update(1, 6),
      complete(),
      complete(),
      tick(61_000),
      update(1, 4),
      complete(),
      complete(),
      { t: 'reconcile' },
      complete(),
      tick(60_000),
      complete(),
      land(),
      complete(),
      complete(),
      create(2, 4),
      complete(),
      complete(),
      land(),
    ],
    shows: ['UPDATE b1 0->6', 'UPDATE b1 0->4'],
  },
  // Review F2: a binding moved from low to high priority was charged only its increase in `high`.
  'F2: a scope change is charged in full in the quota it enters': {
    actions: [create(1, 5), complete(), complete(), land(), update(1, 5, true), complete(), complete()],
    shows: ['UPDATE b1 5->5 high', 'answered refused: exceeded quota: high'],
  },
  // Review F5: the fully observed binding's entry was never re-created when its pods were evicted.
  'F5: usage that falls is reserved again': {
    actions: [
      create(2, 4),
      complete(),
      complete(),
      land(),
      { t: 'pods', b: 2, n: 4 },
      { t: 'publish' },
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      complete(),
      tick(130_000),
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      complete(),
      { t: 'evict', b: 2, n: 3 },
      { t: 'publish' },
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      complete(),
      create(1, 4),
      complete(),
      complete(),
    ],
    shows: ['member: b2 runs 1 pods', 'CREATE b1 (uid-'],
  },
  // Review F6: a new quota enforced against used = 0 before its usage was counted.
  'F6: a quota whose usage is not counted yet refuses increases': {
    countedAtStart: false,
    actions: [create(1, 2), complete(), complete()],
    shows: ['status unknown for quota'],
  },
  // Review F9: a write started (or retried) after the request was answered, which then landed late.
  'F9: no write is started for a request past its deadline': {
    actions: [create(1, 2), tick(6_000), complete(), complete()],
    shows: ['request 0 timed out (fail closed)', 'host: webhook-0 lists quotas'],
    hides: ['webhook-0 writes quota'],
  },
  // Found by the search (seed 275404918): an UPDATE of the stored object over an entry that had merged
  // a retried create's pending claim (no uid) wrote that object's uid again; deleting the object then
  // released the entry at once, and the other create landed with nothing reserved for it.
  "a merged claim keeps naming no uid, so a delete cannot release the other object's claim": {
    actions: [
      create(4, 1),
      create(4, 0),
      complete(),
      complete(),
      complete(),
      land(1),
      update(4, 1),
      update(4, 2),
      { t: 'delete', b: 4 },
      complete(),
      complete(),
      complete(),
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      land(),
      complete(),
    ],
    shows: [
      'request 1 stored: CREATE b4 (uid-1)',
      'DELETE b4 (uid-1)',
      'request 0 stored: CREATE b4 (uid-0)',
    ],
  },
  // Found by the chaos fuzz (seed 1690394136, reserved 1014 > hard 20): an update's claim, admitted
  // for its increase alone, was held at its whole new charge once its binding was missing (deleted,
  // the deletion not yet recorded), though an update of a deleted object cannot land.
  "an update's claim is dropped once its object is gone, before the deletion is recorded": {
    actions: [
      create(0, 2),
      complete(),
      complete(),
      land(),
      { t: 'pods', b: 0, n: 2 },
      { t: 'publish' },
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
      { t: 'sync', n: 100 },
      update(0, 4),
      complete(),
      complete(),
      { t: 'sync', n: 1 },
      { t: 'delete', b: 0 },
      { t: 'publish' },
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
    ],
    shows: [
      'webhook-0 writes quota all reserving [b0 (Update) cpu=1,pods=2]',
      'DELETE b0 (uid-0)',
      'reconciler writes quota all reserving []',
    ],
    // Held at its whole charge (the bug), it would read "b0 (Update) cpu=2,pods=4".
    hides: ['(Update) cpu=2,pods=4'],
  },
  // Found by the search once bindings could be held by a finalizer: a create admitted while the old
  // object of its name was being deleted lost its claim (the reconciler dropped every claim of a name
  // whose stored object was being deleted), and was stored uncounted once that object was gone.
  "another object's create outlives the deletion of the binding of its name": {
    actions: [
      create(4, 0),
      complete(),
      land(),
      { t: 'delete', b: 4, graceful: true },
      create(4, 1),
      { t: 'reconcile' },
      complete(),
      complete(3),
      complete(),
      complete(),
      { t: 'finalize', b: 4 },
      land(),
      complete(),
      tick(1),
    ],
    shows: [
      'DELETE b4 (uid-0): being deleted (finalizer)',
      'webhook-0 writes quota all reserving [b4 cpu=300m,pods=1]',
      'request 1 stored: CREATE b4 (uid-1)',
    ],
  },
  // Found by the search with a mutation (a status write that failed counted as written): the host
  // refused the claim's write, so the request must fail closed, not be admitted without its claim.
  'a claim the host refused to write admits nothing': {
    actions: [create(0, 1), complete(), { t: 'fault', i: 0, fault: 'not applied' }, land(), { t: 'publish' }],
    shows: [
      'reserving [b0 cpu=500m,pods=1]; not applied',
      'request 0 answered refused: karmada-quota could not',
    ],
    hides: ['request 0 stored'],
  },
  // A claim's write landed but its answer was lost; the store's retry met the write itself (409). The
  // round reads again, finds its own claim and admits on it, without charging the binding twice.
  'a claim written but unanswered is found on the re-read and charged once': {
    actions: [
      create(0, 1),
      complete(),
      { t: 'fault', i: 0, fault: 'retry conflicts' },
      complete(),
      complete(),
      land(),
      { t: 'publish' },
      { t: 'reconcile' },
      complete(),
      complete(),
      complete(),
    ],
    shows: [
      'reserving [b0 cpu=500m,pods=1]; retry conflicts',
      'request 0 answered allowed',
      'request 0 stored',
    ],
    hides: ['b0 cpu=1000m', 'pods=1; b0'],
  },
  // Review F8: a decrease waited for its batch's write and could fail closed.
  'F8: a decrease is answered at once': {
    actions: [create(1, 4), complete(), complete(), land(), update(1, 2)],
    shows: ['UPDATE b1 4->2: allowed at once'],
  },
};

describe('accounting regressions', () => {
  it.each(Object.entries(REGRESSIONS))('%s', async (_name, regression) => {
    const trace: string[] = [];
    const violation = await simulate(regression.actions, {
      countedAtStart: regression.countedAtStart,
      trace,
    });
    expect(violation).toBeUndefined();
    const text = trace.join('\n');
    for (const fragment of regression.shows) expect(text).toContain(fragment);
    for (const fragment of regression.hides ?? []) expect(text).not.toContain(fragment);
  });
});
