import { describeError, isApiStatus } from '#api';
import { leaseNamespaceMissing, microTime, ResilientInformer } from '#service-kit';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '@nestjs/common';
import { rebalance } from './rebalance.js';

export interface LeaseOptions {
  namespace: string;
  identity: string;
  durationSeconds: number;
}

/** What one sync found: the clusters this replica holds, and those of them above its fair share. */
export interface LeaseSync {
  held: Set<string>;
  /** Held clusters to hand over: stop watching, publish the rest, then release(). */
  release: string[];
  share: number;
  replicas: number;
}

/** Labels of every Lease the aggregator writes (listed by the first); the second tells their kind. */
const NAME_LABEL = 'app.kubernetes.io/name';
const NAME = 'karmada-quota-aggregator';
const COMPONENT_LABEL = 'app.kubernetes.io/component';
type LeaseKind = 'replica' | 'cluster';

/**
 * A replica stops acting on a Lease it has not renewed for two thirds of its duration: renewals come
 * every third, so one may fail, and the last third is a margin before any other replica may take
 * the Lease over (client-go's leader election likewise keeps RenewDeadline below LeaseDuration).
 */
const RENEW_DEADLINE = 2 / 3;

/** When a Lease's resourceVersion was first seen here: it expires a duration after, by our clock. */
interface Observation {
  resourceVersion: string;
  at: number;
}

/**
 * Splits member clusters between aggregator replicas with coordination.k8s.io Leases on the Karmada
 * API server: one per cluster, held by the replica that watches it, and one per replica (its
 * membership, label app.kubernetes.io/component=replica) that says it is alive. Each sync renews
 * this replica's Leases, takes free ones up to its fair share of clusters among the replicas alive
 * (rebalance.ts) and names the ones above it to hand over. Writes are compare-and-swap on
 * resourceVersion, so two replicas never both win one cluster.
 *
 * As in client-go's leader election, a Lease counts as expired once its resourceVersion has not
 * changed for its duration by the observer's own clock (from when it first saw that version), so
 * clocks need not agree; and the holder stops acting on a Lease it could not renew in time
 * (RENEW_DEADLINE), before anyone else may take it.
 */
export class ClusterLeases {
  private readonly api: k8s.CoordinationV1Api;
  /** By cluster: when the last successful write of its Lease started (local clock). */
  private readonly renewedAt = new Map<string, number>();
  private readonly observed = new Map<string, Observation>();

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly options: LeaseOptions,
    private readonly logger: Logger,
  ) {
    this.api = kc.makeApiClient(k8s.CoordinationV1Api);
  }

  /**
   * A watch of the aggregator Leases that calls `changed` when shares may change: a replica joined
   * (its membership Lease appeared) or a Lease was released or left. Acted on at once, a handover
   * takes a list and a write instead of up to a third of the Lease duration.
   */
  watchChanges(changed: () => void, maxRetryBackoffMs: number): ResilientInformer<k8s.V1Lease> {
    const { namespace } = this.options;
    const labelSelector = `${NAME_LABEL}=${NAME}`;
    const known = new Set<string>();
    return new ResilientInformer<k8s.V1Lease>(
      k8s.makeInformer(
        this.kc,
        `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
        () => this.api.listNamespacedLease({ namespace, labelSelector }),
        labelSelector,
      ),
      {
        upsert: (lease) => {
          const name = lease.metadata!.name!;
          if (known.has(name)) return; // a renewal
          known.add(name);
          if (lease.metadata?.labels?.[COMPONENT_LABEL] === 'replica') changed();
        },
        remove: (lease) => {
          known.delete(lease.metadata!.name!);
          changed();
        },
        synced: () => undefined,
        failed: (err) =>
          this.logger.warn(
            { namespace: this.options.namespace, error: describeError(err) },
            'watch of the aggregator Leases failed, retrying (shares then change at the next renewal)',
          ),
      },
      maxRetryBackoffMs,
    );
  }

  static leaseName(cluster: string): string {
    return `kq-aggregator.${cluster}`;
  }

  static replicaLeaseName(identity: string): string {
    return `kq-aggregator-replica.${identity}`;
  }

  /** The clusters whose Lease this replica renewed last (to release them all at shutdown). */
  held(): string[] {
    return [...this.renewedAt.keys()];
  }

  /** Whether this replica surely holds the cluster now: it renewed the Lease within the deadline. */
  holds(cluster: string, now = Date.now()): boolean {
    const renewed = this.renewedAt.get(cluster);
    return renewed !== undefined && now - renewed < this.options.durationSeconds * 1000 * RENEW_DEADLINE;
  }

  /**
   * Renews this replica's membership and cluster Leases and takes free ones up to its share of
   * `clusters`. When the Karmada API server cannot be read, keeps what it surely still holds.
   */
  async sync(clusters: readonly string[]): Promise<LeaseSync> {
    const { namespace, identity } = this.options;
    for (const cluster of this.renewedAt.keys())
      if (!clusters.includes(cluster)) this.renewedAt.delete(cluster);
    let leases: k8s.V1Lease[];
    try {
      const list = await this.api.listNamespacedLease({ namespace, labelSelector: `${NAME_LABEL}=${NAME}` });
      leases = list.items;
    } catch (err) {
      this.logger.warn({ namespace, error: describeError(err) }, 'cannot list the aggregator Leases');
      return { held: this.surelyHeld(clusters, Date.now()), release: [], share: 0, replicas: 0 };
    }
    // After the list, so what it shows was written before (expiry is counted from here), and before
    // any write of this sync (the renew deadline is counted from here).
    const now = Date.now();
    const byName = new Map(leases.map((lease) => [lease.metadata!.name!, lease]));
    this.observe(leases, now);

    const membership = ClusterLeases.replicaLeaseName(identity);
    await this.write(byName.get(membership), membership, now, 'replica');
    const replicas: string[] = [];
    for (const lease of leases) {
      if (lease.metadata?.labels?.[COMPONENT_LABEL] !== 'replica' || lease.metadata.name === membership)
        continue;
      if (this.alive(lease, now)) replicas.push(lease.spec!.holderIdentity!);
      else await this.forget(lease); // a replica that died: its membership goes
    }

    const holders = new Map<string, string | undefined>();
    for (const cluster of clusters) {
      const lease = byName.get(ClusterLeases.leaseName(cluster));
      const holder = lease?.spec?.holderIdentity || undefined;
      holders.set(cluster, holder === identity || (lease && this.alive(lease, now)) ? holder : undefined);
    }
    const decision = rebalance({ self: identity, replicas, holders });
    for (const cluster of [...decision.keep, ...decision.release]) await this.claim(cluster, byName, now);
    let holding = decision.keep.length;
    for (const cluster of decision.take) {
      if (holding >= decision.share) break;
      if (await this.claim(cluster, byName, now)) holding++;
    }
    return {
      held: this.surelyHeld(clusters, now),
      release: decision.release.filter((cluster) => this.holds(cluster, now)),
      share: decision.share,
      replicas: replicas.length + 1,
    };
  }

  /**
   * Of `clusters`, those no replica watches: this replica does not hold them and their Lease is gone
   * or was let expire (as observed here, like a takeover: its holder has stopped publishing). Lists
   * the Leases afresh; throws when they cannot be listed.
   */
  async unheld(clusters: readonly string[]): Promise<string[]> {
    if (clusters.length === 0) return [];
    const { namespace } = this.options;
    const list = await this.api.listNamespacedLease({ namespace, labelSelector: `${NAME_LABEL}=${NAME}` });
    const now = Date.now();
    this.observe(list.items, now);
    const byName = new Map(list.items.map((lease) => [lease.metadata!.name!, lease]));
    return clusters.filter((cluster) => {
      const lease = byName.get(ClusterLeases.leaseName(cluster));
      return !this.holds(cluster, now) && (lease === undefined || !this.alive(lease, now));
    });
  }

  /** Gives a cluster's Lease up (handed over, shutdown, or the cluster left the federation). */
  async release(cluster: string): Promise<void> {
    this.renewedAt.delete(cluster);
    await this.delete(ClusterLeases.leaseName(cluster));
    this.logger.log({ cluster }, 'released the cluster');
  }

  /** Ends this replica's membership (a clean shutdown, after releasing its clusters). */
  async leave(): Promise<void> {
    await this.delete(ClusterLeases.replicaLeaseName(this.options.identity));
  }

  private surelyHeld(clusters: readonly string[], now: number): Set<string> {
    const held = new Set<string>();
    for (const cluster of clusters) {
      if (this.holds(cluster, now)) held.add(cluster);
      else if (this.renewedAt.delete(cluster)) {
        this.logger.warn(
          { cluster, seconds: this.options.durationSeconds * RENEW_DEADLINE },
          "the cluster's Lease could not be renewed in time (is the Karmada API server reachable?): " +
            'no longer watched here, another replica may take it over',
        );
      }
    }
    return held;
  }

  private observe(leases: k8s.V1Lease[], now: number): void {
    const seen = new Set<string>();
    for (const lease of leases) {
      const name = lease.metadata!.name!;
      seen.add(name);
      const resourceVersion = lease.metadata!.resourceVersion!;
      if (this.observed.get(name)?.resourceVersion !== resourceVersion)
        this.observed.set(name, { resourceVersion, at: now });
    }
    for (const name of this.observed.keys()) if (!seen.has(name)) this.observed.delete(name);
  }

  /** Whether the Lease's holder renewed it within its duration, as observed here. */
  private alive(lease: k8s.V1Lease, now: number): boolean {
    const observation = this.observed.get(lease.metadata!.name!);
    const duration = (lease.spec?.leaseDurationSeconds ?? this.options.durationSeconds) * 1000;
    return !!lease.spec?.holderIdentity && observation !== undefined && now - observation.at < duration;
  }

  /**
   * Renews or takes a cluster's Lease when this replica holds it or it is free; returns whether this
   * replica holds it now. A conflict means another replica was first.
   */
  private async claim(cluster: string, leases: Map<string, k8s.V1Lease>, now: number): Promise<boolean> {
    const name = ClusterLeases.leaseName(cluster);
    const lease = leases.get(name);
    const previous = lease?.spec?.holderIdentity;
    try {
      if (!(await this.write(lease, name, now, 'cluster'))) {
        if (this.renewedAt.delete(cluster))
          this.logger.warn({ cluster }, 'lost the cluster: another replica holds it');
        return false;
      }
    } catch (err) {
      // Cannot tell: it stays held until the renew deadline, as far as holds() is concerned.
      this.logger.warn(
        { cluster, lease: name, error: describeError(err) },
        "cannot renew or take the cluster's Lease",
      );
      return this.holds(cluster, now);
    }
    if (!this.renewedAt.has(cluster)) {
      if (previous && previous !== this.options.identity)
        this.logger.log({ cluster, previousHolder: previous }, 'took over the cluster from another replica');
      else this.logger.log({ cluster }, 'acquired the cluster');
    }
    this.renewedAt.set(cluster, now);
    return true;
  }

  /**
   * Creates the Lease `name` for this replica, or renews it (taking it over when another holder let
   * it expire): a compare-and-swap on the resourceVersion listed. Returns false when another replica
   * won it. Other failures are thrown, except on the membership Lease (kind replica): logged.
   */
  private async write(
    lease: k8s.V1Lease | undefined,
    name: string,
    now: number,
    kind: LeaseKind,
  ): Promise<boolean> {
    const { namespace, identity, durationSeconds } = this.options;
    const time = microTime(new Date(now));
    let written: k8s.V1Lease;
    try {
      if (!lease) {
        written = await this.api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace, labels: { [NAME_LABEL]: NAME, [COMPONENT_LABEL]: kind } },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: time,
              renewTime: time,
              leaseTransitions: 0,
            },
          },
        });
      } else {
        const spec = lease.spec ?? {};
        const mine = spec.holderIdentity === identity;
        if (!mine && spec.holderIdentity && this.alive(lease, now)) return false;
        written = await this.api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            ...lease,
            spec: {
              ...spec,
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              renewTime: time,
              ...(mine ? {} : { acquireTime: time, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
            },
          },
        });
      }
    } catch (err) {
      if (isApiStatus(err, 409)) return false; // another replica created, renewed or took it meanwhile
      const failure = !lease && isApiStatus(err, 404) ? leaseNamespaceMissing(namespace, err) : err;
      if (kind === 'cluster') throw failure;
      this.logger.warn(
        { lease: name, error: describeError(failure) },
        "cannot renew this replica's membership Lease",
      );
      return false;
    }
    this.observed.set(name, { resourceVersion: written.metadata!.resourceVersion!, at: now });
    return true;
  }

  /** Deletes a dead replica's membership Lease, unless it was renewed since it was listed. */
  private async forget(lease: k8s.V1Lease): Promise<void> {
    await this.delete(lease.metadata!.name!, lease).catch((err: unknown) =>
      this.logger.warn(
        { lease: lease.metadata!.name, error: describeError(err) },
        'cannot delete an expired Lease',
      ),
    );
  }

  /** Deletes the Lease if this replica holds it (or `listed` is still current); gone already is fine. */
  private async delete(name: string, listed?: k8s.V1Lease): Promise<void> {
    const { namespace, identity } = this.options;
    try {
      const lease = listed ?? (await this.api.readNamespacedLease({ name, namespace }));
      if (!listed && lease.spec?.holderIdentity !== identity) return;
      await this.api.deleteNamespacedLease({
        name,
        namespace,
        body: { preconditions: { resourceVersion: lease.metadata?.resourceVersion } },
      });
      this.observed.delete(name);
    } catch (err) {
      if (!isApiStatus(err, 404) && !isApiStatus(err, 409)) throw err;
    }
  }
}
