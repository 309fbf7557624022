import * as k8s from '@kubernetes/client-node';
import { mkdirSync } from 'node:fs';
import { KARMADA_QUOTA } from '#api';
import { loadCrds } from '#api/crds';
import { join } from 'node:path';
import { ensureBinaries, type KubeBinaries } from './binaries.js';
import {
  ApiServer,
  Component,
  ControllerManager,
  Etcd,
  HOST_CONTROLLERS,
  MEMBER_CONTROLLERS,
  RedisServer,
  type ApiEndpoint,
  type ApiServerOptions,
} from './components.js';
import {
  addRoomyNode,
  CLUSTER_SECRET_NAMESPACE,
  ensureNamespace,
  KARMADA_SYSTEM_NAMESPACE,
  installCrds,
  kubeConfigFor,
  registerMember,
  serviceAccountToken,
  SYSTEM_NAMESPACE,
} from './host-setup.js';
import { Karmada, KarmadaQuotaWebhook, KarmadaSchedulerEstimator } from './karmada.js';
import { createClientCertificate, type ClientCertificate } from './pki.js';
import { ManagedProcess, OrphanGuard } from './processes.js';

export interface FederationOptions {
  /** Where logs, certificates, kubeconfigs and etcd data go. */
  stateDir: string;
  /** Number of member clusters (default 2), named member1..memberN. */
  members?: number;
  /** Progress messages for the operator. */
  log?: (message: string) => void;
  /**
   * Runs real Karmada (webhook, controller-manager, scheduler) on the host, so PropagationPolicies
   * create, schedule and propagate bindings. Off: bindings are written by hand and nothing acts on them.
   */
  karmada?: boolean;
  /** With `karmada`: Karmada's own quota enforcement on too (see Karmada.start). */
  karmadaQuotaEnforcement?: boolean;
  /**
   * With `karmada`: Karmada feature gates turned on beyond its defaults (`ResourceQuotaEstimate`), in
   * the controller-manager whose detector writes the bindings. Karmada runs with its defaults otherwise.
   */
  karmadaFeatureGates?: readonly string[];
  /**
   * With `karmada`: controllers of karmada-controller-manager run beyond KARMADA_CONTROLLERS, e.g.
   * `applicationFailover` and `gracefulEviction` for application failover (test/karmada-failover.test.ts).
   */
  karmadaControllers?: readonly string[];
  /**
   * With `karmada`: karmada-scheduler asks each member's scheduler-estimator
   * (`--enable-scheduler-estimator`), whose Services it reads from `karmada-system` on the host. Each
   * member gets a Node with room to spare, so that Karmada's own estimate of the members' capacity
   * (which a member without Nodes has none of) does not keep Divided replicas off them.
   */
  karmadaSchedulerEstimator?: boolean;
  /**
   * Runs a kube-controller-manager per member (default on). Off, members have only their API server:
   * enough for what watches objects made directly (pods, say), and many members start sooner.
   */
  memberControllers?: boolean;
  /**
   * Installs the KarmadaQuota CRD (default on). Off when the test installs it as users do (the chart's
   * hook Job, test/release.test.ts).
   */
  karmadaQuotaCrd?: boolean;
  /** The host API server serves /debug/pprof (the bench's --profile reads its CPU profile). */
  hostProfiling?: boolean;
  /**
   * The host API server listens on every address too, so containers on a bridge network reach it
   * (its endpoint's `containerKubeconfig`): what docker-compose.yml needs against this federation.
   */
  hostReachableFromContainers?: boolean;
}

/** What a test or the sandbox needs to reach the federation; serialisable as JSON. */
export interface FederationInfo {
  host: ApiEndpoint;
  members: ApiEndpoint[];
  kubectl: string;
  kubernetesVersion: string;
  etcdVersion: string;
  /** Set when Karmada runs on the host. */
  karmadaVersion?: string;
  /**
   * The certificate the host API server presents to admission webhooks, and its CA (what the quota
   * webhook's CLIENT_CA_FILE names): tools that post AdmissionReviews directly present it too.
   */
  webhookClient: ClientCertificate;
}

interface Cluster {
  apiServer: ApiServer;
  controllerManager?: ControllerManager;
}

/** API servers started at once: more on a small machine would outlast their start-up timeout. */
const API_SERVER_START_BATCH = 4;

/**
 * A real local Karmada-shaped federation: one etcd, a host API server (the Karmada control plane
 * role, with Karmada's CRDs and one Cluster object per member) and N member API servers, each with
 * kube-controller-manager. Everything binds to 127.0.0.1 on free ports (the host API server to every
 * address too with `hostReachableFromContainers`).
 */
export class Federation {
  private constructor(
    private readonly guard: OrphanGuard,
    private readonly etcd: Etcd,
    private readonly host: Cluster,
    private readonly members: Cluster[],
    private readonly binaries: KubeBinaries,
    readonly stateDir: string,
    private readonly webhookClient: ClientCertificate,
  ) {}

  private readonly processes: ManagedProcess[] = [];
  private readonly redisServers: RedisServer[] = [];
  private readonly extraComponents: Component[] = [];
  private karmada?: Karmada;

  static async start(options: FederationOptions): Promise<Federation> {
    const log = options.log ?? (() => {});
    const memberCount = options.members ?? 2;
    mkdirSync(options.stateDir, { recursive: true });
    log('checking the Kubernetes binaries (the first run on a machine builds them: minutes)');
    const binaries = await ensureBinaries();
    const guard = OrphanGuard.start(join(options.stateDir, 'pids'));
    const etcd = await Etcd.create(join(options.stateDir, 'etcd'), guard, binaries);
    const webhookClientDir = join(options.stateDir, 'host', 'webhook-client');
    mkdirSync(webhookClientDir, { recursive: true });
    const webhookClient = await createClientCertificate(webhookClientDir, 'host-apiserver');
    const makeCluster = async (
      name: string,
      controllers: string[] | undefined,
      apiServerOptions: ApiServerOptions = {},
    ): Promise<Cluster> => {
      const dir = join(options.stateDir, name);
      const apiServer = await ApiServer.create(
        name,
        join(dir, 'apiserver'),
        guard,
        binaries,
        etcd.url,
        apiServerOptions,
      );
      if (!controllers) return { apiServer };
      const controllerManager = await ControllerManager.create(
        apiServer,
        join(dir, 'controller-manager'),
        guard,
        binaries,
        controllers,
      );
      return { apiServer, controllerManager };
    };
    const host = await makeCluster('host', HOST_CONTROLLERS, {
      webhookClient,
      profiling: options.hostProfiling ?? false,
      listenBeyondLoopback: options.hostReachableFromContainers ?? false,
    });
    const members: Cluster[] = [];
    const memberControllers = options.memberControllers === false ? undefined : MEMBER_CONTROLLERS;
    for (let i = 1; i <= memberCount; i++) members.push(await makeCluster(`member${i}`, memberControllers));
    const federation = new Federation(guard, etcd, host, members, binaries, options.stateDir, webhookClient);
    try {
      log(`starting etcd ${binaries.etcdVersion}`);
      await etcd.start();
      log(`starting ${1 + memberCount} kube-apiservers ${binaries.kubernetesVersion}`);
      const clusters = [host, ...members];
      for (let i = 0; i < clusters.length; i += API_SERVER_START_BATCH)
        await Promise.all(clusters.slice(i, i + API_SERVER_START_BATCH).map((c) => c.apiServer.start()));
      log('starting kube-controller-managers');
      await Promise.all([host, ...members].map((c) => c.controllerManager?.start()));
      log('installing CRDs and registering member clusters on the host');
      const crds = loadCrds();
      await installCrds(
        host.apiServer.endpoint,
        options.karmadaQuotaCrd === false
          ? crds.filter((crd) => crd.spec.group !== KARMADA_QUOTA.group)
          : crds,
      );
      await ensureNamespace(host.apiServer.endpoint, SYSTEM_NAMESPACE);
      for (const member of members) await registerMember(host.apiServer.endpoint, member.apiServer.endpoint);
      if (options.karmada && options.karmadaSchedulerEstimator) {
        await ensureNamespace(host.apiServer.endpoint, KARMADA_SYSTEM_NAMESPACE);
        await Promise.all(members.map((member) => addRoomyNode(member.apiServer.endpoint)));
      }
      if (options.karmada) {
        federation.karmada = await Karmada.start({
          host: host.apiServer.endpoint,
          dir: join(options.stateDir, 'karmada'),
          guard,
          log,
          quotaEnforcement: options.karmadaQuotaEnforcement ?? false,
          featureGates: options.karmadaFeatureGates ?? [],
          controllers: options.karmadaControllers ?? [],
          schedulerEstimator: options.karmadaSchedulerEstimator ?? false,
        });
      }
      return federation;
    } catch (err) {
      await federation.stop();
      throw err;
    }
  }

  get info(): FederationInfo {
    return {
      host: this.host.apiServer.endpoint,
      members: this.members.map((m) => m.apiServer.endpoint),
      kubectl: this.binaries.kubectl,
      kubernetesVersion: this.binaries.kubernetesVersion,
      etcdVersion: this.binaries.etcdVersion,
      ...(this.karmada ? { karmadaVersion: this.karmada.version } : {}),
      webhookClient: this.webhookClient,
    };
  }

  /**
   * Stops a member's API server (its controller manager first), keeping its data and port;
   * `crash` kills it with SIGKILL instead of a graceful shutdown.
   */
  async stopMember(name: string, options: { crash?: boolean } = {}): Promise<void> {
    const member = this.member(name);
    await member.controllerManager?.stop(options);
    await member.apiServer.stop(options);
  }

  /** Starts a stopped member again on the same port, with the same data and credentials. */
  async startMember(name: string): Promise<void> {
    const member = this.member(name);
    await member.apiServer.start();
    await member.controllerManager?.start();
  }

  /**
   * Stops the host API server (the Karmada control plane) and its controller manager, keeping etcd,
   * data and port; `crash` kills them with SIGKILL. Clients see refused connections until startHost().
   */
  async stopHost(options: { crash?: boolean } = {}): Promise<void> {
    await this.host.controllerManager?.stop(options);
    await this.host.apiServer.stop(options);
  }

  /** Starts the stopped host API server again on the same port, with the same data and credentials. */
  async startHost(): Promise<void> {
    await this.host.apiServer.start();
    await this.host.controllerManager?.start();
  }

  /** Karmada on the host, when the federation was started with `karmada`. */
  get karmadaControlPlane(): Karmada {
    if (!this.karmada) throw new Error('the federation was started without Karmada (option karmada)');
    return this.karmada;
  }

  /**
   * Starts karmada-webhook with Karmada's own quota enforcement (FederatedResourceQuota) on the host,
   * stopped with the federation; nothing registers it: callers post AdmissionReviews to it.
   */
  async startKarmadaQuotaWebhook(): Promise<KarmadaQuotaWebhook> {
    const webhook = await KarmadaQuotaWebhook.create(
      this.host.apiServer.endpoint,
      join(this.stateDir, 'karmada-webhook-frq'),
      this.guard,
    );
    this.extraComponents.push(webhook);
    await webhook.start();
    return webhook;
  }

  /**
   * Starts Karmada's own karmada-scheduler-estimator for `member` (the federation must run Karmada),
   * stopped with the federation; returns where it serves.
   */
  async startKarmadaSchedulerEstimator(member: string): Promise<string> {
    const endpoint = this.info.members.find((m) => m.name === member);
    if (!endpoint) throw new Error(`no member ${member} in this federation`);
    const estimator = new KarmadaSchedulerEstimator(
      join(this.stateDir, `karmada-scheduler-estimator-${member}`),
      this.guard,
      this.karmadaControlPlane.binaries.schedulerEstimator,
      endpoint.kubeconfig,
      member,
    );
    this.extraComponents.push(estimator);
    await estimator.start();
    return estimator.address;
  }

  /**
   * Starts a karmada-host cluster beside the federation: the cluster Karmada's control plane runs in
   * as pods (the host API server here stands for karmada-apiserver). Only an API server, on the
   * federation's etcd, without nodes or controllers; stopped with the federation.
   */
  async startKarmadaHostCluster(): Promise<ApiEndpoint> {
    const apiServer = await ApiServer.create(
      'karmada-host',
      join(this.stateDir, 'karmada-host', 'apiserver'),
      this.guard,
      this.binaries,
      this.etcd.url,
    );
    this.extraComponents.push(apiServer);
    await apiServer.start();
    return apiServer.endpoint;
  }

  /**
   * Starts a private redis-server for this federation (stopped with it) that a test may kill,
   * restart or flush without touching the shared Redis; see RedisServer.
   */
  async startRedis(): Promise<RedisServer> {
    const redis = await RedisServer.create(
      join(this.stateDir, `redis-${this.redisServers.length + 1}`),
      this.guard,
    );
    this.redisServers.push(redis);
    await redis.start();
    return redis;
  }

  /**
   * Gives the aggregator a revocable credential for a member, as `karmadactl join` does with a
   * service account: a ServiceAccount `karmada-quota-member-access` (cluster-admin) in the member's
   * kube-system, a token requested for it, written to the member's credential Secret on the host.
   * Call again after revokeMemberToken to issue a new one.
   */
  async issueMemberToken(name: string): Promise<void> {
    const member = kubeConfigFor(this.member(name).apiServer.endpoint);
    const namespace = 'kube-system';
    const token = await serviceAccountToken(member, {
      namespace,
      name: MEMBER_ACCESS_ACCOUNT,
      readQuotas: false,
      expirationSeconds: 24 * 3600,
    });
    await ignoreConflict(() =>
      member.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRoleBinding({
        body: {
          metadata: { name: MEMBER_ACCESS_ACCOUNT },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: MEMBER_ACCESS_ACCOUNT, namespace }],
        },
      }),
    );
    const hostCore = kubeConfigFor(this.host.apiServer.endpoint).makeApiClient(k8s.CoreV1Api);
    const secret = await hostCore.readNamespacedSecret({ namespace: CLUSTER_SECRET_NAMESPACE, name });
    secret.data = { ...secret.data, token: Buffer.from(token).toString('base64') };
    await hostCore.replaceNamespacedSecret({ namespace: CLUSTER_SECRET_NAMESPACE, name, body: secret });
  }

  /**
   * Revokes the token issueMemberToken issued: its ServiceAccount is deleted, so the member rejects
   * the token (401) from the next request on. The host's Secret still holds it, as after a real
   * revocation on the member's side.
   */
  async revokeMemberToken(name: string): Promise<void> {
    const member = kubeConfigFor(this.member(name).apiServer.endpoint);
    await member
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespacedServiceAccount({ namespace: 'kube-system', name: MEMBER_ACCESS_ACCOUNT });
  }

  /**
   * Starts a process that belongs to this federation (a product service, say): its log goes to
   * `<stateDir>/<name>.log`, it is stopped before the clusters, and never outlives the owner.
   */
  launch(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ManagedProcess {
    const proc = ManagedProcess.start(name, command, args, {
      logFile: join(this.stateDir, `${name}.log`),
      env,
    });
    this.processes.push(this.guard.track(proc));
    return proc;
  }

  /**
   * Starts an exited launched process again with the same command, arguments and environment (so
   * the same port and certificate, like a pod restarted behind its Service), with `envChanges` over
   * it (a new version of the pod); its log continues.
   */
  relaunch(proc: ManagedProcess, envChanges: NodeJS.ProcessEnv = {}): ManagedProcess {
    if (proc.running) throw new Error(`${proc.name} is still running: stop or kill it first`);
    const index = this.processes.indexOf(proc);
    if (index < 0) throw new Error(`${proc.name} was not launched by this federation`);
    this.processes.splice(index, 1);
    this.guard.untrack(proc);
    return this.launch(proc.name, proc.command, [...proc.args], {
      ...(proc.env ?? process.env),
      ...envChanges,
    });
  }

  /** Stops every process: launched ones first, then Karmada, controller managers, API servers, etcd. */
  async stop(): Promise<void> {
    await Promise.all(this.processes.splice(0).map((p) => p.stop()));
    await Promise.all(this.redisServers.splice(0).map((r) => r.stop()));
    await Promise.all(this.extraComponents.splice(0).map((c) => c.stop()));
    await this.karmada?.stop();
    const clusters = [this.host, ...this.members];
    await Promise.all(clusters.map((c) => c.controllerManager?.stop()));
    await Promise.all(clusters.map((c) => c.apiServer.stop()));
    await this.etcd.stop();
    this.guard.dispose();
  }

  private member(name: string): Cluster {
    const member = this.members.find((m) => m.apiServer.name === name);
    if (!member) throw new Error(`no member cluster named ${name}`);
    return member;
  }
}

/** The ServiceAccount in each member whose tokens issueMemberToken hands to the aggregator. */
export const MEMBER_ACCESS_ACCOUNT = 'karmada-quota-member-access';

async function ignoreConflict(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
  }
}
