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
  etcdVersion: string;
  kubernetesVersion: string;
  helmVersion: string;
}

/**
 * Returns the cached etcd, Kubernetes and Helm binaries, building them from the Go module proxy first
 * when this machine has not got them yet (tools/kube-binaries/build.sh; progress goes to stderr).
 */
export async function ensureBinaries(): Promise<KubeBinaries> {
  const script = join(repoRoot(), 'tools', 'kube-binaries', 'build.sh');
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve); // not 'exit': that can come before stdout is fully read
  });
  if (code !== 0) {
    throw new Error(
      `building the Kubernetes binaries failed (exit ${code}); run 'npm run kube:binaries' to see why. ` +
        'It needs Go >= 1.24 and the Go module proxy.',
    );
  }
  const dirs = stdout.trim().split('\n');
  const etcdDir = dirs.find((d) => basename(d).startsWith('etcd-'));
  const kubeDir = dirs.find((d) => basename(d).startsWith('kubernetes-'));
  const helmDir = dirs.find((d) => basename(d).startsWith('helm-'));
  if (!etcdDir || !kubeDir || !helmDir) throw new Error(`unexpected output from ${script}: ${stdout}`);
  return {
    etcd: join(etcdDir, 'etcd'),
    kubeApiserver: join(kubeDir, 'kube-apiserver'),
    kubeControllerManager: join(kubeDir, 'kube-controller-manager'),
    kubectl: join(kubeDir, 'kubectl'),
    helm: join(helmDir, 'helm'),
    etcdVersion: basename(etcdDir).slice('etcd-'.length),
    kubernetesVersion: basename(kubeDir).slice('kubernetes-'.length),
    helmVersion: basename(helmDir).slice('helm-'.length),
  };
}
