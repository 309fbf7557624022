import type { KarmadaQuota } from '#api';
import { isClusterQuota, quotaName, type SelectedNamespace } from '#quota';
import type { QuotaStore, StoreCallOptions } from '#service-kit';

/**
 * A namespace's KarmadaQuotas without a read per batch: the list last read or written is reused
 * until the watch reports a change the webhook did not write itself (another resourceVersion), a
 * write fails, or the watch is down (then every batch reads, as without the cache). A namespace
 * without quotas is read every time. Writes stay compare-and-swap, so a stale list never admits
 * anything: its write conflicts and the batch reads again. A stale list can deny, for as long as
 * the watch lags, as Kubernetes' own quota admission can with its informer cache.
 *
 * Besides, while the watch runs, each quota as the watch last reported it is kept for `cached` (as
 * Kubernetes' quota admission keeps an informer): the batcher refuses from it what it refuses
 * (admission-batcher.ts). Any copy is sound for a refusal, and the watch, which reports every change
 * in order, keeps it at most its lag behind the Karmada API server.
 *
 * A namespace's list holds the ClusterKarmadaQuotas selecting it too (KubeQuotaStore). One may select
 * any namespace, so a change of one the webhook did not write drops every list, and a namespace's
 * label change drops its own (`namespaceChanged`). `cached` leaves them out: fewer quotas refuse less,
 * never wrongly.
 */
export class CachedQuotaStore implements QuotaStore {
  private readonly lists = new Map<string, KarmadaQuota[]>();
  private readonly ownClusterWrites = new Set<string>();
  /** Namespace -> quota name -> the quota as the watch last reported it. */
  private readonly latest = new Map<string, Map<string, KarmadaQuota>>();
  /** Bumped by every change seen in a namespace: a read that raced one is not kept. */
  private readonly generations = new Map<string, number>();
  /**
   * Bumped whenever the watch stops or starts, or a ClusterKarmadaQuota changes: a read that raced
   * that is not kept either.
   */
  private epoch = 0;
  private watching = false;

  constructor(private readonly inner: QuotaStore) {}

  /** Whether the watch is listed and running (then `cached` knows every quota the watch has seen). */
  get isWatching(): boolean {
    return this.watching;
  }

  /** Whether the watch is listed and running; nothing is reused while it is not. */
  setWatching(watching: boolean): void {
    if (watching === this.watching) return;
    this.watching = watching;
    this.epoch++;
    this.lists.clear();
    this.latest.clear();
  }

  /** A quota the watch reports as added, changed or deleted. */
  observed(quota: KarmadaQuota, deleted: boolean): void {
    if (isClusterQuota(quota)) {
      // Only a version this store wrote: a list read after another writer's change may hold that
      // version too, while a list read before it does not (it lacks the quota, or the old selector's).
      const ownWrite = !deleted && this.ownClusterWrites.delete(versionOf(quota));
      if (!ownWrite) {
        for (const namespace of [...this.lists.keys()]) this.invalidate(namespace);
        this.epoch++; // and no list being read now is kept
      }
      return;
    }
    const namespace = quota.metadata?.namespace;
    if (!namespace) return;
    const cached = this.lists.get(namespace)?.find((q) => quotaName(q) === quotaName(quota));
    const ownWrite = !deleted && cached?.metadata?.resourceVersion === quota.metadata?.resourceVersion;
    if (!ownWrite) this.invalidate(namespace);
    const name = quota.metadata?.name;
    if (!this.watching || !name) return;
    const reported = this.latest.get(namespace) ?? new Map<string, KarmadaQuota>();
    if (deleted) reported.delete(name);
    else reported.set(name, quota);
    this.latest.set(namespace, reported);
  }

  selectedNamespaces(quota: KarmadaQuota): readonly SelectedNamespace[] | undefined {
    return this.inner.selectedNamespaces?.(quota);
  }

  /** A namespace whose labels changed: the ClusterKarmadaQuotas selecting it may have too. */
  namespaceChanged(namespace: string): void {
    this.invalidate(namespace);
  }

  /**
   * The list batches use, when there is one (it has the webhook's own writes), else the quotas as
   * the watch last reported them (see the class comment).
   */
  cached(namespace: string): readonly KarmadaQuota[] | undefined {
    const reported = this.latest.get(namespace);
    return this.lists.get(namespace) ?? (reported?.size ? [...reported.values()] : undefined);
  }

  async list(namespace: string, options?: StoreCallOptions): Promise<KarmadaQuota[]> {
    const cached = this.lists.get(namespace);
    if (cached) return cached;
    const [epoch, generation] = [this.epoch, this.generations.get(namespace)];
    const quotas = await this.inner.list(namespace, options);
    // An empty list is not kept: a quota just created must count from its first admission on, not
    // from when the watch reports it (Kubernetes' quota admission does a live lookup for the same).
    const unchanged = epoch === this.epoch && generation === this.generations.get(namespace);
    if (this.watching && unchanged && quotas.length > 0) this.lists.set(namespace, quotas);
    return quotas;
  }

  /** Writes the status; every list holding the quota (one namespace's, or each a cluster quota is in) gets it. */
  async writeStatus(quota: KarmadaQuota, options?: StoreCallOptions): Promise<KarmadaQuota> {
    const name = quotaName(quota);
    const holding = isClusterQuota(quota)
      ? [...this.lists].filter(([, list]) => list.some((q) => quotaName(q) === name)).map(([ns]) => ns)
      : [quota.metadata!.namespace!];
    try {
      const written = await this.inner.writeStatus(quota, options);
      if (isClusterQuota(written)) this.noteOwnWrite(written);
      for (const namespace of holding) {
        const list = this.lists.get(namespace);
        if (list)
          this.lists.set(
            namespace,
            list.map((q) => (quotaName(q) === name ? written : q)),
          );
      }
      return written;
    } catch (err) {
      for (const namespace of holding) this.invalidate(namespace);
      throw err;
    }
  }

  /** Remembers a ClusterKarmadaQuota version this store wrote, until the watch reports it (bounded). */
  private noteOwnWrite(quota: KarmadaQuota): void {
    this.ownClusterWrites.add(versionOf(quota));
    if (this.ownClusterWrites.size > OWN_WRITES_KEPT)
      this.ownClusterWrites.delete(this.ownClusterWrites.values().next().value!);
  }

  private invalidate(namespace: string): void {
    this.lists.delete(namespace);
    this.generations.set(namespace, (this.generations.get(namespace) ?? 0) + 1);
  }
}

/** ClusterKarmadaQuota versions this store wrote and the watch has not reported yet, at most. */
const OWN_WRITES_KEPT = 10_000;

const versionOf = (quota: KarmadaQuota) => `${quotaName(quota)}@${quota.metadata?.resourceVersion ?? ''}`;
