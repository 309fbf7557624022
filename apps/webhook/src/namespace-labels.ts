// Each namespace's labels on the Karmada API server: which ClusterKarmadaQuotas select it
// (docs/concepts/cluster-quotas.md). From a watch; read live where the watch does not hold it.
import * as k8s from '@kubernetes/client-node';
import { Logger } from '@nestjs/common';
import { describeError } from '#api';
import {
  abortAt,
  namespaceInformer,
  NamespaceLabelChanges,
  ResilientInformer,
  type NamespaceSelection,
  type StoreCallOptions,
} from '#service-kit';
import type { KarmadaQuota } from '#api';
import { selectsNamespace, type SelectedNamespace } from '#quota';

export class NamespaceLabels implements NamespaceSelection {
  private readonly logger = new Logger('namespace-labels');
  private readonly core: k8s.CoreV1Api;
  private readonly informer: k8s.Informer<k8s.V1Namespace> & k8s.ObjectCache<k8s.V1Namespace>;
  private readonly watch: ResilientInformer<k8s.V1Namespace>;
  private readonly changes = new NamespaceLabelChanges();
  /** Each namespace's resourceVersion when the watch last saw its labels change, or first saw it. */
  private readonly labelledAt = new Map<string, string>();
  private listed = false;
  /** Told of a namespace whose labels changed, and of the watch being listed (true) or lost (false). */
  private readonly listeners: { changed(namespace: string): void; watching(listed: boolean): void }[] = [];

  constructor(karmada: k8s.KubeConfig) {
    this.core = karmada.makeApiClient(k8s.CoreV1Api);
    this.informer = namespaceInformer(karmada);
    this.watch = new ResilientInformer<k8s.V1Namespace>(
      this.informer,
      {
        upsert: (namespace) => this.observed(namespace, false),
        remove: (namespace) => this.observed(namespace, true),
        synced: () => this.setListed(true),
        failed: (err) => {
          this.setListed(false);
          this.logger.warn(
            { error: describeError(err) },
            'watch of namespaces failed, reading a namespace for every batch until it is back',
          );
        },
      },
      10_000,
    );
  }

  subscribe(listener: { changed(namespace: string): void; watching(listed: boolean): void }): void {
    this.listeners.push(listener);
  }

  /** The namespace's labels as the watch holds them; undefined while it is not listed or has not seen it. */
  watched(namespace: string): Record<string, string> | undefined {
    const seen = this.listed ? this.informer.get(namespace) : undefined;
    return seen && (seen.metadata?.labels ?? {});
  }

  /** The namespaces the ClusterKarmadaQuota selects as the watch holds them; undefined while it is not listed. */
  selectedBy(quota: KarmadaQuota): SelectedNamespace[] | undefined {
    if (!this.listed) return undefined;
    return this.informer
      .list()
      .filter((ns) => selectsNamespace(quota, ns.metadata?.labels ?? {}))
      .map((ns) => {
        const labelledAt = this.labelledAt.get(ns.metadata!.name!);
        return { name: ns.metadata!.name!, ...(labelledAt !== undefined ? { labelledAt } : {}) };
      });
  }

  /** The namespace's labels: as the watch holds them, else read (none when it does not exist). */
  readonly labelsOf = async (
    namespace: string,
    options: StoreCallOptions,
  ): Promise<Record<string, string>> => {
    const watched = this.listed ? this.informer.get(namespace) : undefined;
    if (watched) return watched.metadata?.labels ?? {};
    try {
      const read = await this.core.readNamespace({ name: namespace }, abortAt(options.deadline));
      return read.metadata?.labels ?? {};
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return {};
      throw new Error(`reading namespace ${namespace}'s labels failed: ${describeError(err)}`, {
        cause: err,
      });
    }
  };

  start(): Promise<void> {
    return this.watch.start();
  }

  async stop(): Promise<void> {
    this.setListed(false);
    await this.watch.stop();
  }

  private observed(namespace: k8s.V1Namespace, deleted: boolean): void {
    const changed = this.changes.changed(namespace, deleted);
    const version = namespace.metadata?.resourceVersion;
    if (changed && deleted) this.labelledAt.delete(changed);
    else if (changed && version !== undefined) this.labelledAt.set(changed, version);
    if (changed) for (const listener of this.listeners) listener.changed(changed);
  }

  private setListed(listed: boolean): void {
    if (listed === this.listed) return;
    this.listed = listed;
    for (const listener of this.listeners) listener.watching(listed);
  }
}
