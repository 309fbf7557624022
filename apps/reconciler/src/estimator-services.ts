/**
 * Registers the webhook's scheduler-estimator with karmada-scheduler when SCHEDULER_ESTIMATOR_ADDRESS
 * is set: Karmada finds a member's estimator through the ExternalName Service
 * `karmada-scheduler-estimator-<member>` in `karmada-system` of the Karmada API server, and drops every
 * estimator answer for a binding when one of its candidate members has none, so each member gets
 * one, kept in step with the Clusters. A Service karmada-quota did not make (Karmada's own estimator
 * for that member) is left alone. docs/concepts/scheduler-estimator.md.
 */
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import * as k8s from '@kubernetes/client-node';
import { CLUSTER, describeError, type Cluster } from '#api';
import { customObjectInformer, KARMADA_KUBECONFIG, KeyQueue, ResilientInformer } from '#service-kit';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';

/** Karmada's defaults: `--scheduler-estimator-service-{namespace,prefix}`, `--scheduler-estimator-port`. */
export const ESTIMATOR_NAMESPACE = 'karmada-system';
const ESTIMATOR_PREFIX = 'karmada-scheduler-estimator';
export const ESTIMATOR_SERVICE_PORT = 10352;

const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'karmada-quota' };
const MEMBER_LABEL = 'quota.karmada.io/estimator-for';
/** A Service name is a DNS-1035 label. */
const MAX_NAME_LENGTH = 63;
const RETRY_MS = 5_000;

export const estimatorServiceName = (member: string): string => `${ESTIMATOR_PREFIX}-${member}`;

/** The Service karmada-scheduler dials for `member`: our estimator at `address`. */
export function estimatorService(member: string, address: { host: string; port: number }): k8s.V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: estimatorServiceName(member),
      namespace: ESTIMATOR_NAMESPACE,
      labels: { ...MANAGED_BY, [MEMBER_LABEL]: member },
    },
    spec: {
      type: 'ExternalName',
      externalName: address.host,
      ports: [{ name: 'grpc', protocol: 'TCP', port: ESTIMATOR_SERVICE_PORT, targetPort: address.port }],
    },
  };
}

const ours = (service: k8s.V1Service | undefined): boolean =>
  service?.metadata?.labels?.['app.kubernetes.io/managed-by'] === MANAGED_BY['app.kubernetes.io/managed-by'];

@Injectable()
export class EstimatorServices implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('estimator-services');
  private readonly core: k8s.CoreV1Api;
  private readonly clusters?: k8s.Informer<Cluster & k8s.KubernetesObject> & k8s.ObjectCache<Cluster>;
  private readonly watch?: ResilientInformer<Cluster & k8s.KubernetesObject>;
  private readonly address?: { host: string; port: number };
  /** Members whose Service is to be brought in step. */
  private readonly queue = new KeyQueue(
    (member) => this.sync(member),
    (member, err) => {
      this.logger.warn(
        { member, error: describeError(err) },
        `could not register the scheduler-estimator for member ${member} (Service ` +
          `${ESTIMATOR_NAMESPACE}/${estimatorServiceName(member)} on the Karmada API server; does ` +
          `${ESTIMATOR_NAMESPACE} exist, and may the reconciler write Services there?); retrying in ${RETRY_MS / 1000} s`,
      );
      return RETRY_MS;
    },
  );
  /** Members already reported as served by another estimator (reported once). */
  private readonly foreign = new Set<string>();
  /**
   * Members whose Service was brought in step since the watch listed them: a Cluster's status update
   * (every few seconds) does not read its Service again. A re-list does.
   */
  private readonly inStep = new Set<string>();

  constructor(
    @Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig,
    @Inject(RECONCILER_CONFIG) config: ReconcilerConfig,
  ) {
    this.core = karmada.makeApiClient(k8s.CoreV1Api);
    this.address = config.SCHEDULER_ESTIMATOR_ADDRESS;
    if (this.address === undefined) return;
    this.clusters = customObjectInformer<Cluster & k8s.KubernetesObject>(karmada, CLUSTER);
    this.watch = new ResilientInformer(
      this.clusters,
      {
        upsert: (c) => {
          if (!this.inStep.has(c.metadata?.name ?? '')) this.queue.add(c.metadata?.name ?? '');
        },
        remove: (c) => {
          this.inStep.delete(c.metadata?.name ?? '');
          this.queue.add(c.metadata?.name ?? '');
        },
        synced: () => void this.sweep(),
        failed: (err) =>
          this.logger.warn(
            { error: describeError(err) },
            'watch of Clusters on the Karmada API server failed, retrying: estimator Services are not ' +
              'kept in step meanwhile',
          ),
      },
      10_000,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.watch?.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.queue.stop();
    await this.watch?.stop();
  }

  /** Our Services of members no longer there go; every member listed is brought in step. */
  private async sweep(): Promise<void> {
    this.inStep.clear();
    for (const cluster of this.clusters!.list()) this.queue.add(cluster.metadata?.name ?? '');
    try {
      const services = await this.core.listNamespacedService({
        namespace: ESTIMATOR_NAMESPACE,
        labelSelector: MEMBER_LABEL,
      });
      for (const service of services.items) {
        const member = service.metadata?.labels?.[MEMBER_LABEL];
        if (member !== undefined && ours(service)) this.queue.add(member);
      }
    } catch (err) {
      this.logger.warn(
        { error: describeError(err) },
        `could not list the estimator Services in ${ESTIMATOR_NAMESPACE}; those of removed members stay until the next list`,
      );
    }
  }

  /** Brings the member's Service in step; remembers that it is, while the member is there. */
  private async sync(member: string): Promise<void> {
    await this.bringInStep(member);
    if (this.clusters!.get(member) !== undefined) this.inStep.add(member);
  }

  private async bringInStep(member: string): Promise<void> {
    const name = estimatorServiceName(member);
    const present = this.clusters!.get(member) !== undefined;
    const current = await this.core
      .readNamespacedService({ namespace: ESTIMATOR_NAMESPACE, name })
      .catch((err: unknown) => {
        if (err instanceof k8s.ApiException && err.code === 404) return undefined;
        throw err;
      });
    if (current !== undefined && !ours(current)) {
      if (present && !this.foreign.has(member))
        this.logger.warn(
          { member },
          `member ${member} already has an estimator Service not made by karmada-quota (Karmada's own ` +
            "scheduler-estimator?): left as it is, so karmada-scheduler's placements there do not ask the quota",
        );
      this.foreign.add(member);
      return;
    }
    if (!present) {
      if (current !== undefined)
        await this.core
          .deleteNamespacedService({ namespace: ESTIMATOR_NAMESPACE, name })
          .catch((err: unknown) => {
            if (!(err instanceof k8s.ApiException && err.code === 404)) throw err; // another replica deleted it
          });
      return;
    }
    if (name.length > MAX_NAME_LENGTH) {
      this.logger.warn(
        { member },
        `member ${member}'s estimator Service name ${name} is longer than ${MAX_NAME_LENGTH} characters, ` +
          "which Kubernetes refuses: karmada-scheduler's placements there do not ask the quota",
      );
      return;
    }
    const desired = estimatorService(member, this.address!);
    if (current === undefined) {
      await this.core
        .createNamespacedService({ namespace: ESTIMATOR_NAMESPACE, body: desired })
        .catch((err: unknown) => {
          if (!(err instanceof k8s.ApiException && err.code === 409)) throw err; // another replica made it
        });
      this.logger.log({ member }, `registered the scheduler-estimator for member ${member}`);
      return;
    }
    const same =
      current.spec?.externalName === desired.spec!.externalName &&
      current.spec?.ports?.length === 1 &&
      current.spec.ports[0]!.port === ESTIMATOR_SERVICE_PORT &&
      current.spec.ports[0]!.targetPort === this.address!.port;
    if (!same)
      await this.core.replaceNamespacedService({
        namespace: ESTIMATOR_NAMESPACE,
        name,
        body: {
          ...desired,
          metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion },
        },
      });
  }
}
