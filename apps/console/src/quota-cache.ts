import type * as k8s from '@kubernetes/client-node';
import {
  Logger,
  ServiceUnavailableException,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { KARMADA_QUOTA, type KarmadaQuota, describeError } from '#api';
import { customObjectInformer, ResilientInformer } from '#service-kit';

/** Changes arriving within this window reach the live streams as one update. */
const COALESCE_MS = 100;

/** Every KarmadaQuota of the host, kept by a watch (never a list per request), and who wants to hear of changes. */
export class QuotaCache implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('quotas');
  private readonly cache: k8s.ObjectCache<KarmadaQuota>;
  private readonly watch: ResilientInformer<KarmadaQuota>;
  private readonly listeners = new Set<() => void>();
  private synced = false;
  private pending?: NodeJS.Timeout;

  constructor(host: k8s.KubeConfig) {
    const informer = customObjectInformer<KarmadaQuota>(host, KARMADA_QUOTA);
    this.cache = informer;
    const changed = () => this.changed();
    this.watch = new ResilientInformer<KarmadaQuota>(
      informer,
      {
        upsert: changed,
        remove: changed,
        synced: () => {
          this.synced = true;
          this.logger.log('watching KarmadaQuotas on the host');
          this.changed();
        },
        failed: (err) =>
          this.logger.warn(`watch of KarmadaQuotas on the host failed, retrying: ${describeError(err)}`),
      },
      10_000,
    );
  }

  onApplicationBootstrap(): Promise<void> {
    return this.watch.start();
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.pending);
    await this.watch.stop();
  }

  /** Every quota; 503 until the first list from the host arrived (an empty answer would be a lie). */
  list(): readonly KarmadaQuota[] {
    this.requireSynced();
    return this.cache.list();
  }

  get(namespace: string, name: string): KarmadaQuota | undefined {
    this.requireSynced();
    return this.cache.get(name, namespace);
  }

  /** Calls `listener` after quotas changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private requireSynced(): void {
    if (!this.synced) {
      throw new ServiceUnavailableException(
        'the console has not loaded the KarmadaQuotas from the host API server yet: try again shortly',
      );
    }
  }

  private changed(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      for (const listener of this.listeners) listener();
    }, COALESCE_MS);
  }
}
