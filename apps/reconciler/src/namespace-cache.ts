import { Inject, Injectable, Logger } from '@nestjs/common';
import type * as k8s from '@kubernetes/client-node';
import {
  CLUSTER_KARMADA_QUOTA,
  type ClusterKarmadaQuota,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  type KarmadaQuota,
  type ResourceBinding,
  describeError,
} from '#api';
import {
  customObjectInformer,
  KARMADA_KUBECONFIG,
  namespaceInformer,
  NamespaceLabelChanges,
  ResilientInformer,
} from '#service-kit';
import type { CachedView, CountedNamespace } from '#accounting';
import { compareNames, selectsNamespace } from '#quota';

const OWN_WRITES_KEPT = 10_000;
const versionKey = (quota: KarmadaQuota) => `${quota.metadata?.uid}@${quota.metadata?.resourceVersion}`;

/** What the triggers do when the cached KarmadaQuotas and ResourceBindings change. */
export interface NamespaceCacheHandlers {
  quotaChanged: (quota: KarmadaQuota) => void;
  bindingChanged: (binding: ResourceBinding) => void;
  bindingDeleted: (binding: ResourceBinding) => void;
  /** A ClusterKarmadaQuota added, changed or deleted (docs/concepts/cluster-quotas.md). */
  clusterQuotaChanged?: (quota: ClusterKarmadaQuota) => void;
  /** A namespace added, deleted, or whose labels changed: ClusterKarmadaQuotas may select it or not. */
  namespaceChanged?: (namespace: string) => void;
  /**
   * A namespace changed otherwise (its annotations, say): the ClusterKarmadaQuotas counting it write
   * its new resourceVersion with their count, which a webhook seeing it for the first time requires.
   */
  namespaceUpdated?: (namespace: string) => void;
}

/**
 * The reconciler's informers on the Karmada API server: KarmadaQuotas and ResourceBindings, watched. They feed the
 * triggers (a change queues its namespace), the quota metrics, and each reconcile's first look
 * (reconcile-loop.ts: a namespace whose cached objects show nothing to write is not read again).
 * ClusterKarmadaQuotas and namespaces' labels are watched too: which namespaces each selects.
 */
@Injectable()
export class NamespaceCache {
  private readonly logger = new Logger('namespace-cache');
  private readonly quotaInformer: k8s.Informer<KarmadaQuota> & k8s.ObjectCache<KarmadaQuota>;
  private readonly bindingInformer: k8s.Informer<ResourceBinding> & k8s.ObjectCache<ResourceBinding>;
  private readonly quotaWatch: ResilientInformer<KarmadaQuota>;
  private readonly bindingWatch: ResilientInformer<ResourceBinding>;
  private readonly clusterQuotaInformer: k8s.Informer<ClusterKarmadaQuota> &
    k8s.ObjectCache<ClusterKarmadaQuota>;
  private readonly namespaceInformer: k8s.Informer<k8s.V1Namespace> & k8s.ObjectCache<k8s.V1Namespace>;
  private readonly clusterQuotaWatch: ResilientInformer<ClusterKarmadaQuota>;
  private readonly namespaceWatch: ResilientInformer<k8s.V1Namespace>;
  private readonly namespaceChanges = new NamespaceLabelChanges();
  private namespacesWatched = false;
  private clusterQuotasWatched = false;
  private readonly handlers: NamespaceCacheHandlers[] = [];
  /** Quota versions this replica wrote (uid@resourceVersion), oldest first. */
  private readonly ownWrites = new Set<string>();
  /** Both watches listed and running: only then is the cache worth a look (it may still lag). */
  private quotasWatched = false;
  private bindingsWatched = false;

  constructor(@Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig) {
    this.quotaInformer = customObjectInformer<KarmadaQuota>(karmada, KARMADA_QUOTA);
    this.bindingInformer = customObjectInformer<ResourceBinding>(karmada, RESOURCE_BINDING);
    const watchHandlers = (what: string, watched: (on: boolean) => void) => ({
      synced: () => {
        watched(true);
        this.logger.log(`watching ${what} on the Karmada API server`);
      },
      failed: (err: unknown) => {
        watched(false);
        this.logger.warn(
          { error: describeError(err) },
          `watch of ${what} on the Karmada API server failed, retrying`,
        );
      },
    });
    this.quotaWatch = new ResilientInformer<KarmadaQuota>(
      this.quotaInformer,
      {
        upsert: (q) => this.handlers.forEach((h) => h.quotaChanged(q)),
        remove: () => undefined,
        ...watchHandlers('KarmadaQuotas', (on) => (this.quotasWatched = on)),
      },
      10_000,
    );
    this.bindingWatch = new ResilientInformer<ResourceBinding>(
      this.bindingInformer,
      {
        upsert: (b) => this.handlers.forEach((h) => h.bindingChanged(b)),
        remove: (b) => this.handlers.forEach((h) => h.bindingDeleted(b)),
        ...watchHandlers('ResourceBindings', (on) => (this.bindingsWatched = on)),
      },
      10_000,
    );
    this.clusterQuotaInformer = customObjectInformer<ClusterKarmadaQuota>(karmada, CLUSTER_KARMADA_QUOTA);
    const changed = (q: ClusterKarmadaQuota) => this.handlers.forEach((h) => h.clusterQuotaChanged?.(q));
    this.clusterQuotaWatch = new ResilientInformer<ClusterKarmadaQuota>(
      this.clusterQuotaInformer,
      {
        upsert: changed,
        remove: changed,
        ...watchHandlers('ClusterKarmadaQuotas', (on) => (this.clusterQuotasWatched = on)),
      },
      10_000,
    );
    this.namespaceInformer = namespaceInformer(karmada);
    this.namespaceWatch = new ResilientInformer<k8s.V1Namespace>(
      this.namespaceInformer,
      {
        upsert: (ns) => this.namespaceSeen(ns, false),
        remove: (ns) => this.namespaceSeen(ns, true),
        ...watchHandlers('namespaces', (on) => (this.namespacesWatched = on)),
      },
      10_000,
    );
  }

  private namespaceSeen(namespace: k8s.V1Namespace, deleted: boolean): void {
    const changed = this.namespaceChanges.changed(namespace, deleted);
    const name = namespace.metadata?.name;
    if (changed) this.handlers.forEach((h) => h.namespaceChanged?.(changed));
    else if (name && !deleted) this.handlers.forEach((h) => h.namespaceUpdated?.(name));
  }

  /**
   * Records a status this replica wrote, so its own change is known when the watch reports it: the
   * reconcile that wrote it read everything before it, so it needs no reconcile of its own.
   */
  noteOwnWrite(quota: KarmadaQuota): void {
    this.ownWrites.add(versionKey(quota));
    // Bounded: a write whose event never comes (a watch restarted meanwhile) is forgotten in time.
    if (this.ownWrites.size > OWN_WRITES_KEPT) this.ownWrites.delete(this.ownWrites.values().next().value!);
  }

  /** Whether this quota change is a status this replica wrote itself (each is recognized once). */
  isOwnWrite(quota: KarmadaQuota): boolean {
    return this.ownWrites.delete(versionKey(quota));
  }

  /** Registers what to do on changes; call before start. */
  onChange(handlers: NamespaceCacheHandlers): void {
    this.handlers.push(handlers);
  }

  async start(): Promise<void> {
    await this.quotaWatch.start();
    await this.bindingWatch.start();
    await this.namespaceWatch.start();
    await this.clusterQuotaWatch.start();
  }

  async stop(): Promise<void> {
    this.quotasWatched = this.bindingsWatched = this.namespacesWatched = false;
    await this.quotaWatch.stop();
    await this.bindingWatch.stop();
    await this.namespaceWatch.stop();
    await this.clusterQuotaWatch.stop();
  }

  /** Every ClusterKarmadaQuota in the cache. */
  clusterQuotas(): readonly ClusterKarmadaQuota[] {
    return this.clusterQuotaInformer.list();
  }

  /**
   * The namespaces a ClusterKarmadaQuota's selector picks, sorted, each with the resourceVersion
   * seen; undefined while the watch of namespaces is not listed.
   */
  namespacesSelectedBy(quota: KarmadaQuota): CountedNamespace[] | undefined {
    if (!this.namespacesWatched) return undefined;
    return this.namespaceInformer
      .list()
      .filter((ns) => selectsNamespace(quota, ns.metadata?.labels ?? {}))
      .map((ns) => ({ name: ns.metadata!.name!, resourceVersion: ns.metadata?.resourceVersion }))
      .sort((a, b) => compareNames(a.name, b.name));
  }

  /**
   * The cached ClusterKarmadaQuotas selecting the namespace; undefined while the watches of
   * ClusterKarmadaQuotas or namespaces are not listed, or the namespace is not seen yet.
   */
  clusterQuotasSelecting(namespace: string): ClusterKarmadaQuota[] | undefined {
    const watched = this.namespacesWatched && this.clusterQuotasWatched;
    const seen = watched ? this.namespaceInformer.get(namespace) : undefined;
    if (!seen) return undefined;
    const labels = seen.metadata?.labels ?? {};
    return this.clusterQuotas().filter((q) => selectsNamespace(q, labels));
  }

  /** Every KarmadaQuota in the cache. */
  quotas(): readonly KarmadaQuota[] {
    return this.quotaInformer.list();
  }

  /** The namespace's cached quotas and bindings, or undefined while a watch is down. */
  view(namespace: string): CachedView | undefined {
    if (!this.quotasWatched || !this.bindingsWatched) return undefined;
    return { quotas: this.quotaInformer.list(namespace), bindings: this.bindingInformer.list(namespace) };
  }
}
