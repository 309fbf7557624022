import type { KarmadaQuota, ResourceBinding } from '#api';
import { Quantity } from '#quantity';
import { bindingCharge } from '#quota';
import { ConflictError, type QuotaStore } from '#service-kit';
import { AdmissionBatcher } from './admission-batcher.js';
import { NO_OBSERVER, type AdmissionOutcome, type AdmissionStrategy } from './admission-strategy.js';
import { CachedQuotaStore } from './cached-quota-store.js';
import { CasPerAdmission } from './cas-per-admission.js';

/** A deterministic PRNG (mulberry32), so a failing interleaving can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * KarmadaQuotas with the API server's compare-and-swap semantics, plus a concurrent writer that
 * bumps a quota's resourceVersion right before some of our writes (a reconciler updating status),
 * and random delays so requests interleave with batches in flight.
 */
class CasStore implements QuotaStore {
  private readonly quotas = new Map<string, KarmadaQuota>();
  private version = 1;
  conflicts = 0;
  writes = 0;
  reads = 0;

  constructor(
    quotas: KarmadaQuota[],
    private readonly random: () => number,
    private readonly conflictRate: number,
    private readonly conflictOnly?: string,
  ) {
    for (const q of quotas) this.put(q);
  }

  private put(q: KarmadaQuota): void {
    this.quotas.set(q.metadata!.name!, {
      ...structuredClone(q),
      metadata: { ...q.metadata, resourceVersion: String(this.version++) },
    });
  }

  private async jitter(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, Math.floor(this.random() * 3)));
  }

  async list(namespace: string): Promise<KarmadaQuota[]> {
    this.reads++;
    await this.jitter();
    return [...this.quotas.values()]
      .filter((q) => q.metadata?.namespace === namespace)
      .map((q) => structuredClone(q));
  }

  async writeStatus(quota: KarmadaQuota): Promise<KarmadaQuota> {
    await this.jitter();
    const name = quota.metadata!.name!;
    const current = this.quotas.get(name)!;
    if (
      (this.conflictOnly === undefined || this.conflictOnly === name) &&
      this.random() < this.conflictRate
    ) {
      this.conflicts++;
      this.put({ ...current, status: { ...current.status, used: current.status?.used ?? {} } }); // a concurrent status write
      throw new ConflictError(`${name} changed`);
    }
    if (quota.metadata?.resourceVersion !== current.metadata?.resourceVersion)
      throw new ConflictError(`${name} changed`);
    this.writes++;
    this.put({ ...current, status: quota.status });
    return structuredClone(this.quotas.get(name)!);
  }

  get(name: string): KarmadaQuota {
    return this.quotas.get(name)!;
  }
}

const NAMESPACE = 'team-a';
const TIMING = { ttlSeconds: 120, landingWindowSeconds: 60, clock: Date.now };

function quota(name: string, hard: Record<string, string>): KarmadaQuota {
  return {
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name, namespace: NAMESPACE },
    spec: { hard },
    // Usage counted by the reconciler: nothing runs yet.
    status: { used: Object.fromEntries(Object.keys(hard).map((key) => [key, '0'])) },
  };
}

function binding(name: string, cpu = '1', replicas = 1): ResourceBinding {
  return {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: { name, namespace: NAMESPACE, uid: `uid-${name}` },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NAMESPACE },
      replicas,
      replicaRequirements: { resourceRequest: { cpu } },
    },
  };
}

function admit(
  strategy: AdmissionStrategy,
  rb: ResourceBinding,
  dryRun = false,
  answerBy = Date.now() + 60_000,
): Promise<AdmissionOutcome> {
  return strategy.admit(
    {
      item: {
        binding: { namespace: NAMESPACE, name: rb.metadata!.name!, uid: rb.metadata!.uid },
        charge: bindingCharge(rb).charge,
        dryRun,
      },
      object: rb,
    },
    answerBy,
  );
}

const reservedCpu = (q: KarmadaQuota): Quantity => Quantity.parse(String(q.status?.reserved?.cpu ?? '0'));
const reservedNames = (q: KarmadaQuota): string[] =>
  (q.status?.reservations ?? []).map((r) => r.reservedBy.name).sort();

describe('AdmissionBatcher', () => {
  test.each([
    { seed: 1, conflictRate: 0, cached: false },
    { seed: 2, conflictRate: 0.3, cached: false },
    { seed: 3, conflictRate: 0.6, cached: false },
    // The webhook's cache: the concurrent writer's changes are never reported (as if the watch
    // lagged behind all of them), only the compare-and-swap writes reveal them.
    { seed: 4, conflictRate: 0, cached: true },
    { seed: 5, conflictRate: 0.3, cached: true },
    { seed: 6, conflictRate: 0.6, cached: true },
  ])(
    '500 concurrent 1-CPU bindings against a 50-CPU quota admit exactly 50 (seed $seed, conflict rate $conflictRate, cached $cached)',
    async ({ seed, conflictRate, cached }) => {
      const random = prng(seed);
      const store = new CasStore([quota('team-a', { cpu: '50' })], random, conflictRate);
      const cache = new CachedQuotaStore(store);
      cache.setWatching(true);
      const batches: number[] = [];
      const batcher = new AdmissionBatcher(
        cached ? cache : store,
        { ...TIMING, maxConflictRetries: 100 },
        {
          batch: (size) => batches.push(size),
          conflict: () => {},
          refusedOnArrival: () => {},
        },
      );
      const bindings = Array.from({ length: 500 }, (_, i) => binding(`rb-${i}`));
      const outcomes = await Promise.all(bindings.map((rb) => admit(batcher, rb)));

      const admitted = bindings.filter((_, i) => outcomes[i]!.allowed).map((rb) => rb.metadata!.name!);
      expect(admitted).toHaveLength(50);
      for (const outcome of outcomes.filter((o) => !o.allowed)) {
        expect(outcome).toMatchObject({ allowed: false, quota: 'team-a', exceeded: ['cpu'] });
        expect((outcome as { message: string }).message).toBe(
          'exceeded quota: team-a, requested: cpu=1, used: cpu=50, limited: cpu=50',
        );
      }
      const final = store.get('team-a');
      expect(reservedCpu(final).cmp(Quantity.parse('50'))).toBe(0);
      expect(reservedNames(final)).toEqual([...admitted].sort()); // no lost admit, no denied reservation
      if (conflictRate > 0) expect(store.conflicts).toBeGreaterThan(0);
      expect(batches.length).toBeLessThan(500); // requests were batched
      expect(store.writes).toBeLessThan(500);
      // Uncached, every round of every batch reads; cached, only the first and those after a conflict.
      if (cached) expect(store.reads).toBe(1 + store.conflicts);
      else expect(store.reads).toBeGreaterThanOrEqual(batches.length);
    },
  );

  test('a binding matched by two quotas is admitted only if both admit, under conflicts', async () => {
    const random = prng(7);
    // Conflicts only on the second quota's writes: a request claimed on `cpu` in one round and denied
    // by `pods` in the next keeps its `cpu` claim until it lapses (never restored from an older copy).
    const store = new CasStore(
      [quota('cpu', { cpu: '100' }), quota('pods', { pods: '30' })],
      random,
      0.5,
      'pods',
    );
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 200 });
    const bindings = Array.from({ length: 200 }, (_, i) => binding(`rb-${i}`));
    const outcomes = await Promise.all(bindings.map((rb) => admit(batcher, rb)));

    const admitted = bindings
      .filter((_, i) => outcomes[i]!.allowed)
      .map((rb) => rb.metadata!.name!)
      .sort();
    expect(admitted).toHaveLength(30);
    expect(reservedNames(store.get('pods'))).toEqual(admitted);
    expect(reservedNames(store.get('cpu'))).toEqual(expect.arrayContaining(admitted));
    expect(reservedCpu(store.get('cpu')).cmp(Quantity.parse('30'))).toBeGreaterThanOrEqual(0);
    expect(store.conflicts).toBeGreaterThan(0);
  });

  test('the same request seen many times at once charges once', async () => {
    const store = new CasStore([quota('team-a', { cpu: '10' })], prng(11), 0.3);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 100 });
    const rb = binding('web', '2', 3);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => admit(batcher, rb)));
    expect(outcomes.every((o) => o.allowed)).toBe(true);
    expect(reservedCpu(store.get('team-a')).cmp(Quantity.parse('6'))).toBe(0);
    expect(reservedNames(store.get('team-a'))).toEqual(['web']);
  });

  test('dry-run requests get the real answer and write nothing', async () => {
    const store = new CasStore([quota('team-a', { cpu: '1' })], prng(5), 0);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 10 });
    expect(await admit(batcher, binding('fits', '1'), true)).toEqual({ allowed: true });
    expect(await admit(batcher, binding('too-big', '2'), true)).toMatchObject({
      allowed: false,
      exceeded: ['cpu'],
    });
    expect(store.writes).toBe(0);
    expect(store.get('team-a').status?.reservations).toBeUndefined();
  });

  test('a quota that keeps conflicting fails closed with a message saying so', async () => {
    const store = new CasStore([quota('team-a', { cpu: '10' })], () => 0, 1);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 3 });
    const outcome = await admit(batcher, binding('web'));
    expect(outcome).toMatchObject({ allowed: false, unavailable: true });
    expect((outcome as { message: string }).message).toContain(
      'kept changing under concurrent writers (3 conflicts in a row)',
    );
  });

  test('a request past its deadline (answered already) has nothing written for it', async () => {
    const store = new CasStore([quota('team-a', { cpu: '10' })], prng(1), 0);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 3 });
    const outcome = await admit(batcher, binding('web'), false, Date.now() - 1);
    expect(outcome).toMatchObject({ allowed: false, unavailable: true });
    expect(store.writes).toBe(0);
  });

  test('a request whose deadline passes between rounds has no further write, and its earlier claim lapses', async () => {
    // Round 1 writes `cpu`, then the write of `pods` is slow and conflicts: by round 2 the request
    // has been answered (fail closed): nothing more is written for it, and its `cpu` claim stays
    // until its expiration (conservative: an older copy is never restored over others' changes).
    class SlowConflictOnPods extends CasStore {
      private slowed = false;
      override async writeStatus(q: KarmadaQuota): Promise<KarmadaQuota> {
        if (q.metadata!.name === 'pods' && !this.slowed) {
          this.slowed = true;
          await new Promise((resolve) => setTimeout(resolve, 60));
          throw new ConflictError('pods changed');
        }
        return super.writeStatus(q);
      }
    }
    const store = new SlowConflictOnPods(
      [quota('cpu', { cpu: '10' }), quota('pods', { pods: '10' })],
      prng(1),
      0,
    );
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 3 });
    const outcome = await admit(batcher, binding('web'), false, Date.now() + 30);
    expect(outcome).toMatchObject({ allowed: false, unavailable: true });
    expect(await admit(batcher, binding('next'))).toEqual({ allowed: true });
    expect(reservedNames(store.get('cpu'))).toEqual(['next', 'web']);
    expect(reservedNames(store.get('pods'))).toEqual(['next']);
  });

  test('while a batch is being written, a change that cannot fit after it and the queue is refused at once', async () => {
    let release: (() => void) | undefined;
    class HeldWrites extends CasStore {
      override async writeStatus(q: KarmadaQuota): Promise<KarmadaQuota> {
        await new Promise<void>((resolve) => (release = resolve));
        release = undefined;
        return super.writeStatus(q);
      }
    }
    const store = new HeldWrites([quota('team-a', { cpu: '10' })], prng(1), 0);
    const refusedOnArrival: string[] = [];
    const batcher = new AdmissionBatcher(
      store,
      { ...TIMING, maxConflictRetries: 3 },
      { ...NO_OBSERVER, refusedOnArrival: () => refusedOnArrival.push('refused') },
    );
    const answered: string[] = [];
    const track = (rb: ResourceBinding) =>
      admit(batcher, rb).then((outcome) => {
        answered.push(rb.metadata!.name!);
        return outcome;
      });
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const web = track(binding('web', '4'));
    while (release === undefined) await tick(); // web's claim is being written

    const huge = track(binding('huge', '7')); // 4 + 7 > 10
    const small = track(binding('small', '2')); // 4 + 2 fits: queued, and projected
    const medium = track(binding('medium', '5')); // 4 + 2 + 5 > 10
    const webAgain = track(binding('web', '20')); // web is in flight: waits, decided after it
    for (let i = 0; i < 5; i++) await tick();
    expect(answered).toEqual(['huge', 'medium']);
    expect(refusedOnArrival).toHaveLength(2);

    const webWrite = release!;
    webWrite();
    while (release === undefined || release === webWrite) await tick(); // the next batch's claims
    release();
    expect(await web).toEqual({ allowed: true });
    expect(await small).toEqual({ allowed: true });
    expect(await webAgain).toMatchObject({ allowed: false, exceeded: ['cpu'] });
    expect(await huge).toMatchObject({
      allowed: false,
      message: 'exceeded quota: team-a, requested: cpu=7, used: cpu=4, limited: cpu=10',
    });
    expect(await medium).toMatchObject({
      allowed: false,
      message: 'exceeded quota: team-a, requested: cpu=5, used: cpu=6, limited: cpu=10',
    });
    expect(reservedNames(store.get('team-a'))).toEqual(['small', 'web']);
  });

  test('before the batch in flight is decided, the quotas a caching store holds refuse what they refuse', async () => {
    let releaseRead: (() => void) | undefined;
    class HeldSecondRead extends CasStore {
      override async list(namespace: string): Promise<KarmadaQuota[]> {
        if (this.reads === 1) await new Promise<void>((resolve) => (releaseRead = resolve));
        return super.list(namespace);
      }
    }
    const store = new HeldSecondRead([quota('team-a', { cpu: '10' })], prng(1), 0);
    const cache = new CachedQuotaStore(store);
    cache.setWatching(true);
    const batcher = new AdmissionBatcher(cache, { ...TIMING, maxConflictRetries: 3 });
    expect(await admit(batcher, binding('first', '4'))).toEqual({ allowed: true });
    cache.observed(store.get('team-a'), false); // the watch reports our write: the cache keeps it
    cache.observed(
      { ...store.get('team-a'), metadata: { ...store.get('team-a').metadata, resourceVersion: 'x' } },
      false,
    );
    // The batches' list is dropped (another resourceVersion), the watch's copy stays: the next batch reads, held.
    const web = admit(batcher, binding('web', '1'));
    while (releaseRead === undefined) await new Promise((resolve) => setImmediate(resolve));
    let hugeAnswered = false;
    const huge = admit(batcher, binding('huge', '7')).then((o) => ((hugeAnswered = true), o));
    await new Promise((resolve) => setImmediate(resolve));
    expect(hugeAnswered).toBe(true); // 4 + 7 > 10, from the watch's copy
    releaseRead();
    expect(await web).toEqual({ allowed: true });
    expect(await huge).toMatchObject({ allowed: false, exceeded: ['cpu'] });
  });

  test('a namespace without a KarmadaQuota is admitted without any write', async () => {
    const store = new CasStore([], prng(1), 0);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 3 });
    expect(await admit(batcher, binding('web'))).toEqual({ allowed: true });
    expect(store.writes).toBe(0);
  });

  test('a quota tracking cpu refuses a binding without a cpu request', async () => {
    const store = new CasStore([quota('team-a', { cpu: '10' })], prng(1), 0);
    const batcher = new AdmissionBatcher(store, { ...TIMING, maxConflictRetries: 3 });
    const rb = binding('no-requests');
    rb.spec.replicaRequirements = undefined;
    const outcome = await admit(batcher, rb);
    expect(outcome).toMatchObject({ allowed: false, exceeded: [] });
    expect((outcome as { message: string }).message).toContain('requests.cpu');
    expect(store.writes).toBe(0);
  });
});

describe('CasPerAdmission (the simple design, for the benchmark)', () => {
  test('concurrent admissions each write their own status and never over-admit; losers fail closed', async () => {
    const store = new CasStore([quota('team-a', { cpu: '50' })], prng(3), 0);
    const sizes: number[] = [];
    let conflicts = 0;
    const cas = new CasPerAdmission(store, TIMING, {
      batch: (size) => sizes.push(size),
      conflict: () => conflicts++,
      refusedOnArrival: () => {},
    });
    const bindings = Array.from({ length: 200 }, (_, i) => binding(`rb-${i}`));
    const outcomes = await Promise.all(bindings.map((rb) => admit(cas, rb)));

    const admitted = bindings.filter((_, i) => outcomes[i]!.allowed).map((rb) => rb.metadata!.name!);
    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted.length).toBeLessThanOrEqual(50);
    expect(store.writes).toBe(admitted.length); // one status write per admission: nothing batched
    expect(sizes).toEqual(bindings.map(() => 1));
    expect(conflicts).toBeGreaterThan(0); // concurrent readers of one quota collide
    for (const outcome of outcomes.filter((o) => !o.allowed)) {
      const message = (outcome as { message: string }).message;
      if ('unavailable' in outcome) expect(message).toContain('kept changing under concurrent writers');
      else expect(message).toMatch(/^exceeded quota: team-a, requested: cpu=1, used: cpu=50/);
    }
    const final = store.get('team-a');
    expect(reservedNames(final)).toEqual([...admitted].sort());
    expect(reservedCpu(final).cmp(Quantity.parse(String(admitted.length)))).toBe(0);
  });

  test('one at a time, it admits up to the limit and denies the rest with the quota message', async () => {
    const store = new CasStore([quota('team-a', { cpu: '3' })], prng(9), 0);
    const cas = new CasPerAdmission(store, TIMING);
    const outcomes: AdmissionOutcome[] = [];
    for (let i = 0; i < 5; i++) outcomes.push(await admit(cas, binding(`rb-${i}`)));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false, false]);
    expect(outcomes[4]).toMatchObject({ exceeded: ['cpu'] });
    expect(store.writes).toBe(3);
    expect(reservedNames(store.get('team-a'))).toEqual(['rb-0', 'rb-1', 'rb-2']);
  });

  test('a status write that keeps conflicting is retried 5 times, then the request fails closed', async () => {
    const store = new CasStore([quota('team-a', { cpu: '10' })], () => 0, 1);
    const cas = new CasPerAdmission(store, TIMING);
    const outcome = await admit(cas, binding('web'));
    expect(store.conflicts).toBe(6); // the first attempt and 5 retries
    expect(outcome).toMatchObject({ allowed: false, unavailable: true });
    expect((outcome as { message: string }).message).toContain('(5 conflicts in a row)');
  });
});
