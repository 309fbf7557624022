/**
 * Builds and runs mutants: the simulation bundled with a mutation (mutations.ts) applied to a copy of
 * the sources in memory, never to the checkout.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { applyEdit, type Mutation } from './mutations.js';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..', '..');

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

/** A bundle of the simulation, with a mutation or without; `run` executes mutant-main.ts in it. */
export interface Mutant {
  run(args: string[]): Promise<unknown>;
  dispose(): Promise<void>;
}

const execFileAsync = promisify(execFile);

/**
 * Bundles mutant-main.ts and the code under test, with `mutation` applied, into a temporary directory
 * beside a link to the checkout's node_modules (the packages stay external); fails when an edit no
 * longer applies or an edited file is not part of the simulation.
 */
export async function buildMutant(mutation?: Mutation): Promise<Mutant> {
  const sources = mutation ? await patchedSources(mutation) : new Map<string, string>();
  const dir = await mkdtemp(join(tmpdir(), 'karmada-quota-mutant-'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const outfile = join(dir, 'mutant.mjs');
  const result = await build({
    entryPoints: [join(REPO_ROOT, 'tools', 'simulation', 'src', 'mutant-main.ts')],
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
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `the patch for "${mutation!.bug}" edits ${outside.map((p) => relative(REPO_ROOT, p)).join(', ')}, which the simulation does not run`,
    );
  }
  await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
  return {
    async run(args) {
      const { stdout } = await execFileAsync(process.execPath, [outfile, ...args], {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
      });
      return JSON.parse(stdout) as unknown;
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
