import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding, describeError } from '#api';
import { computeQuotaStatus, type QuotaEvent } from '#quota';
import { ConflictError, KubeQuotaStore, QuotaEventWriter, REDIS } from '#service-kit';
import { deletedBindingsKey } from '#usage';
import type { ReconcilerConfig } from './config.js';
import { clustersWithUnknownUsage, readObservedUsage } from './usage-reader.js';

export const RECONCILER_CONFIG = Symbol('RECONCILER_CONFIG');
export const HOST_KUBECONFIG = Symbol('HOST_KUBECONFIG');

const bindingResource = {
  group: RESOURCE_BINDING.group,
  version: RESOURCE_BINDING.version,
  plural: RESOURCE_BINDING.plural,
};

export interface ReconcileOutcome {
  quotas: number;
  written: number;
  conflicts: number;
}

/**
 * One namespace's reconcile: read its KarmadaQuotas and ResourceBindings from the host and the
 * observed usage from Redis, compute each status (libs/quota status.ts), and write the ones that
 * changed by compare-and-swap. On a 409 the quota is read again, the bindings listed again after it,
 * and the status recomputed, so claims the webhook added meanwhile are never dropped.
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
    const timing = {
      ttlSeconds: this.config.RESERVATION_TTL_SECONDS,
      landingWindowSeconds: this.config.ADMISSION_LANDING_WINDOW_SECONDS,
    };
    // The bindings are listed after the quotas were read, and claims are judged expired as of the
    // list's start: every change admitted on a claim that lapsed before then is in the list.
    let now = new Date();
    let bindings = await this.listBindings(namespace);
    const outcome: ReconcileOutcome = { quotas: quotas.length, written: 0, conflicts: 0 };
    for (let quota of quotas) {
      for (let attempt = 0; ; attempt++) {
        const result = computeQuotaStatus({
          quota,
          bindings,
          clusters: observed.clusters,
          now,
          deletedBindingUids,
          timing,
        });
        if (result.errors.length > 0) {
          this.logger.warn(`${namespace}/${quota.metadata?.name}: ${result.errors.join('; ')}`);
        }
        if (!result.changed) break;
        try {
          await this.quotas.writeStatus({ ...quota, status: result.status });
          outcome.written++;
          await this.emit(quota, result.events);
          break;
        } catch (err) {
          if (!(err instanceof ConflictError)) throw err;
          outcome.conflicts++;
          if (attempt >= this.config.MAX_CONFLICT_RETRIES) {
            throw new Error(
              `KarmadaQuota ${namespace}/${quota.metadata?.name} kept changing (${attempt + 1} conflicts)`,
              { cause: err },
            );
          }
          quota = await this.quotas.get(namespace, quota.metadata!.name!);
          now = new Date();
          bindings = await this.listBindings(namespace);
        }
      }
    }
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
        this.logger.warn(`could not record event ${event.reason}: ${describeError(err)}`);
      }
    }
  }
}
