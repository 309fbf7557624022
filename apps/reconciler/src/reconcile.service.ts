import * as k8s from '@kubernetes/client-node';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import {
  RESOURCE_BINDING,
  type KarmadaQuota,
  type KarmadaQuotaStatus,
  type ResourceBinding,
  describeError,
} from '#api';
import {
  clusterQuotaNamed,
  heldEvent,
  heldForRoom,
  namespacesWaitingOn,
  quotaName,
  type QuotaEvent,
} from '#quota';
import type { Registry } from 'prom-client';
import {
  ClockCheck,
  KARMADA_KUBECONFIG,
  KubeQuotaStore,
  METRICS,
  QuotaEventWriter,
  quotaRefOf,
  REDIS,
  BindingOverrides,
  TemplateClasses,
  type RedisClient,
} from '#service-kit';
import { deletedBindingsKey } from '#usage';
import { AppliedClusterQuotas } from './applied-cluster-quotas.js';
import { RECONCILER_CONFIG, type ReconcilerConfig } from './config.js';
import { NamespaceCache } from './namespace-cache.js';
import {
  countedClusters,
  reconcileClusterQuota,
  reconcileQuotas,
  statusesCurrentIn,
  type BindingList,
  type ReconcileInput,
} from '#accounting';
import { readObservedUsage } from './usage-reader.js';
import { UsageRecorder } from './usage-recorder.js';
import { WaitingChanges, type HeldBack } from './waiting-changes.js';

const bindingResource = {
  group: RESOURCE_BINDING.group,
  version: RESOURCE_BINDING.version,
  plural: RESOURCE_BINDING.plural,
};

/** What one namespace's reconcile did; `skipped`: the cache showed nothing to write. */
export interface NamespaceReconcile {
  quotas: number;
  written: number;
  conflicts: number;
  skipped: boolean;
  /**
   * A ClusterKarmadaQuota's: the namespaces of the changes its written status lists as waiting; their
   * own reconciles requeue those that fit now (the room may have freed in another namespace).
   */
  waitingIn?: string[];
}

const usageMissing = (clusters: readonly string[], namespace: string) =>
  `the usage of ${clusters.join(', ')} in ${namespace} is missing from Redis (restarted empty or ` +
  `flushed?) and not published again yet; the status is kept until the aggregator republishes it`;

const sameMembers = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

/**
 * One namespace's reconcile: read its KarmadaQuotas and ResourceBindings from the Karmada API
 * server (and, for PriorityClass scopes, the priority classes of the bindings' templates) and the
 * observed usage from Redis, compute each status (libs/quota status.ts), and write the ones that
 * changed by compare-and-swap (reconcile-loop.ts).
 */
@Injectable()
export class ReconcileService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('reconcile');
  private readonly objects: k8s.CustomObjectsApi;
  private readonly quotas: KubeQuotaStore;
  private readonly events: QuotaEventWriter;
  private readonly waiting: WaitingChanges;
  private readonly templateClasses: TemplateClasses;
  private readonly overrides: BindingOverrides;

  constructor(
    @Inject(KARMADA_KUBECONFIG) karmada: k8s.KubeConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(RECONCILER_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(METRICS) metrics: Registry,
    private readonly cache: NamespaceCache,
    private readonly usageRecorder: UsageRecorder,
    private readonly clockCheck: ClockCheck,
    private readonly applied: AppliedClusterQuotas,
  ) {
    this.objects = karmada.makeApiClient(k8s.CustomObjectsApi);
    this.quotas = new KubeQuotaStore(karmada);
    this.events = new QuotaEventWriter(karmada, 'karmada-quota-reconciler');
    this.waiting = new WaitingChanges(karmada, redis, metrics, config.REQUEUE_MIN_INTERVAL_SECONDS * 1000);
    this.templateClasses = new TemplateClasses(karmada, redis);
    this.overrides = new BindingOverrides(karmada);
  }

  /** The policy and Cluster watches start with the service: member caps by label read the Clusters. */
  onApplicationBootstrap(): void {
    this.overrides.onApplicationBootstrap();
  }

  async onModuleDestroy(): Promise<void> {
    await this.overrides.onModuleDestroy();
  }

  /**
   * The bindings as the charge judges them: their templates' priority classes where Karmada wrote
   * none (for the quotas that select by class) and what OverridePolicies make their clusters run.
   */
  private async judged(bindings: readonly ResourceBinding[], quotas: readonly KarmadaQuota[]) {
    return this.overrides.apply(await this.templateClasses.classify(bindings, quotas));
  }

  /**
   * Looks at the cached objects first: a namespace whose statuses they show current is done without
   * reading the Karmada API server (statusesCurrentIn says why that is safe). Otherwise the quotas
   * are read and the bindings listed from it, and the changed statuses written. `restamp`: a count
   * on request, never done from the cache, and written even if only its stamp moves.
   */
  async reconcileNamespace(namespace: string, { restamp = false } = {}): Promise<NamespaceReconcile> {
    // Claims carry other services' wall-clock times: a reconciler whose clock may be off settles and
    // expires none. Failing keeps every status as it is (conservative); the job retries with back-off.
    const clockOff = this.clockCheck.distrust();
    if (clockOff !== undefined) throw new Error(clockOff);
    const view = this.cache.view(namespace);
    let cachedInput: { counted: string[]; input: ReconcileInput & { unknown: string[] } } | undefined;
    if (view) {
      const counted = countedClusters(view.quotas);
      const input = await this.readInput(namespace, counted, restamp);
      if (input.unknown.length === 0) {
        const bindings = await this.judged(view.bindings, view.quotas);
        if (statusesCurrentIn({ ...view, bindings }, input, Date.now())) {
          this.usageRecorder.offer(namespace, view.quotas, input.clusters, bindings);
          return { quotas: view.quotas.length, written: 0, conflicts: 0, skipped: true };
        }
        cachedInput = { counted, input };
      }
    }
    const quotas = await this.quotas.list(namespace);
    const counted = countedClusters(quotas);
    const input =
      cachedInput && sameMembers(cachedInput.counted, counted)
        ? cachedInput.input
        : await this.readInput(namespace, counted, restamp);
    // Failing leaves the status as it is; the job retries with back-off until the usage is back.
    if (input.unknown.length > 0) throw new Error(usageMissing(input.unknown, namespace));
    // Bindings get their templates' classes for every quota read so far: one read again after a
    // conflict (reconcile-loop.ts) may select by class where the one listed first did not.
    const read = [...quotas];
    let judged: ResourceBinding[] = [];
    const outcome = await reconcileQuotas(
      {
        getQuota: async (ns, name) => {
          const quota = await this.quotas.get(ns, name);
          read.push(quota);
          return quota;
        },
        listBindings: async (ns) => {
          const list = await this.listBindings(ns);
          judged = await this.judged(list.items, read);
          return { ...list, items: judged };
        },
        writeStatus: async (quota) => {
          const written = await this.quotas.writeStatus(quota);
          this.cache.noteOwnWrite(written);
          return written;
        },
        clock: Date.now,
      },
      namespace,
      quotas,
      input,
      (quota, result) => this.emit(quota, result.events),
      (message) => this.logger.warn({ namespace }, message),
    );
    // A record may name a ClusterKarmadaQuota selecting the namespace: its room is as last watched.
    // While those are not known, records naming one wait (settled as a deleted quota's, they would be
    // requeued at once).
    const statuses = new Map(outcome.statuses);
    const spanning = this.cache.clusterQuotasSelecting(namespace);
    for (const quota of spanning ?? []) statuses.set(quotaName(quota), quota.status ?? {});
    const waiting = spanning
      ? outcome.waiting
      : { ...outcome.waiting, live: outcome.waiting.live.filter((w) => !clusterQuotaNamed(w.quota)) };
    await this.waiting.settle(namespace, waiting, statuses, new Date());
    const held = judged.flatMap((binding) => {
      const estimate = heldForRoom(binding, input.members);
      return estimate ? [{ binding, estimate }] : [];
    });
    if (held.length > 0) {
      const recounted = [
        ...quotas.map((q) => ({
          ...q,
          status: outcome.statuses.get(q.metadata?.name ?? '') ?? q.status,
        })),
        ...(this.cache.clusterQuotasSelecting(namespace) ?? []),
      ];
      await this.waiting.requeueHeld(namespace, held, recounted, new Date());
      await this.reportHeld(namespace, quotas, outcome.statuses, held);
    }
    this.usageRecorder.offer(namespace, quotas, input.clusters, judged);
    return { quotas: outcome.quotas, written: outcome.written, conflicts: outcome.conflicts, skipped: false };
  }

  /**
   * One ClusterKarmadaQuota's reconcile (docs/concepts/cluster-quotas.md): read it, then each namespace
   * it selects (bindings, usage, deletions, waiting changes), and write its status if it changed;
   * then its AppliedClusterKarmadaQuotas (applied-cluster-quotas.ts), which never fail it.
   * `restamp`: a count on request, written even if only its stamp moves.
   */
  async reconcileClusterQuota(name: string, { restamp = false } = {}): Promise<NamespaceReconcile> {
    const clockOff = this.clockCheck.distrust();
    if (clockOff !== undefined) throw new Error(clockOff);
    let read: KarmadaQuota | undefined; // as last read: the status computed is for its spec
    const outcome = await reconcileClusterQuota(
      {
        getQuota: async () => (read = await this.quotas.getClusterQuota(name)),
        selectedNamespaces: (quota) => {
          const namespaces = this.cache.namespacesSelectedBy(quota);
          if (namespaces === undefined)
            throw new Error('the watch of namespaces on the Karmada API server is not listed yet');
          return namespaces;
        },
        readNamespace: async (namespace, quota) => {
          const input = await this.readInput(namespace, countedClusters([quota]));
          if (input.unknown.length > 0) throw new Error(usageMissing(input.unknown, namespace));
          const list = await this.listBindings(namespace);
          return { bindings: { ...list, items: await this.judged(list.items, [quota]) }, input };
        },
        writeStatus: async (quota) => {
          const written = await this.quotas.writeStatus(quota);
          this.cache.noteOwnWrite(written);
          return written;
        },
        clock: Date.now,
      },
      this.config.MAX_CONFLICT_RETRIES,
      (quota, result) => this.emit(quota, result.events),
      (message) => this.logger.warn({ clusterQuota: name }, message),
      { restamp },
    );
    await this.applied.sync(name, read, outcome.status);
    const written = outcome.written ? 1 : 0;
    const waitingIn = outcome.written ? namespacesWaitingOn(outcome) : [];
    return { quotas: 1, written, conflicts: outcome.conflicts, skipped: !outcome.written, waitingIn };
  }

  /**
   * What a reconcile reads from Redis: the usage of the counted clusters, deletions, waiting changes;
   * and whether it is a count on request.
   */
  private async readInput(
    namespace: string,
    counted: string[],
    restamp = false,
  ): Promise<ReconcileInput & { unknown: string[] }> {
    const [observed, deleted, waiting] = await Promise.all([
      readObservedUsage(this.redis, namespace, counted),
      this.redis.zrange(deletedBindingsKey(namespace), 0, -1),
      this.waiting.read(namespace),
    ]);
    if (observed.errors.length > 0)
      this.logger.warn(
        { namespace, error: observed.errors.join('; ') },
        'part of the usage published in Redis is unreadable and not counted',
      );
    return {
      clusters: observed.clusters,
      unknown: observed.unknown,
      deletedBindingUids: new Set(deleted),
      timing: {
        ttlSeconds: this.config.RESERVATION_TTL_SECONDS,
        landingWindowSeconds: this.config.ADMISSION_LANDING_WINDOW_SECONDS,
      },
      maxConflictRetries: this.config.MAX_CONFLICT_RETRIES,
      waiting,
      ...this.overrides.memberLabels(),
      ...(restamp ? { restamp } : {}),
    };
  }

  private async listBindings(namespace: string): Promise<BindingList> {
    const list = (await this.objects.listNamespacedCustomObject({ ...bindingResource, namespace })) as {
      items: ResourceBinding[];
      metadata?: { resourceVersion?: string };
    };
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
  }

  /**
   * Names the quota on a workload Karmada's scheduler holds back for want of room under its caps
   * (Karmada's own condition cannot): an Event on the workload when a quota first lists its binding.
   */
  private async reportHeld(
    namespace: string,
    quotas: readonly KarmadaQuota[],
    statuses: ReadonlyMap<string, KarmadaQuotaStatus>,
    held: readonly HeldBack[],
  ): Promise<void> {
    const byName = new Map(held.map(({ binding }) => [binding.metadata?.name, binding]));
    for (const quota of quotas) {
      const name = quota.metadata?.name ?? '';
      const listedBefore = new Set((quota.status?.waiting ?? []).map((w) => w.binding));
      for (const entry of statuses.get(name)?.waiting ?? []) {
        const workload = byName.get(entry.binding)?.spec?.resource;
        if (workload === undefined || listedBefore.has(entry.binding)) continue;
        const ref = {
          namespace,
          name: workload.name,
          uid: workload.uid,
          kind: { apiVersion: workload.apiVersion, kind: workload.kind },
        };
        await this.events
          .write(ref, heldEvent(name, entry))
          .catch((err: unknown) =>
            this.logger.warn(
              { namespace, binding: entry.binding, quota: name, error: describeError(err) },
              'could not record an Event on a workload Karmada holds back',
            ),
          );
      }
    }
  }

  /** Kubernetes Events on the quota (over quota, a cluster going stale or recovering). */
  private async emit(quota: KarmadaQuota, events: QuotaEvent[]): Promise<void> {
    const ref = quotaRefOf(quota);
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
