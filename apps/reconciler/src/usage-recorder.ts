/**
 * Writes each namespace's usage record (libs/quota-view usage-record.ts): the per-workload usage the
 * reconciler read from the aggregators, for kubectl kq and the console. Off the admission path: a
 * record is written at most once per USAGE_RECORD_SECONDS per namespace and only when the usage
 * changed, the latest reading wins, and a failed write is logged and retried with the next reading;
 * it never fails a reconcile. Owned by the namespace's quotas, so it goes with the last of them.
 */
import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { KARMADA_QUOTA, WORKLOAD_USAGE, describeError, type KarmadaQuota } from '#api';
import type { ObservedCluster } from '#quota';
import { USAGE_RECORD_NAME, usageFingerprint, usageRecord } from '#quota-view';
import { HOST_KUBECONFIG, RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';

interface Reading {
  quotas: readonly KarmadaQuota[];
  clusters: readonly ObservedCluster[];
  fingerprint: string;
}

@Injectable()
export class UsageRecorder implements OnModuleDestroy {
  private readonly logger = new Logger('usage-record');
  private readonly objects: k8s.KubernetesObjectApi;
  /** Per namespace: what was last written (or is being written), and when. */
  private readonly written = new Map<string, { fingerprint: string; at: number }>();
  /** Per namespace: a reading that waits for the interval to pass. */
  private readonly waiting = new Map<string, { reading: Reading; timer: NodeJS.Timeout }>();
  private readonly intervalMs: number;

  constructor(
    @Inject(HOST_KUBECONFIG) host: k8s.KubeConfig,
    @Inject(RECONCILER_CONFIG) config: ReconcilerConfig,
  ) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(host);
    this.intervalMs = config.USAGE_RECORD_SECONDS * 1000;
  }

  /** The usage a reconcile read for `namespace`, whose quotas are `quotas`. */
  offer(namespace: string, quotas: readonly KarmadaQuota[], clusters: readonly ObservedCluster[]): void {
    quotas = quotas.filter((q) => q.metadata?.name && q.metadata.uid);
    if (quotas.length === 0) return;
    const owners = quotas.map((q) => q.metadata!.uid).join(',');
    const reading = { quotas, clusters, fingerprint: `${owners} ${usageFingerprint(clusters)}` };
    const waiting = this.waiting.get(namespace);
    if (waiting) return void (waiting.reading = reading);
    const last = this.written.get(namespace);
    if (last?.fingerprint === reading.fingerprint) return;
    const due = (last?.at ?? -Infinity) + this.intervalMs - Date.now();
    if (due <= 0) return void this.write(namespace, reading);
    const timer = setTimeout(() => {
      const latest = this.waiting.get(namespace)!.reading;
      this.waiting.delete(namespace);
      if (this.written.get(namespace)?.fingerprint !== latest.fingerprint) void this.write(namespace, latest);
    }, due);
    timer.unref();
    this.waiting.set(namespace, { reading, timer });
  }

  onModuleDestroy(): void {
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  private async write(namespace: string, { quotas, clusters, fingerprint }: Reading): Promise<void> {
    const at = Date.now();
    this.written.set(namespace, { fingerprint, at });
    const record = usageRecord(namespace, clusters, new Date(at));
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
    } catch (err) {
      // Written again with the next reading (the next publish of any member's usage).
      if (this.written.get(namespace)?.at === at) this.written.delete(namespace);
      this.logger.warn(
        { namespace, error: describeError(err) },
        `could not write ${WORKLOAD_USAGE.kind} ${USAGE_RECORD_NAME} (the usage by workload kubectl kq and the ` +
          `console show): the reconciler needs get, create and patch on ${WORKLOAD_USAGE.plural}.` +
          `${WORKLOAD_USAGE.group} in the Karmada API server, and the CRD installed (helm upgrade installs it)`,
      );
    }
  }
}
