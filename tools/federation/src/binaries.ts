import { spawn } from 'node:child_process';
import { basename, join } from 'node:path';
import { repoRoot } from './paths.js';

export interface KubeBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  /** Helm, for the chart's lint and rendering tests. */
  helm: string;
  /** go-containerregistry's in-memory OCI registry (`registry --port N`), for the release test. */
  registry: string;
  etcdVersion: string;
  kubernetesVersion: string;
  helmVersion: string;
  /** go-containerregistry's version the registry is built from. */
  registryVersion: string;
}

export interface KarmadaBinaries {
  controllerManager: string;
  scheduler: string;
  /** Karmada's own per-member estimator (karmada-scheduler-estimator). */
  schedulerEstimator: string;
  webhook: string;
  version: string;
  /** Karmada's CRD bases (`charts/karmada/_crds/bases`) in the Go module cache. */
  crdDir: string;
}

/**
 * Runs tools/kube-binaries/build.sh with `args` (building what this machine has not got yet; progress
 * goes to stderr) and returns the directories it prints, one a line.
 */
async function buildScript(args: string[], what: string, npmScript: string): Promise<string[]> {
  const script = join(repoRoot(), 'tools', 'kube-binaries', 'build.sh');
  const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve); // not 'exit': that can come before stdout is fully read
  });
  if (code !== 0) {
    throw new Error(
      `building ${what} failed (exit ${code}); run 'npm run ${npmScript}' to see why. ` +
        'It needs Go >= 1.25 and the Go module proxy.',
    );
  }
  return stdout.trim().split('\n');
}

/**
 * Returns the cached etcd, Kubernetes, Helm and OCI registry binaries, building them from the Go
 * module proxy first when this machine has not got them yet.
 */
export async function ensureBinaries(): Promise<KubeBinaries> {
  const dirs = await buildScript([], 'the Kubernetes binaries', 'kube:binaries');
  const etcdDir = dirs.find((d) => basename(d).startsWith('etcd-'));
  const kubeDir = dirs.find((d) => basename(d).startsWith('kubernetes-'));
  const helmDir = dirs.find((d) => basename(d).startsWith('helm-'));
  const registryDir = dirs.find((d) => basename(d).startsWith('registry-'));
  if (!etcdDir || !kubeDir || !helmDir || !registryDir)
    throw new Error(`unexpected output from build.sh: ${dirs.join(' ')}`);
  return {
    etcd: join(etcdDir, 'etcd'),
    kubeApiserver: join(kubeDir, 'kube-apiserver'),
    kubeControllerManager: join(kubeDir, 'kube-controller-manager'),
    kubectl: join(kubeDir, 'kubectl'),
    helm: join(helmDir, 'helm'),
    registry: join(registryDir, 'registry'),
    etcdVersion: basename(etcdDir).slice('etcd-'.length),
    kubernetesVersion: basename(kubeDir).slice('kubernetes-'.length),
    helmVersion: basename(helmDir).slice('helm-'.length),
    registryVersion: basename(registryDir).slice('registry-'.length),
  };
}

/** Returns Karmada's cached controller-manager, scheduler, scheduler-estimator and webhook, building them first if needed. */
export async function ensureKarmadaBinaries(): Promise<KarmadaBinaries> {
  const [binDir, crdDir] = await buildScript(['karmada'], 'the Karmada binaries', 'karmada:binaries');
  if (!binDir || !crdDir || !basename(binDir).startsWith('karmada-'))
    throw new Error(`unexpected output from build.sh karmada: ${binDir} ${crdDir}`);
  return {
    controllerManager: join(binDir, 'karmada-controller-manager'),
    scheduler: join(binDir, 'karmada-scheduler'),
    schedulerEstimator: join(binDir, 'karmada-scheduler-estimator'),
    webhook: join(binDir, 'karmada-webhook'),
    version: basename(binDir).slice('karmada-'.length),
    crdDir,
  };
}
