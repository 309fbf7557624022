import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { sleep } from '../../../tools/federation/src/index.js';
import { eventually, uniqueName } from '../../support/federation.js';
import { binding, deployment, karmadaQuota } from '../../support/fixtures.js';
import type { ChaosFederation } from './chaos-federation.js';

/** How a create through the host API server ended once every retryable failure was retried. */
export type CreateOutcome = 'admitted' | 'denied';

const code = (err: unknown): number | undefined => (err instanceof k8s.ApiException ? err.code : undefined);

/**
 * Answers worth retrying during a fault: no connection (the host API server is down), 500 (the API
 * server could not call the webhook), 429, 503 (the webhook failed closed), 504.
 */
export function isRetryable(err: unknown): boolean {
  const status = code(err);
  return status === undefined || [429, 500, 502, 503, 504].includes(status);
}

/** Calls `fn` until it succeeds or fails with a non-retryable error; gives up after `timeoutMs`. */
export async function retrying<T>(what: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetryable(err) || Date.now() > deadline) {
        throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      await sleep(250);
    }
  }
}

export interface WorkloadShape {
  replicas: number;
  /** CPU request of each replica. */
  cpu: string;
  /** The member cluster the replicas are scheduled to (spec.clusters). */
  cluster: string;
}

/**
 * A namespace of the federation (on the host and in every member) with KarmadaQuotas, and the
 * Karmada flow on it done by hand: ResourceBindings created on the host (through the webhook), and
 * each admitted binding's Deployment propagated to the member cluster it is scheduled to.
 * Pods carry the label `app=<binding name>`: the recount attributes them by it.
 */
export class Tenant {
  private constructor(
    readonly chaos: ChaosFederation,
    readonly namespace: string,
  ) {}

  static async create(
    chaos: ChaosFederation,
    prefix: string,
    quotas: Record<string, Record<string, string>>,
  ): Promise<Tenant> {
    const namespace = uniqueName(prefix);
    const cores = [
      chaos.hostApi(k8s.CoreV1Api),
      ...chaos.members.map((m) => chaos.memberApi(m.name, k8s.CoreV1Api)),
    ];
    for (const core of cores) await core.createNamespace({ body: { metadata: { name: namespace } } });
    const tenant = new Tenant(chaos, namespace);
    for (const [name, hard] of Object.entries(quotas)) await tenant.createQuota(name, hard);
    return tenant;
  }

  private get objects(): k8s.CustomObjectsApi {
    return this.chaos.hostApi(k8s.CustomObjectsApi);
  }

  async createQuota(name: string, hard: Record<string, string>): Promise<void> {
    const body = karmadaQuota(this.namespace, name, hard);
    await retrying(`create KarmadaQuota ${name}`, () =>
      this.objects.createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace: this.namespace, body }),
    );
    // Wait for the first status: the reconciler knows the quota from then on.
    await eventually(
      () => this.quota(name),
      (q) => q.status?.hard !== undefined,
      60_000,
    );
  }

  quota(name: string): Promise<KarmadaQuota> {
    return this.objects.getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace: this.namespace,
      name,
    }) as Promise<KarmadaQuota>;
  }

  async quotas(): Promise<KarmadaQuota[]> {
    const list = (await this.objects.listNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace: this.namespace,
    })) as { items: KarmadaQuota[] };
    return list.items;
  }

  async bindings(): Promise<ResourceBinding[]> {
    const list = (await this.objects.listNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: this.namespace,
    })) as { items: ResourceBinding[] };
    return list.items;
  }

  binding(name: string, shape: WorkloadShape): ResourceBinding {
    return binding(this.namespace, name, {
      replicas: shape.replicas,
      cpu: shape.cpu,
      clusters: [{ name: shape.cluster, replicas: shape.replicas }],
    });
  }

  /**
   * Creates a binding as Karmada would, retrying through faults. A create whose answer was lost
   * (the connection dropped) is retried and then meets 409 AlreadyExists: it was admitted.
   */
  async createBinding(name: string, shape: WorkloadShape, timeoutMs = 120_000): Promise<CreateOutcome> {
    const body = this.binding(name, shape);
    try {
      await retrying(
        `create ResourceBinding ${this.namespace}/${name}`,
        () =>
          this.objects.createNamespacedCustomObject({ ...RESOURCE_BINDING, namespace: this.namespace, body }),
        timeoutMs,
      );
      return 'admitted';
    } catch (err) {
      const status = code((err as Error).cause);
      if (status === 403) return 'denied';
      if (status === 409) return 'admitted';
      throw err;
    }
  }

  /** Creates the binding's Deployment in the member it is scheduled to (as Karmada propagates it). */
  async propagate(rb: ResourceBinding): Promise<void> {
    const name = rb.metadata!.name!;
    const cpu = String(rb.spec?.replicaRequirements?.resourceRequest?.cpu ?? '0');
    for (const target of rb.spec?.clusters ?? []) {
      const apps = this.chaos.memberApi(target.name, k8s.AppsV1Api);
      await apps
        .createNamespacedDeployment({
          namespace: this.namespace,
          body: deployment(name, target.replicas ?? 0, cpu),
        })
        .catch((err: unknown) => {
          if (code(err) !== 409) throw err;
        });
    }
  }

  /** Propagates every persisted binding that has no Deployment yet. */
  async propagateAll(): Promise<void> {
    for (const rb of await retrying('list bindings', () => this.bindings())) {
      if (!rb.metadata?.deletionTimestamp) await this.propagate(rb);
    }
  }

  /**
   * Retires a workload the way that keeps the quota exact: its Deployment goes first and, once its
   * pods are gone from the member, its binding (whose reservation then holds nothing observed).
   */
  async retire(rb: ResourceBinding): Promise<void> {
    const name = rb.metadata!.name!;
    for (const target of rb.spec?.clusters ?? []) {
      const apps = this.chaos.memberApi(target.name, k8s.AppsV1Api);
      await apps
        .deleteNamespacedDeployment({ namespace: this.namespace, name, propagationPolicy: 'Foreground' })
        .catch((err: unknown) => {
          if (code(err) !== 404) throw err;
        });
      const core = this.chaos.memberApi(target.name, k8s.CoreV1Api);
      await eventually(
        () => core.listNamespacedPod({ namespace: this.namespace, labelSelector: `app=${name}` }),
        (pods) => pods.items.length === 0,
        60_000,
      );
    }
    await retrying(`delete ResourceBinding ${name}`, () =>
      this.objects.deleteNamespacedCustomObject({ ...RESOURCE_BINDING, namespace: this.namespace, name }),
    ).catch((err: unknown) => {
      if (code((err as Error).cause) !== 404) throw err;
    });
  }
}
