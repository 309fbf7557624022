import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { kubeConfigFor } from '../../../tools/federation/src/index.js';
import type { Tenant } from './tenant.js';

/** One version of a KarmadaQuota as the host stored it. */
export interface StatusSample {
  /** When the recorder saw it (ms since the epoch). */
  at: number;
  quota: string;
  resourceVersion: string;
  hard: Record<string, string>;
  used: Record<string, string>;
  reserved: Record<string, string>;
  /** Names of the bindings with a claim in flight (a stored binding is listed by none). */
  reservations: string[];
}

const amount = (list: Record<string, string>, key: string): Quantity =>
  Quantity.parse(String(list[key] ?? '0'));

/**
 * Records every version of the KarmadaQuotas of a namespace, through a watch on the host that
 * resumes from its last resourceVersion after the host API server went away (and relists if that
 * version was compacted meanwhile), so `used + reserved <= hard` can be checked on each version the
 * services wrote during a fault, not only on the final one.
 */
export class StatusRecorder {
  readonly samples: StatusSample[] = [];
  /** Times the watch was re-established, and times it had to relist (versions may be missed then). */
  reconnects = 0;
  relists = 0;
  private resourceVersion?: string;
  private controller?: AbortController;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly tenant: Tenant) {}

  private get path(): string {
    return `/apis/${KARMADA_QUOTA.group}/${KARMADA_QUOTA.version}/namespaces/${this.tenant.namespace}/${KARMADA_QUOTA.plural}`;
  }

  async start(): Promise<void> {
    await this.relist();
    await this.watch();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.controller?.abort();
  }

  /** The samples of one quota, oldest first. */
  of(quota: string): StatusSample[] {
    return this.samples.filter((s) => s.quota === quota);
  }

  /** Every sample where used + reserved > hard on some key, described. */
  violations(): string[] {
    const found: string[] = [];
    for (const s of this.samples) {
      for (const key of Object.keys(s.hard)) {
        const total = amount(s.used, key).add(amount(s.reserved, key));
        if (total.cmp(amount(s.hard, key)) > 0) {
          found.push(
            `${s.quota}@${s.resourceVersion} (${new Date(s.at).toISOString()}): ${key} used ${s.used[key] ?? 0} + ` +
              `reserved ${s.reserved[key] ?? 0} > hard ${s.hard[key]}`,
          );
        }
      }
    }
    return found;
  }

  private record(quota: KarmadaQuota): void {
    const status = quota.status ?? {};
    this.samples.push({
      at: Date.now(),
      quota: quota.metadata?.name ?? '',
      resourceVersion: quota.metadata?.resourceVersion ?? '',
      hard: { ...(quota.spec?.hard as Record<string, string>) },
      used: { ...(status.used as Record<string, string>) },
      reserved: { ...(status.reserved as Record<string, string>) },
      reservations: (status.reservations ?? []).map((r) => r.reservedBy.name),
    });
  }

  private async relist(): Promise<void> {
    const list = (await kubeConfigFor(this.tenant.chaos.host)
      .makeApiClient(k8s.CustomObjectsApi)
      .listNamespacedCustomObject({ ...KARMADA_QUOTA, namespace: this.tenant.namespace })) as {
      items: KarmadaQuota[];
      metadata?: { resourceVersion?: string };
    };
    list.items.forEach((q) => this.record(q));
    this.resourceVersion = list.metadata?.resourceVersion;
  }

  private async watch(): Promise<void> {
    const watch = new k8s.Watch(kubeConfigFor(this.tenant.chaos.host));
    this.controller = await watch.watch(
      this.path,
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true },
      (type: string, obj: KarmadaQuota & { code?: number }) => {
        if (type === 'ERROR') {
          if (obj.code === 410) this.resourceVersion = undefined;
          return;
        }
        if (type === 'ADDED' || type === 'MODIFIED') this.record(obj);
        if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
      },
      (err: unknown) => {
        if ((err as { statusCode?: number } | null)?.statusCode === 410) this.resourceVersion = undefined;
        this.resumeLater();
      },
    );
  }

  private resumeLater(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.resume(), 250);
  }

  private async resume(): Promise<void> {
    if (this.stopped) return;
    try {
      this.reconnects++;
      if (this.resourceVersion === undefined) {
        this.relists++;
        await this.relist();
      }
      await this.watch();
    } catch {
      this.resumeLater(); // the host is still down
    }
  }
}
