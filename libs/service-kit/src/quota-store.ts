import * as k8s from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLUSTER_KARMADA_QUOTA, KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { describeError } from '#api';
import { isClusterQuota, limitsNamespace, type SelectedNamespace } from '#quota';

/** How long a store call may take. */
export interface StoreCallOptions {
  /** Epoch ms: no attempt is started after it, and one in flight then is given up. */
  deadline?: number;
}

/**
 * Reads and compare-and-swap writes KarmadaQuotas on the Karmada API server (the webhook and the
 * reconciler).
 */
export interface QuotaStore {
  list(namespace: string, options?: StoreCallOptions): Promise<KarmadaQuota[]>;
  /** Replaces the status if `quota.metadata.resourceVersion` is current; else throws ConflictError. */
  writeStatus(quota: KarmadaQuota, options?: StoreCallOptions): Promise<KarmadaQuota>;
  /** The namespace's quotas as a cache holds them now, without a read; undefined when it holds none. */
  cached?(namespace: string): readonly KarmadaQuota[] | undefined;
  /**
   * The namespaces a ClusterKarmadaQuota selects as this store sees their labels now; undefined
   * while it cannot tell. A batch knows the quota's usage only once its status counted every one
   * since its labels last changed (libs/quota parseQuotaState).
   */
  selectedNamespaces?(quota: KarmadaQuota): readonly SelectedNamespace[] | undefined;
}

export class ConflictError extends Error {
  override name = 'ConflictError';
}

const resource = { group: KARMADA_QUOTA.group, version: KARMADA_QUOTA.version, plural: KARMADA_QUOTA.plural };
const clusterResource = {
  group: CLUSTER_KARMADA_QUOTA.group,
  version: CLUSTER_KARMADA_QUOTA.version,
  plural: CLUSTER_KARMADA_QUOTA.plural,
};

/** The namespaces' labels on the Karmada API server: which ClusterKarmadaQuotas select which. */
export interface NamespaceSelection {
  /** One namespace's labels (read when not known). */
  labelsOf(namespace: string, options: StoreCallOptions): Promise<Readonly<Record<string, string>>>;
  /** The namespaces the quota selects as known now; undefined while they cannot be told. */
  selectedBy(quota: KarmadaQuota): readonly SelectedNamespace[] | undefined;
}

/** Answers worth another try: throttling, a warming watch cache, a restarting API server. */
const TRANSIENT = new Set([429, 500, 502, 503, 504]);
const RETRY_DELAYS_MS = [25, 50, 100, 200, 400, 800, 1_000];

/**
 * A call's options that abort its request at `deadline` (epoch ms): without them a request on a
 * connection that went silent (the API server's machine gone, a network partition) waits for TCP to
 * give up, many minutes, and holds up every admission of its namespace meanwhile. A write given up
 * may still land: its claims then lapse at their expiration, as those of any answer that came late.
 */
export function abortAt(deadline: number | undefined): k8s.ConfigurationOptions | undefined {
  if (deadline === undefined) return undefined;
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(Math.max(1, deadline - Date.now())));
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (response) => new k8s.Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/**
 * KarmadaQuotas on the Karmada API server; status writes are compare-and-swap on resourceVersion.
 * Given `namespaces`, a namespace's list also holds the ClusterKarmadaQuotas that select it
 * (docs/concepts/cluster-quotas.md), read in the same call. Transient failures are retried a few
 * times (about 2.5 s in all, inside the admission deadline).
 */
export class KubeQuotaStore implements QuotaStore {
  private readonly api: k8s.CustomObjectsApi;

  constructor(
    kc: k8s.KubeConfig,
    private readonly namespaces?: NamespaceSelection,
  ) {
    this.api = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  get(namespace: string, name: string): Promise<KarmadaQuota> {
    return withRetries(
      async () =>
        (await this.api.getNamespacedCustomObject({ ...resource, namespace, name })) as KarmadaQuota,
    );
  }

  /** The ClusterKarmadaQuota as stored; undefined when there is none of that name. */
  getClusterQuota(name: string): Promise<KarmadaQuota | undefined> {
    return withRetries(async () => {
      try {
        return asClusterQuota(
          (await this.api.getClusterCustomObject({ ...clusterResource, name })) as KarmadaQuota,
        );
      } catch (err) {
        if (err instanceof k8s.ApiException && err.code === 404) return undefined;
        throw err;
      }
    });
  }

  async list(namespace: string, options: StoreCallOptions = {}): Promise<KarmadaQuota[]> {
    const [own, spanning] = await Promise.all([
      withRetries(async () => {
        const list = (await this.api.listNamespacedCustomObject(
          { ...resource, namespace },
          abortAt(options.deadline),
        )) as { items: KarmadaQuota[] };
        return list.items;
      }, options.deadline),
      this.namespaces ? this.selecting(namespace, this.namespaces, options) : [],
    ]);
    return [...own, ...spanning];
  }

  /**
   * Every ClusterKarmadaQuota. None when the Karmada API server does not serve the kind (its CRD not
   * installed): then none can exist.
   */
  listClusterQuotas(options: StoreCallOptions = {}): Promise<KarmadaQuota[]> {
    return withRetries(async () => {
      try {
        const list = (await this.api.listClusterCustomObject(clusterResource, abortAt(options.deadline))) as {
          items: KarmadaQuota[];
        };
        return list.items.map(asClusterQuota);
      } catch (err) {
        if (err instanceof k8s.ApiException && err.code === 404) return [];
        throw err;
      }
    }, options.deadline);
  }

  /** The ClusterKarmadaQuotas limiting the namespace: selecting it, or still counting it (limitsNamespace). */
  private async selecting(
    namespace: string,
    namespaces: NamespaceSelection,
    options: StoreCallOptions,
  ): Promise<KarmadaQuota[]> {
    const [quotas, labels] = await Promise.all([
      this.listClusterQuotas(options),
      namespaces.labelsOf(namespace, options),
    ]);
    return quotas.filter((quota) => limitsNamespace(quota, namespace, labels));
  }

  selectedNamespaces(quota: KarmadaQuota): readonly SelectedNamespace[] | undefined {
    return this.namespaces?.selectedBy(quota);
  }

  writeStatus(quota: KarmadaQuota, options: StoreCallOptions = {}): Promise<KarmadaQuota> {
    const spanning = isClusterQuota(quota);
    return withRetries(async () => {
      try {
        const name = quota.metadata!.name!;
        return spanning
          ? asClusterQuota(
              (await this.api.replaceClusterCustomObjectStatus(
                { ...clusterResource, name, body: quota },
                abortAt(options.deadline),
              )) as KarmadaQuota,
            )
          : ((await this.api.replaceNamespacedCustomObjectStatus(
              { ...resource, namespace: quota.metadata!.namespace!, name, body: quota },
              abortAt(options.deadline),
            )) as KarmadaQuota);
      } catch (err) {
        if (err instanceof k8s.ApiException && err.code === 409) {
          throw new ConflictError(
            spanning
              ? `ClusterKarmadaQuota ${quota.metadata?.name} changed meanwhile`
              : `KarmadaQuota ${quota.metadata?.namespace}/${quota.metadata?.name} changed meanwhile`,
          );
        }
        throw err;
      }
    }, options.deadline);
  }
}

/** The object marked as a ClusterKarmadaQuota (the accounting tells the kinds apart by `kind`). */
function asClusterQuota(quota: KarmadaQuota): KarmadaQuota {
  quota.kind = CLUSTER_KARMADA_QUOTA.kind;
  return quota;
}

/** Retries transient failures; none is started after `deadline` (epoch ms), when given. */
async function withRetries<T>(call: () => Promise<T>, deadline = Infinity): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      // Given up by abortAt's deadline or by the client's request timeout: waited long enough already.
      const givenUp = err instanceof Error && err.name === 'AbortError';
      const transient =
        err instanceof k8s.ApiException ? TRANSIENT.has(err.code) : !(err instanceof ConflictError);
      const tooLate = Date.now() + (RETRY_DELAYS_MS[attempt] ?? 0) >= deadline;
      if (givenUp || !transient || attempt >= RETRY_DELAYS_MS.length || tooLate) {
        if (err instanceof k8s.ApiException)
          throw new Error(`Karmada API server answered ${describeError(err)}`, { cause: err });
        if (givenUp)
          throw new Error(
            deadline === Infinity
              ? 'the Karmada API server had not answered within the request timeout; is it up and reachable?'
              : 'the Karmada API server had not answered by the admission deadline',
            { cause: err },
          );
        throw err;
      }
      await sleep(RETRY_DELAYS_MS[attempt]!);
    }
  }
}
