import * as k8s from '@kubernetes/client-node';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import { CLUSTER, KARMADA_QUOTA, type Cluster, type KarmadaQuota, describeError } from '#api';
import { customObjectInformer, METRICS, ResilientInformer } from '#service-kit';
import { ClusterLeases } from './cluster-leases.js';
import type { AggregatorConfig } from './config.js';
import { MemberWatcher, sameCredentials, type MemberCredentials } from './member-watcher.js';

import { UsagePublisher } from './usage-publisher.js';

export const AGGREGATOR_CONFIG = Symbol('AGGREGATOR_CONFIG');
export const HOST_KUBECONFIG = Symbol('HOST_KUBECONFIG');

/**
 * Keeps one MemberWatcher per member cluster this replica holds the Lease of, following the
 * Cluster objects on the host (added, changed, removed at run time), and publishes their usage.
 */
@Injectable()
export class AggregatorService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('aggregator');
  private readonly clusters = new Map<string, Cluster>();
  private readonly watchers = new Map<string, MemberWatcher>();
  private readonly leases: ClusterLeases;
  private readonly clusterInformer: ResilientInformer<Cluster>;
  private readonly quotaInformer: ResilientInformer<KarmadaQuota>;
  /** Every key any KarmadaQuota's spec.hard names, by quota: what object counts to keep. */
  private readonly quotaKeys = new Map<string, string[]>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly events: Counter<'cluster' | 'resource'>;
  private syncing?: Promise<void>;
  private syncAgain = false;
  private publishing = false;

  constructor(
    @Inject(AGGREGATOR_CONFIG) private readonly config: AggregatorConfig,
    @Inject(HOST_KUBECONFIG) private readonly host: k8s.KubeConfig,
    private readonly publisher: UsagePublisher,
    @Inject(METRICS) metrics: Registry,
  ) {
    this.events = new Counter({
      name: 'karmada_quota_aggregator_events_total',
      help: 'Watch events processed, by member cluster and resource',
      labelNames: ['cluster', 'resource'],
      registers: [metrics],
    });
    const watchers = this.watchers;
    new Gauge({
      name: 'karmada_quota_aggregator_tracked_pods',
      help: 'Pods counted in each member cluster this replica watches',
      labelNames: ['cluster'],
      registers: [metrics],
      collect() {
        this.reset();
        for (const w of watchers.values()) this.set({ cluster: w.name }, w.ledger.trackedPods());
      },
    });
    new Gauge({
      name: 'karmada_quota_aggregator_cluster_sync_age_seconds',
      help: "Seconds since each member cluster's watches were last known to be in sync",
      labelNames: ['cluster', 'state'],
      registers: [metrics],
      collect() {
        this.reset();
        const now = Date.now();
        for (const w of watchers.values()) {
          const health = w.currentHealth(now);
          const age = health.lastSyncTime
            ? (now - health.lastSyncTime.getTime()) / 1000
            : Number.POSITIVE_INFINITY;
          this.set({ cluster: w.name, state: health.state }, age);
        }
      },
    });
    this.leases = new ClusterLeases(
      host,
      {
        namespace: config.LEASE_NAMESPACE,
        identity: config.AGGREGATOR_ID,
        durationSeconds: config.LEASE_DURATION_SECONDS,
      },
      this.logger,
    );
    this.clusterInformer = new ResilientInformer<Cluster>(
      customObjectInformer<Cluster>(host, CLUSTER),
      {
        upsert: (c) => this.onCluster(c.metadata!.name!, c),
        remove: (c) => this.onCluster(c.metadata!.name!, undefined),
        synced: () =>
          this.logger.log(`watching Cluster objects on the host (${this.clusters.size} clusters)`),
        failed: (err) =>
          this.logger.warn(`watch of Cluster objects on the host failed: ${describeError(err)}`),
      },
      config.MAX_RETRY_BACKOFF_MS,
    );
    const quotaId = (q: KarmadaQuota) => `${q.metadata?.namespace}/${q.metadata?.name}`;
    this.quotaInformer = new ResilientInformer<KarmadaQuota>(
      customObjectInformer<KarmadaQuota>(host, KARMADA_QUOTA),
      {
        upsert: (q) => {
          this.quotaKeys.set(quotaId(q), Object.keys(q.spec?.hard ?? {}));
          void this.countObjects();
        },
        remove: (q) => this.quotaKeys.delete(quotaId(q)),
        synced: () => this.logger.log(`watching KarmadaQuotas on the host (${this.quotaKeys.size} quotas)`),
        failed: (err) => this.logger.warn(`watch of KarmadaQuotas on the host failed: ${describeError(err)}`),
      },
      config.MAX_RETRY_BACKOFF_MS,
    );
  }

  /** Has every member count the objects some quota limits (object counts are watched on demand). */
  private async countObjects(watchers: Iterable<MemberWatcher> = this.watchers.values()): Promise<void> {
    const keys = new Set([...this.quotaKeys.values()].flat());
    await Promise.all([...watchers].map((w) => w.countObjects(keys)));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.quotaInformer.start();
    await this.clusterInformer.start();
    await this.sync();
    // Renew Leases (and notice rotated credentials) three times per Lease duration.
    this.timers.push(setInterval(() => void this.sync(), (this.config.LEASE_DURATION_SECONDS * 1000) / 3));
    this.timers.push(setInterval(() => void this.publishAll(), this.config.PUBLISH_INTERVAL_MS));
  }

  /** Publishes what is left and hands the clusters over at once (Redis closes after this). */
  async onModuleDestroy(): Promise<void> {
    this.timers.forEach(clearInterval);
    await this.clusterInformer.stop();
    await this.quotaInformer.stop();
    await this.syncing;
    await this.publishAll();
    for (const [name, watcher] of this.watchers) {
      await watcher.stop();
      await this.leases.release(name).catch(() => undefined); // hand over at once, not after expiry
    }
    this.watchers.clear();
    await this.publisher.close();
  }

  /** Clusters this replica watches now (for tests and metrics). */
  watchedClusters(): string[] {
    return [...this.watchers.keys()].sort();
  }

  private onCluster(name: string, cluster: Cluster | undefined): void {
    const before = this.clusters.get(name);
    if (cluster) this.clusters.set(name, cluster);
    else this.clusters.delete(name);
    // Karmada rewrites a Cluster's status every few seconds: only membership and spec matter here.
    if (before && cluster && JSON.stringify(before.spec) === JSON.stringify(cluster.spec)) return;
    void this.sync();
  }

  /** Serialised: one sync at a time, and one more if something changed meanwhile. */
  private sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.syncAgain = false;
        try {
          await this.syncOnce();
        } catch (err) {
          this.logger.error(`sync of member clusters failed: ${describeError(err)}`);
        }
      } while (this.syncAgain);
    })().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    const held = await this.leases.claim([...this.clusters.keys()]);
    for (const [name, watcher] of [...this.watchers]) {
      if (held.has(name)) continue;
      this.watchers.delete(name);
      await watcher.stop();
      if (!this.clusters.has(name)) {
        // Removed from the federation: its usage no longer counts anywhere.
        this.logger.log(`cluster ${name} was removed: withdrawing its usage`);
        await this.publisher.withdraw(name, watcher.ledger.namespaces());
        await this.leases.release(name);
      } else {
        this.logger.log(`cluster ${name} is now watched by another replica`);
      }
    }
    for (const name of held) {
      const credentials = await this.credentials(this.clusters.get(name)!);
      if (!credentials) continue;
      const current = this.watchers.get(name);
      if (current && sameCredentials(current.credentials, credentials)) {
        void current.checkAccess(); // not awaited, like start(): a hanging member holds up nothing
        continue;
      }
      const watcher = new MemberWatcher(
        credentials,
        {
          unreachableAfterMs: this.config.UNREACHABLE_AFTER_MS,
          maxRetryBackoffMs: this.config.MAX_RETRY_BACKOFF_MS,
          onEvent: (resource) => this.events.inc({ cluster: name, resource }),
        },
        this.logger,
        current?.ledger.namespaces() ?? [],
      );
      if (current) {
        this.logger.log(`cluster ${name}: endpoint or credentials changed, reconnecting`);
        await current.stop();
      }
      this.watchers.set(name, watcher);
      // Not awaited: a member that hangs on connect must not hold up Lease renewal for the others.
      void watcher
        .start()
        .then(() => this.countObjects([watcher]))
        .catch((err: unknown) => this.logger.error(`cluster ${name}: ${describeError(err)}`));
    }
  }

  /** Reads a Cluster's credential Secret (Karmada's `token` and `caBundle`); never logs them. */
  private async credentials(cluster: Cluster): Promise<MemberCredentials | undefined> {
    const name = cluster.metadata!.name!;
    const ref = cluster.spec?.secretRef;
    if (!cluster.spec?.apiEndpoint || !ref?.name || !ref.namespace) {
      this.logger.warn(`cluster ${name} has no spec.apiEndpoint or spec.secretRef: not watched`);
      return undefined;
    }
    try {
      const secret = await this.host
        .makeApiClient(k8s.CoreV1Api)
        .readNamespacedSecret(ref as { name: string; namespace: string });
      const field = (key: string) =>
        secret.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString() : undefined;
      const token = field('token');
      if (!token) {
        this.logger.warn(`cluster ${name}: Secret ${ref.namespace}/${ref.name} has no 'token': not watched`);
        return undefined;
      }
      return {
        name,
        server: cluster.spec.apiEndpoint,
        token,
        caPem: field('caBundle'),
        insecureSkipTLSVerify: cluster.spec.insecureSkipTLSVerification === true,
      };
    } catch (err) {
      const code = describeError(err);
      this.logger.warn(
        `cluster ${name}: cannot read Secret ${ref.namespace}/${ref.name} (${code}): not watched`,
      );
      return undefined;
    }
  }

  private async publishAll(): Promise<void> {
    if (this.publishing) return;
    this.publishing = true;
    try {
      for (const watcher of this.watchers.values()) {
        try {
          await this.publisher.publish(watcher);
        } catch (err) {
          this.logger.warn(`publishing usage of ${watcher.name} failed, will retry: ${describeError(err)}`);
        }
      }
    } finally {
      this.publishing = false;
    }
  }
}
