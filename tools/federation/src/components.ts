import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { accessSync, constants, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { KubeBinaries } from './binaries.js';
import { writeKubeconfig } from './kubeconfig.js';
import { freePort, probe, waitFor } from './net.js';
import type { ClientCertificate } from './pki.js';
import { ManagedProcess, type OrphanGuard } from './processes.js';

const START_TIMEOUT_MS = 120_000;

/** A component that can be stopped and started again on the same ports and data. */
export abstract class Component {
  protected proc?: ManagedProcess;
  constructor(
    readonly name: string,
    protected readonly dir: string,
    protected readonly guard: OrphanGuard,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  private everStarted = false;

  get running(): boolean {
    return this.proc?.running ?? false;
  }

  /** The last `lines` lines of its log, for start-up errors. */
  logTail(lines?: number): string {
    return this.proc?.logTail(lines) ?? '(not started)';
  }

  /**
   * Starts the process and waits until it is healthy. A free port can be taken by another process
   * between being picked and being bound (two federations starting at once): the first start then
   * picks new ports and tries again. A restart keeps its ports, which others already point at.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launchAndWait();
        this.everStarted = true;
        return;
      } catch (err) {
        // "address already in use" (Go's), "Address already in use" (redis-server's)
        const lostPortRace = /address already in use/i.test(this.proc?.logTail(50) ?? '');
        if (!lostPortRace || this.everStarted || attempt >= 3) throw err;
        await this.stop();
        await this.pickPorts();
      }
    }
  }

  protected abstract launchAndWait(): Promise<void>;
  protected abstract pickPorts(): Promise<void>;

  /** Stops the process: gracefully (SIGTERM), or as a crash (SIGKILL, no chance to clean up). */
  async stop(options: { crash?: boolean } = {}): Promise<void> {
    if (!this.proc) return;
    await (options.crash ? this.proc.kill() : this.proc.stop());
    this.guard.untrack(this.proc);
    this.proc = undefined;
  }

  protected launch(command: string, args: string[]): ManagedProcess {
    this.proc = this.guard.track(
      ManagedProcess.start(this.name, command, args, { logFile: join(this.dir, 'log') }),
    );
    return this.proc;
  }

  protected async awaitHealthy(url: string, options: { ca?: string; token?: string } = {}): Promise<void> {
    const proc = this.proc!;
    await waitFor(
      `${this.name} at ${url}`,
      async () => {
        if (!proc.running)
          throw new Error(`${this.name} exited during start-up; its log:\n${proc.logTail()}`);
        return (await probe(url, options)) === 200;
      },
      { timeoutMs: START_TIMEOUT_MS, describe: () => `${this.name} log:\n${proc.logTail()}` },
    );
  }
}

export class Etcd extends Component {
  private constructor(
    dir: string,
    guard: OrphanGuard,
    private readonly binary: string,
    private clientPort: number,
    private peerPort: number,
  ) {
    super('etcd', dir, guard);
  }

  static async create(dir: string, guard: OrphanGuard, binaries: KubeBinaries): Promise<Etcd> {
    return new Etcd(dir, guard, binaries.etcd, await freePort(), await freePort());
  }

  get url(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  protected async pickPorts(): Promise<void> {
    this.clientPort = await freePort();
    this.peerPort = await freePort();
  }

  protected async launchAndWait(): Promise<void> {
    const peer = `http://127.0.0.1:${this.peerPort}`;
    this.launch(this.binary, [
      '--name=karmada-quota',
      `--data-dir=${join(this.dir, 'data')}`,
      `--listen-client-urls=${this.url}`,
      `--advertise-client-urls=${this.url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=karmada-quota=${peer}`,
      '--unsafe-no-fsync', // throwaway test data: durability is not worth the fsync latency
      '--log-level=warn',
    ]);
    await this.awaitHealthy(`${this.url}/health`);
  }
}

/** Connection details of one API server, as written to kubeconfig and sandbox env.json. */
export interface ApiEndpoint {
  name: string;
  server: string;
  kubeconfig: string;
  /** Bearer token of the static admin user (system:masters). */
  token: string;
  /** PEM file of the self-signed serving certificate (leaf and CA in one). */
  caFile: string;
  /**
   * Set when the API server listens beyond loopback: a kubeconfig for containers on a bridge network,
   * naming the machine as podman names it to them (host.containers.internal).
   */
  containerKubeconfig?: string;
}

/** How containers on a podman bridge network name the machine they run on. */
const CONTAINER_HOST_NAME = 'host.containers.internal';

export interface ApiServerOptions {
  /** The certificate it presents to every admission webhook it calls. */
  webhookClient?: ClientCertificate;
  /** Serves /debug/pprof. */
  profiling?: boolean;
  /**
   * Listens on every address, not only 127.0.0.1, and writes `containerKubeconfig`, so containers on
   * a bridge network (docker-compose.yml under podman-compose) reach it.
   */
  listenBeyondLoopback?: boolean;
}

export class ApiServer extends Component {
  readonly endpoint: ApiEndpoint;
  private readonly admissionConfigFile?: string;
  private constructor(
    name: string,
    dir: string,
    guard: OrphanGuard,
    private readonly binaries: KubeBinaries,
    private readonly etcdUrl: string,
    private port: number,
    private readonly options: ApiServerOptions,
  ) {
    super(name, dir, guard);
    if (options.webhookClient)
      this.admissionConfigFile = writeWebhookAdmissionConfig(dir, options.webhookClient);
    const tokenFile = join(dir, 'tokens.csv');
    const token = randomBytes(24).toString('hex');
    writeFileSync(tokenFile, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(this.serviceAccountKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    this.endpoint = {
      name,
      server: `https://127.0.0.1:${port}`,
      kubeconfig: join(dir, 'kubeconfig'),
      token,
      caFile: join(dir, 'certs', 'apiserver.crt'),
      ...(options.listenBeyondLoopback ? { containerKubeconfig: join(dir, 'kubeconfig-containers') } : {}),
    };
  }

  static async create(
    name: string,
    dir: string,
    guard: OrphanGuard,
    binaries: KubeBinaries,
    etcdUrl: string,
    options: ApiServerOptions = {},
  ): Promise<ApiServer> {
    return new ApiServer(name, dir, guard, binaries, etcdUrl, await freePort(), options);
  }

  get serviceAccountKeyFile(): string {
    return join(this.dir, 'service-account.key');
  }

  get caPem(): string {
    return readFileSync(this.endpoint.caFile, 'utf8');
  }

  protected async pickPorts(): Promise<void> {
    this.port = await freePort();
    this.endpoint.server = `https://127.0.0.1:${this.port}`;
  }

  protected async launchAndWait(): Promise<void> {
    this.launch(this.binaries.kubeApiserver, [
      `--etcd-servers=${this.etcdUrl}`,
      `--etcd-prefix=/${this.name}`, // one etcd serves every API server of the federation
      `--bind-address=${this.options.listenBeyondLoopback ? '0.0.0.0' : '127.0.0.1'}`,
      '--advertise-address=127.0.0.1', // start-up fails without it on a machine with no default route
      `--secure-port=${this.port}`,
      `--cert-dir=${join(this.dir, 'certs')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--endpoint-reconciler-type=none', // loopback addresses are not valid Endpoints
      `--service-account-issuer=https://${this.name}.karmada-quota.local`,
      `--service-account-key-file=${this.serviceAccountKeyFile}`,
      `--service-account-signing-key-file=${this.serviceAccountKeyFile}`,
      `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      ...(this.admissionConfigFile ? [`--admission-control-config-file=${this.admissionConfigFile}`] : []),
      `--profiling=${this.options.profiling ?? false}`,
      '--v=1',
    ]);
    await waitFor(
      `${this.name} serving certificate`,
      async () => {
        if (!this.proc!.running)
          throw new Error(`${this.name} exited during start-up; its log:\n${this.proc!.logTail()}`);
        try {
          return this.caPem.includes('BEGIN CERTIFICATE');
        } catch {
          return false;
        }
      },
      { timeoutMs: START_TIMEOUT_MS, describe: () => this.proc!.logTail() },
    );
    await this.awaitHealthy(`${this.endpoint.server}/readyz`, { ca: this.caPem, token: this.endpoint.token });
    writeKubeconfig(this.endpoint.kubeconfig, { ...this.endpoint, caPem: this.caPem });
    if (this.endpoint.containerKubeconfig) {
      // Its self-signed certificate names localhost, not the address containers reach it by.
      writeKubeconfig(this.endpoint.containerKubeconfig, {
        ...this.endpoint,
        server: `https://${CONTAINER_HOST_NAME}:${this.port}`,
        tlsServerName: 'localhost',
        caPem: this.caPem,
      });
    }
  }
}

/**
 * The admission configuration that has the API server present `client` to the admission webhooks it
 * calls (`*`: every webhook, whatever its host:port), as a real Karmada host must for karmada-quota's
 * webhook; returns its path. Formats: Kubernetes' AdmissionConfiguration and WebhookAdmission
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/config).
 */
function writeWebhookAdmissionConfig(dir: string, client: ClientCertificate): string {
  const kubeconfig = join(dir, 'webhook-client.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      users: [{ name: '*', user: { 'client-certificate': client.certFile, 'client-key': client.keyFile } }],
    }),
  );
  const webhookAdmission = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'WebhookAdmissionConfiguration',
    kubeConfigFile: kubeconfig,
  };
  const file = join(dir, 'admission-config.json');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'].map((name) => ({
        name,
        configuration: webhookAdmission,
      })),
    }),
  );
  return file;
}

/**
 * Controllers a member runs so Deployments, StatefulSets, DaemonSets and Jobs create Pods (which
 * stay Pending: there are no nodes) and deleted objects are garbage-collected.
 */
export const MEMBER_CONTROLLERS = [
  'deployment',
  'replicaset',
  'statefulset',
  'daemonset',
  'job',
  'cronjob',
  'garbagecollector',
  'namespace',
  'serviceaccount',
  'serviceaccount-token',
  'podgc',
  'ttl-after-finished',
  // A member's own ResourceQuotas (FRQ static assignments, an admin's) and a deleted claim's release.
  'resourcequota',
  'pvc-protection',
];
/**
 * What Karmada's own control plane runs: no workload controllers, so nothing runs on the host;
 * clusterrole-aggregation fills view/edit/admin from the chart's aggregated KarmadaQuota roles.
 */
export const HOST_CONTROLLERS = [
  'namespace',
  'garbagecollector',
  'serviceaccount',
  'serviceaccount-token',
  'clusterrole-aggregation',
];

export class ControllerManager extends Component {
  private constructor(
    private readonly apiServer: ApiServer,
    dir: string,
    guard: OrphanGuard,
    private readonly binary: string,
    private readonly controllers: string[],
    private port: number,
  ) {
    super(`${apiServer.name}-controller-manager`, dir, guard);
  }

  static async create(
    apiServer: ApiServer,
    dir: string,
    guard: OrphanGuard,
    binaries: KubeBinaries,
    controllers: string[],
  ): Promise<ControllerManager> {
    return new ControllerManager(
      apiServer,
      dir,
      guard,
      binaries.kubeControllerManager,
      controllers,
      await freePort(),
    );
  }

  protected async pickPorts(): Promise<void> {
    this.port = await freePort();
  }

  protected async launchAndWait(): Promise<void> {
    const kubeconfig = this.apiServer.endpoint.kubeconfig;
    this.launch(this.binary, [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--service-account-private-key-file=${this.apiServer.serviceAccountKeyFile}`,
      `--root-ca-file=${this.apiServer.endpoint.caFile}`,
      `--controllers=${this.controllers.join(',')}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${this.port}`,
      `--cert-dir=${join(this.dir, 'certs')}`,
      '--v=1',
    ]);
    await this.awaitHealthy(`https://127.0.0.1:${this.port}/healthz`);
  }
}

/** `url` (a redis:// URL, with or without a database) naming database `db` instead. */
export const redisDatabaseUrl = (url: string, db: number): string => `${url.replace(/\/\d*$/, '')}/${db}`;

/**
 * The redis-server binary private Redis servers run: `REDIS_SERVER`, or `redis-server` on the PATH.
 * Throws, saying how to get one, when there is none, so the sandbox and the tests can check before
 * anything slow starts.
 */
export function redisServerBinary(): string {
  const binary = process.env.REDIS_SERVER || 'redis-server';
  const candidates = binary.includes('/')
    ? [binary]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, binary));
  const runnable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (candidates.some(runnable)) return binary;
  throw new Error(
    `${binary} was not found${binary.includes('/') ? '' : ' on the PATH'}: install Redis (e.g. apt-get install redis-server), ` +
      'set REDIS_SERVER to a redis-server binary, or set REDIS_URL to a running Redis to use instead',
  );
}

/**
 * A private redis-server on a free port (not the one at REDIS_URL), which a test may kill, restart
 * or flush: no persistence (`--save '' --appendonly no`), so a restart loses every key, as a crashed
 * Redis without a volume does. The binary is redisServerBinary().
 */
export class RedisServer extends Component {
  private constructor(
    dir: string,
    guard: OrphanGuard,
    private port: number,
  ) {
    super('redis', dir, guard);
  }

  static async create(dir: string, guard: OrphanGuard): Promise<RedisServer> {
    return new RedisServer(dir, guard, await freePort());
  }

  /** `redis://127.0.0.1:PORT/db`; the port stays the same across restarts. */
  url(db = 0): string {
    return redisDatabaseUrl(`redis://127.0.0.1:${this.port}`, db);
  }

  protected async pickPorts(): Promise<void> {
    this.port = await freePort();
  }

  protected async launchAndWait(): Promise<void> {
    const binary = redisServerBinary();
    const proc = this.launch(binary, [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
    ]);
    await waitFor(
      `redis-server on port ${this.port}`,
      async () => {
        if (!proc.running) throw new Error(`${binary} exited during start-up; its log:\n${proc.logTail()}`);
        return (await redisPing(this.port)) === '+PONG';
      },
      { timeoutMs: START_TIMEOUT_MS, describe: () => proc.logTail() },
    );
  }
}

/** Sends PING to a Redis port and resolves with its first reply line ('' when it did not answer). */
function redisPing(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const done = (line: string) => {
      socket.destroy();
      resolve(line);
    };
    socket.setTimeout(1_000, () => done(''));
    socket.on('error', () => done(''));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString();
      if (data.includes('\r\n')) done(data.split('\r\n')[0]!);
    });
  });
}
