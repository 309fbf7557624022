import { describeError } from '#api';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '@nestjs/common';
import type { ClusterUsageState } from '#api';
import { ResilientInformer, reuseConnections } from '#service-kit';
import {
  controllerRefOf,
  countedResource,
  countedResourceId,
  groupOf,
  isKubernetesGroup,
  OwnerIndex,
  podUsage,
  podWorkload,
  UsageLedger,
  type ObjectRef,
} from '#usage';
import { resolveResource } from './discovery.js';

/**
 * Watched for their uids and controllers only, so pods are attributed past them (a ReplicaSet to its
 * Deployment or Argo Rollout, a Job to its CronJob, a Deployment to the operator resource that made
 * it: a FlinkDeployment propagated by Karmada) and only to their current incarnation: a pod whose
 * chain names another uid than the current object of that name (a Deployment, StatefulSet, Job...
 * deleted and re-created under its name) is a previous incarnation's (attribution). Each costs one
 * watch per member, and per object a cached copy trimmed to its metadata and one OwnerIndex entry.
 */
const OWNER_WATCHES = [
  { resource: 'replicasets', group: 'apps', kind: 'ReplicaSet' },
  { resource: 'deployments', group: 'apps', kind: 'Deployment' },
  { resource: 'statefulsets', group: 'apps', kind: 'StatefulSet' },
  { resource: 'daemonsets', group: 'apps', kind: 'DaemonSet' },
  { resource: 'jobs', group: 'batch', kind: 'Job' },
  { resource: 'cronjobs', group: 'batch', kind: 'CronJob' },
  { resource: 'replicationcontrollers', group: '', kind: 'ReplicationController' },
] as const;

/**
 * How long a deleted owner is remembered (OwnerIndex.forget): the garbage collector deletes its
 * dependents within seconds, and only a finalizer holds them longer. After that, references to it
 * are taken by name again.
 */
const DELETED_OWNERS_KEPT_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 60_000;

/**
 * Whether objects of this type can be up a pod's chain, so their uid and deletion matter: the owner
 * kinds watched above, and any kind of a group that is not Kubernetes' own (a counted Rollout).
 * Other counted kinds (Services, Secrets, ConfigMaps...) are tracked by their controller only, as
 * before: their creations and deletions re-attribute nothing.
 */
const OWNER_TYPES: ReadonlySet<string> = new Set(OWNER_WATCHES.map((w) => `${w.group}/${w.kind}`));
const canOwnPods = (type: { group: string; kind: string }) =>
  OWNER_TYPES.has(`${type.group}/${type.kind}`) || !isKubernetesGroup(type.group);

/** The list path and apiVersion of a built-in resource (`''`: the core group). */
const pathOf = (group: string, resource: string) =>
  group === '' ? `/api/v1/${resource}` : `/apis/${group}/v1/${resource}`;
const apiVersionOf = (group: string) => (group === '' ? 'v1' : `${group}/v1`);

/** How to reach a member cluster, from its Cluster object and credential Secret. */
export interface MemberCredentials {
  name: string;
  server: string;
  token: string;
  caPem?: string;
  insecureSkipTLSVerify: boolean;
}

export interface MemberHealth {
  state: ClusterUsageState;
  /** When the member's watches were last known to be current. */
  lastSyncTime?: Date;
  message?: string;
}

export interface WatcherOptions {
  unreachableAfterMs: number;
  maxRetryBackoffMs: number;
  /** How long a call to the member (a list included) may wait for its whole answer. */
  requestTimeoutMs: number;
  /** Called for every watch event, by resource (`pods`, `services`, ...): for metrics. */
  onEvent?: (resource: string) => void;
}

/** Whether two credential sets reach the same cluster the same way (else the watcher restarts). */
export const sameCredentials = (a: MemberCredentials, b: MemberCredentials): boolean =>
  a.server === b.server &&
  a.token === b.token &&
  a.caPem === b.caPem &&
  a.insecureSkipTLSVerify === b.insecureSkipTLSVerify;

function kubeConfigFor(member: MemberCredentials, requestTimeoutMs: number): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: member.name,
        server: member.server,
        skipTLSVerify: member.insecureSkipTLSVerify,
        ...(member.caPem ? { caData: Buffer.from(member.caPem).toString('base64') } : {}),
      },
    ],
    users: [{ name: member.name, token: member.token }],
    contexts: [{ name: member.name, cluster: member.name, user: member.name }],
    currentContext: member.name,
  });
  return reuseConnections(kc, { requestTimeoutMs });
}

/**
 * Drops what accounting no longer needs from an informer-cached object (pod specs, Secret data):
 * the informer keys and relists by metadata alone, and the cache stays compact.
 */
function trimObject(obj: k8s.KubernetesObject & Record<string, unknown>): void {
  const meta = obj.metadata;
  if (meta) {
    delete meta.managedFields;
    delete meta.annotations;
    delete meta.labels;
  }
  for (const field of ['spec', 'status', 'data', 'stringData', 'binaryData']) delete obj[field];
}

/** A counted resource's watch: the quota keys counting it, and once resolved its kind and cache. */
interface CountedWatch {
  keys: Set<string>;
  type?: { group: string; kind: string };
  cache?: k8s.ObjectCache<k8s.KubernetesObject>;
}

/**
 * Watches one member cluster's pods, ReplicaSets, Deployments and the objects some quota counts, and
 * keeps its per-namespace usage in a UsageLedger, each pod and counted object attributed to its
 * top-level workload through the controllers of every object watched here. When the member cannot
 * be reached its last usage is kept and its health turns Stale, then Unreachable: never counted as
 * zero.
 */
export class MemberWatcher {
  readonly ledger = new UsageLedger();
  private readonly owners = new OwnerIndex();
  private readonly informers: ResilientInformer<k8s.KubernetesObject>[] = [];
  /** Per counted resource (`deployments.apps`). */
  private readonly counted = new Map<string, CountedWatch>();
  /** The pods' informer cache (trimmed to metadata), to attribute them again when an owner changes. */
  private podCache?: k8s.ObjectCache<k8s.V1Pod>;
  /** Namespaces where an owner appeared or changed uid or controller: attributed again before publishing. */
  private readonly ownersChanged = new Set<string>();
  private sweptAt = Date.now();
  private readonly kc: k8s.KubeConfig;
  private readonly core: k8s.CoreV1Api;
  private health: MemberHealth = { state: 'Unreachable', message: 'not synced yet' };
  private failingSince?: number;
  private everSynced = false;
  private readonly createdAt = Date.now();
  /** Watches started and not listed yet: until none is left the member's picture is incomplete. */
  private readonly unlisted = new Set<string>([...OWNER_WATCHES.map((w) => w.resource), 'pods']);
  private listedAll = false;
  private podsListed = false;
  /** Set by stop(): a start or countObjects still under way then adds no watch. */
  private stopped = false;
  /** The member refused our credentials to the last access check (see checkAccess). */
  private accessRefused = false;
  private checkingAccess = false;

  /**
   * `inherited`: namespaces a previous watcher of this cluster published (before its credentials
   * changed); once this one has listed the pods they are published again, as empty if they are gone.
   */
  constructor(
    readonly credentials: MemberCredentials,
    private readonly options: WatcherOptions,
    private readonly logger: Logger,
    private inherited: string[] = [],
  ) {
    this.kc = kubeConfigFor(credentials, options.requestTimeoutMs);
    this.core = this.kc.makeApiClient(k8s.CoreV1Api);
  }

  /** Namespaces whose usage changed since the last call (to publish). */
  takeChanges(now = Date.now()): string[] {
    if (now - this.sweptAt >= SWEEP_EVERY_MS) {
      this.sweptAt = now;
      this.owners.sweep(now - DELETED_OWNERS_KEPT_MS);
    }
    this.attributeAgain();
    const changed = new Set(this.ledger.dirtyNamespaces());
    this.ledger.clearDirty();
    // Not before the pods are listed: the owners' lists sync first, and publishing the
    // inherited namespaces then would publish them empty, counting their usage as zero meanwhile.
    if (this.podsListed) {
      this.inherited.forEach((namespace) => changed.add(namespace));
      this.inherited = [];
    }
    return [...changed];
  }

  get name(): string {
    return this.credentials.name;
  }

  /**
   * Whether this watcher has anything to publish: not before every watch of its start has listed,
   * since the usage and health a previous holder of the cluster published say more than a partial
   * count; unless the member has not answered for unreachableAfterMs: its being Unreachable is news.
   */
  hasNews(now = Date.now()): boolean {
    return this.listedAll || now - this.createdAt >= this.options.unreachableAfterMs;
  }

  /** Current health; Stale becomes Unreachable once the failure has lasted unreachableAfterMs. */
  currentHealth(now = Date.now()): MemberHealth {
    if (this.health.state === 'Stale' && this.failingSince !== undefined) {
      if (now - this.failingSince >= this.options.unreachableAfterMs)
        return { ...this.health, state: 'Unreachable' };
    }
    if (this.health.state === 'Ready') return { ...this.health, lastSyncTime: new Date(now) };
    return this.health;
  }

  /** Starts the watches: owners, pods, then the objects these quota keys count (countObjects). */
  async start(quotaKeys: Iterable<string> = []): Promise<void> {
    const keys = [...quotaKeys];
    this.expectCounted(keys);
    const kc = this.kc;
    const core = this.core;
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const owners = OWNER_WATCHES.map(
      ({ resource, group, kind }) =>
        new ResilientInformer<k8s.KubernetesObject>(
          k8s.makeInformer(kc, pathOf(group, resource), () => objects.list(apiVersionOf(group), kind)),
          {
            upsert: (obj) => {
              this.track({ group, kind }, obj);
              trimObject(obj as k8s.KubernetesObject & Record<string, unknown>);
            },
            remove: (obj) => this.untrack({ group, kind }, obj),
            synced: () => this.synced(resource),
            failed: (err) => this.failed(resource, err),
          },
          this.options.maxRetryBackoffMs,
        ),
    );
    const podInformer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
    this.podCache = podInformer;
    const pods = new ResilientInformer<k8s.V1Pod>(
      podInformer,
      {
        upsert: (pod) => {
          this.options.onEvent?.('pods');
          this.upsertPod(pod);
        },
        remove: (pod) => {
          const { namespace, uid } = pod.metadata ?? {};
          if (namespace && uid) this.ledger.deletePod(namespace, uid);
        },
        synced: () => {
          this.podsListed = true;
          this.synced('pods');
        },
        failed: (err) => this.failed('pods', err),
      },
      this.options.maxRetryBackoffMs,
    );
    this.informers.push(...owners, pods as never);
    // Owners first, so existing pods are attributed past them from the start.
    for (const informer of owners) if (!this.stopped) await informer.start();
    if (!this.stopped) await pods.start();
    if (!this.stopped) await this.countObjects(keys);
  }

  /**
   * Confirms that the member still accepts this watcher's credentials (a one-pod list, which the
   * watches need anyway). A watch already established outlives a revoked token, since an API
   * server only authenticates new requests: without this check a revocation would show only when a
   * watch is next re-established, up to an hour later. A refusal (401, 403) turns the cluster Stale
   * and then Unreachable, its last usage kept; other failures (the member is down) are the watches'.
   */
  async checkAccess(timeoutMs = 10_000): Promise<void> {
    if (this.checkingAccess || this.stopped) return;
    this.checkingAccess = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      await Promise.race([this.core.listPodForAllNamespaces({ limit: 1 }), timeout]);
      if (this.accessRefused) {
        this.accessRefused = false;
        this.synced();
      }
    } catch (err) {
      if (err instanceof k8s.ApiException && (err.code === 401 || err.code === 403)) {
        this.accessRefused = true;
        this.markFailing(
          `the member refuses the aggregator's credentials (HTTP ${err.code}): renew the token in ` +
            `the credential Secret of Cluster ${this.name} (spec.secretRef)`,
        );
      }
    } finally {
      clearTimeout(timer);
      this.checkingAccess = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.informers.splice(0).map((i) => i.stop()));
  }

  /**
   * Counts the objects these quota keys name (`services`, `count/deployments.apps`, ...) from now
   * on, one watch per resource however many keys count it. Keys that are not object counts are
   * ignored; a resource the member does not serve is logged and counted as none.
   */
  async countObjects(quotaKeys: Iterable<string>): Promise<void> {
    const keys = [...quotaKeys];
    this.expectCounted(keys);
    for (const key of keys) {
      if (this.stopped) return;
      const counted = countedResource(key);
      if (!counted) continue;
      const id = countedResourceId(counted);
      const entry = this.counted.get(id);
      if (entry) {
        if (entry.keys.has(key)) continue;
        entry.keys.add(key);
        // Objects already cached count for the new key too.
        for (const obj of entry.cache?.list() ?? []) this.count(entry, obj);
        continue;
      }
      const fresh: CountedWatch = { keys: new Set([key]) };
      this.counted.set(id, fresh);
      try {
        const resolved = await resolveResource(this.kc, counted);
        if (this.stopped) return;
        const objects = k8s.KubernetesObjectApi.makeApiClient(this.kc);
        const informer = k8s.makeInformer(this.kc, resolved.path, () =>
          objects.list(resolved.apiVersion, resolved.kind),
        );
        fresh.type = { group: groupOf(resolved.apiVersion), kind: resolved.kind };
        fresh.cache = informer;
        const watch = new ResilientInformer<k8s.KubernetesObject>(
          informer,
          {
            upsert: (obj) => {
              this.options.onEvent?.(id);
              this.count(fresh, obj);
              trimObject(obj as k8s.KubernetesObject & Record<string, unknown>);
            },
            remove: (obj) => this.uncount(fresh, obj),
            synced: () => this.synced(id),
            failed: (err) => this.failed(id, err),
          },
          this.options.maxRetryBackoffMs,
        );
        this.informers.push(watch);
        await watch.start();
      } catch (err) {
        this.logger.warn(
          { cluster: this.name, resource: id, error: describeError(err) },
          'cannot count a resource',
        );
        this.listed(id); // counted as none: nothing more to wait for
      }
    }
  }

  /**
   * Records the object's uid and controller; when that is new, what was counted under the object's
   * own kind and name (its pods, or objects it made, seen before it) moves up to its top-level
   * workload, and the namespace's pods and counted objects are attributed again before the next
   * publish (attributeAgain): a new uid of a name makes its previous incarnation's pods terminating.
   * Returns the object's ref, or undefined for an object without namespace or name.
   */
  private track(type: { group: string; kind: string }, obj: k8s.KubernetesObject): ObjectRef | undefined {
    const { namespace, name, uid } = obj.metadata ?? {};
    if (!namespace || !name) return undefined;
    const self = { ...type, name };
    const owner = canOwnPods(type);
    if (this.owners.setObject(namespace, self, (owner && uid) || undefined, controllerRefOf(obj.metadata))) {
      this.ledger.reattribute(namespace, self, this.owners.workloadOf(namespace, self));
      if (owner) this.ownersChanged.add(namespace);
    }
    return self;
  }

  /**
   * Attributes again every pod and counted object of the namespaces where an owner changed, from
   * their cached metadata: once per namespace per publish however many owners changed there (a
   * rollout's new ReplicaSet, a CronJob's new Job, a workload re-created). Owner updates that change
   * neither uid nor controller (status, scale: nearly all) cost nothing here.
   */
  private attributeAgain(): void {
    const namespaces = [...this.ownersChanged];
    this.ownersChanged.clear();
    for (const namespace of namespaces) {
      for (const pod of this.podCache?.list(namespace) ?? []) {
        const uid = pod.metadata?.uid;
        if (uid) this.ledger.setPodWorkload(namespace, uid, podWorkload(pod, this.owners));
      }
      for (const watch of this.counted.values()) {
        for (const obj of watch.cache?.list(namespace) ?? []) this.count(watch, obj);
      }
    }
  }

  /** A deleted owner: what references it is a previous incarnation's from now (attribution). */
  private untrack(type: { group: string; kind: string }, obj: k8s.KubernetesObject): void {
    const { namespace, name, uid } = obj.metadata ?? {};
    if (!namespace || !name) return;
    if (this.owners.forget(namespace, { ...type, name }, Date.now(), uid || undefined) && canOwnPods(type))
      this.ownersChanged.add(namespace);
  }

  /** Counts the object under every key of its watch, attributed to its top-level workload. */
  private count(watch: CountedWatch, obj: k8s.KubernetesObject): void {
    const { namespace, name, uid } = obj.metadata ?? {};
    if (!watch.type || !namespace || !name || !uid) return;
    // The owner kinds are tracked from their own watch alone: two streams of one object, one behind
    // the other, would each record the other's past.
    const self = OWNER_TYPES.has(`${watch.type.group}/${watch.type.kind}`)
      ? { ...watch.type, name }
      : this.track(watch.type, obj);
    if (!self) return;
    const workload = this.owners.workloadOf(namespace, self, uid);
    for (const key of watch.keys) this.ledger.upsertObject(namespace, key, uid, workload);
  }

  private uncount(watch: CountedWatch, obj: k8s.KubernetesObject): void {
    const { namespace, uid } = obj.metadata ?? {};
    if (watch.type && !OWNER_TYPES.has(`${watch.type.group}/${watch.type.kind}`))
      this.untrack(watch.type, obj);
    if (namespace && uid) watch.keys.forEach((key) => this.ledger.deleteObject(namespace, key, uid));
  }

  private upsertPod(pod: k8s.V1Pod): void {
    const { namespace, uid } = pod.metadata ?? {};
    if (!namespace || !uid) return;
    if (pod.spec) this.ledger.upsertPod(namespace, uid, podUsage(pod, new Date(), this.owners));
    trimObject(pod as k8s.KubernetesObject & Record<string, unknown>);
  }

  /** Before the first full list, the watches of counted resources not watched yet count as unlisted. */
  private expectCounted(quotaKeys: string[]): void {
    if (this.listedAll) return;
    for (const key of quotaKeys) {
      const counted = countedResource(key);
      if (counted && !this.counted.has(countedResourceId(counted)))
        this.unlisted.add(countedResourceId(counted));
    }
  }

  /** A watch listed (or will never list: its resource is not served). */
  private listed(what: string): void {
    this.unlisted.delete(what);
    if (this.unlisted.size === 0) this.listedAll = true;
  }

  /** `what` listed: a watch, or nothing for a passed access check. */
  private synced(what?: string): void {
    if (what !== undefined) this.listed(what);
    this.everSynced = true;
    if (this.health.state !== 'Ready') this.logger.log({ cluster: this.name }, 'member synced, watching');
    this.failingSince = undefined;
    this.health = { state: 'Ready', lastSyncTime: new Date() };
  }

  private failed(what: string, err: unknown): void {
    this.markFailing(`watch of ${what} failed: ${describeError(err)}`);
  }

  private markFailing(message: string): void {
    if (this.health.state === 'Ready')
      this.logger.warn({ cluster: this.name, error: message }, 'member failing: keeping its last usage');
    this.failingSince ??= Date.now();
    const lastSyncTime = this.health.state === 'Ready' ? new Date() : this.health.lastSyncTime;
    this.health = { state: this.everSynced ? 'Stale' : 'Unreachable', lastSyncTime, message };
  }
}
