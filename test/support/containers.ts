import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { isProcessAlive, repoRoot } from '../../tools/federation/src/index.js';

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** Progress of the slow steps (base images, image build), for whoever watches the test run. */
export const progress = (message: string): void =>
  void process.stderr.write(`[container-image] ${message}\n`);

/**
 * Runs `command` to its end without blocking the event loop; `onLine` sees each line of its output
 * (stdout and stderr) as it comes.
 */
export function run(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string) => void } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    const listen = (stream: 'stdout' | 'stderr') => {
      let partial = '';
      child[stream].on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        out[stream] += text;
        const lines = (partial + text).split('\n');
        partial = lines.pop()!;
        if (options.onLine) lines.forEach(options.onLine);
      });
    };
    listen('stdout');
    listen('stderr');
    child.once('error', (err) =>
      reject(
        new Error(
          `cannot run ${command} (${err.message}): the container test needs podman, runc, debootstrap and ` +
            'podman-compose (docs/development/sandbox.md#without-a-registry-podman)',
        ),
      ),
    );
    child.once('close', (code) => resolve({ code: code ?? 1, ...out }));
  });
}

/** Like run, but a non-zero exit throws with the command and the end of its output. */
export async function mustRun(
  command: string,
  args: readonly string[],
  options: Parameters<typeof run>[2] = {},
): Promise<Finished> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const tail = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${tail}`);
  }
  return result;
}

export const podman = (...args: string[]): Promise<Finished> => mustRun('podman', args);

/** The end of a container's log, for failure messages (synchronous: waitFor's describe is). */
export function containerLogTail(name: string, lines = 30): string {
  const logs = spawnSync('podman', ['logs', '--tail', String(lines), name], { encoding: 'utf8' });
  return `${name}'s log:\n${`${logs.stdout}${logs.stderr}`.trim() || '(empty)'}`;
}

export async function containerRunning(name: string): Promise<boolean> {
  const state = await run('podman', ['inspect', '--format', '{{.State.Running}}', name]);
  return state.stdout.trim() === 'true';
}

/**
 * The local stand-ins for node:24-bookworm-slim and redis:7-alpine (tools/container/bases.sh
 * makes them the first time, in minutes, and podman keeps them).
 */
export async function localBases(): Promise<{ nodeImage: string; redisImage: string }> {
  const { stdout } = await mustRun('bash', [join(repoRoot(), 'tools', 'container', 'bases.sh')], {
    onLine: progress,
  });
  const value = (key: string) => {
    const found = stdout.match(new RegExp(`^${key}=(.+)$`, 'm'))?.[1];
    if (!found) throw new Error(`tools/container/bases.sh printed no ${key}=; it printed:\n${stdout}`);
    return found;
  };
  return { nodeImage: value('NODE_IMAGE'), redisImage: value('REDIS_IMAGE') };
}

/**
 * Builds the repository's Dockerfile as users do, but on `nodeImage` and without any pull. The image
 * the tag named before is removed when the build moves the tag, so repeated runs do not fill the
 * disk (the build's cached layers stay: they make the next build fast).
 */
export async function buildImage(tag: string, nodeImage: string): Promise<void> {
  const imageId = async () => {
    const inspected = await run('podman', ['image', 'inspect', '--format', '{{.Id}}', tag]);
    return inspected.code === 0 ? inspected.stdout.trim() : undefined;
  };
  const before = await imageId();
  progress(`building ${tag} from the Dockerfile on ${nodeImage} (minutes when the dependencies changed)`);
  await mustRun(
    'nice',
    ['-n', '10', 'podman', 'build', '--pull=never', '--build-arg', `NODE_IMAGE=${nodeImage}`, '-t', tag, '.'],
    { cwd: repoRoot(), onLine: (line) => /STEP \d+\/\d+/.test(line) && progress(line) },
  );
  // Still in use by a container (a concurrent run's), it stays: podman refuses, and that is fine.
  if (before && before !== (await imageId())) await run('podman', ['rmi', before]);
}

/**
 * The prefix of every container (and compose project) a test process starts: it names that process,
 * so a run removes what a killed run left behind without touching a concurrent run's.
 */
export const ownedPrefix = (pid = process.pid): string => `kqimage${pid}`;

/** Removes the containers and networks of test processes that are gone (killed before teardown). */
export async function removeOrphans(): Promise<void> {
  const orphaned = (names: string) =>
    names.split('\n').filter((name) => {
      const owner = name.match(/^kqimage(\d+)[-_]/)?.[1];
      return owner !== undefined && !isProcessAlive(Number(owner));
    });
  const containers = orphaned((await podman('ps', '-a', '--format', '{{.Names}}')).stdout);
  if (containers.length) await podman('rm', '--force', ...containers);
  const networks = orphaned((await podman('network', 'ls', '--format', '{{.Name}}')).stdout);
  if (networks.length) await podman('network', 'rm', '--force', ...networks);
}
