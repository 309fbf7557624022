/**
 * Writes the AppliedClusterKarmadaQuotas (docs/concepts/cluster-quotas.md, "Who reads a
 * ClusterKarmadaQuota"): after each reconcile of a ClusterKarmadaQuota, the projection libs/quota
 * applied-cluster-quota.ts computes, in each namespace its status counts (status.namespaces), by
 * server-side apply; and deletes the quota's projections in namespaces it no longer counts, or all of
 * them once it is deleted (its ownerReference lets the garbage collector do that too).
 *
 * Only what changed is written: each quota's projections as last written or listed are remembered,
 * listed again from the Karmada API server at most every REFRESH_MS (what another replica wrote, or
 * someone deleted, stands no longer than until the next reconcile after that). A failed write or
 * delete is logged and forgotten, so the next reconcile of the quota retries it; it never fails the
 * quota's reconcile.
 */
import * as k8s from '@kubernetes/client-node';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  describeError,
  type AppliedClusterKarmadaQuota,
  type KarmadaQuota,
  type KarmadaQuotaStatus,
} from '#api';
import { APPLIED_SELECTOR, appliedClusterQuota, appliedNamespaces } from '#quota';
import { KARMADA_KUBECONFIG } from '#service-kit';

/** A quota's projections are listed again from the API server once what is remembered is this old. */
export const REFRESH_MS = 300_000;

/** Writes at once, per quota: a quota over many namespaces is not written one namespace at a time. */
const PARALLEL_WRITES = 8;

/** What the writer does on the Karmada API server. */
export interface AppliedAccess {
  /** Every AppliedClusterKarmadaQuota named `name` that karmada-quota wrote, in any namespace. */
  list(name: string): Promise<AppliedClusterKarmadaQuota[]>;
  /** Creates or updates it whole (server-side apply). */
  apply(applied: AppliedClusterKarmadaQuota): Promise<void>;
  /** Deletes it; one already gone is no error. */
  delete(namespace: string, name: string): Promise<void>;
}

interface Known {
  /** When the projections were last listed (epoch ms). */
  listedAt: number;
  /** Each namespace's projection as last written or listed, by its fingerprint. */
  written: Map<string, string>;
}

/** JSON with sorted keys: the API server returns an object's keys in its own order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/** What a write changes: the owner, the spec and the status. */
const fingerprint = (applied: AppliedClusterKarmadaQuota): string =>
  canonical({
    owners: (applied.metadata?.ownerReferences ?? []).map((o) => o.uid),
    labels: applied.metadata?.labels ?? {},
    spec: applied.spec,
    status: applied.status ?? {},
  });

/** Runs `tasks` at most `limit` at a time. */
async function inParallel(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  const queue = [...tasks];
  const worker = async () => {
    for (let task = queue.shift(); task; task = queue.shift()) await task();
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}

/** The projections' bookkeeping, apart from Nest and the API client so that it is unit-tested. */
export class AppliedClusterQuotaWriter {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly access: AppliedAccess,
    private readonly warn: (fields: Record<string, unknown>, message: string) => void,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * After the reconcile of the ClusterKarmadaQuota `name`: `quota` as it read it (undefined: it is
   * deleted) and `status` as it computed it. Never throws.
   */
  async sync(
    name: string,
    quota: KarmadaQuota | undefined,
    status: KarmadaQuotaStatus | undefined,
  ): Promise<void> {
    const now = this.clock();
    let known = this.known.get(name);
    if (known === undefined || now - known.listedAt >= REFRESH_MS) {
      try {
        const listed = await this.access.list(name);
        known = {
          listedAt: now,
          written: new Map(listed.map((a) => [a.metadata?.namespace ?? '', fingerprint(a)])),
        };
        this.known.set(name, known);
      } catch (err) {
        this.warn(
          { clusterQuota: name, error: describeError(err) },
          `could not list the ${APPLIED_CLUSTER_KARMADA_QUOTA.kind}s of the quota; retried at its next reconcile`,
        );
        return;
      }
    }
    const { written } = known;
    const wanted =
      quota !== undefined && status !== undefined
        ? appliedNamespaces(status).map((namespace) => appliedClusterQuota(quota, status, namespace))
        : [];
    const keep = new Set(wanted.map((a) => a.metadata!.namespace!));
    const failed: { namespace: string; action: string; error: string }[] = [];
    const tasks = [
      ...wanted.flatMap((applied) => {
        const namespace = applied.metadata!.namespace!;
        const print = fingerprint(applied);
        if (written.get(namespace) === print) return [];
        return [
          async () => {
            try {
              await this.access.apply(applied);
              written.set(namespace, print);
            } catch (err) {
              written.delete(namespace);
              failed.push({ namespace, action: 'write', error: describeError(err) });
            }
          },
        ];
      }),
      ...[...written.keys()]
        .filter((namespace) => !keep.has(namespace))
        .map((namespace) => async () => {
          try {
            await this.access.delete(namespace, name);
            written.delete(namespace);
          } catch (err) {
            failed.push({ namespace, action: 'delete', error: describeError(err) });
          }
        }),
    ];
    await inParallel(tasks, PARALLEL_WRITES);
    if (quota === undefined && written.size === 0) this.known.delete(name);
    if (failed.length > 0)
      this.warn(
        {
          clusterQuota: name,
          failed: failed.length,
          namespaces: failed.map((f) => `${f.namespace} (${f.action})`).join(', '),
          error: failed[0]!.error,
        },
        `could not write every ${APPLIED_CLUSTER_KARMADA_QUOTA.kind} of the quota (its namespaces' users ` +
          `read it there); retried at its next reconcile. The reconciler needs get, list, create, patch ` +
          `and delete on ${APPLIED_CLUSTER_KARMADA_QUOTA.plural}.${APPLIED_CLUSTER_KARMADA_QUOTA.group}, and the ` +
          'CRD installed (helm upgrade installs it)',
      );
  }
}

const resource = {
  group: APPLIED_CLUSTER_KARMADA_QUOTA.group,
  version: APPLIED_CLUSTER_KARMADA_QUOTA.version,
  plural: APPLIED_CLUSTER_KARMADA_QUOTA.plural,
};

/** The writer on the Karmada API server, for the reconcile service. */
@Injectable()
export class AppliedClusterQuotas {
  private readonly logger = new Logger('applied-cluster-quota');
  private readonly writer: AppliedClusterQuotaWriter;

  constructor(@Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig) {
    const objects = k8s.KubernetesObjectApi.makeApiClient(karmada);
    const custom = karmada.makeApiClient(k8s.CustomObjectsApi);
    this.writer = new AppliedClusterQuotaWriter(
      {
        list: async (name) =>
          (
            (await custom.listClusterCustomObject({
              ...resource,
              labelSelector: APPLIED_SELECTOR,
              fieldSelector: `metadata.name=${name}`,
            })) as { items: AppliedClusterKarmadaQuota[] }
          ).items,
        apply: async (applied) => {
          await objects.patch(
            applied,
            undefined,
            undefined,
            'karmada-quota-reconciler',
            true,
            k8s.PatchStrategy.ServerSideApply,
          );
        },
        delete: async (namespace, name) => {
          try {
            await custom.deleteNamespacedCustomObject({ ...resource, namespace, name });
          } catch (err) {
            if (!(err instanceof k8s.ApiException && err.code === 404)) throw err;
          }
        },
      },
      (fields, message) => this.logger.warn(fields, message),
    );
  }

  sync(name: string, quota: KarmadaQuota | undefined, status: KarmadaQuotaStatus | undefined): Promise<void> {
    return this.writer.sync(name, quota, status);
  }
}
