import type { KarmadaQuota } from '#api';
import { AdmissionLease } from './admission-lease.js';
import type { AdmissionOutcome, AdmissionStrategy, BindingChange } from './admission-strategy.js';
import { BatchedFence } from './batched-fence.js';
import { StoredLease } from './testing/stored-lease.js';

const D = 15_000;
const R = 10_000;
const W = 60_000;

const quota = (name: string, stamp?: string): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name, namespace: 'team-a' },
  spec: { hard: { cpu: '10' } },
  ...(stamp ? { status: { hard: { cpu: '10' }, used: {}, observedBindingsVersion: stamp } } : {}),
});

/** A batched webhook's fence, with its own clock and the API server's binding list at `world.version`. */
function batched(api: StoredLease) {
  const clock = { now: 5_000_000 };
  const world = { version: 100, reads: 0 };
  const fence = new BatchedFence(
    api,
    {
      consistentVersion: async () => {
        world.reads++;
        return String(world.version);
      },
    },
    { durationMs: D, renewDeadlineMs: R, landingWindowMs: W },
    () => clock.now,
  );
  return { fence, world, advance: (ms: number) => (clock.now += ms) };
}

/** An owner-mode process over the same Lease. */
function ownerOf(api: StoredLease, identity = 'owner') {
  const clock = { now: 9_000_000 };
  const lease = new AdmissionLease(
    api,
    { identity, address: `${identity}:8444`, durationMs: D, renewDeadlineMs: R },
    () => clock.now,
  );
  return { lease, advance: (ms: number) => (clock.now += ms) };
}

/** A batched webhook that saw an owner hold the Lease, which then released it (not read since). */
async function afterAnOwnerSeen() {
  const api = new StoredLease();
  const first = ownerOf(api, 'first');
  await first.lease.step();
  const webhook = batched(api);
  await webhook.fence.step();
  await first.lease.release({}, {});
  return { api, ...webhook };
}

describe('BatchedFence', () => {
  it('marks a Lease no one made for the batched modes and decides at once, with nothing to wait for', async () => {
    const api = new StoredLease();
    const { fence } = batched(api);
    expect(fence.refusal([])).toContain('has not been read yet');
    expect(await fence.step()).toEqual({ mode: 'batched' });
    expect(api.lease).toMatchObject({
      holder: '',
      record: { batched: {}, unknownInFlight: true, ghosts: {}, counted: {} },
    });
    expect(fence.refusal([quota('compute')])).toBeUndefined();
  });

  it('decides only while its last read of the mark began less than the renew deadline ago', async () => {
    const api = new StoredLease();
    const { fence, advance } = batched(api);
    await fence.step();
    api.failReads = true;
    advance(R - 1);
    expect((await fence.step()).mode).toBe('unknown');
    expect(fence.refusal([])).toBeUndefined(); // the mark read R - 1 ago still holds
    advance(1);
    expect(fence.refusal([])).toContain('the admission Lease could not be read: connect ECONNREFUSED');
    api.failReads = false;
    await fence.step();
    expect(fence.refusal([])).toBeUndefined();
  });

  it('refuses increases from its first read of a Lease an owner holds, and writes nothing to it', async () => {
    const api = new StoredLease();
    const { fence } = batched(api);
    await fence.step();
    const owner = ownerOf(api);
    expect(await owner.lease.step()).toBe('acquired');
    // The owner took a marked Lease: it waits the landing window and a count (owner-admission.ts).
    expect(api.lease).toMatchObject({ holder: 'owner', record: { unknownInFlight: true } });
    // Until its next read this webhook still decides: the owner's wait covers that.
    expect(fence.refusal([])).toBeUndefined();
    const version = api.lease!.resourceVersion;
    expect(await fence.step()).toEqual({ mode: 'owner', holder: 'owner' });
    expect(fence.refusal([])).toContain('the admission owner (owner, Lease karmada-quota-admission) decides');
    expect(api.lease!.resourceVersion).toBe(version);
  });

  it('after an owner released the Lease, waits a landing window, marks it with a count to reach, and decides on each quota counted past it', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    const { fence, world, advance } = batched(api);
    expect((await fence.step()).mode).toBe('owner');
    await owner.lease.release({ 'team-a/compute': { cpu: '2' } }, {});
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
    advance(W - 1);
    expect((await fence.step()).mode).toBe('owner ended');
    expect(fence.refusal([])).toContain('the admission owner stopped');
    advance(1);
    world.version = 250;
    expect(await fence.step()).toEqual({ mode: 'batched', countedFrom: '250' });
    expect(api.lease?.record).toEqual({
      ghosts: {},
      unknownInFlight: true,
      counted: {},
      batched: { countedFrom: '250' },
    });
    const quotas = [quota('compute', '249'), quota('memory', '250'), quota('new')];
    expect(fence.refusal(quotas)).toContain('increases on compute wait until the reconciler has counted');
    expect(fence.awaitingCount(quotas)).toEqual(['team-a/compute', 'team-a/new']);
    expect(fence.refusal([quota('compute', '251')])).toBeUndefined();
    expect(fence.refusal(undefined)).toContain('not watching the quotas yet');
  });

  it('after an owner stopped renewing, waits its duration by this clock, then a landing window', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    const { fence, advance } = batched(api);
    expect((await fence.step()).mode).toBe('owner');
    advance(D - 1);
    expect((await fence.step()).mode).toBe('owner');
    advance(1);
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
    advance(W);
    expect((await fence.step()).mode).toBe('batched');
    // The owner, resumed, finds its Lease marked: it lost it.
    owner.advance(1);
    expect(await owner.lease.step()).toBe('lost');
  });

  it('an owner taking the Lease during the wait starts it over when it goes', async () => {
    const { api, fence, advance } = await afterAnOwnerSeen();
    await fence.step();
    advance(W / 2);
    const second = ownerOf(api, 'second');
    expect(await second.lease.step()).toBe('acquired');
    expect((await fence.step()).mode).toBe('owner');
    await second.lease.release({}, {});
    advance(W / 2);
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
  });

  it('an owner that took and released the Lease between two reads ended at the later release', async () => {
    // Found by review: the end was kept from the first release, and the mark came a landing window
    // after it, while the second owner's admissions could still land.
    const { api, fence, advance } = await afterAnOwnerSeen();
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
    advance(W / 2);
    const second = ownerOf(api, 'second');
    expect(await second.lease.step()).toBe('acquired');
    await second.lease.release({ 'team-a/compute': { cpu: '1' } }, {});
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
    advance(W - 1);
    expect((await fence.step()).mode).toBe('owner ended');
  });

  it('a Lease deleted after this webhook saw an owner hold it ends the tenure as a release does', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    const { fence, world, advance } = batched(api);
    await fence.step();
    api.lease = undefined;
    expect(await fence.step()).toEqual({ mode: 'owner ended', waitMs: W });
    advance(W);
    world.version = 400;
    expect(await fence.step()).toEqual({ mode: 'batched', countedFrom: '400' });
    expect((api as StoredLease).lease?.record.batched).toEqual({ countedFrom: '400' });
  });

  it('a mark it cannot write, or a version it cannot read, says what the webhook lacks', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    await owner.lease.release({}, {});
    const failing = new BatchedFence(
      api,
      {
        consistentVersion: () => Promise.reject(new Error('resourcebindings is forbidden')),
      },
      { durationMs: D, renewDeadlineMs: R, landingWindowMs: 0 },
      () => 1,
    );
    expect(await failing.step()).toEqual({
      mode: 'unknown',
      problem: expect.stringContaining('the webhook needs list on resourcebindings.work.karmada.io'),
    });
    const { fence, advance } = batched(api);
    await fence.step();
    advance(W);
    api.failWrites = true;
    expect(await fence.step()).toEqual({
      mode: 'unknown',
      problem: expect.stringContaining('the webhook needs create and update on leases in LEASE_NAMESPACE'),
    });
    expect(fence.refusal([])).toContain('could not be written');
  });

  it('a mark another batched webhook wrote is adopted, with its count to reach', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    const a = batched(api);
    const b = batched(api);
    await owner.lease.release({}, {});
    await a.fence.step();
    await b.fence.step();
    a.advance(W);
    b.advance(W);
    a.world.version = 300;
    await a.fence.step();
    b.world.version = 301;
    // b waited too, but reads a's mark before writing one: it reaches a's version, not one of its own.
    expect(await b.fence.step()).toEqual({ mode: 'batched', countedFrom: '300' });
    expect(b.world.reads).toBe(0);
  });

  it('an owner that takes the mark while the write of it is in flight wins: the mark conflicts and nothing is decided', async () => {
    const api = new StoredLease();
    const owner = ownerOf(api);
    await owner.lease.step();
    const { fence, advance } = batched(api);
    await owner.lease.release({}, {});
    await fence.step();
    advance(W);
    const before = api.lease!;
    const held = api.hold();
    const marking = fence.step();
    await held.reached;
    api.lease = { ...before, holder: 'owner', resourceVersion: '999' };
    held.land();
    expect((await marking).mode).toBe('unknown');
    expect(fence.refusal([])).toContain(
      'another process wrote the admission Lease while this webhook marked it',
    );
    expect((await fence.step()).mode).toBe('owner');
  });

  it('a fenced strategy decides through its strategy only while the fence lets it', async () => {
    const api = new StoredLease();
    const { fence } = batched(api);
    const decided: BindingChange[] = [];
    const inner: AdmissionStrategy = {
      admit: (change) => {
        decided.push(change);
        return Promise.resolve({ allowed: true } as AdmissionOutcome);
      },
    };
    const strategy = fence.fenced(inner, () => [quota('compute', '1')]);
    const change = {
      item: { binding: { namespace: 'team-a', name: 'web' }, charge: {}, dryRun: false },
    } as unknown as BindingChange;
    const refused = await strategy.admit(change, Date.now() + 1_000);
    expect(refused).toMatchObject({ allowed: false, unavailable: true });
    expect(decided).toEqual([]);
    await fence.step();
    expect(await strategy.admit(change, Date.now() + 1_000)).toEqual({ allowed: true });
    expect(decided).toEqual([change]);
  });
});
