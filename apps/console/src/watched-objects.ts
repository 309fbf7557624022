import type * as k8s from '@kubernetes/client-node';
import {
  Logger,
  ServiceUnavailableException,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import {
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  describeError,
  type ApiResourceInfo,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { customObjectInformer, ResilientInformer } from '#service-kit';

/** Changes arriving within this window reach the live streams as one update. */
const COALESCE_MS = 100;

/**
 * Every object of one kind on the Karmada API server, kept by a watch (never a list per request), and
 * who wants to hear of changes.
 */
export class WatchedObjects<T extends k8s.KubernetesObject>
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private readonly logger: Logger;
  private readonly cache: k8s.ObjectCache<T>;
  private readonly watch: ResilientInformer<T>;
  private readonly listeners = new Set<() => void>();
  private synced = false;
  private pending?: NodeJS.Timeout;

  constructor(
    karmada: k8s.KubeConfig,
    private readonly resource: ApiResourceInfo,
  ) {
    this.logger = new Logger(resource.plural);
    const informer = customObjectInformer<T>(karmada, resource);
    this.cache = informer;
    const changed = () => this.changed();
    this.watch = new ResilientInformer<T>(
      informer,
      {
        upsert: changed,
        remove: changed,
        synced: () => {
          this.synced = true;
          this.logger.log({ kind: resource.kind }, 'watching the objects on the Karmada API server');
          this.changed();
        },
        failed: (err) =>
          this.logger.warn(
            { kind: resource.kind, error: describeError(err) },
            'watch of the objects on the Karmada API server failed, retrying',
          ),
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

  /** Every object, or those of `namespace`; 503 until the first list from the Karmada API server arrived (an empty answer would be a lie). */
  list(namespace?: string): readonly T[] {
    this.requireSynced();
    return this.cache.list(namespace);
  }

  get(namespace: string, name: string): T | undefined {
    this.requireSynced();
    return this.cache.get(name, namespace);
  }

  /** Calls `listener` after objects changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private requireSynced(): void {
    if (!this.synced) {
      throw new ServiceUnavailableException(
        `the console has not loaded the ${this.resource.kind}s from the Karmada API server yet: try again shortly`,
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

/** The KarmadaQuotas: what the console shows. */
export class QuotaCache extends WatchedObjects<KarmadaQuota> {
  constructor(karmada: k8s.KubeConfig) {
    super(karmada, KARMADA_QUOTA);
  }
}

/** The ResourceBindings: which workloads hold each quota (workloadUsage). */
export class BindingCache extends WatchedObjects<ResourceBinding> {
  constructor(karmada: k8s.KubeConfig) {
    super(karmada, RESOURCE_BINDING);
  }
}
