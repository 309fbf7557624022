import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinaries, type KubeBinaries } from './binaries.js';
import {
  ApiServer,
  ControllerManager,
  Etcd,
  HOST_CONTROLLERS,
  MEMBER_CONTROLLERS,
  type ApiEndpoint,
} from './components.js';
import { ensureNamespace, installCrds, registerMember, SYSTEM_NAMESPACE } from './host-setup.js';
import { ManagedProcess, OrphanGuard } from './processes.js';

export interface FederationOptions {
  /** Where logs, certificates, kubeconfigs and etcd data go. */
  stateDir: string;
  /** Number of member clusters (default 2), named member1..memberN. */
  members?: number;
  /** Progress messages for the operator. */
  log?: (message: string) => void;
}

/** What a test or the sandbox needs to reach the federation; serialisable as JSON. */
export interface FederationInfo {
  host: ApiEndpoint;
  members: ApiEndpoint[];
  kubectl: string;
  kubernetesVersion: string;
  etcdVersion: string;
}

interface Cluster {
  apiServer: ApiServer;
  controllerManager: ControllerManager;
}

/**
 * A real local Karmada-shaped federation: one etcd, a host API server (the Karmada control plane
 * role, with Karmada's CRDs and one Cluster object per member) and N member API servers, each with
 * kube-controller-manager. Everything binds to 127.0.0.1 on free ports.
 */
export class Federation {
  private constructor(
    private readonly guard: OrphanGuard,
    private readonly etcd: Etcd,
    private readonly host: Cluster,
    private readonly members: Cluster[],
    private readonly binaries: KubeBinaries,
    readonly stateDir: string,
  ) {}

  private readonly processes: ManagedProcess[] = [];

  static async start(options: FederationOptions): Promise<Federation> {
    const log = options.log ?? (() => {});
    const memberCount = options.members ?? 2;
    mkdirSync(options.stateDir, { recursive: true });
    log('checking the Kubernetes binaries (the first run on a machine builds them: minutes)');
    const binaries = await ensureBinaries();
    const guard = OrphanGuard.start(join(options.stateDir, 'pids'));
    const etcd = await Etcd.create(join(options.stateDir, 'etcd'), guard, binaries);
    const makeCluster = async (name: string, controllers: string[]): Promise<Cluster> => {
      const dir = join(options.stateDir, name);
      const apiServer = await ApiServer.create(name, join(dir, 'apiserver'), guard, binaries, etcd.url);
      const controllerManager = await ControllerManager.create(
        apiServer,
        join(dir, 'controller-manager'),
        guard,
        binaries,
        controllers,
      );
      return { apiServer, controllerManager };
    };
    const host = await makeCluster('host', HOST_CONTROLLERS);
    const members: Cluster[] = [];
    for (let i = 1; i <= memberCount; i++) members.push(await makeCluster(`member${i}`, MEMBER_CONTROLLERS));
    const federation = new Federation(guard, etcd, host, members, binaries, options.stateDir);
    try {
      log(`starting etcd ${binaries.etcdVersion}`);
      await etcd.start();
      log(`starting ${1 + memberCount} kube-apiservers ${binaries.kubernetesVersion}`);
      await Promise.all([host, ...members].map((c) => c.apiServer.start()));
      log('starting kube-controller-managers');
      await Promise.all([host, ...members].map((c) => c.controllerManager.start()));
      log('installing CRDs and registering member clusters on the host');
      await installCrds(host.apiServer.endpoint);
      await ensureNamespace(host.apiServer.endpoint, SYSTEM_NAMESPACE);
      for (const member of members) await registerMember(host.apiServer.endpoint, member.apiServer.endpoint);
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
    };
  }

  /** Stops a member's API server (its controller manager first), keeping its data and port. */
  async stopMember(name: string): Promise<void> {
    const member = this.member(name);
    await member.controllerManager.stop();
    await member.apiServer.stop();
  }

  /** Starts a stopped member again on the same port, with the same data and credentials. */
  async startMember(name: string): Promise<void> {
    const member = this.member(name);
    await member.apiServer.start();
    await member.controllerManager.start();
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

  /** Stops every process: launched ones first, then controller managers, API servers, etcd. */
  async stop(): Promise<void> {
    await Promise.all(this.processes.splice(0).map((p) => p.stop()));
    const clusters = [this.host, ...this.members];
    await Promise.all(clusters.map((c) => c.controllerManager.stop()));
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
