import type { KarmadaQuota } from '#api';
import { ConflictError, type QuotaStore, type StoreCallOptions } from '#service-kit';
import { CachedQuotaStore } from './cached-quota-store.js';

const quota = (name: string, resourceVersion: string, namespace = 'team-a'): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name, namespace, resourceVersion },
  spec: { hard: { cpu: '10' } },
});

/**
 * The quotas the Karmada API server stores: counts reads, answers writes compare-and-swap with a new
 * resourceVersion.
 */
class StoredQuotas implements QuotaStore {
  reads = 0;
  private version = 100;
  /** Resolves the next list() only when released, to interleave events with a read in flight. */
  hold?: Promise<void>;
  /** The options each write was given. */
  writeOptions: (StoreCallOptions | undefined)[] = [];
  constructor(public quotas: KarmadaQuota[]) {}

  async list(namespace: string): Promise<KarmadaQuota[]> {
    this.reads++;
    const snapshot = this.quotas.filter((q) => q.metadata?.namespace === namespace);
    await this.hold;
    return snapshot;
  }

  async writeStatus(q: KarmadaQuota, options?: StoreCallOptions): Promise<KarmadaQuota> {
    this.writeOptions.push(options);
    const i = this.quotas.findIndex((c) => c.metadata?.name === q.metadata?.name);
    if (this.quotas[i]!.metadata?.resourceVersion !== q.metadata?.resourceVersion)
      throw new ConflictError('changed meanwhile');
    return (this.quotas[i] = this.bump(q));
  }

  /** Another writer (the reconciler, an admin) changes the quota. */
  changeElsewhere(name: string): KarmadaQuota {
    const i = this.quotas.findIndex((c) => c.metadata?.name === name);
    return (this.quotas[i] = this.bump(this.quotas[i]!));
  }

  private bump(q: KarmadaQuota): KarmadaQuota {
    return { ...q, metadata: { ...q.metadata, resourceVersion: String(++this.version) } };
  }
}

function setUp(watching = true) {
  const stored = new StoredQuotas([quota('team', '1'), quota('other', '1', 'team-b')]);
  const store = new CachedQuotaStore(stored);
  store.setWatching(watching);
  return { stored, store };
}

describe('CachedQuotaStore', () => {
  test('reuses the list it read, and after its own write the written version, without reading', async () => {
    const { stored, store } = setUp();
    const [read] = await store.list('team-a');
    const written = await store.writeStatus(read!);
    store.observed(written, false); // the watch echoes our own write
    expect(await store.list('team-a')).toEqual([written]);
    expect(stored.reads).toBe(1);
  });

  test("passes a write's deadline on, so no retry of it starts after the admission is answered", async () => {
    const { stored, store } = setUp();
    const [read] = await store.list('team-a');
    await store.writeStatus(read!, { deadline: 1234 });
    expect(stored.writeOptions).toEqual([{ deadline: 1234 }]);
  });

  test.each([
    [
      'another writer changed a quota',
      (stored: StoredQuotas, store: CachedQuotaStore) =>
        store.observed(stored.changeElsewhere('team'), false),
    ],
    [
      'a quota was deleted',
      (stored: StoredQuotas, store: CachedQuotaStore) => store.observed(stored.quotas[0]!, true),
    ],
    [
      'a quota was added',
      (_: StoredQuotas, store: CachedQuotaStore) => store.observed(quota('new', '7'), false),
    ],
    ['the watch was lost', (_: StoredQuotas, store: CachedQuotaStore) => store.setWatching(false)],
  ])('reads again after: %s', async (_, change) => {
    const { stored, store } = setUp();
    await store.list('team-a');
    change(stored, store);
    store.setWatching(true);
    const [again] = await store.list('team-a');
    expect(stored.reads).toBe(2);
    expect(again).toEqual(stored.quotas[0]);
  });

  test('a change in another namespace keeps the list', async () => {
    const { stored, store } = setUp();
    await store.list('team-a');
    store.observed(stored.changeElsewhere('other'), false);
    await store.list('team-a');
    expect(stored.reads).toBe(1);
  });

  test('a conflicting write drops the list, so the retry reads the current quota', async () => {
    const { stored, store } = setUp();
    const [stale] = await store.list('team-a');
    stored.changeElsewhere('team'); // the watch has not reported it yet
    await expect(store.writeStatus(stale!)).rejects.toThrow(ConflictError);
    const [current] = await store.list('team-a');
    expect(current).toEqual(stored.quotas[0]);
    expect(stored.reads).toBe(2);
  });

  test('a read that raced a change is used once but not kept', async () => {
    const { stored, store } = setUp();
    let release!: () => void;
    stored.hold = new Promise((resolve) => (release = resolve));
    const reading = store.list('team-a');
    store.observed(stored.changeElsewhere('team'), false); // while the read is in flight
    release();
    await reading;
    stored.hold = undefined;
    expect(await store.list('team-a')).toEqual([stored.quotas[0]]);
    expect(stored.reads).toBe(2);
  });

  test('reads a namespace without quotas every time: a quota just created counts at once', async () => {
    const { stored, store } = setUp();
    expect(await store.list('team-c')).toEqual([]);
    stored.quotas.push(quota('new', '1', 'team-c')); // not reported by the watch yet
    expect(await store.list('team-c')).toEqual([quota('new', '1', 'team-c')]);
    expect(stored.reads).toBe(2);
  });

  test('reads for every batch while the watch is not running', async () => {
    const { stored, store } = setUp(false);
    await store.list('team-a');
    await store.list('team-a');
    expect(stored.reads).toBe(2);
  });

  test("cached: the batches' list while it is kept, else the quotas as the watch last reported them", async () => {
    const { stored, store } = setUp();
    expect(store.cached('team-a')).toBeUndefined();
    const [read] = await store.list('team-a');
    expect(store.cached('team-a')).toEqual([read]);
    const written = await store.writeStatus(read!);
    expect(store.cached('team-a')).toEqual([written]); // before the watch echoes it
    const changed = stored.changeElsewhere('team');
    store.observed(changed, false); // drops the batches' list
    expect(store.cached('team-a')).toEqual([changed]);
    store.observed(changed, true);
    expect(store.cached('team-a')).toBeUndefined();
  });

  test('cached: nothing while the watch is not running, nor what it reported before it stopped', async () => {
    const { stored, store } = setUp();
    store.observed(stored.changeElsewhere('team'), false);
    store.setWatching(false);
    expect(store.cached('team-a')).toBeUndefined();
    store.observed(stored.changeElsewhere('team'), false);
    expect(store.cached('team-a')).toBeUndefined();
  });
});

describe('CachedQuotaStore with ClusterKarmadaQuotas', () => {
  const spanning = (resourceVersion: string): KarmadaQuota => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'ClusterKarmadaQuota',
    metadata: { name: 'shared', resourceVersion },
    spec: { hard: { cpu: '10' } },
  });

  /** Namespaces' lists as KubeQuotaStore reads them: their own quotas, and `shared` once it exists. */
  class Spanning implements QuotaStore {
    reads = 0;
    shared?: KarmadaQuota;
    async list(namespace: string): Promise<KarmadaQuota[]> {
      this.reads++;
      return [quota('own', '1', namespace), ...(this.shared ? [this.shared] : [])];
    }
    async writeStatus(q: KarmadaQuota): Promise<KarmadaQuota> {
      return (this.shared = spanning(String(Number(q.metadata!.resourceVersion) + 1)));
    }
  }

  it('a cluster quota created elsewhere reaches every list, even one read after it', async () => {
    const inner = new Spanning();
    const cache = new CachedQuotaStore(inner);
    cache.setWatching(true);
    expect((await cache.list('team-a')).map((q) => q.metadata?.name)).toEqual(['own']);
    inner.shared = spanning('5'); // created; team-b's list is read before the watch reports it
    expect((await cache.list('team-b')).map((q) => q.metadata?.name)).toEqual(['own', 'shared']);
    cache.observed(spanning('5'), false); // not this store's write, though team-b's list holds it
    expect((await cache.list('team-a')).map((q) => q.metadata?.name)).toEqual(['own', 'shared']);
  });

  it("its own write of a cluster quota updates every list holding it, and the watch's report of it drops none", async () => {
    const inner = new Spanning();
    inner.shared = spanning('5');
    const cache = new CachedQuotaStore(inner);
    cache.setWatching(true);
    await cache.list('team-a');
    await cache.list('team-b');
    const written = await cache.writeStatus(spanning('5'));
    expect((await cache.list('team-b')).find((q) => q.metadata?.name === 'shared')).toBe(written);
    const reads = inner.reads;
    cache.observed(written, false);
    await cache.list('team-a');
    await cache.list('team-b');
    expect(inner.reads).toBe(reads);
  });
});
