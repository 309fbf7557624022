import * as k8s from '@kubernetes/client-node';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  CLUSTER,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  type Cluster,
  type KarmadaQuota,
  describeError,
  isJsonObject,
} from '#api';
import { countedNamespaces, isClusterQuota, quotaName } from '#quota';
import {
  customObjectInformer,
  KARMADA_KUBECONFIG,
  METRICS,
  ResilientInformer,
  stopIntervals,
} from '#service-kit';
import { isClusterName } from '#usage';
import { ClusterLeases } from './cluster-leases.js';
import type { AggregatorConfig } from './config.js';
import { MemberWatcher, sameCredentials, type MemberCredentials } from './member-watcher.js';

import { UsagePublisher } from './usage-publisher.js';

export const AGGREGATOR_CONFIG = Symbol('AGGREGATOR_CONFIG');

const INTERVALS = ['lease-renewal', 'publish'] as const;

/** The clusters a quota's status has a slice for, by name (only names a cluster can have). */
function statusClusters(quota: KarmadaQuota): string[] {
  const slices: unknown = quota.status?.clusters;
  return (Array.isArray(slices) ? slices : [])
    .map((slice: unknown) => (isJsonObject(slice) ? slice['name'] : undefined))
    .filter((name): name is string => typeof name === 'string' && isClusterName(name));
}

/**
 * Keeps one MemberWatcher per member cluster this replica holds the Lease of, following the
 * Cluster objects on the Karmada API server (added, changed, removed at run time), and publishes
 * their usage.
 */
@Injectable()
export class AggregatorService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('aggregator');
  private readonly clusters = new Map<string, Cluster>();
  private readonly watchers = new Map<string, MemberWatcher>();
  private readonly leases: ClusterLeases;
  private readonly leaseChanges: ResilientInformer<k8s.V1Lease>;
  private readonly clusterInformer: ResilientInformer<Cluster>;
  private readonly quotaInformers: ResilientInformer<KarmadaQuota>[];
  /** Every key any KarmadaQuota's spec.hard names, by quota: what object counts to keep. */
  private readonly quotaKeys = new Map<string, string[]>();
  /**
   * By quota: its namespace and the clusters its status counts (to withdraw one the Karmada API
   * server no longer has).
   */
  private readonly quotaClusters = new Map<string, { namespaces: string[]; clusters: string[] }>();
  private readonly events: Counter<'cluster' | 'resource'>;
  private syncing?: Promise<void>;
  private syncAgain = false;
  /** The publish of every watched cluster under way, if any. */
  private publishing?: Promise<void>;

  constructor(
    @Inject(AGGREGATOR_CONFIG) private readonly config: AggregatorConfig,
    @Inject(KARMADA_KUBECONFIG) private readonly karmada: k8s.KubeConfig,
    private readonly publisher: UsagePublisher,
    @Inject(METRICS) metrics: Registry,
    private readonly scheduler: SchedulerRegistry,
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
    // A time rather than an age: Prometheus computes the age (time() - ...). 0: never in sync.
    new Gauge({
      name: 'karmada_quota_cluster_last_sync_timestamp_seconds',
      help: "When each member cluster's watches were last known to be in sync (seconds since the epoch)",
      labelNames: ['cluster'],
      registers: [metrics],
      collect() {
        this.reset();
        const now = Date.now();
        for (const w of watchers.values())
          this.set({ cluster: w.name }, (w.currentHealth(now).lastSyncTime?.getTime() ?? 0) / 1000);
      },
    });
    this.leases = new ClusterLeases(
      karmada,
      {
        namespace: config.LEASE_NAMESPACE,
        identity: config.AGGREGATOR_ID,
        durationSeconds: config.LEASE_DURATION_SECONDS,
      },
      this.logger,
    );
    this.leaseChanges = this.leases.watchChanges(() => void this.sync(), config.MAX_RETRY_BACKOFF_MS);
    this.clusterInformer = new ResilientInformer<Cluster>(
      customObjectInformer<Cluster>(karmada, CLUSTER),
      {
        upsert: (c) => this.onCluster(c.metadata!.name!, c),
        remove: (c) => this.onCluster(c.metadata!.name!, undefined),
        synced: () =>
          this.logger.log(
            { clusters: this.clusters.size },
            'watching Cluster objects on the Karmada API server',
          ),
        failed: (err) =>
          this.logger.warn(
            { error: describeError(err) },
            'watch of Cluster objects on the Karmada API server failed, retrying',
          ),
      },
      config.MAX_RETRY_BACKOFF_MS,
    );
    // KarmadaQuotas and ClusterKarmadaQuotas alike: the keys they limit, where they count usage.
    const watchQuotas = (resource: typeof KARMADA_QUOTA | typeof CLUSTER_KARMADA_QUOTA) =>
      new ResilientInformer<KarmadaQuota>(
        customObjectInformer<KarmadaQuota>(karmada, resource),
        {
          upsert: (q) => {
            const id = `${quotaName(q)}@${q.metadata?.namespace ?? ''}`;
            const keys = Object.keys(q.spec?.hard ?? {});
            const before = this.quotaKeys.get(id);
            this.quotaKeys.set(id, keys);
            this.quotaClusters.set(id, {
              namespaces: isClusterQuota(q) ? [...countedNamespaces(q).keys()] : [q.metadata!.namespace!],
              clusters: statusClusters(q),
            });
            // Most events are status writes (one per admission): only new keys can add a count.
            if (before === undefined || keys.some((key) => !before.includes(key))) void this.countObjects();
          },
          remove: (q) => {
            const id = `${quotaName(q)}@${q.metadata?.namespace ?? ''}`;
            this.quotaKeys.delete(id);
            this.quotaClusters.delete(id);
          },
          synced: () =>
            this.logger.log(
              { quotas: this.quotaKeys.size },
              `watching ${resource.kind}s on the Karmada API server`,
            ),
          failed: (err) =>
            this.logger.warn(
              { error: describeError(err) },
              `watch of ${resource.kind}s on the Karmada API server failed, retrying`,
            ),
        },
        config.MAX_RETRY_BACKOFF_MS,
      );
    this.quotaInformers = [watchQuotas(KARMADA_QUOTA), watchQuotas(CLUSTER_KARMADA_QUOTA)];
  }

  /** Every key any quota limits: the object counts members watch on demand. */
  private quotaKeysInUse(): Set<string> {
    return new Set([...this.quotaKeys.values()].flat());
  }

  /** Has every member count the objects some quota limits. */
  private async countObjects(): Promise<void> {
    const keys = this.quotaKeysInUse();
    await Promise.all([...this.watchers.values()].map((w) => w.countObjects(keys)));
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const informer of this.quotaInformers) await informer.start();
    await this.clusterInformer.start();
    await this.sync();
    await this.leaseChanges.start();
    const [renewal, publish] = INTERVALS;
    // Renew Leases (and notice rotated credentials) three times per Lease duration.
    this.scheduler.addInterval(
      renewal,
      setInterval(() => void this.sync(), (this.config.LEASE_DURATION_SECONDS * 1000) / 3),
    );
    this.scheduler.addInterval(
      publish,
      setInterval(() => void this.publishAll(), this.config.PUBLISH_INTERVAL_MS),
    );
  }

  /** Hands every cluster over at once, not after its Lease expires (Redis closes after this). */
  async onModuleDestroy(): Promise<void> {
    // Before the handover, or a renewal would take Leases back.
    stopIntervals(this.scheduler, ...INTERVALS);
    await this.leaseChanges.stop();
    await this.clusterInformer.stop();
    for (const informer of this.quotaInformers) await informer.stop();
    await this.syncing;
    // All at once: each waits for its member's watch to stop and for Redis, not for the others.
    await Promise.all(
      [...new Set([...this.watchers.keys(), ...this.leases.held()])].map((name) =>
        this.handOver(name).catch((err: unknown) =>
          this.logger.warn(
            { cluster: name, error: describeError(err) },
            'could not hand the cluster over: another replica takes it over once its Lease expires',
          ),
        ),
      ),
    );
    await this.leases.leave().catch(() => undefined); // else the others count this replica until it expires
    await this.publisher.close();
  }

  /**
   * Gives a cluster this replica holds to whichever replica takes it next: its watch stops, what it
   * saw is published, and only then is its Lease released, so two replicas never publish it at once.
   */
  private async handOver(name: string): Promise<void> {
    const watcher = this.watchers.get(name);
    this.watchers.delete(name);
    if (watcher) {
      await watcher.stop();
      await this.publishing; // one that started before still includes the watcher
      try {
        if (watcher.hasNews()) await this.publish(watcher);
      } catch (err) {
        this.logger.warn(
          { cluster: name, error: describeError(err) },
          'last publish before the handover failed',
        );
      }
    }
    await this.leases.release(name);
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
          this.logger.error({ error: describeError(err) }, 'sync of member clusters failed');
        }
      } while (this.syncAgain);
    })().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    const { held, release, share, replicas } = await this.leases.sync([...this.clusters.keys()]);
    await Promise.all(
      release.map((name) => {
        this.logger.log(
          { cluster: name, share, replicas },
          'handing the cluster over: this replica holds more than its share',
        );
        held.delete(name);
        return this.handOver(name);
      }),
    );
    for (const [name, watcher] of [...this.watchers]) {
      if (held.has(name)) continue;
      this.watchers.delete(name);
      await watcher.stop();
      if (!this.clusters.has(name)) {
        // Removed from the federation: its usage no longer counts anywhere.
        this.logger.log({ cluster: name }, 'the cluster left the federation: withdrawing its usage');
        await this.publisher.withdraw(name, watcher.ledger.namespaces());
        await this.leases.release(name);
      } else {
        this.logger.log({ cluster: name }, 'the cluster is now watched by another replica');
      }
    }
    await this.withdrawUnwatched().catch((err: unknown) =>
      this.logger.warn(
        { error: describeError(err) },
        'cannot check for clusters removed from the Karmada API server while no replica watched them, will retry',
      ),
    );
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
          requestTimeoutMs: this.config.API_REQUEST_TIMEOUT_SECONDS * 1000,
          onEvent: (resource) => this.events.inc({ cluster: name, resource }),
        },
        this.logger,
        current?.ledger.namespaces() ?? [],
      );
      if (current) {
        this.logger.log({ cluster: name }, 'endpoint or credentials of the cluster changed, reconnecting');
        await current.stop();
      }
      this.watchers.set(name, watcher);
      // Not awaited: a member that hangs on connect must not hold up Lease renewal for the others.
      void watcher
        .start(this.quotaKeysInUse())
        .catch((err: unknown) =>
          this.logger.error(
            { cluster: name, error: describeError(err) },
            'could not start watching the cluster',
          ),
        );
    }
  }

  /**
   * Withdraws the usage of every cluster that Redis or a quota's status still has, but that the
   * Karmada API server no longer has and no replica watches: one removed while its watcher was
   * handing it over, crashed or never started (bad credentials). Its watcher would have withdrawn
   * it; nobody else would, and its last usage would count forever (or, once Redis lost it, leave
   * its namespaces "unknown"). The Clusters are listed afresh before, so a lagging Cluster watch
   * cannot withdraw a live cluster, and a live Lease means its holder is still publishing it and
   * withdraws it itself.
   */
  private async withdrawUnwatched(): Promise<void> {
    const countedIn = new Map<string, Set<string>>();
    for (const { namespaces, clusters } of this.quotaClusters.values()) {
      for (const cluster of clusters) {
        const counted = countedIn.get(cluster) ?? new Set();
        for (const namespace of namespaces) counted.add(namespace);
        countedIn.set(cluster, counted);
      }
    }
    const known = [...new Set([...(await this.publisher.publishedClusters()), ...countedIn.keys()])];
    const candidates = known.filter((name) => !this.clusters.has(name) && !this.watchers.has(name));
    if (candidates.length === 0) return;
    const registered = await this.registeredClusterNames();
    const gone = await this.leases.unheld(candidates.filter((name) => !registered.has(name)));
    for (const cluster of gone) {
      const namespaces = [...(countedIn.get(cluster) ?? [])];
      if (await this.publisher.withdrawUnwatched(cluster, namespaces))
        this.logger.log(
          { cluster, namespaces },
          'the cluster is no longer on the Karmada API server and no replica watches it: withdrew its usage',
        );
    }
  }

  /** The names of the Cluster objects on the Karmada API server, listed now (not from the watch's cache). */
  private async registeredClusterNames(): Promise<Set<string | undefined>> {
    const { group, version, plural } = CLUSTER;
    const list = (await this.karmada
      .makeApiClient(k8s.CustomObjectsApi)
      .listClusterCustomObject({ group, version, plural })) as { items: Cluster[] };
    return new Set(list.items.map((c) => c.metadata?.name));
  }

  /** Reads a Cluster's credential Secret (Karmada's `token` and `caBundle`); never logs them. */
  private async credentials(cluster: Cluster): Promise<MemberCredentials | undefined> {
    const name = cluster.metadata!.name!;
    const ref = cluster.spec?.secretRef;
    if (!cluster.spec?.apiEndpoint || !ref?.name || !ref.namespace) {
      this.logger.warn(
        { cluster: name },
        'the Cluster has no spec.apiEndpoint or spec.secretRef: not watched',
      );
      return undefined;
    }
    try {
      const secret = await this.karmada
        .makeApiClient(k8s.CoreV1Api)
        .readNamespacedSecret(ref as { name: string; namespace: string });
      const field = (key: string) =>
        secret.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString() : undefined;
      const token = field('token');
      if (!token) {
        this.logger.warn(
          { cluster: name, secret: `${ref.namespace}/${ref.name}` },
          "the cluster's credential Secret has no 'token': not watched",
        );
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
      this.logger.warn(
        { cluster: name, secret: `${ref.namespace}/${ref.name}`, error: describeError(err) },
        "cannot read the cluster's credential Secret: not watched",
      );
      return undefined;
    }
  }

  private publishAll(): Promise<void> {
    this.publishing ??= (async () => {
      for (const watcher of this.watchers.values()) {
        // Past the renew deadline another replica may hold the cluster soon: leave it to that one.
        if (!this.leases.holds(watcher.name) || !watcher.hasNews()) continue;
        try {
          await this.publish(watcher);
        } catch (err) {
          this.logger.warn(
            { cluster: watcher.name, error: describeError(err) },
            "publishing the cluster's usage failed, will retry",
          );
        }
      }
    })().finally(() => (this.publishing = undefined));
    return this.publishing;
  }

  private async publish(watcher: MemberWatcher): Promise<void> {
    const namespaces = await this.publisher.publish(watcher);
    if (namespaces > 0)
      this.logger.debug({ cluster: watcher.name, namespaces }, "published the cluster's usage");
  }
}
