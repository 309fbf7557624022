import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import * as k8s from '@kubernetes/client-node';
import {
  describeError,
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  type FederatedResourceQuota,
  type KarmadaQuota,
} from '#api';
import {
  frqStatus,
  frqStatusEquals,
  servesAsWanted,
  servesFrq,
  servingQuota,
  servingQuotaName,
  SERVES_FRQ_LABEL,
} from '#quota';
import {
  customObjectInformer,
  KARMADA_KUBECONFIG,
  KeyQueue,
  QuotaEventWriter,
  ResilientInformer,
} from '#service-kit';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { NamespaceCache } from './namespace-cache.js';

/** A sync that failed (a conflict, the API server away) is tried again after this long. */
const RETRY_MS = 2_000;

const FRQ_KIND = { apiVersion: FEDERATED_RESOURCE_QUOTA.apiVersion, kind: FEDERATED_RESOURCE_QUOTA.kind };

/**
 * Serves Karmada's FederatedResourceQuotas when SERVE_FEDERATED_RESOURCE_QUOTAS is set
 * (docs/operating/switch-from-frq.md): keeps a KarmadaQuota beside each FRQ (libs/quota
 * federated-resource-quota.ts says what it holds) and writes the FRQ's status from it. An FRQ is
 * synced when it or its quota changes, one at a time; a sync that fails is tried again.
 */
@Injectable()
export class FederatedQuotas implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('federated-quotas');
  private readonly objects: k8s.CustomObjectsApi;
  private readonly events: QuotaEventWriter;
  private readonly informer?: k8s.Informer<FederatedResourceQuota> & k8s.ObjectCache<FederatedResourceQuota>;
  private readonly watch?: ResilientInformer<FederatedResourceQuota>;
  /** FRQs (namespace/name) to sync. */
  private readonly queue = new KeyQueue(
    (key) => {
      const [namespace, name] = key.split('/') as [string, string];
      return this.sync(namespace, name);
    },
    (key, err) => {
      // Another reconciler replica wrote (409) or deleted (404) first: every replica serves the
      // FRQs. The next sync reads what is there, soon and quietly.
      const conflict = err instanceof k8s.ApiException && (err.code === 409 || err.code === 404);
      if (!conflict)
        this.logger.warn(
          {
            namespace: key.split('/')[0],
            federatedResourceQuota: key.split('/')[1],
            error: describeError(err),
          },
          `could not serve FederatedResourceQuota ${key}; retrying in ${RETRY_MS / 1000} s`,
        );
      return conflict ? 100 : RETRY_MS;
    },
  );
  /** The problems last recorded per FRQ: an Event is written when they change, not every sync. */
  private readonly reported = new Map<string, string>();

  constructor(
    @Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig,
    @Inject(RECONCILER_CONFIG) config: ReconcilerConfig,
    cache: NamespaceCache,
  ) {
    this.objects = karmada.makeApiClient(k8s.CustomObjectsApi);
    this.events = new QuotaEventWriter(karmada, 'karmada-quota-reconciler');
    if (!config.SERVE_FEDERATED_RESOURCE_QUOTAS) return;
    this.informer = customObjectInformer<FederatedResourceQuota>(karmada, FEDERATED_RESOURCE_QUOTA);
    const queue = (o: { metadata?: k8s.V1ObjectMeta }) =>
      this.queue.add(`${o.metadata?.namespace}/${o.metadata?.name}`);
    this.watch = new ResilientInformer(
      this.informer,
      {
        upsert: queue,
        remove: queue,
        synced: () => this.logger.log('watching FederatedResourceQuotas on the Karmada API server'),
        failed: (err) =>
          this.logger.warn(
            { error: describeError(err) },
            "watch of FederatedResourceQuotas on the Karmada API server failed, retrying (is Karmada's " +
              'FederatedResourceQuota CRD installed, and may the reconciler list them?)',
          ),
      },
      10_000,
    );
    cache.onChange({
      quotaChanged: (q) => {
        const frq = q.metadata?.labels?.[SERVES_FRQ_LABEL];
        if (frq !== undefined) this.queue.add(`${q.metadata?.namespace}/${frq}`);
      },
      bindingChanged: () => undefined,
      bindingDeleted: () => undefined,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.watch?.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.queue.stop();
    await this.watch?.stop();
  }

  private async sync(namespace: string, name: string): Promise<void> {
    const frq = this.informer!.get(name, namespace);
    const quota = await this.readQuota(namespace, servingQuotaName(name));
    if (frq === undefined) {
      // Deleted: so is the quota serving it (also garbage-collected through its ownerReference).
      if (quota !== undefined && servesFrq(quota, name))
        await this.objects.deleteNamespacedCustomObject({
          ...KARMADA_QUOTA,
          namespace,
          name: quota.metadata!.name!,
        });
      this.reported.delete(`${namespace}/${name}`);
      return;
    }
    const wanted = servingQuota(frq);
    const problems = [...wanted.problems];
    let serving = quota;
    if (quota === undefined) {
      serving = (await this.objects.createNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        body: wanted.quota,
      })) as KarmadaQuota;
    } else if (!servesFrq(quota, name)) {
      problems.push(
        `a KarmadaQuota ${quota.metadata?.name} that karmada-quota did not make exists in ${namespace}: ` +
          `rename it or delete it, so that this FederatedResourceQuota can be served`,
      );
      serving = undefined;
    } else if (!servesAsWanted(quota, wanted.quota)) {
      serving = (await this.objects.replaceNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        name: quota.metadata!.name!,
        body: { ...quota, spec: wanted.quota.spec },
      })) as KarmadaQuota;
    }
    await this.report(frq, problems);
    const status = frqStatus(frq, serving);
    if (!frqStatusEquals(frq.status, status)) {
      await this.objects.replaceNamespacedCustomObjectStatus({
        ...FEDERATED_RESOURCE_QUOTA,
        namespace,
        name,
        body: { ...frq, status },
      });
    }
  }

  private async readQuota(namespace: string, name: string): Promise<KarmadaQuota | undefined> {
    try {
      return (await this.objects.getNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        name,
      })) as KarmadaQuota;
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  /** A Warning Event on the FRQ when what cannot be served changes (none when all of it is). */
  private async report(frq: FederatedResourceQuota, problems: string[]): Promise<void> {
    const key = `${frq.metadata?.namespace}/${frq.metadata?.name}`;
    const text = problems.join('; ');
    if (this.reported.get(key) === text) return;
    if (text !== '') {
      await this.events.write(
        {
          namespace: frq.metadata!.namespace!,
          name: frq.metadata!.name!,
          uid: frq.metadata?.uid,
          kind: FRQ_KIND,
        },
        { type: 'Warning', reason: 'NotServed', message: text.slice(0, 1024) },
      );
      this.logger.warn(
        { federatedResourceQuota: key, problems },
        'parts of a FederatedResourceQuota are not served',
      );
    }
    this.reported.set(key, text);
  }
}
