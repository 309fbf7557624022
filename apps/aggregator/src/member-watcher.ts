import * as k8s from '@kubernetes/client-node';
import type { Logger } from '@nestjs/common';
import type { ClusterUsageState } from '#api';
import { describeError, ResilientInformer } from '#service-kit';
import { countedResource, countedResourceId, deploymentOf, podUsage, UsageLedger } from '#usage';
import { resolveResource } from './discovery.js';

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
  /** Called for every watch event, by resource (`pods`, `services`, ...): for metrics. */
  onEvent?: (resource: string) => void;
}

/** Whether two credential sets reach the same cluster the same way (else the watcher restarts). */
export const sameCredentials = (a: MemberCredentials, b: MemberCredentials): boolean =>
  a.server === b.server &&
  a.token === b.token &&
  a.caPem === b.caPem &&
  a.insecureSkipTLSVerify === b.insecureSkipTLSVerify;

function kubeConfigFor(member: MemberCredentials): k8s.KubeConfig {
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
  return kc;
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

/**
 * Watches one member cluster's pods (and ReplicaSets, to attribute pods to their Deployment) and
 * keeps its per-namespace usage in a UsageLedger. When the member cannot be reached its last usage
 * is kept and its health turns Stale, then Unreachable: never counted as zero.
 */
export class MemberWatcher {
  readonly ledger = new UsageLedger();
  private readonly replicaSetOwners = new Map<string, string>();
  private readonly informers: ResilientInformer<k8s.KubernetesObject>[] = [];
  /** Per counted resource (`deployments.apps`): the quota keys counting it and its watch. */
  private readonly counted = new Map<
    string,
    { keys: Set<string>; cache?: k8s.ObjectCache<k8s.KubernetesObject> }
  >();
  private readonly kc: k8s.KubeConfig;
  private health: MemberHealth = { state: 'Unreachable', message: 'not synced yet' };
  private failingSince?: number;
  private everSynced = false;
  /** Set by stop(): a start or countObjects still under way then adds no watch. */
  private stopped = false;

  /**
   * `inherited`: namespaces a previous watcher of this cluster published (before its credentials
   * changed); once this one is synced they are published again, as empty if they are gone.
   */
  constructor(
    readonly credentials: MemberCredentials,
    private readonly options: WatcherOptions,
    private readonly logger: Logger,
    private inherited: string[] = [],
  ) {
    this.kc = kubeConfigFor(credentials);
  }

  /** Namespaces whose usage changed since the last call (to publish). */
  takeChanges(): string[] {
    const changed = new Set(this.ledger.dirtyNamespaces());
    this.ledger.clearDirty();
    if (this.everSynced) {
      this.inherited.forEach((namespace) => changed.add(namespace));
      this.inherited = [];
    }
    return [...changed];
  }

  get name(): string {
    return this.credentials.name;
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

  async start(): Promise<void> {
    const kc = this.kc;
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const replicaSets = new ResilientInformer<k8s.V1ReplicaSet>(
      k8s.makeInformer(kc, '/apis/apps/v1/replicasets', () => apps.listReplicaSetForAllNamespaces()),
      {
        upsert: (rs) => {
          const deployment = deploymentOf(rs);
          const key = `${rs.metadata?.namespace}/${rs.metadata?.name}`;
          if (deployment) this.replicaSetOwners.set(key, deployment);
        },
        remove: (rs) => this.replicaSetOwners.delete(`${rs.metadata?.namespace}/${rs.metadata?.name}`),
        synced: () => this.synced(),
        failed: (err) => this.failed('replicasets', err),
      },
      this.options.maxRetryBackoffMs,
    );
    const pods = new ResilientInformer<k8s.V1Pod>(
      k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces()),
      {
        upsert: (pod) => {
          this.options.onEvent?.('pods');
          this.upsertPod(pod);
        },
        remove: (pod) => {
          const { namespace, uid } = pod.metadata ?? {};
          if (namespace && uid) this.ledger.deletePod(namespace, uid);
        },
        synced: () => this.synced(),
        failed: (err) => this.failed('pods', err),
      },
      this.options.maxRetryBackoffMs,
    );
    this.informers.push(replicaSets as never, pods as never);
    // ReplicaSets first, so existing pods are attributed to their Deployment from the start.
    await replicaSets.start();
    if (!this.stopped) await pods.start();
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
    for (const key of quotaKeys) {
      if (this.stopped) return;
      const counted = countedResource(key);
      if (!counted) continue;
      const id = countedResourceId(counted);
      const entry = this.counted.get(id);
      if (entry) {
        if (entry.keys.has(key)) continue;
        entry.keys.add(key);
        // Objects already cached count for the new key too.
        for (const obj of entry.cache?.list() ?? []) this.count(key, obj, true);
        continue;
      }
      const fresh: { keys: Set<string>; cache?: k8s.ObjectCache<k8s.KubernetesObject> } = {
        keys: new Set([key]),
      };
      this.counted.set(id, fresh);
      try {
        const resolved = await resolveResource(this.kc, counted);
        if (this.stopped) return;
        const objects = k8s.KubernetesObjectApi.makeApiClient(this.kc);
        const informer = k8s.makeInformer(this.kc, resolved.path, () =>
          objects.list(resolved.apiVersion, resolved.kind),
        );
        fresh.cache = informer;
        const watch = new ResilientInformer<k8s.KubernetesObject>(
          informer,
          {
            upsert: (obj) => {
              this.options.onEvent?.(id);
              for (const k of fresh.keys) this.count(k, obj, true);
              trimObject(obj as k8s.KubernetesObject & Record<string, unknown>);
            },
            remove: (obj) => fresh.keys.forEach((k) => this.count(k, obj, false)),
            synced: () => this.synced(),
            failed: (err) => this.failed(id, err),
          },
          this.options.maxRetryBackoffMs,
        );
        this.informers.push(watch);
        await watch.start();
      } catch (err) {
        this.logger.warn(`member ${this.name}: cannot count ${id}: ${describeError(err)}`);
      }
    }
  }

  private count(key: string, obj: k8s.KubernetesObject, present: boolean): void {
    const { namespace, uid } = obj.metadata ?? {};
    if (namespace && uid) this.ledger.setObjectCount(namespace, key, uid, present);
  }

  private upsertPod(pod: k8s.V1Pod): void {
    const { namespace, uid } = pod.metadata ?? {};
    if (!namespace || !uid) return;
    if (pod.spec) {
      const owner = (rs: string, ns: string) => this.replicaSetOwners.get(`${ns}/${rs}`);
      this.ledger.upsertPod(namespace, uid, podUsage(pod, new Date(), owner));
    }
    trimObject(pod as k8s.KubernetesObject & Record<string, unknown>);
  }

  private synced(): void {
    this.everSynced = true;
    if (this.health.state !== 'Ready') this.logger.log(`member ${this.name}: synced, watching`);
    this.failingSince = undefined;
    this.health = { state: 'Ready', lastSyncTime: new Date() };
  }

  private failed(what: string, err: unknown): void {
    const message = `watch of ${what} failed: ${describeError(err)}`;
    if (this.health.state === 'Ready')
      this.logger.warn(`member ${this.name}: ${message}; keeping its last usage`);
    this.failingSince ??= Date.now();
    const lastSyncTime = this.health.state === 'Ready' ? new Date() : this.health.lastSyncTime;
    this.health = { state: this.everSynced ? 'Stale' : 'Unreachable', lastSyncTime, message };
  }
}
