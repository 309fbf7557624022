import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  Federation,
  isProcessAlive,
  karmadaWorkload,
  type KarmadaWorkload,
  kubeConfigFor,
  redisServerBinary,
  repoRoot,
  type RunningService,
  serviceAccountToken,
  sleep,
  freePort,
  startServices,
  waitFor,
} from '../../federation/src/index.js';

/** `.sandbox/env.json`: the contract scripts and tests rely on (docs/development/sandbox.md). */
export interface SandboxEnv {
  /**
   * With `--containers`: containerKubeconfig reaches the host API server from containers on a bridge
   * network (docker-compose.yml), which then listens on every address, not only 127.0.0.1.
   */
  host: { kubeconfig: string; server: string; containerKubeconfig?: string };
  members: { name: string; kubeconfig: string; server: string }[];
  /** REDIS_URL as given, or the sandbox's private redis-server (`<dir>/redis-1`) when none was. */
  redisUrl: string;
  /**
   * The webhook answers admission calls only from a client certificate of the host API server's
   * webhook client CA: clientCert and clientKey (PEM files) are one, for tools that post reviews.
   */
  webhook: { url: string; clientCert: string; clientKey: string };
  aggregator: { url: string };
  reconciler: { url: string };
  /** The console, and a token of the demo viewer (may read team-a's quotas only) to log in with. */
  console: { url: string; token: string };
  kubectl: string;
  kubernetesVersion: string;
  /** Set when real Karmada runs (the default; `--no-karmada` leaves it out). */
  karmadaVersion?: string;
}

export interface SandboxPaths {
  dir: string;
  envFile: string;
  pidFile: string;
}

export function sandboxPaths(dir = process.env.SANDBOX_DIR ?? join(repoRoot(), '.sandbox')): SandboxPaths {
  return { dir, envFile: join(dir, 'env.json'), pidFile: join(dir, 'supervisor.pid') };
}

const DEMO_NAMESPACE = 'team-a';
/** A business user of the demo: may get, list and watch the KarmadaQuotas of team-a, nothing else. */
const DEMO_VIEWER = 'quota-viewer';
const DEMO_VIEWER_TOKEN_SECONDS = 24 * 3600;

/**
 * REDIS_URL, when given: the sandbox uses that Redis. Without it the sandbox runs a private
 * redis-server of its own (nothing needs to run beforehand); if there is no redis-server to run,
 * this says how to get one at once, not after the minutes a first run spends building binaries.
 */
function redisUrlGiven(): string | undefined {
  const given = process.env.REDIS_URL || undefined;
  if (!given) redisServerBinary();
  return given;
}

function refuseIfRunning(paths: SandboxPaths): void {
  const pid = runningSupervisor(paths);
  if (pid)
    throw new Error(`a sandbox is already running (pid ${pid}); stop it with: npm run sandbox -- down`);
}

function runningSupervisor(paths: SandboxPaths): number | undefined {
  if (!existsSync(paths.pidFile)) return undefined;
  const pid = Number(readFileSync(paths.pidFile, 'utf8'));
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : undefined;
}

async function seedDemo(federation: Federation): Promise<void> {
  const kc = kubeConfigFor(federation.info.host);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: DEMO_NAMESPACE } } }).catch(() => undefined);
  // Karmada copies the namespace to the members itself (and will not manage one it did not make).
  const membersNeedNamespace = !federation.info.karmadaVersion;
  for (const member of membersNeedNamespace ? federation.info.members : []) {
    const memberCore = kubeConfigFor(member).makeApiClient(k8s.CoreV1Api);
    await memberCore.createNamespace({ body: { metadata: { name: DEMO_NAMESPACE } } }).catch(() => undefined);
  }
  const quota: KarmadaQuota = {
    apiVersion: KARMADA_QUOTA.apiVersion,
    kind: 'KarmadaQuota',
    metadata: { name: DEMO_NAMESPACE, namespace: DEMO_NAMESPACE },
    spec: { hard: { cpu: '100', memory: '200Gi', pods: '500' } },
  };
  await k8s.KubernetesObjectApi.makeApiClient(kc).create(quota);
}

interface Examples {
  /** Fits the demo quota. */
  fits: string;
  /** Exceeds it. */
  exceeds: string;
}

/** Example ResourceBindings, as Karmada would create them (for a sandbox without Karmada). */
function writeBindingExamples(dir: string): Examples {
  mkdirSync(dir, { recursive: true });
  const binding = (name: string, replicas: number, cpu: string): ResourceBinding => ({
    apiVersion: RESOURCE_BINDING.apiVersion,
    kind: RESOURCE_BINDING.kind,
    metadata: { name: `${name}-deployment`, namespace: DEMO_NAMESPACE },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: DEMO_NAMESPACE },
      replicas,
      replicaRequirements: { resourceRequest: { cpu, memory: '256Mi' } },
    },
  });
  const paths = { fits: join(dir, 'web-binding.yaml'), exceeds: join(dir, 'batch-binding.yaml') };
  writeFileSync(paths.fits, yaml.dump(binding('web', 3, '200m')));
  writeFileSync(paths.exceeds, yaml.dump(binding('batch', 200, '1')));
  return paths;
}

/** What users apply with Karmada: one workload within the demo quota, one far beyond it. */
function writeWorkloadExamples(dir: string, clusters: string[]): Examples {
  mkdirSync(dir, { recursive: true });
  const manifest = (w: KarmadaWorkload): string => `${yaml.dump(w.workload)}---\n${yaml.dump(w.policy)}`;
  const workload = (name: string, replicas: number, cpu: string) =>
    manifest(karmadaWorkload({ name, namespace: DEMO_NAMESPACE, replicas, cpu, clusters }));
  const paths = { fits: join(dir, 'web.yaml'), exceeds: join(dir, 'batch.yaml') };
  writeFileSync(paths.fits, workload('web', 2 * clusters.length, '500m'));
  writeFileSync(paths.exceeds, workload('batch', 200, '1'));
  return paths;
}

function kubectl(env: SandboxEnv, args: string[]): string {
  const result = spawnSync(env.kubectl, ['--kubeconfig', env.host.kubeconfig, ...args], { encoding: 'utf8' });
  return (result.stdout + result.stderr).trimEnd();
}

function instructions(env: SandboxEnv, examples: Examples, privateRedis: boolean): string {
  const members = env.members
    .map((m) => `  ${m.name.padEnd(9)} ${m.server}  kubeconfig ${m.kubeconfig}`)
    .join('\n');
  const member = env.members[0]!;
  const karmada = env.karmadaVersion
    ? `  karmada   ${env.karmadaVersion}: webhook, controller-manager, scheduler (asking the quota's estimator)\n`
    : '';
  const tryWithKarmada = `  kubectl apply -f ${examples.fits}      # Deployment + PropagationPolicy, ${env.members.length * 2} x 500m: fits
  kubectl get rb -n ${DEMO_NAMESPACE}                        # the binding Karmada made and scheduled
  kubectl --kubeconfig ${member.kubeconfig} get pods -n ${DEMO_NAMESPACE}   # its pods in ${member.name} (Pending: no kubelet runs them)
  kubectl kq describe ${DEMO_NAMESPACE} -n ${DEMO_NAMESPACE}             # usage per cluster
  kubectl apply -f ${examples.exceeds}    # 200 x 1 CPU: over the quota, refused
  kubectl get events -n ${DEMO_NAMESPACE} --field-selector involvedObject.name=batch   # Warning ApplyPolicyFailed: exceeded quota
  kubectl kq describe ${DEMO_NAMESPACE} -n ${DEMO_NAMESPACE}             # Waiting: batch-deployment, requested vs free
  kubectl delete -f ${examples.exceeds}
  kubectl delete -f ${examples.fits}      # frees the usage`;
  const tryWithoutKarmada = `  kubectl create -f ${examples.fits}      # 3 x 200m: admitted, reserved in the quota
  kubectl create -f ${examples.exceeds}    # 200 x 1 CPU: denied, exceeded quota
  kubectl kq describe ${DEMO_NAMESPACE} -n ${DEMO_NAMESPACE}
  kubectl --kubeconfig ${member.kubeconfig} create deployment web --image=nginx --replicas=3 -n ${DEMO_NAMESPACE}
  kubectl --kubeconfig ${member.kubeconfig} get pods -n ${DEMO_NAMESPACE}`;
  return `
karmada-quota sandbox is ready (Kubernetes ${env.kubernetesVersion}).

  host      ${env.host.server}  kubeconfig ${env.host.kubeconfig}
${members}
${karmada}  redis     ${env.redisUrl}${privateRedis ? '  (private to the sandbox, stopped with it)' : ''}
  webhook   ${env.webhook.url}   aggregator ${env.aggregator.url}   reconciler ${env.reconciler.url}

Console: ${env.console.url}
  log in with this token of ${DEMO_NAMESPACE}/${DEMO_VIEWER}, who may read the quotas of ${DEMO_NAMESPACE} only (valid 24 h):
  ${env.console.token}

kubectl get kq -A  (on the host):
${kubectl(env, ['get', 'kq', '-A'])
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}

Try:
  alias kubectl=${env.kubectl}
  export KUBECONFIG=${env.host.kubeconfig}
  export PATH="${join(repoRoot(), 'tools', 'kubectl-kq', 'bin')}:$PATH"   # for kubectl kq
${env.karmadaVersion ? tryWithKarmada : tryWithoutKarmada}
  kubectl get kq ${DEMO_NAMESPACE} -n ${DEMO_NAMESPACE} -o yaml
  curl -H "Authorization: Bearer $(kubectl create token ${DEMO_VIEWER} -n ${DEMO_NAMESPACE})" ${env.console.url}/api/quotas
  curl ${env.webhook.url}/readyz
`;
}

/**
 * The supervisor: starts the federation and the services, seeds the demo quota, writes env.json,
 * then waits for SIGINT/SIGTERM and stops everything it started.
 */
export async function supervise(options: {
  members: number;
  karmada: boolean;
  containers: boolean;
  paths: SandboxPaths;
  print: (s: string) => void;
}): Promise<void> {
  const { paths, print } = options;
  const givenRedisUrl = redisUrlGiven();
  refuseIfRunning(paths);
  rmSync(paths.dir, { recursive: true, force: true });
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.pidFile, String(process.pid));

  let stopping: Promise<void> | undefined;
  let federation: Federation | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      print('stopping the sandbox...');
      await federation?.stop();
      rmSync(paths.dir, { recursive: true, force: true });
      print('sandbox stopped');
    })());
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => void stop().then(resolve));
  });

  try {
    federation = await Federation.start({
      stateDir: paths.dir,
      members: options.members,
      karmada: options.karmada,
      // karmada-scheduler asks the webhook's estimator, registered per member by the reconciler.
      karmadaSchedulerEstimator: options.karmada,
      hostReachableFromContainers: options.containers,
      log: print,
    });
    let redisUrl = givenRedisUrl;
    if (!redisUrl) {
      print('starting a private redis-server (no REDIS_URL given)');
      redisUrl = (await federation.startRedis()).url();
    }
    print('starting webhook, aggregator, reconciler and console');
    const estimatorPort = await freePort();
    const services = await startServices(federation, {
      redisUrl,
      env: options.karmada
        ? {
            SCHEDULER_ESTIMATOR_PORT: String(estimatorPort),
            SCHEDULER_ESTIMATOR_ADDRESS: `127.0.0.1:${estimatorPort}`,
          }
        : {},
    });
    const url = (name: RunningService['name']) => ({ url: services.find((s) => s.name === name)!.url });
    print('seeding the demo quota team-a/team-a');
    await seedDemo(federation);
    const viewerToken = await serviceAccountToken(kubeConfigFor(federation.info.host), {
      namespace: DEMO_NAMESPACE,
      name: DEMO_VIEWER,
      readQuotas: true,
      expirationSeconds: DEMO_VIEWER_TOKEN_SECONDS,
    });
    const info = federation.info;
    const env: SandboxEnv = {
      host: {
        kubeconfig: info.host.kubeconfig,
        server: info.host.server,
        ...(info.host.containerKubeconfig ? { containerKubeconfig: info.host.containerKubeconfig } : {}),
      },
      members: info.members.map((m) => ({ name: m.name, kubeconfig: m.kubeconfig, server: m.server })),
      redisUrl,
      webhook: {
        ...url('webhook'),
        clientCert: info.webhookClient.certFile,
        clientKey: info.webhookClient.keyFile,
      },
      aggregator: url('aggregator'),
      reconciler: url('reconciler'),
      console: { ...url('console'), token: viewerToken },
      kubectl: info.kubectl,
      kubernetesVersion: info.kubernetesVersion,
      ...(info.karmadaVersion ? { karmadaVersion: info.karmadaVersion } : {}),
    };
    const examplesDir = join(paths.dir, 'examples');
    const examples = info.karmadaVersion
      ? writeWorkloadExamples(
          examplesDir,
          info.members.map((m) => m.name),
        )
      : writeBindingExamples(examplesDir);
    print(instructions(env, examples, !givenRedisUrl));
    print('Press Ctrl-C to stop (or run: npm run sandbox -- down).');
    // Written last: `up` and scripts take its presence to mean everything is ready.
    writeFileSync(paths.envFile, JSON.stringify(env, null, 2));
  } catch (err) {
    await stop();
    throw err;
  }
  await stopped;
}

/** `up`: runs the supervisor detached and returns once env.json says everything is ready. */
export async function up(options: {
  members: number;
  karmada: boolean;
  containers: boolean;
  paths: SandboxPaths;
  entry: string;
  print: (s: string) => void;
}): Promise<void> {
  const { paths, print } = options;
  redisUrlGiven();
  refuseIfRunning(paths);
  mkdirSync(paths.dir, { recursive: true });
  rmSync(paths.envFile, { force: true });
  const logFd = openSync(`${paths.dir}.log`, 'w');
  const args = [
    'run',
    '--members',
    String(options.members),
    ...(options.karmada ? [] : ['--no-karmada']),
    ...(options.containers ? ['--containers'] : []),
  ];
  const child = spawn(process.execPath, [options.entry, ...args], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: { ...process.env, SANDBOX_DIR: paths.dir },
  });
  child.unref();
  print(
    `starting the sandbox in the background (log: ${paths.dir}.log); the first run builds Kubernetes and Karmada (minutes)`,
  );
  const supervisorLog = () =>
    readFileSync(`${paths.dir}.log`, 'utf8').trimEnd().split('\n').slice(-30).join('\n');
  await waitFor(
    'the sandbox to become ready',
    async () => {
      if (child.exitCode !== null || !isProcessAlive(child.pid!))
        throw new Error(`the sandbox failed to start:\n${supervisorLog()}`);
      return existsSync(paths.envFile);
    },
    { timeoutMs: 30 * 60_000, intervalMs: 500, describe: supervisorLog },
  );
  const log = readFileSync(`${paths.dir}.log`, 'utf8');
  print(log.slice(log.indexOf('karmada-quota sandbox is ready')).trimEnd());
  print(`env: ${paths.envFile}`);
}

/** `down`: stops the supervisor (which stops everything it started) and removes the state. */
export async function down(options: { paths: SandboxPaths; print: (s: string) => void }): Promise<void> {
  const { paths, print } = options;
  const pid = runningSupervisor(paths);
  if (pid === undefined) {
    rmSync(paths.dir, { recursive: true, force: true });
    print('no sandbox is running');
    return;
  }
  process.kill(pid, 'SIGTERM');
  try {
    await waitFor('the sandbox to stop', async () => !isProcessAlive(pid), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
  } catch {
    // The supervisor hung: its orphan guard kills the children once the supervisor is gone.
    process.kill(pid, 'SIGKILL');
    await sleep(6_000);
  }
  rmSync(paths.dir, { recursive: true, force: true });
  rmSync(`${paths.dir}.log`, { force: true });
  print('sandbox stopped');
}
