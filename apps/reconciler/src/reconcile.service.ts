import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding, describeError } from '#api';
import type { QuotaEvent } from '#quota';
import { KubeQuotaStore, QuotaEventWriter, REDIS } from '#service-kit';
import { deletedBindingsKey } from '#usage';
import type { ReconcilerConfig } from './config.js';
import { reconcileQuotas, type ReconcileOutcome } from './reconcile-loop.js';

export type { ReconcileOutcome } from './reconcile-loop.js';
import { clustersWithUnknownUsage, readObservedUsage } from './usage-reader.js';

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

  constructor(
    @Inject(HOST_KUBECONFIG) host: k8s.KubeConfig,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
  ) {
    this.objects = host.makeApiClient(k8s.CustomObjectsApi);
    this.quotas = new KubeQuotaStore(host);
    this.events = new QuotaEventWriter(host, 'karmada-quota-reconciler');
  }

  async reconcileNamespace(namespace: string): Promise<ReconcileOutcome> {
    const [observed, deleted] = await Promise.all([
      readObservedUsage(this.redis, namespace),
      this.redis.zrange(deletedBindingsKey(namespace), 0, -1),
    ]);
    const deletedBindingUids = new Set(deleted);
    if (observed.errors.length > 0) this.logger.warn(`${namespace}: ${observed.errors.join('; ')}`);
    const quotas = await this.quotas.list(namespace);
    const unknown = await clustersWithUnknownUsage(this.redis, quotas, observed.clusters);
    if (unknown.length > 0) {
      // Failing leaves the status as it is; the job retries with back-off until the usage is back.
      throw new Error(
        `the usage of ${unknown.join(', ')} in ${namespace} is missing from Redis (restarted empty or ` +
          `flushed?) and not published again yet; the status is kept until the aggregator republishes it`,
      );
    }
    return reconcileQuotas(
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
      },
      (quota, result) => this.emit(quota, result.events),
      (message) => this.logger.warn(message),
    );
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
        this.logger.warn(`could not record event ${event.reason}: ${describeError(err)}`);
      }
    }
  }
}
