/**
 * Writes each namespace's usage record (libs/quota-view usage-record.ts): the per-workload usage the
 * reconciler read from the aggregators, for kubectl kq and the console. Off the admission path: a
 * record is written at most once per USAGE_RECORD_SECONDS per namespace, when the usage changed or
 * the record is five minutes old, the latest reading wins, and a failed write is retried with a reading after the interval
 * and logged at most once a minute (with how many failed since); it never fails a reconcile. Owned by the namespace's quotas, so it goes with the last of them.
 */
import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { KARMADA_QUOTA, WORKLOAD_USAGE, describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import type { ObservedCluster } from '#quota';
import {
  judgmentsOf,
  USAGE_RECORD_NAME,
  usageFingerprint,
  usageRecord,
  type JudgedBinding,
} from '#quota-view';
import { KARMADA_KUBECONFIG } from '#service-kit';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { LatestPerInterval } from './latest-per-interval.js';

/**
 * An unchanged record is written again at a reconcile once it is this old: what a second replica
 * wrote over it stands no longer than until the next reconcile after that (the resync at the
 * latest). As long as the default resync: an idle federation rewrites each record once per resync.
 */
const USAGE_RECORD_REFRESH_MS = 300_000;

/** A write failing in every namespace (the CRD not installed, say) is one warning a minute, not one each. */
const WARN_EVERY_MS = 60_000;

interface Reading {
  quotas: readonly KarmadaQuota[];
  clusters: readonly ObservedCluster[];
  judged: readonly JudgedBinding[];
}

@Injectable()
export class UsageRecorder implements OnModuleDestroy {
  private readonly logger = new Logger('usage-record');
  private readonly objects: k8s.KubernetesObjectApi;
  private readonly schedule: LatestPerInterval<Reading>;
  private warnedAt = -Infinity;
  private failedSinceWarning = 0;

  constructor(
    @Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig,
    @Inject(RECONCILER_CONFIG) config: ReconcilerConfig,
  ) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(karmada);
    this.schedule = new LatestPerInterval(
      config.USAGE_RECORD_SECONDS * 1000,
      USAGE_RECORD_REFRESH_MS,
      (namespace, reading, at) => this.write(namespace, reading, at),
    );
  }

  /**
   * The usage a reconcile read for `namespace`, whose quotas are `quotas`, and its bindings as the
   * reconcile charged them (`bindings`, judged: their templates' classes, their overrides).
   */
  offer(
    namespace: string,
    quotas: readonly KarmadaQuota[],
    clusters: readonly ObservedCluster[],
    bindings: readonly ResourceBinding[],
  ): void {
    const owners = quotas.filter((q) => q.metadata?.name && q.metadata.uid);
    if (owners.length === 0) return;
    const judged = judgmentsOf(bindings);
    const fingerprint = `${owners.map((q) => q.metadata!.uid).join(',')} ${usageFingerprint(clusters, judged)}`;
    this.schedule.offer(namespace, { quotas: owners, clusters, judged }, fingerprint);
  }

  onModuleDestroy(): void {
    this.schedule.stop();
  }

  private async write(namespace: string, { quotas, clusters, judged }: Reading, at: Date): Promise<boolean> {
    const record = usageRecord(namespace, clusters, judged, at);
    const owned = {
      ...record,
      metadata: {
        ...record.metadata,
        ownerReferences: quotas.map((q) => ({
          apiVersion: KARMADA_QUOTA.apiVersion,
          kind: KARMADA_QUOTA.kind,
          name: q.metadata!.name!,
          uid: q.metadata!.uid!,
        })),
      },
    };
    try {
      await this.objects.patch(
        owned,
        undefined,
        undefined,
        'karmada-quota-reconciler',
        true,
        k8s.PatchStrategy.ServerSideApply,
      );
      return true;
    } catch (err) {
      this.failedSinceWarning++;
      if (Date.now() - this.warnedAt < WARN_EVERY_MS) return false;
      const failures = this.failedSinceWarning;
      [this.warnedAt, this.failedSinceWarning] = [Date.now(), 0];
      this.logger.warn(
        { namespace, error: describeError(err), failures },
        `could not write ${WORKLOAD_USAGE.kind} ${USAGE_RECORD_NAME} (the usage by workload kubectl kq and the ` +
          `console show): the reconciler needs get, create and patch on ${WORKLOAD_USAGE.plural}.` +
          `${WORKLOAD_USAGE.group} in the Karmada API server, and the CRD installed (helm upgrade installs it)`,
      );
      return false;
    }
  }
}
