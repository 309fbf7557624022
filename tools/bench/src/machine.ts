import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  kubernetes: string;
  etcd: string;
  platform: string;
  /** 1-minute load average when the bench started: other work on the machine skews every figure. */
  loadAverage: number;
}

export function describeMachine(versions: { kubernetes: string; etcd: string }): Machine {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kubernetes: versions.kubernetes,
    etcd: versions.etcd,
    platform: `${process.platform}/${process.arch}`,
    loadAverage: Math.round(loadavg()[0]! * 100) / 100,
  };
}

/** The code being measured, as `git describe --always --dirty` names it ('unknown' outside a clone). */
export function describeCommit(): string {
  const git = spawnSync('git', ['describe', '--always', '--dirty', '--abbrev=7'], { encoding: 'utf8' });
  return git.status === 0 ? git.stdout.trim() : 'unknown';
}

/** The files whose code a run measures: what runs (tests and docs do not), as git lists them. */
// The simulation runs in no scenario: a change of it measures nothing new.
const MEASURED_PATHS = ['apps', 'libs', 'tools', ':(exclude)tools/simulation', 'package.json'];
const NOT_MEASURED = /(\.spec\.ts|\.test\.ts|\.md)$/;

/**
 * A digest of the code a run measures (the services, libs and tools but the simulation, without tests or docs), as this
 * checkout holds it, committed or not; 'unknown' outside a clone. Two runs with the same digest
 * measured the same code, whatever commits lie between them.
 */
export function describeCode(root: string): string {
  const git = spawnSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...MEASURED_PATHS],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  if (git.status !== 0) return 'unknown';
  const files = [...new Set(git.stdout.split('\0'))].filter((f) => f && !NOT_MEASURED.test(f)).sort();
  const digest = createHash('sha256');
  for (const file of files) {
    const path = join(root, file);
    // A file deleted but not yet committed is not part of the code.
    if (!existsSync(path)) continue;
    digest.update(`${file}\0`).update(readFileSync(path)).update('\0');
  }
  return digest.digest('hex').slice(0, 16);
}
