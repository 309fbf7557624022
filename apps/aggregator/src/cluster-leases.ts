import { describeError } from '#api';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '@nestjs/common';

export interface LeaseOptions {
  namespace: string;
  identity: string;
  durationSeconds: number;
}

/** metav1.MicroTime wants six fractional digits; client-node sends it as given. */
const microTime = (date: Date): Date =>
  date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;

const isStatus = (err: unknown, code: number) => err instanceof k8s.ApiException && err.code === code;

/**
 * Splits member clusters between aggregator replicas with one coordination.k8s.io Lease per
 * cluster on the host: a replica watches a cluster only while it holds that cluster's Lease, renews
 * it, and takes over a Lease its holder stopped renewing. Writes are compare-and-swap on
 * resourceVersion, so two replicas never both win one cluster.
 */
export class ClusterLeases {
  private readonly api: k8s.CoordinationV1Api;
  private readonly held = new Set<string>();

  constructor(
    kc: k8s.KubeConfig,
    private readonly options: LeaseOptions,
    private readonly logger: Logger,
  ) {
    this.api = kc.makeApiClient(k8s.CoordinationV1Api);
  }

  static leaseName(cluster: string): string {
    return `kq-aggregator.${cluster}`;
  }

  /** Acquires or renews the Lease of each cluster; returns the clusters this replica holds now. */
  async claim(clusters: readonly string[], now = new Date()): Promise<Set<string>> {
    for (const cluster of clusters) {
      try {
        if (await this.claimOne(cluster, now)) this.held.add(cluster);
        else this.held.delete(cluster);
      } catch (err) {
        // Cannot tell: keep watching only what we still surely hold (our Lease has not expired).
        this.logger.warn(`lease for cluster ${cluster}: ${describeError(err)}`);
      }
    }
    for (const cluster of [...this.held]) if (!clusters.includes(cluster)) this.held.delete(cluster);
    return new Set(this.held);
  }

  /** Gives a cluster's Lease up (shutdown, or the cluster left the federation). */
  async release(cluster: string): Promise<void> {
    this.held.delete(cluster);
    const name = ClusterLeases.leaseName(cluster);
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace: this.options.namespace });
      if (lease.spec?.holderIdentity !== this.options.identity) return;
      await this.api.deleteNamespacedLease({
        name,
        namespace: this.options.namespace,
        body: { preconditions: { resourceVersion: lease.metadata?.resourceVersion } },
      });
    } catch (err) {
      if (!isStatus(err, 404) && !isStatus(err, 409)) throw err;
    }
  }

  private async claimOne(cluster: string, now: Date): Promise<boolean> {
    const name = ClusterLeases.leaseName(cluster);
    const { namespace, identity, durationSeconds } = this.options;
    let lease: k8s.V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'karmada-quota-aggregator' } },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
        });
        this.logger.log(`acquired cluster ${cluster}`);
        return true;
      } catch (createErr) {
        if (isStatus(createErr, 409)) return false; // another replica was first
        if (isStatus(createErr, 404)) {
          throw new Error(
            `namespace ${namespace} does not exist on the host: create it or set LEASE_NAMESPACE`,
            { cause: createErr },
          );
        }
        throw createErr;
      }
    }
    const spec = lease.spec ?? {};
    const mine = spec.holderIdentity === identity;
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? durationSeconds) * 1000 < now.getTime();
    if (!mine && !expired && spec.holderIdentity) return false;
    try {
      await this.api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            renewTime: microTime(now),
            ...(mine
              ? {}
              : { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
          },
        },
      });
    } catch (err) {
      if (isStatus(err, 409)) return false; // someone renewed or took it meanwhile
      throw err;
    }
    if (!mine) this.logger.log(`took over cluster ${cluster} from ${spec.holderIdentity || 'nobody'}`);
    return true;
  }
}
