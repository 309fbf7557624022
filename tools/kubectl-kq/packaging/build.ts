/**
 * `npm run kq:package`: kubectl-kq as packages a stranger installs without this repository.
 * - dist/kubectl-kq/karmada-quota-<version>.tgz: the npm package (`npm install -g` it), whose bins are
 *   kubectl-kq and kubectl_complete-kq;
 * - dist/kubectl-kq/karmada-quota-<version>.tar.gz: the krew archive, and karmada-quota.yaml, its
 *   krew manifest with the archive's sha256.
 * Both hold one file, the CLI bundled by esbuild with its dependencies, which runs on Node >= 20.
 *
 * Usage: npm run kq:package [-- --base-url URL] [-- --homepage URL] [-- --out DIR]
 *   --base-url  where the release serves the archive (default: file:// of the output directory, for
 *               `kubectl krew install --manifest=karmada-quota.yaml`)
 *   --homepage  the plugin's homepage in the manifest (default: file:// of docs/reference/kubectl-kq.md)
 *   --out       the output directory, emptied first (default: dist/kubectl-kq)
 * Prints the paths it wrote as JSON.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { BUNDLE, krewManifest, MIN_NODE_MAJOR, npmManifest, PACKAGE_NAME } from './krew.js';

const root = join(import.meta.dirname, '..', '..', '..', '..'); // dist/tools/kubectl-kq/packaging
const source = join(root, 'tools', 'kubectl-kq');

function fail(message: string): never {
  process.stderr.write(`kq:package: ${message}\n`);
  process.exit(1);
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    fail(`${command} ${args.join(' ')} failed in ${cwd}: ${result.error?.message ?? result.stderr}`);
  }
  return result.stdout;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'base-url': { type: 'string' }, homepage: { type: 'string' }, out: { type: 'string' } },
  });
  const out = resolve(values.out ?? join(root, 'dist', 'kubectl-kq'));
  const { version, description } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
    description: string;
  };
  const staging = join(out, 'package');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });

  await build({
    entryPoints: [join(source, 'src', 'main.ts')],
    outfile: join(staging, BUNDLE),
    bundle: true,
    platform: 'node',
    target: `node${MIN_NODE_MAJOR}`,
    format: 'esm',
    // package.json "imports" send #api etc. to the TypeScript sources under this condition.
    conditions: ['source'],
    minify: true,
    legalComments: 'eof', // the bundled dependencies' licenses travel with them
    // ws loads these native helpers only when installed; it works without them.
    external: ['bufferutil', 'utf-8-validate'],
    // Bundled CommonJS dependencies call require() for Node's built-in modules.
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as kqCreateRequire } from 'node:module';",
        'const require = kqCreateRequire(import.meta.url);',
      ].join('\n'),
    },
    logLevel: 'warning',
  });
  chmodSync(join(staging, BUNDLE), 0o755);
  copyFileSync(join(source, 'packaging', 'README.md'), join(staging, 'README.md'));
  writeFileSync(
    join(staging, 'package.json'),
    `${JSON.stringify(npmManifest(version, `kubectl kq: ${description}`), null, 2)}\n`,
  );

  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], staging)) as {
    filename: string;
  }[];
  const npmPackage = join(out, packed[0]!.filename);

  // krew: a tar.gz of the same files, made byte-for-byte reproducible so its sha256 is the release's.
  const archiveName = `${PACKAGE_NAME}-${version}.tar.gz`;
  const archive = join(out, archiveName);
  const tar = spawnSync(
    'tar',
    [
      '--create',
      '--sort=name',
      '--mtime=@0',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      BUNDLE,
      'README.md',
    ],
    { cwd: staging, maxBuffer: 1 << 30 },
  );
  if (tar.status !== 0) fail(`tar failed: ${tar.error?.message ?? tar.stderr.toString()}`);
  writeFileSync(archive, gzipSync(tar.stdout, { level: 9 }));
  const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
  const baseUrl = (values['base-url'] ?? pathToFileURL(out).href).replace(/\/$/, '');
  const manifest = join(out, `${PACKAGE_NAME}.yaml`);
  writeFileSync(
    manifest,
    krewManifest({
      version,
      homepage: values.homepage ?? pathToFileURL(join(root, 'docs', 'reference', 'kubectl-kq.md')).href,
      uri: `${baseUrl}/${archiveName}`,
      sha256,
    }),
  );
  process.stdout.write(
    `${JSON.stringify({ npmPackage, krewArchive: archive, krewManifest: manifest, sha256 }, null, 2)}\n`,
  );
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
