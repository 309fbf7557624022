import type { KarmadaQuota, ResourceBinding } from '#api';
import { bindingCharge } from '#quota';
import { AdmissionLease } from './admission-lease.js';
import { bindingChange, type AdmissionOutcome } from './admission-strategy.js';
import { OwnerAdmission } from './owner-admission.js';
import type { ReconcileTarget } from '#usage';
import { StoredLease } from './testing/stored-lease.js';

const WINDOW_S = 60;

const quota = (used: string, stamp: string): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'compute', namespace: 'team-a', resourceVersion: stamp },
  spec: { hard: { cpu: '10' } },
  status: { hard: { cpu: '10' }, used: { cpu: used }, reserved: {}, observedBindingsVersion: stamp },
});

const binding = (name: string, uid: string, cpu: number, resourceVersion?: string): ResourceBinding => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  metadata: { name, namespace: 'team-a', uid, ...(resourceVersion ? { resourceVersion } : {}) },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas: cpu,
    clusters: [{ name: 'member1', replicas: cpu }],
    replicaRequirements: { resourceRequest: { cpu: '1' } },
  },
});

const create = (name: string, uid: string, cpu: number, dryRun = false) => {
  const object = binding(name, uid, cpu);
  return bindingChange({ namespace: 'team-a', name }, object, bindingCharge(object).charge, dryRun);
};

/** One owner process over a stored Lease, its watch's quotas, a host whose reads and count requests it records. */
function owner(lease = new StoredLease(), identity = 'webhook-0.a') {
  const clock = { mono: 1_000_000, epoch: Date.parse('2026-11-30T00:00:00Z') };
  const world = {
    quotas: [quota('0', '10')],
    version: 20,
    counts: [] as ReconcileTarget[],
    reads: 0,
    /** Whether the quota watches have listed (allWatched is undefined until they have). */
    listed: true,
  };
  const admissionLease = new AdmissionLease(
    lease,
    { identity, address: `${identity}:8443`, durationMs: 15_000, renewDeadlineMs: 10_000 },
    () => clock.mono,
  );
  const admission = new OwnerAdmission(
    admissionLease,
    {
      watchedIn: (namespace) => world.quotas.filter((q) => q.metadata?.namespace === namespace),
      allWatched: () => (world.listed ? world.quotas : undefined),
      selection: () => undefined,
    },
    {
      consistentVersion: async () => {
        world.reads++;
        return String(world.version);
      },
      requestCount: async (target) => {
        world.counts.push(target);
      },
    },
    {
      ttlSeconds: 120,
      landingWindowSeconds: WINDOW_S,
      clock: () => clock.epoch,
      monotonic: () => clock.mono,
    },
  );
  const advance = (ms: number) => {
    clock.mono += ms;
    clock.epoch += ms;
  };
  const admit = (change: ReturnType<typeof create>): Promise<AdmissionOutcome> =>
    admission.admit(change, clock.epoch + 5_000);
  /** The reconciler counted: the watch shows the quota at this stamp with this usage. */
  const counted = (used: string, stamp: string) => {
    world.quotas = [quota(used, stamp)];
    admission.quotaObserved(world.quotas[0]!);
  };
  return { admission, world, advance, admit, counted };
}

const allowed = (outcome: AdmissionOutcome) => outcome.allowed;
const unavailable = (outcome: AdmissionOutcome) => !outcome.allowed && 'unavailable' in outcome;

describe('OwnerAdmission', () => {
  it('refuses, failing closed, every change it is asked while it does not hold the Lease', async () => {
    const { admit } = owner();
    expect(unavailable(await admit(create('web', 'u1', 3)))).toBe(true);
  });

  it('decides from its claims in flight, with no write: the second increase past the limit is refused', async () => {
    const { admission, admit } = owner();
    await admission.tick();
    expect(allowed(await admit(create('web', 'u1', 6)))).toBe(true);
    const second = await admit(create('api', 'u2', 6));
    expect(second.allowed).toBe(false);
    expect(unavailable(second)).toBe(false); // a quota refusal, not a failure
    expect(allowed(await admit(create('api', 'u2', 4)))).toBe(true);
    expect(admission.claimsInFlight).toBe(2);
  });

  it('a dry run claims nothing', async () => {
    const { admission, admit } = owner();
    await admission.tick();
    expect(allowed(await admit(create('web', 'u1', 10, true)))).toBe(true);
    expect(allowed(await admit(create('api', 'u2', 10)))).toBe(true);
  });

  it('a claim leaves once the watch showed it landed and a count at or past that holds it', async () => {
    const { admission, admit, counted } = owner();
    await admission.tick();
    await admit(create('web', 'u1', 6));
    admission.bindingObserved(binding('web', 'u1', 6, '30'), false);
    counted('6', '29'); // a count from before it landed: the claim stays
    expect((await admit(create('api', 'u2', 1))).allowed).toBe(false);
    counted('6', '30');
    expect(admission.claimsInFlight).toBe(0);
    expect(allowed(await admit(create('api', 'u2', 4)))).toBe(true);
  });

  it('an attempt the watch never decides is read after the landing window, then a count is asked for', async () => {
    const { admission, world, advance, admit, counted } = owner();
    await admission.tick();
    await admit(create('web', 'u1', 6)); // never stored (the API server failed it after admission)
    await admission.tick();
    expect(world.reads).toBe(0);
    expect(world.counts).toEqual([]);
    advance(WINDOW_S * 1000);
    world.version = 40;
    await admission.tick(); // the sweep reads at 40: by then it landed or never will
    expect(world.reads).toBe(1);
    expect(world.counts).toEqual([{ namespace: 'team-a' }]);
    counted('0', '40');
    expect(admission.claimsInFlight).toBe(0);
    expect(allowed(await admit(create('api', 'u2', 10)))).toBe(true);
  });

  it('an owner writes its in-flight budget to the Lease before answering past it: twice what it has in flight', async () => {
    const stored = new StoredLease();
    const { admission, admit } = owner(stored);
    await admission.tick();
    expect(stored.lease?.record.budgets).toEqual({});
    expect(allowed(await admit(create('web', 'u1', 2)))).toBe(true);
    expect(stored.lease?.record.budgets).toEqual({ 'team-a/compute': { cpu: '4' } });
    expect(allowed(await admit(create('api', 'u2', 1)))).toBe(true); // within it: no write
    expect(stored.lease?.record.budgets).toEqual({ 'team-a/compute': { cpu: '4' } });
    // A budget that cannot be written: the change is not answered (its claim is kept, as for a lost answer).
    stored.fault = 'not applied';
    expect(unavailable(await admit(create('db', 'u3', 2)))).toBe(true);
    expect(admission.claimsInFlight).toBe(3);
    await admission.tick(); // renewed with what is in flight: 5, so 10
    expect(stored.lease?.record.budgets).toEqual({ 'team-a/compute': { cpu: '10' } });
  });

  describe('its budgets on the Lease (found by a review: each of these held the limit in the search)', () => {
    const budgetOnLease = (stored: StoredLease) => stored.lease?.record.budgets?.['team-a/compute']?.cpu;

    it('keeps to the least budget a write that may not have landed could leave', async () => {
      const stored = new StoredLease();
      const { admission, admit } = owner(stored);
      await admission.tick();
      expect(allowed(await admit(create('web', 'u1', 4)))).toBe(true);
      expect(allowed(await admit(create('api', 'u2', 4)))).toBe(true); // 8 of the budget 8
      expect(budgetOnLease(stored)).toBe('8');
      stored.failWrites = true;
      await admission.tick(); // a renew with 16, not applied
      // Past the 8 the Lease holds: not answered until a larger budget lands, and none can.
      expect(unavailable(await admit(create('db', 'u3', 2)))).toBe(true);
      expect(budgetOnLease(stored)).toBe('8');
    });

    it('counts what it admits during a write from what was in flight as the write began', async () => {
      const stored = new StoredLease();
      const { admission, admit, counted } = owner(stored);
      await admission.tick();
      expect(allowed(await admit(create('web', 'u1', 4)))).toBe(true); // budget 8, counted 10
      const write = stored.hold();
      const renew = admission.tick(); // writes 8 with the count at 10
      await write.reached;
      admission.bindingObserved(binding('web', 'u1', 4, '30'), false);
      counted('4', '30'); // web retired against the count at 30 while the write is in flight
      write.land();
      await renew;
      expect(stored.lease?.record.counted['team-a/compute']).toBe('10');
      // A successor may count from 10: web's 4 and api's 6 must both be within the budget.
      expect(allowed(await admit(create('api', 'u2', 6)))).toBe(true);
      expect(Number(budgetOnLease(stored))).toBeGreaterThanOrEqual(10);
    });

    it('merges the raises of changes decided while one is in flight: two writes for a burst of four', async () => {
      const stored = new StoredLease();
      const { admission, admit } = owner(stored);
      await admission.tick();
      const before = Number(stored.lease!.resourceVersion);
      const write = stored.hold();
      const first = admit(create('web', 'u1', 1)); // its raise is in flight
      await write.reached;
      const rest = ['api', 'db', 'ops'].map((name, i) => admit(create(name, `u${i + 2}`, 1)));
      write.land();
      expect((await Promise.all([first, ...rest])).every(allowed)).toBe(true);
      expect(Number(stored.lease!.resourceVersion) - before).toBe(2);
      expect(budgetOnLease(stored)).toBe('8');
    });

    it('writes with its budgets the newest count it retired claims against', async () => {
      const stored = new StoredLease();
      const { admission, counted } = owner(stored);
      await admission.tick();
      counted('0', '40');
      await admission.tick();
      expect(stored.lease?.record.counted).toEqual({ 'team-a/compute': '40' });
    });

    it('does not carry a budget over a quota deleted and made again during a write', async () => {
      const stored = new StoredLease();
      const { admission, admit, counted, world } = owner(stored);
      await admission.tick();
      expect(allowed(await admit(create('web', 'u1', 8)))).toBe(true);
      admission.bindingObserved(binding('web', 'u1', 8, '30'), false);
      counted('8', '30');
      await admission.tick();
      await admission.tick(); // web counted and retired: nothing in flight, no budget
      const write = stored.hold();
      const renew = admission.tick();
      await write.reached;
      admission.quotaObserved(world.quotas[0]!, true);
      write.land();
      await renew;
      counted('0', '50'); // made again
      expect(allowed(await admit(create('api', 'u2', 6)))).toBe(true);
      expect(budgetOnLease(stored)).toBe('12');
      await admission.tick();
      expect(budgetOnLease(stored)).toBe('12');
    });
  });

  it('a successor after a crash charges its budgets until a count made a landing window into its tenure', async () => {
    const stored = new StoredLease();
    const first = owner(stored, 'webhook-0.a');
    await first.admission.tick();
    expect(allowed(await first.admit(create('web', 'u1', 3)))).toBe(true); // budget 6
    // The first dies; the second sees the Lease unchanged for its duration and takes it.
    const second = owner(stored, 'webhook-1.b');
    await second.admission.tick();
    second.advance(15_000);
    await second.admission.tick();
    expect(second.admission.refusesAfterTakeover).toBe(false);
    expect((await second.admit(create('api', 'u2', 5))).allowed).toBe(false); // 6 + 5 > 10
    expect(allowed(await second.admit(create('api', 'u2', 4)))).toBe(true); // at once
    second.advance(WINDOW_S * 1000);
    second.world.version = 90;
    await second.admission.tick(); // held a landing window: a consistent read at 90, a count asked for
    expect(second.world.counts).toEqual([{ namespace: 'team-a' }]);
    second.counted('7', '90'); // web's 3 and api's 4 landed and are counted: the budget is dropped
    expect(allowed(await second.admit(create('db', 'u3', 3)))).toBe(true);
    expect((await second.admit(create('ops', 'u4', 1))).allowed).toBe(false);
  });

  /**
   * An owner that admitted web (6) and died, its Lease as an older version wrote it (no budgets), and
   * the process that took the Lease over, its quota watch listed or not.
   */
  async function successorOfAnOlderOwner(stored: StoredLease, listed = true) {
    const first = owner(stored, 'webhook-0.a');
    await first.admission.tick();
    expect(allowed(await first.admit(create('web', 'u1', 6)))).toBe(true);
    delete stored.lease!.record.budgets;
    const second = owner(stored, 'webhook-1.b');
    second.world.listed = listed;
    await second.admission.tick();
    second.advance(15_000);
    await second.admission.tick();
    return second;
  }

  it('a successor after a crash of an owner that wrote no budgets refuses increases until a count made a landing window into its tenure', async () => {
    const second = await successorOfAnOlderOwner(new StoredLease());
    const refused = await second.admit(create('api', 'u2', 1));
    expect(unavailable(refused)).toBe(true);
    expect(refused.allowed ? '' : refused.message).toContain(
      'took over from the batched webhooks or from an owner that did not hand over',
    );
    expect(unavailable(await second.admit(create('api', 'u2', 1, true)))).toBe(true); // a dry run too
    second.advance(WINDOW_S * 1000 + 15_000); // a landing window and a Lease duration
    second.world.version = 90;
    await second.admission.tick(); // held a landing window: a consistent read at 90, a count asked for
    expect(second.world.counts).toEqual([{ namespace: 'team-a' }]);
    second.counted('6', '89');
    expect(unavailable(await second.admit(create('api', 'u2', 1)))).toBe(true);
    second.counted('6', '90'); // web's 6 landed and is counted
    expect(allowed(await second.admit(create('api', 'u2', 4)))).toBe(true);
    expect((await second.admit(create('db', 'u3', 1))).allowed).toBe(false);
  });

  it('a successor of a holder that wrote no budgets keeps the unknown in flight until its quota watch has listed', async () => {
    // The search found it before budgets (the trace is unreachable now that every holder writes them):
    // "every quota settled" held over no quota at all, the Lease said nothing was unknown, and the next
    // owner decided from a clean Lease.
    const stored = new StoredLease();
    const second = await successorOfAnOlderOwner(stored, false);
    second.advance(WINDOW_S * 1000 + 15_000);
    second.world.version = 90;
    await second.admission.tick(); // held a landing window: settling starts
    await second.admission.tick();
    expect(stored.lease?.record.unknownInFlight).toBe(true);
    second.world.listed = true;
    second.counted('6', '90');
    await second.admission.tick(); // settled: dropped, and written with the next renew
    await second.admission.tick();
    expect(stored.lease?.record.unknownInFlight).toBe(false);
  });

  it('an owner taking the Lease from the batched modes waits a landing window and a Lease duration past the answer, and a count', async () => {
    // A batched webhook (batched-fence.ts) decides until the renew deadline after its last read of
    // the mark, which may be served until the taking write is answered, so its claims may land until
    // a landing window after that (the Lease duration leaves a margin for clock rates).
    const stored = new StoredLease();
    stored.lease = {
      holder: '',
      durationSeconds: 15,
      transitions: 0,
      record: { ghosts: {}, unknownInFlight: true, counted: {}, batched: {} },
      resourceVersion: '5',
    };
    const { admission, admit, advance, world, counted } = owner(stored);
    expect(await admission.tick()).toBe('acquired');
    expect(unavailable(await admit(create('web', 'u1', 1)))).toBe(true);
    advance(WINDOW_S * 1000);
    world.version = 90;
    await admission.tick();
    advance(14_999);
    await admission.tick();
    expect(world.reads).toBe(0); // not yet: a batched claim may still land
    advance(1);
    await admission.tick();
    expect(world.reads).toBe(1);
    counted('2', '90'); // the count holds the batched claims (reserved) and what landed
    expect(allowed(await admit(create('web', 'u1', 8)))).toBe(true);
    expect((await admit(create('api', 'u2', 1))).allowed).toBe(false);
  });

  it('a graceful handover passes what is in flight on: the successor decides at once, charging it', async () => {
    const stored = new StoredLease();
    const first = owner(stored, 'webhook-0.a');
    await first.admission.tick();
    await first.admit(create('web', 'u1', 6));
    expect(await first.admission.release()).toBe(true);
    expect(unavailable(await first.admit(create('api', 'u2', 1)))).toBe(true);
    const second = owner(stored, 'webhook-1.b');
    await second.admission.tick();
    expect((await second.admit(create('api', 'u2', 5))).allowed).toBe(false);
    expect(allowed(await second.admit(create('api', 'u2', 4)))).toBe(true);
  });

  it('an owner whose renews fail stops deciding at its renew deadline', async () => {
    const stored = new StoredLease();
    const { admission, advance, admit } = owner(stored);
    await admission.tick();
    expect(allowed(await admit(create('web', 'u1', 1)))).toBe(true); // its budget's write renews too
    advance(9_000);
    stored.fault = 'not applied';
    await admission.tick();
    advance(1_000);
    expect(unavailable(await admit(create('api', 'u2', 1)))).toBe(true);
  });

  it('a successor after a handover decides at once on the counts its watch already holds', async () => {
    const stored = new StoredLease();
    const first = owner(stored, 'webhook-0.a');
    await first.admission.tick();
    first.counted('0', '30'); // the first owner retires against the count at 30, and hands that on
    await first.admission.release();
    const second = owner(stored, 'webhook-1.b');
    second.world.quotas = [quota('0', '30')]; // its watch listed the quota at 30 before it took over
    await second.admission.tick();
    expect(allowed(await second.admit(create('web', 'u1', 10)))).toBe(true);
  });

  it('forgets a deleted quota: its claims no longer hold room on one made again under its name', async () => {
    const { admission, world, admit } = owner();
    await admission.tick();
    await admit(create('web', 'u1', 10));
    expect(admission.claimsInFlight).toBe(1);
    admission.quotaObserved(world.quotas[0]!, true);
    expect(admission.claimsInFlight).toBe(0);
    world.quotas = [quota('0', '50')];
    admission.quotaObserved(world.quotas[0]!);
    expect(allowed(await admit(create('api', 'u2', 10)))).toBe(true);
  });

  it('says it is stopping once it handed the Lease on', async () => {
    const { admission, admit } = owner();
    await admission.tick();
    await admission.release();
    const refused = await admit(create('web', 'u1', 1));
    expect(refused.allowed ? '' : refused.message).toContain(
      'stopping and has handed the admission Lease on',
    );
  });
});
