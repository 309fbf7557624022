import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding, describeError } from '#api';
import type { QuotaEvent } from '#quota';
import type { Registry } from 'prom-client';
import { KubeQuotaStore, METRICS, QuotaEventWriter, REDIS, type RedisClient } from '#service-kit';
import { deletedBindingsKey } from '#usage';
import type { ReconcilerConfig } from './config.js';
import { reconcileQuotas, type ReconcileOutcome } from './reconcile-loop.js';

export type { ReconcileOutcome } from './reconcile-loop.js';
import { countedClusters, readObservedUsage } from './usage-reader.js';
import { WaitingChanges } from './waiting-changes.js';

export const RECONCILER_CONFIG = Symbol('RECONCILER_CONFIG');
export const HOST_KUBECONFIG = Symbol('HOST_KUBECONFIG');

const bindingResource = {
  group: RESOURCE_BINDING.group,
  version: RESOURCE_BINDING.version,
  plural: RESOURCE_BINDING.plural,
};

/**
 * One namespace's reconcile: read its KarmadaQuotas and ResourceBindings from the host and the
 * observed usage from Redis, compute each status (libs/quota status.ts), and write the ones that
 * changed by compare-and-swap (reconcile-loop.ts).
 */
@Injectable()
export class ReconcileService {
  private readonly logger = new Logger('reconcile');
  private readonly objects: k8s.CustomObjectsApi;
  private readonly quotas: KubeQuotaStore;
  private readonly events: QuotaEventWriter;
  private readonly waiting: WaitingChanges;

  constructor(
    @Inject(HOST_KUBECONFIG) host: k8s.KubeConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(METRICS) metrics: Registry,
  ) {
    this.objects = host.makeApiClient(k8s.CustomObjectsApi);
    this.quotas = new KubeQuotaStore(host);
    this.events = new QuotaEventWriter(host, 'karmada-quota-reconciler');
    this.waiting = new WaitingChanges(host, redis, metrics, config.REQUEUE_MIN_INTERVAL_SECONDS * 1000);
  }

  async reconcileNamespace(namespace: string): Promise<ReconcileOutcome> {
    const quotas = await this.quotas.list(namespace);
    const [observed, deleted, waiting] = await Promise.all([
      readObservedUsage(this.redis, namespace, countedClusters(quotas)),
      this.redis.zrange(deletedBindingsKey(namespace), 0, -1),
      this.waiting.read(namespace),
    ]);
    const deletedBindingUids = new Set(deleted);
    if (observed.errors.length > 0)
      this.logger.warn(
        { namespace, error: observed.errors.join('; ') },
        'part of the usage published in Redis is unreadable and not counted',
      );
    const unknown = observed.unknown;
    if (unknown.length > 0) {
      // Failing leaves the status as it is; the job retries with back-off until the usage is back.
      throw new Error(
        `the usage of ${unknown.join(', ')} in ${namespace} is missing from Redis (restarted empty or ` +
          `flushed?) and not published again yet; the status is kept until the aggregator republishes it`,
      );
    }
    const outcome = await reconcileQuotas(
      {
        getQuota: (ns, name) => this.quotas.get(ns, name),
        listBindings: (ns) => this.listBindings(ns),
        writeStatus: (quota) => this.quotas.writeStatus(quota),
        clock: Date.now,
      },
      namespace,
      quotas,
      {
        clusters: observed.clusters,
        deletedBindingUids,
        timing: {
          ttlSeconds: this.config.RESERVATION_TTL_SECONDS,
          landingWindowSeconds: this.config.ADMISSION_LANDING_WINDOW_SECONDS,
        },
        maxConflictRetries: this.config.MAX_CONFLICT_RETRIES,
        waiting,
      },
      (quota, result) => this.emit(quota, result.events),
      (message) => this.logger.warn({ namespace }, message),
    );
    await this.waiting.settle(namespace, outcome.waiting, outcome.statuses, new Date());
    return outcome;
  }

  private async listBindings(namespace: string): Promise<ResourceBinding[]> {
    const list = (await this.objects.listNamespacedCustomObject({ ...bindingResource, namespace })) as {
      items: ResourceBinding[];
    };
    return list.items;
  }

  /** Kubernetes Events on the quota (over quota, a cluster going stale or recovering). */
  private async emit(quota: KarmadaQuota, events: QuotaEvent[]): Promise<void> {
    const ref = {
      namespace: quota.metadata!.namespace!,
      name: quota.metadata!.name!,
      uid: quota.metadata!.uid,
    };
    for (const event of events) {
      try {
        await this.events.write(ref, event);
      } catch (err) {
        this.logger.warn(
          { namespace: ref.namespace, quota: ref.name, reason: event.reason, error: describeError(err) },
          'could not record an Event on the quota',
        );
      }
    }
  }
}
