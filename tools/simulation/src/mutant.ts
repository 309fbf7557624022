/**
 * Builds and runs mutants: the simulation bundled with a mutation (mutations.ts) applied to a copy of
 * the sources in memory, never to the checkout.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { applyEdit, type Mutation } from './mutations.js';

/** The checkout, found from here whether this runs from its source (jest) or from dist/. */
function repoRoot(): string {
  for (let dir = import.meta.dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'tools', 'simulation', 'src', 'mutant-main.ts'))) return dir;
  }
  throw new Error(`no checkout with tools/simulation/src/mutant-main.ts above ${import.meta.dirname}`);
}

export const REPO_ROOT = repoRoot();

/** Every edit of `mutation` applied to the sources it names, by path from the repository root. */
export async function patchedSources(mutation: Mutation): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  for (const edit of mutation.edits) {
    const path = resolve(REPO_ROOT, edit.file);
    const source = sources.get(path) ?? (await readFile(path, 'utf8'));
    sources.set(path, applyEdit(source, edit, mutation.bug));
  }
  return sources;
}

/** Serves the patched sources to esbuild in place of the files. */
function patching(sources: ReadonlyMap<string, string>): Plugin {
  return {
    name: 'mutation',
    setup(builder) {
      builder.onLoad({ filter: /\.ts$/ }, (args) => {
        const contents = sources.get(args.path);
        return contents === undefined ? undefined : { contents, loader: 'ts' };
      });
    },
  };
}

/** A bundle of the simulation, with a mutation or without. */
export interface Mutant {
  /** Runs the bundle with `args` and parses what it prints (mutant-main.ts prints JSON). */
  run(args: string[]): Promise<unknown>;
  /** Runs the bundle with `args` on this process's terminal; its exit code. */
  exec(args: string[]): Promise<number>;
  dispose(): Promise<void>;
}

const execFileAsync = promisify(execFile);

/**
 * Bundles `entry` (mutant-main.ts, or main.ts: the hunt `npm run sim` runs) and the code under test,
 * with `mutation` applied, into a temporary directory beside a link to the checkout's node_modules
 * (the packages stay external); fails when an edit no longer applies or an edited file is not part of
 * the simulation.
 */
export async function buildMutant(
  mutation?: Mutation,
  entry: 'mutant-main.ts' | 'main.ts' = 'mutant-main.ts',
): Promise<Mutant> {
  const sources = mutation ? await patchedSources(mutation) : new Map<string, string>();
  const dir = await mkdtemp(join(tmpdir(), 'karmada-quota-mutant-'));
  const dispose = () => rm(dir, { recursive: true, force: true });
  const outfile = join(dir, 'mutant.mjs');
  try {
    await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const result = await build({
      entryPoints: [join(REPO_ROOT, 'tools', 'simulation', 'src', entry)],
      absWorkingDir: REPO_ROOT,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      conditions: ['source'],
      packages: 'external',
      outfile,
      metafile: true,
      logLevel: 'silent',
      plugins: [patching(sources)],
    });
    const bundled = new Set(Object.keys(result.metafile.inputs).map((p) => resolve(REPO_ROOT, p)));
    const outside = [...sources.keys()].filter((path) => !bundled.has(path));
    if (outside.length > 0) {
      throw new Error(
        `the patch for "${mutation!.bug}" edits ${outside.map((p) => relative(REPO_ROOT, p)).join(', ')}, which the simulation does not run`,
      );
    }
  } catch (err) {
    await dispose();
    throw err;
  }
  return {
    async run(args) {
      const { stdout } = await execFileAsync(process.execPath, [outfile, ...args], {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
      });
      return JSON.parse(stdout) as unknown;
    },
    exec: (args) =>
      new Promise((done, fail) =>
        spawn(process.execPath, [outfile, ...args], { cwd: dir, stdio: 'inherit' })
          .on('error', fail)
          .on('exit', (code) => done(code ?? 1)),
      ),
    dispose,
  };
}
