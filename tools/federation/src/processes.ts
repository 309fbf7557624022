import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';

/** A long-running local process (etcd, kube-apiserver, ...) whose output goes to a log file. */
export class ManagedProcess {
  private exited = false;
  private constructor(
    readonly name: string,
    readonly logFile: string,
    private readonly child: ChildProcess,
    /** How it was started, so it can be started again the same way (Federation.relaunch). */
    readonly command: string,
    readonly args: readonly string[],
    readonly env: NodeJS.ProcessEnv | undefined,
  ) {
    child.once('exit', () => (this.exited = true));
    // A binary that cannot be run (ENOENT) emits 'error', which would crash the owner if unheard.
    child.once('error', () => (this.exited = true));
  }

  /**
   * Starts `command` in its own process group (so a Ctrl-C to the terminal reaches only the
   * supervisor, which then stops children in order) with stdout and stderr appended to `logFile`.
   */
  static start(
    name: string,
    command: string,
    args: string[],
    options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
  ): ManagedProcess {
    const log = openSync(options.logFile, 'a');
    try {
      const child = spawn(command, args, {
        stdio: ['ignore', log, log],
        detached: true,
        env: options.env ?? process.env,
        cwd: options.cwd,
      });
      return new ManagedProcess(name, options.logFile, child, command, args, options.env);
    } finally {
      closeSync(log);
    }
  }

  get pid(): number {
    if (this.child.pid === undefined)
      throw new Error(`${this.name} did not start: cannot run ${this.command} (see ${this.logFile})`);
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines of the log, for error messages that let an operator see why it failed. */
  logTail(lines = 25): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGSTOP: the process hangs (holds its connections and locks, answers nothing) until resume(). */
  pause(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT: a paused process carries on where it stopped. */
  resume(): void {
    this.signal('SIGCONT');
  }

  /** SIGKILL: a crash, with no chance to clean up; resolves once the process has exited. */
  async kill(): Promise<void> {
    if (!this.running) return;
    const exited = once(this.child, 'exit');
    this.signal('SIGKILL');
    await exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running) return;
    const exited = once(this.child, 'exit');
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, sig); // the whole group: some binaries fork helpers
    } catch {
      // already gone
    }
  }
}

/**
 * Guarantees that no child outlives its owner, even when the owner is SIGKILLed or jest is
 * interrupted before its teardown runs: a detached shell polls the owner and, once it is gone,
 * kills every process group listed in `pidFile`.
 */
export class OrphanGuard {
  private readonly pids = new Set<number>();
  private constructor(
    private readonly pidFile: string,
    private readonly watcher: ChildProcess,
  ) {}

  static start(pidFile: string, ownerPid = process.pid): OrphanGuard {
    writeFileSync(pidFile, '');
    const script = `
      while kill -0 ${ownerPid} 2>/dev/null; do sleep 1; done
      for p in $(cat "$0"); do kill -TERM -- "-$p" 2>/dev/null; done
      sleep 5
      for p in $(cat "$0"); do kill -KILL -- "-$p" 2>/dev/null; done`;
    const watcher = spawn('bash', ['-c', script, pidFile], { detached: true, stdio: 'ignore' });
    watcher.unref();
    return new OrphanGuard(pidFile, watcher);
  }

  track(proc: ManagedProcess): ManagedProcess {
    this.pids.add(proc.pid);
    this.flush();
    return proc;
  }

  untrack(proc: ManagedProcess): void {
    this.pids.delete(proc.pid);
    this.flush();
  }

  /** Called after an orderly shutdown: nothing is left to guard. */
  dispose(): void {
    this.pids.clear();
    this.flush();
    if (this.watcher.pid !== undefined) {
      try {
        process.kill(-this.watcher.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  private flush(): void {
    writeFileSync(this.pidFile, [...this.pids].join('\n'));
  }
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
