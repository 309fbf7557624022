import { spawnSync } from 'node:child_process';
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
