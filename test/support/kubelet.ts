import * as k8s from '@kubernetes/client-node';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe, sleep, waitFor } from '../../tools/federation/src/index.js';
import { containerLogTail, mustRun, run } from './containers.js';

/**
 * Plays the kubelet for a test cluster that has no nodes: runs a pod template's containers with
 * podman, on the machine's network, as the chart rendered them: image, args, env (values, Secret,
 * ConfigMap and field references resolved from the cluster), Secret and ConfigMap volumes, the
 * user, read-only root and dropped capabilities of its securityContext, and its HTTP probes. It also
 * finishes the Jobs it runs (their status), as kube-controller-manager's Job controller would.
 */
export class PodmanKubelet {
  private readonly core: k8s.CoreV1Api;
  private readonly batch: k8s.BatchV1Api;
  private readonly started: string[] = [];

  constructor(
    kc: k8s.KubeConfig,
    private readonly namespace: string,
    /** Names every container, so teardown finds them (test/support/containers.ts ownedPrefix). */
    private readonly prefix: string,
    /** Where volumes are written for the containers to mount. */
    private readonly dir: string,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.batch = kc.makeApiClient(k8s.BatchV1Api);
  }

  /** Starts one replica of `template` as container `<prefix>-<name>` and waits for its probes. */
  async runPod(name: string, template: k8s.V1PodTemplateSpec, podName = `${name}-0`): Promise<string> {
    const container = await this.start(name, template, podName, true);
    const spec = template.spec!.containers[0]!;
    const describe = () => containerLogTail(container);
    for (const [kind, check] of [
      ['startup', spec.startupProbe],
      ['readiness', spec.readinessProbe],
      ['liveness', spec.livenessProbe],
    ] as const) {
      if (!check?.httpGet) continue;
      const url = probeUrl(spec, check.httpGet);
      await waitFor(`${name}'s ${kind} probe ${url}`, async () => (await probe(url)) === 200, {
        timeoutMs: 90_000,
        describe,
      });
    }
    return container;
  }

  /** Runs a Job's pod to its end, then marks the Job complete or failed; returns the pod's log. */
  async runJob(job: k8s.V1Job): Promise<{ succeeded: boolean; log: string }> {
    const name = job.metadata!.name!;
    const startTime = new Date();
    const container = await this.start(`job-${name}`, job.spec!.template, `${name}-x`, false);
    const exit = await mustRun('podman', ['wait', container]);
    const logs = await run('podman', ['logs', container]);
    const succeeded = exit.stdout.trim() === '0';
    const now = new Date();
    const condition = (type: string) => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      reason: succeeded ? 'CompletionsReached' : 'BackoffLimitExceeded',
      message: succeeded
        ? 'Reached expected number of succeeded pods'
        : 'Job has reached the specified backoff limit',
    });
    const current = await this.batch.readNamespacedJob({ namespace: this.namespace, name });
    await this.batch.replaceNamespacedJobStatus({
      namespace: this.namespace,
      name,
      body: {
        ...current,
        status: succeeded
          ? {
              startTime,
              completionTime: now,
              succeeded: 1,
              conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
            }
          : { startTime, failed: 1, conditions: [condition('FailureTarget'), condition('Failed')] },
      },
    });
    return { succeeded, log: `${logs.stdout}${logs.stderr}` };
  }

  /** Removes every container this kubelet started. */
  async stopAll(): Promise<void> {
    if (this.started.length) await run('podman', ['rm', '--force', '--time', '5', ...this.started]);
    this.started.length = 0;
  }

  private async start(
    name: string,
    template: k8s.V1PodTemplateSpec,
    podName: string,
    detached: boolean,
  ): Promise<string> {
    const spec = template.spec!;
    if (spec.containers.length !== 1 || spec.initContainers?.length)
      throw new Error(`${name}: this test kubelet runs pods of one container only`);
    const container = spec.containers[0]!;
    const containerName = `${this.prefix}-${name}`;
    const args = [
      'run',
      '--name',
      containerName,
      '--network',
      'host',
      '--tls-verify=false',
      ...(detached ? ['--detach'] : []),
    ];
    const user = spec.securityContext;
    if (user?.runAsUser !== undefined)
      args.push('--user', `${user.runAsUser}:${user.runAsGroup ?? user.runAsUser}`);
    const security = container.securityContext;
    if (security?.readOnlyRootFilesystem) args.push('--read-only');
    if (security?.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
    for (const cap of security?.capabilities?.drop ?? []) args.push('--cap-drop', cap);
    for (const env of container.env ?? [])
      args.push('--env', `${env.name}=${await this.envValue(env, podName)}`);
    const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
    for (const mount of container.volumeMounts ?? []) {
      const volume = volumes.get(mount.name);
      if (!volume) throw new Error(`${name}: volumeMount ${mount.name} names no volume`);
      const hostDir = await this.writeVolume(`${name}-${volume.name}`, volume);
      args.push('--volume', `${hostDir}:${mount.mountPath}${mount.readOnly ? ':ro' : ''}`);
    }
    if (container.command?.length) args.push('--entrypoint', JSON.stringify(container.command));
    args.push(container.image!, ...(container.args ?? []));
    await run('podman', ['rm', '--force', containerName]);
    this.started.push(containerName);
    await mustRun('podman', args);
    return containerName;
  }

  private async envValue(env: k8s.V1EnvVar, podName: string): Promise<string> {
    if (env.value !== undefined || !env.valueFrom) return env.value ?? '';
    const { secretKeyRef, configMapKeyRef, fieldRef } = env.valueFrom;
    if (secretKeyRef) {
      const secret = await this.core.readNamespacedSecret({
        namespace: this.namespace,
        name: secretKeyRef.name!,
      });
      return Buffer.from(secret.data?.[secretKeyRef.key] ?? '', 'base64').toString();
    }
    if (configMapKeyRef) {
      const map = await this.core.readNamespacedConfigMap({
        namespace: this.namespace,
        name: configMapKeyRef.name!,
      });
      return map.data?.[configMapKeyRef.key] ?? '';
    }
    if (fieldRef?.fieldPath === 'metadata.name') return podName;
    if (fieldRef?.fieldPath === 'metadata.namespace') return this.namespace;
    // On the machine's network (--network host), the pod is reached where everything here is.
    if (fieldRef?.fieldPath === 'status.podIP') return '127.0.0.1';
    throw new Error(`env ${env.name}: this test kubelet cannot resolve ${JSON.stringify(env.valueFrom)}`);
  }

  /** Writes a Secret or ConfigMap volume's files (readable by the container's user); returns the directory. */
  private async writeVolume(name: string, volume: k8s.V1Volume): Promise<string> {
    let data: Record<string, Buffer>;
    let items: k8s.V1KeyToPath[] | undefined;
    if (volume.secret) {
      const secret = await this.core.readNamespacedSecret({
        namespace: this.namespace,
        name: volume.secret.secretName!,
      });
      data = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
      );
      items = volume.secret.items;
    } else if (volume.configMap) {
      const map = await this.core.readNamespacedConfigMap({
        namespace: this.namespace,
        name: volume.configMap.name!,
      });
      data = Object.fromEntries(Object.entries(map.data ?? {}).map(([k, v]) => [k, Buffer.from(v)]));
      items = volume.configMap.items;
    } else throw new Error(`volume ${volume.name}: this test kubelet mounts Secrets and ConfigMaps only`);
    const dir = join(this.dir, name);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    for (const { key, path } of items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
      if (!data[key]) throw new Error(`volume ${volume.name}: no key ${key}`);
      writeFileSync(join(dir, path), data[key]!, { mode: 0o644 });
    }
    return dir;
  }
}

function probeUrl(container: k8s.V1Container, get: k8s.V1HTTPGetAction): string {
  const port =
    typeof get.port === 'number'
      ? get.port
      : (container.ports?.find((p) => p.name === get.port)?.containerPort ?? Number(get.port));
  return `${(get.scheme ?? 'HTTP').toLowerCase()}://127.0.0.1:${port}${get.path ?? '/'}`;
}

/**
 * Runs every Job that appears in `namespace` (each once, by uid) until `stop` is called: what a
 * node would do for helm's hooks, which helm waits for.
 */
export function runJobsAsTheyCome(
  kc: k8s.KubeConfig,
  kubelet: PodmanKubelet,
  namespace: string,
  onJob: (job: string, result: { succeeded: boolean; log: string }) => void,
): { stop: () => Promise<void> } {
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const seen = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const jobs = await batch.listNamespacedJob({ namespace }).catch(() => ({ items: [] as k8s.V1Job[] }));
      for (const job of jobs.items) {
        const uid = job.metadata!.uid!;
        if (seen.has(uid) || job.status?.conditions?.length) continue;
        seen.add(uid);
        // A Job this kubelet cannot run is reported as failed, so the test says why helm waits.
        const result = await kubelet.runJob(job).catch((err: unknown) => ({
          succeeded: false,
          log: `the test kubelet could not run it: ${String(err)}`,
        }));
        onJob(job.metadata!.name!, result);
      }
      await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
