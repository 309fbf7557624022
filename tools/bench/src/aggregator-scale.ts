import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AggregatorScaleFigures } from './aggregator-scale-child.js';
import { CorrectnessError } from './context.js';

export type { AggregatorScaleFigures };

/** The running child, so an interrupted bench can stop it. */
let running: ReturnType<typeof spawn> | undefined;

export function stopAggregatorScale(): void {
  running?.kill('SIGKILL');
}

/** Runs aggregator-scale-child.ts in a process of its own, with --expose-gc (heap after GC). */
export async function runAggregatorScale(
  pods: number,
  log: (message: string) => void,
): Promise<AggregatorScaleFigures> {
  const entry = fileURLToPath(new URL('./aggregator-scale-child.js', import.meta.url));
  const child = spawn(process.execPath, ['--expose-gc', entry, String(pods)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const line of chunk.toString().trimEnd().split('\n')) if (line) log(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  running = undefined;
  if (code !== 0)
    throw new Error(`the aggregator-scale process exited with ${code}: ${stderr.trim().slice(-2000)}`);
  const figures = JSON.parse(stdout) as AggregatorScaleFigures;
  if (figures.problems.length > 0)
    throw new CorrectnessError(
      `aggregator-scale: the ledger's totals are wrong: ${figures.problems.slice(0, 5).join('; ')}`,
    );
  return figures;
}
