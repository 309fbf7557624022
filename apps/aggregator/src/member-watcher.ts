import * as k8s from '@kubernetes/client-node';
import type { Logger } from '@nestjs/common';
import type { ClusterUsageState } from '#api';
import { deploymentOf, podUsage, UsageLedger } from '#usage';
import { ResilientInformer } from './resilient-informer.js';

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

/** Drops what accounting no longer needs from an informer-cached pod: keeps the cache compact. */
function trim(pod: k8s.V1Pod): void {
  const meta = pod.metadata;
  if (meta) {
    delete meta.managedFields;
    delete meta.annotations;
    delete meta.labels;
  }
  delete pod.spec;
  delete pod.status;
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
  private health: MemberHealth = { state: 'Unreachable', message: 'not synced yet' };
  private failingSince?: number;
  private everSynced = false;

  /**
   * `inherited`: namespaces a previous watcher of this cluster published (before its credentials
   * changed); once this one is synced they are published again, as empty if they are gone.
   */
  constructor(
    readonly credentials: MemberCredentials,
    private readonly options: WatcherOptions,
    private readonly logger: Logger,
    private inherited: string[] = [],
  ) {}

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
    const kc = kubeConfigFor(this.credentials);
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
        upsert: (pod) => this.upsertPod(pod),
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
    await pods.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.splice(0).map((i) => i.stop()));
  }

  private upsertPod(pod: k8s.V1Pod): void {
    const { namespace, uid } = pod.metadata ?? {};
    if (!namespace || !uid) return;
    if (pod.spec) {
      const owner = (rs: string, ns: string) => this.replicaSetOwners.get(`${ns}/${rs}`);
      this.ledger.upsertPod(namespace, uid, podUsage(pod, new Date(), owner));
    }
    trim(pod);
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

/** An error as an operator can act on it, never with the request (and its bearer token). */
function describeError(err: unknown): string {
  if (err instanceof k8s.ApiException) return `HTTP ${err.code}`;
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    return code ? `${code} ${err.message}` : err.message;
  }
  return String(err);
}
