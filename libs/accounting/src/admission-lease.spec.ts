import { AdmissionLease, type AdmissionRecord, type LeaseApi } from './admission-lease.js';
import { StoredLease } from './testing/stored-lease.js';

const D = 15_000;
const R = 10_000;

/** A process with its own monotonic clock, advanced by hand. */
function process(api: LeaseApi, identity: string) {
  const clock = { now: 1_000_000 };
  const lease = new AdmissionLease(
    api,
    { identity, address: `${identity}:8443`, durationMs: D, renewDeadlineMs: R },
    () => clock.now,
  );
  return { lease, clock, advance: (ms: number) => (clock.now += ms) };
}

const NO_GHOSTS: AdmissionRecord = { address: 'a:8443', ghosts: {}, unknownInFlight: false, counted: {} };

describe('AdmissionLease', () => {
  it('takes a Lease no one ever held at once, with nothing in flight to charge', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    expect(a.lease.owns()).toBe(false);
    expect(await a.lease.step()).toBe('acquired');
    expect(a.lease.owns()).toBe(true);
    expect(api.lease).toMatchObject({ holder: 'a', transitions: 0, record: NO_GHOSTS });
  });

  it('takes a Lease its holder keeps renewing never; one left unrenewed only after its duration by its own clock', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    for (let i = 0; i < 5; i++) {
      a.advance(5_000);
      b.advance(5_000);
      expect(await a.lease.step()).toBe('renewed');
      expect(await b.lease.step()).toBe('held elsewhere');
    }
    // a stops renewing (it crashed): b first sees this version now, and waits a whole duration.
    b.advance(D - 1);
    expect(await b.lease.step()).toBe('held elsewhere');
    b.advance(1);
    expect(await b.lease.step()).toBe('acquired');
    // a did not hand over, but its budgets (none written: nothing admitted) bound what may still land.
    expect(api.lease).toMatchObject({
      holder: 'b',
      transitions: 1,
      record: { unknownInFlight: false, ghosts: {}, budgets: {} },
    });
    expect(b.lease.owns()).toBe(true);
  });

  it('says when the Lease held elsewhere expires by its own clock, so a round can be due then', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    expect(b.lease.expiresInMs()).toBeUndefined();
    await a.lease.step();
    await b.lease.step();
    expect(b.lease.expiresInMs()).toBe(D);
    b.advance(D - 300);
    expect(b.lease.expiresInMs()).toBe(300);
    await a.lease.step(); // renewed: a new version, first seen at b's next read
    await b.lease.step();
    expect(b.lease.expiresInMs()).toBe(D);
    expect(a.lease.expiresInMs()).toBeUndefined(); // a holds it
  });

  it("a renew its watch shows counts from then, not from the next read: a crashed holder's Lease expires sooner", async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    await b.lease.step();
    b.advance(900);
    await a.lease.step(); // renewed, then a crashes
    b.lease.observe(api.lease); // the watch delivers the renew at once
    expect(b.lease.expiresInMs()).toBe(D);
    b.lease.observe(api.lease); // the same version again (a relist): still counted from its first sighting
    b.advance(D - 1);
    expect(await b.lease.step()).toBe('held elsewhere'); // the read shows the same version
    b.advance(1);
    expect(await b.lease.step()).toBe('acquired');
  });

  it('a version its watch shows that a round had already passed only moves expiry later', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    const older = api.lease!;
    await a.lease.step();
    await b.lease.step(); // reads the newer version
    b.advance(1_000);
    b.lease.observe(older); // a late event of the older one
    expect(b.lease.expiresInMs()).toBe(D);
    b.lease.observe(undefined); // deleted: nothing held elsewhere until the next read
    expect(b.lease.expiresInMs()).toBeUndefined();
    expect(b.lease.holderAddress()).toBeUndefined();
  });

  it.each([
    [
      'the budgets it wrote, as ghosts beside those it carried',
      { 'team-a/q': { cpu: '1' } },
      { ghosts: { 'team-a/q': { cpu: '3' }, 'team-b/q': { memory: '1Gi' } }, unknownInFlight: false },
    ],
    [
      'no budgets (an older version): every increase waits',
      undefined,
      { ghosts: { 'team-a/q': { cpu: '1' } }, unknownInFlight: true },
    ],
  ])('a successor of a crashed holder charges %s', async (_what, ghosts, expected) => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    a.advance(1_000);
    const budgets = { 'team-a/q': { cpu: '2' }, 'team-b/q': { memory: '1Gi' } };
    expect(
      await a.lease.step((carried) => ({
        ...carried,
        ghosts: ghosts ?? { 'team-a/q': { cpu: '1' } },
        ...(ghosts ? { budgets } : { budgets: undefined }),
      })),
    ).toBe('renewed');
    if (!ghosts) delete api.lease!.record.budgets;
    await b.lease.step();
    b.advance(D);
    expect(await b.lease.step()).toBe('acquired');
    expect(b.lease.carried()).toMatchObject({ ...expected, budgets: {} });
  });

  it('persists a record between rounds as a renew: the Lease moves on, and owns() counts from it', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    await a.lease.step();
    a.advance(R - 1);
    expect(await a.lease.persist((carried) => ({ ...carried, budgets: { 'team-a/q': { cpu: '4' } } }))).toBe(
      true,
    );
    expect(api.lease?.record.budgets).toEqual({ 'team-a/q': { cpu: '4' } });
    a.advance(R - 1);
    expect(a.lease.owns()).toBe(true);
    api.fault = 'not applied';
    expect(await a.lease.persist((carried) => carried)).toBe(false);
    a.advance(1);
    expect(a.lease.owns()).toBe(false);
    expect(await a.lease.persist((carried) => carried)).toBe(false); // not held in time: not written
  });

  it("knows the holder's address while another holds it, not once it would expire, nor while free or its own", async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    expect(b.lease.holderAddress()).toBeUndefined(); // unread
    await a.lease.step();
    expect(a.lease.holderAddress()).toBeUndefined(); // its own
    expect(await b.lease.step()).toBe('held elsewhere');
    expect(b.lease.holderAddress()).toBe('a:8443');
    // a stops renewing: b forwards no more once the Lease would expire by its clock, unread or not.
    api.failReads = true;
    b.advance(D - 1);
    expect(await b.lease.step()).toBe('unreachable');
    expect(b.lease.holderAddress()).toBe('a:8443');
    b.advance(1);
    expect(b.lease.holderAddress()).toBeUndefined();
    api.failReads = false;
    a.advance(D);
    expect(await a.lease.step()).toBe('renewed');
    await a.lease.release({}, {});
    expect(await b.lease.step()).toBe('acquired');
    expect(b.lease.holderAddress()).toBeUndefined(); // now its own
  });

  it('decides nothing once its renew deadline has passed, and again after a renew', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    await a.lease.step();
    a.advance(R - 1);
    expect(a.lease.owns()).toBe(true);
    a.advance(1);
    expect(a.lease.owns()).toBe(false);
    expect(a.lease.tenureMs()).toBeUndefined();
    expect(await a.lease.step()).toBe('renewed');
    expect(a.lease.owns()).toBe(true);
  });

  it('counts a renew from when it began, and a renew whose answer was lost from the last one known', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    await a.lease.step();
    a.advance(6_000);
    api.fault = 'answer lost';
    expect(await a.lease.step()).toBe('unreachable');
    a.advance(4_000); // 10 s since the last renew known to have landed
    expect(a.lease.owns()).toBe(false);
    // The Lease names this process: it renews on the version its lost write made.
    expect(await a.lease.step()).toBe('renewed');
    expect(a.lease.owns()).toBe(true);
    expect(a.lease.tenureMs()).toBe(10_000);
  });

  it('a write refused leaves it held until the renew deadline, then it decides nothing', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    await a.lease.step();
    a.advance(5_000);
    api.fault = 'not applied';
    expect(await a.lease.step()).toBe('unreachable');
    expect(a.lease.owns()).toBe(true);
    a.advance(5_000);
    expect(a.lease.owns()).toBe(false);
  });

  it('a paused owner resumes without deciding: its clock ran, its Lease moved on', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    await b.lease.step();
    b.advance(D);
    a.advance(D); // SIGSTOP: the monotonic clock runs on
    expect(await b.lease.step()).toBe('acquired');
    expect(a.lease.owns()).toBe(false);
    expect(await a.lease.step()).toBe('lost');
    expect(a.lease.owns()).toBe(false);
  });

  it('a graceful handover stops deciding at once and passes what is in flight on as ghosts', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    await b.lease.step();
    const released = a.lease.release({ 'team-a/q': { cpu: '2' } }, { 'team-a/q': '40' });
    expect(a.lease.owns()).toBe(false);
    expect(await released).toBe(true);
    expect(api.lease).toMatchObject({ holder: '', record: { ghosts: { 'team-a/q': { cpu: '2' } } } });
    // Free: taken at once, without waiting a duration, and nothing unknown.
    expect(await b.lease.step()).toBe('acquired');
    expect(b.lease.carried()).toEqual({
      address: 'b:8443',
      ghosts: { 'team-a/q': { cpu: '2' } },
      unknownInFlight: false,
      counted: { 'team-a/q': '40' },
      budgets: {},
    });
    expect(await a.lease.step()).toBe('held elsewhere');
  });

  it('ghosts are carried through takeovers until an owner drops them', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    const c = process(api, 'c');
    await a.lease.step();
    await a.lease.release({ 'team-a/q': { cpu: '2' } }, { 'team-a/q': '40' });
    await b.lease.step();
    await c.lease.step();
    c.advance(D); // b crashed; it had written budgets (none: it admitted nothing)
    expect(await c.lease.step()).toBe('acquired');
    expect(c.lease.carried()).toMatchObject({ ghosts: { 'team-a/q': { cpu: '2' } }, unknownInFlight: false });
    expect(api.lease?.transitions).toBe(2);
    c.lease.dropGhosts();
    expect(await c.lease.step()).toBe('renewed');
    expect(api.lease?.record).toEqual({
      address: 'c:8443',
      ghosts: {},
      unknownInFlight: false,
      counted: { 'team-a/q': '40' },
      budgets: {},
    });
  });

  it('two processes racing for a free Lease: one wins, the other sees a conflict', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    const [first, second] = await Promise.all([a.lease.step(), b.lease.step()]);
    expect([first, second].sort()).toEqual(['acquired', 'held elsewhere']);
    expect([a.lease.owns(), b.lease.owns()].filter(Boolean)).toHaveLength(1);
  });

  it('keeps holding when its own write, delayed past its timeout, lands before its next one', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    await a.lease.step();
    a.advance(3_000);
    // The renew times out at the client, but the API server applies it after a's next read.
    const delayed = api.write.bind(api);
    let late: (() => Promise<unknown>) | undefined;
    api.write = async (next, expected) => {
      late = () => delayed(next, expected);
      throw new Error('timed out');
    };
    expect(await a.lease.step()).toBe('unreachable');
    api.write = async (next, expected) => {
      await late?.();
      api.write = delayed;
      return delayed(next, expected);
    };
    expect(await a.lease.step()).toBe('unreachable'); // its write conflicts with its own delayed one
    expect(a.lease.owns()).toBe(true);
    expect(await a.lease.step()).toBe('renewed');
    expect(a.lease.tenureMs()).toBe(3_000);
  });

  it('hands on what the ledger says is in flight, not ghosts it has settled', async () => {
    const api = new StoredLease();
    const a = process(api, 'a');
    const b = process(api, 'b');
    await a.lease.step();
    await a.lease.release({ 'team-a/q': { cpu: '2' } }, {});
    await b.lease.step();
    await b.lease.release({}, {});
    expect(api.lease?.record.ghosts).toEqual({});
  });
});
