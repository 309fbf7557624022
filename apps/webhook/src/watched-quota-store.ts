import type * as k8s from '@kubernetes/client-node';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { CachedQuotaStore } from '#accounting';
import { describeError, KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { customObjectInformer, ResilientInformer, type QuotaStore } from '#service-kit';

/**
 * The CachedQuotaStore fed by a watch of every KarmadaQuota on the Karmada API server, for the
 * webhook's life.
 */
export class WatchedQuotaStore extends CachedQuotaStore implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('quota-cache');
  private readonly informer: k8s.ObjectCache<KarmadaQuota>;
  private readonly watch: ResilientInformer<KarmadaQuota>;

  constructor(karmada: k8s.KubeConfig, inner: QuotaStore) {
    super(inner);
    const informer = customObjectInformer<KarmadaQuota>(karmada, KARMADA_QUOTA);
    this.informer = informer;
    this.watch = new ResilientInformer<KarmadaQuota>(
      informer,
      {
        upsert: (quota) => this.observed(quota, false),
        remove: (quota) => this.observed(quota, true),
        synced: () => this.setWatching(true),
        failed: (err) => {
          this.setWatching(false);
          this.logger.warn(
            { error: describeError(err) },
            'watch of KarmadaQuotas failed, reading them for every batch until it is back',
          );
        },
      },
      10_000,
    );
  }

  /** The quota's uid as the watch last saw it (undefined before it is listed, or once deleted). */
  uidOf(namespace: string, name: string): string | undefined {
    return this.informer.get(name, namespace)?.metadata?.uid;
  }

  /** The namespace's quotas as the watch last listed them; undefined while the watch is not running. */
  watchedIn(namespace: string): readonly KarmadaQuota[] | undefined {
    return this.isWatching ? this.informer.list(namespace) : undefined;
  }

  /** Not awaited: admissions never wait for the watch (they read without it meanwhile). */
  onApplicationBootstrap(): void {
    void this.watch.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.setWatching(false);
    await this.watch.stop();
  }
}
