import { formatList, parseResourceList, type ResourceList } from '#quantity';
import type { QuotaClaim, QuotaState } from '#quota';
import { countTargetOf, ledgerKey, OwnerLedger } from './owner-ledger.js';

const list = (wire: Record<string, string>): ResourceList => parseResourceList(wire, 'test').list;
const claims = (byQuota: Record<string, [Record<string, string>, Record<string, string>?]>) =>
  new Map<string, QuotaClaim>(
    Object.entries(byQuota).map(([name, [charge, increase]]) => [
      name,
      { charge: list(charge), increase: list(increase ?? charge) },
    ]),
  );
const state = (name: string, reserved: Record<string, string> = {}): QuotaState => ({
  name,
  hard: list({ cpu: '10' }),
  used: list({ cpu: '1' }),
  reserved: list(reserved),
  reservations: [],
});
const reservedOn = (ledger: OwnerLedger, namespace: string, s: QuotaState) =>
  formatList(ledger.decidingState(namespace, s).reserved);
const web = { namespace: 'team-a', name: 'web' };
const CKQ = 'ClusterKarmadaQuota/shared';

describe('OwnerLedger', () => {
  it('decides on the count plus the increases in flight and the ghosts', () => {
    const ledger = new OwnerLedger({
      ghosts: new Map([['team-a/q', list({ cpu: '1' })]]),
      unknownInFlight: false,
      counted: new Map(),
    });
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }] }));
    expect(reservedOn(ledger, 'team-a', state('q', { cpu: '2' }))).toEqual({ cpu: '6' });
    expect(ledger.decidingState('team-a', state('q')).reservations).toEqual([]);
    expect(reservedOn(ledger, 'team-b', state('q'))).toEqual({});
    expect(ledger.claimedBy(web, { uid: 'u1' }, ['q', 'other'])).toEqual({
      q: list({ cpu: '3' }),
      other: {},
    });
    expect(ledger.claimedBy(web, { uid: 'u2' }, ['q'])).toEqual({ q: {} });
  });

  it('keys a KarmadaQuota by its namespace, a ClusterKarmadaQuota by its name: one sum over its namespaces', () => {
    expect(ledgerKey('team-a', 'q')).toBe('team-a/q');
    expect(ledgerKey('team-a', CKQ)).toBe(CKQ);
    const ledger = new OwnerLedger();
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ [CKQ]: [{ cpu: '2' }] }));
    ledger.admitted(
      { namespace: 'team-b', name: 'web' },
      { uid: 'u2', admittedAt: 0 },
      claims({ [CKQ]: [{ cpu: '3' }] }),
    );
    expect(reservedOn(ledger, 'team-b', state(CKQ))).toEqual({ cpu: '5' });
  });

  it("retires a record's claim on a quota once its count holds the record's outcomes", () => {
    const ledger = new OwnerLedger();
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }], r: [{ cpu: '3' }] }));
    // Not landed yet: no count retires it.
    ledger.counted('team-a', 'q', '100');
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({ cpu: '3' });
    ledger.seen(web, { uid: 'u1', resourceVersion: '42', deleted: false });
    ledger.counted('team-a', 'q', '41');
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({ cpu: '3' });
    ledger.counted('team-a', 'q', '42');
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({});
    // Still claimed on r, whose count is behind.
    expect(ledger.size).toBe(1);
    expect(reservedOn(ledger, 'team-a', state('r'))).toEqual({ cpu: '3' });
    ledger.counted('team-a', 'r', '50');
    expect(ledger.size).toBe(0);
    expect(ledger.inFlight()).toEqual(new Map());
  });

  it('an attempt relying on a record joins it, raising nothing: the record waits for its outcome too', () => {
    const ledger = new OwnerLedger();
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }] }));
    ledger.admitted(web, { uid: 'u2', admittedAt: 5 }, new Map());
    ledger.seen(web, { uid: 'u1', resourceVersion: '42', deleted: false });
    ledger.counted('team-a', 'q', '60');
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({ cpu: '3' });
    // A change claiming nothing, with no record, leaves none.
    ledger.admitted({ namespace: 'team-a', name: 'db' }, { uid: 'u9', admittedAt: 0 }, new Map());
    expect(ledger.size).toBe(1);
  });

  it('a create that never landed is decided by a read once the landing window has passed', () => {
    const ledger = new OwnerLedger();
    ledger.admitted(web, { uid: 'u1', admittedAt: 1_000 }, claims({ q: [{ cpu: '3' }] }));
    expect(ledger.needingRead(60_999, 60_000)).toEqual([]);
    expect(ledger.needingRead(61_000, 60_000)).toEqual([web]);
    ledger.read(web, '70', 61_000, 60_000);
    expect(ledger.needingRead(61_000, 60_000)).toEqual([]);
    ledger.counted('team-a', 'q', '70');
    expect(ledger.size).toBe(0);
  });

  it('hands on the increases in flight with the ghosts', () => {
    const ledger = new OwnerLedger({
      ghosts: new Map([['team-a/q', list({ cpu: '1' })]]),
      unknownInFlight: false,
      counted: new Map(),
    });
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }], r: [{ cpu: '2' }] }));
    expect(new Map([...ledger.inFlight()].map(([k, v]) => [k, formatList(v)]))).toEqual(
      new Map([
        ['team-a/q', { cpu: '4' }],
        ['team-a/r', { cpu: '2' }],
      ]),
    );
  });

  it("drops a predecessor's ghosts on a quota once counted past a list made after a landing window held", () => {
    const ledger = new OwnerLedger({
      ghosts: new Map([['team-a/q', list({ cpu: '1' })]]),
      unknownInFlight: true,
      counted: new Map(),
    });
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(true);
    // Counted, but before the window: what the predecessor admitted may land after the count.
    ledger.counted('team-a', 'q', '500');
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(true);
    ledger.heldLongEnough('600');
    ledger.heldLongEnough('700'); // the first list counts
    ledger.counted('team-a', 'q', '599');
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(true);
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({ cpu: '1' });
    expect(ledger.ghostsSettled(['team-a/q'])).toBe(false);
    ledger.counted('team-a', 'q', '600');
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(false);
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({});
    expect(ledger.ghostsSettled(['team-a/q'])).toBe(true);
    expect(ledger.ghostsSettled(['team-a/q', 'team-a/r'])).toBe(false);
    expect(ledger.refusesIncreases('team-a', 'r')).toBe(true);
  });

  it('decides on a quota only from a count as new as the one its predecessor retired claims against', () => {
    const before = new OwnerLedger();
    before.counted('team-a', 'q', '40');
    before.counted('team-a', 'q', '30'); // an older status, delivered late, changes nothing
    expect(before.countedUpTo()).toEqual(new Map([['team-a/q', '40']]));
    const after = new OwnerLedger({
      ghosts: new Map(),
      unknownInFlight: false,
      counted: before.countedUpTo(),
    });
    expect(after.refusesIncreases('team-a', 'q')).toBe(true);
    expect(after.refusesIncreases('team-a', 'other')).toBe(false);
    after.counted('team-a', 'q', '39');
    expect(after.refusesIncreases('team-a', 'q')).toBe(true);
    after.counted('team-a', 'q', '40');
    expect(after.refusesIncreases('team-a', 'q')).toBe(false);
    after.counted('team-a', 'q', '45');
    expect(after.countedUpTo()).toEqual(new Map([['team-a/q', '45']]));
  });

  it('asks for a count of each quota a newer stamp would let it move on, and of no other', () => {
    const ledger = new OwnerLedger({
      ghosts: new Map([['team-a/g', list({ cpu: '1' })]]),
      unknownInFlight: true,
      counted: new Map(),
    });
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }] }));
    ledger.admitted(
      { namespace: 'team-a', name: 'api' },
      { uid: 'u2', admittedAt: 0 },
      claims({ r: [{ cpu: '1' }] }),
    );
    // Undecided attempts wait for the watch or the sweep, not for a count; ghosts wait for the tenure.
    expect(ledger.awaitingCount(['team-a/q', 'team-a/s'])).toEqual([]);
    ledger.seen(web, { uid: 'u1', resourceVersion: '50', deleted: false });
    expect(ledger.awaitingCount(['team-a/q', 'team-a/s'])).toEqual(['team-a/q']);
    ledger.heldLongEnough('60');
    expect(ledger.awaitingCount(['team-a/q', 'team-a/s']).sort()).toEqual([
      'team-a/g',
      'team-a/q',
      'team-a/s',
    ]);
    ledger.counted('team-a', 'q', '60');
    ledger.counted('team-a', 'g', '60');
    expect(ledger.awaitingCount(['team-a/q', 'team-a/s'])).toEqual(['team-a/s']);
  });

  it.each([
    ['team-a/q', { namespace: 'team-a' }],
    [CKQ, { clusterQuota: 'shared' }],
  ])('a count of %s is asked of the reconciler as %j', (key, target) => {
    expect(countTargetOf(key)).toEqual(target);
  });

  it('forgets a deleted quota: its claims, its ghosts and the count it waited for', () => {
    const ledger = new OwnerLedger({
      ghosts: new Map([['team-a/q', list({ cpu: '1' })]]),
      unknownInFlight: false,
      counted: new Map([['team-a/q', '40']]),
    });
    ledger.admitted(web, { uid: 'u1', admittedAt: 0 }, claims({ q: [{ cpu: '3' }], r: [{ cpu: '2' }] }));
    ledger.admitted(
      { namespace: 'team-a', name: 'api' },
      { uid: 'u2', admittedAt: 0 },
      claims({ q: [{ cpu: '1' }] }),
    );
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(true);
    ledger.forget('team-a', 'q');
    expect(reservedOn(ledger, 'team-a', state('q'))).toEqual({});
    expect(ledger.refusesIncreases('team-a', 'q')).toBe(false);
    expect(ledger.ghostsSettled([])).toBe(true);
    expect(reservedOn(ledger, 'team-a', state('r'))).toEqual({ cpu: '2' });
    expect(ledger.size).toBe(1); // api claimed on q alone
    expect(ledger.countedUpTo()).toEqual(new Map());
  });
});
