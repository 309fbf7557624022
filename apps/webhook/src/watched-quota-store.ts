import type * as k8s from '@kubernetes/client-node';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { CachedQuotaStore } from '#accounting';
import { CLUSTER_KARMADA_QUOTA, describeError, KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { clusterQuotaNamed, limitsNamespace } from '#quota';
import { customObjectInformer, KubeQuotaStore, ResilientInformer, type QuotaRef } from '#service-kit';
import type { NamespaceLabels } from './namespace-labels.js';

type Watched = 'KarmadaQuotas' | 'ClusterKarmadaQuotas' | 'namespaces';

/**
 * The CachedQuotaStore fed by watches of every KarmadaQuota, every ClusterKarmadaQuota and every
 * namespace's labels on the Karmada API server, for the webhook's life. Lists are reused only while
 * all three are listed and running.
 */
export class WatchedQuotaStore extends CachedQuotaStore implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('quota-cache');
  private readonly informer: k8s.ObjectCache<KarmadaQuota>;
  private readonly clusterInformer: k8s.ObjectCache<KarmadaQuota>;
  private readonly watches: ResilientInformer<KarmadaQuota>[];
  private readonly listed = new Set<Watched>();
  private readonly listeners: ((quota: KarmadaQuota, deleted: boolean) => void)[] = [];

  constructor(
    karmada: k8s.KubeConfig,
    private readonly namespaces: NamespaceLabels,
  ) {
    super(new KubeQuotaStore(karmada, namespaces));
    const informer = customObjectInformer<KarmadaQuota>(karmada, KARMADA_QUOTA);
    const clusterInformer = customObjectInformer<KarmadaQuota>(karmada, CLUSTER_KARMADA_QUOTA);
    this.informer = informer;
    this.clusterInformer = clusterInformer;
    this.watches = [
      this.watchOf(informer, 'KarmadaQuotas'),
      this.watchOf(clusterInformer, 'ClusterKarmadaQuotas'),
    ];
    namespaces.subscribe({
      changed: (namespace) => this.namespaceChanged(namespace),
      watching: (listed) => this.setListed('namespaces', listed),
    });
  }

  private watchOf(informer: k8s.Informer<KarmadaQuota>, watched: Watched): ResilientInformer<KarmadaQuota> {
    // A list's items carry no kind, and the kind tells the two quotas of one name apart (quotaName).
    const kindOf = (quota: KarmadaQuota): KarmadaQuota =>
      watched === 'ClusterKarmadaQuotas' ? { ...quota, kind: CLUSTER_KARMADA_QUOTA.kind } : quota;
    return new ResilientInformer<KarmadaQuota>(
      informer,
      {
        upsert: (reported) => this.report(kindOf(reported), false),
        remove: (reported) => this.report(kindOf(reported), true),
        synced: () => this.setListed(watched, true),
        failed: (err) => {
          this.setListed(watched, false);
          this.logger.warn(
            { error: describeError(err) },
            `watch of ${watched} failed, reading the quotas for every batch until it is back`,
          );
        },
      },
      10_000,
    );
  }

  /** A quota the watch reports: the cache first, then the listeners. */
  private report(quota: KarmadaQuota, deleted: boolean): void {
    this.observed(quota, deleted);
    for (const listener of this.listeners) listener(quota, deleted);
  }

  private setListed(watched: Watched, listed: boolean): void {
    if (listed) this.listed.add(watched);
    else this.listed.delete(watched);
    this.setWatching(this.listed.size === 3);
  }

  /**
   * The object a decision's quota (quotaName) names in a namespace, with its uid as the watch last
   * saw it (none before it is listed, or once deleted).
   */
  refOf(namespace: string, quota: string): QuotaRef {
    const name = clusterQuotaNamed(quota);
    if (name === undefined)
      return { namespace, name: quota, uid: this.informer.get(quota, namespace)?.metadata?.uid };
    return {
      namespace: '',
      name,
      uid: this.clusterInformer.get(name)?.metadata?.uid,
      kind: { apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion, kind: CLUSTER_KARMADA_QUOTA.kind },
    };
  }

  /**
   * The quotas limiting the namespace as the watches last listed them: its KarmadaQuotas and the
   * ClusterKarmadaQuotas selecting it or still counting it (limitsNamespace); undefined while a watch
   * is not running or the namespace is not watched yet.
   */
  watchedIn(namespace: string): readonly KarmadaQuota[] | undefined {
    const labels = this.isWatching ? this.namespaces.watched(namespace) : undefined;
    if (labels === undefined) return undefined;
    const spanning = this.clusterQuotas().filter((quota) => limitsNamespace(quota, namespace, labels));
    return [...this.informer.list(namespace), ...spanning];
  }

  /** Calls `listener` with each quota the watches report added, changed or deleted, after the cache has it. */
  onQuota(listener: (quota: KarmadaQuota, deleted: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Every KarmadaQuota and ClusterKarmadaQuota as the watches last listed them; undefined until listed. */
  allWatched(): KarmadaQuota[] | undefined {
    if (!this.isWatching) return undefined;
    return [...this.informer.list(), ...this.clusterQuotas()];
  }

  /** The ClusterKarmadaQuotas as listed, each with its kind (a list's items carry none; quotaName needs it). */
  private clusterQuotas(): KarmadaQuota[] {
    return this.clusterInformer.list().map((quota) => ({ ...quota, kind: CLUSTER_KARMADA_QUOTA.kind }));
  }

  /** Not awaited: admissions never wait for the watches (they read without them meanwhile). */
  onApplicationBootstrap(): void {
    for (const watch of this.watches) void watch.start();
    void this.namespaces.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.setWatching(false);
    await Promise.all([...this.watches.map((watch) => watch.stop()), this.namespaces.stop()]);
  }
}
