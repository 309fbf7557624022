import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from '../../federation/src/binaries.js';
import { repoRoot } from '../../federation/src/paths.js';
import {
  buildArgs,
  chartDigest,
  parseDigest,
  parseReleaseArgs,
  pushArgs,
  releaseReferences,
  releaseVersion,
  USAGE,
  withReleasedImage,
} from './release.js';

/**
 * `npm run release -- --registry REF [--plain-http] [--image REF | --node-image REF]`: releases the
 * image and the chart together, with package.json's version (which Chart.yaml's version and
 * appVersion must equal). It builds the image from the Dockerfile (or takes --image), pushes it with
 * podman and reads the digest the registry has it under, packages the chart with image.repository
 * and image.digest set to that image, and pushes the package with helm to oci://REF/charts. It
 * prints the chart and the image references last, on stdout (`chart: ...`, `image: ...`); the
 * progress goes to stderr. test/release.test.ts runs it against a local registry.
 */

const progress = (message: string): void => void process.stderr.write(`[release] ${message}\n`);

/** Runs `command`, its output passed through to stderr; resolves with that output, throws on failure. */
function run(command: string, args: readonly string[], cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    child.once('error', (err) => reject(new Error(`cannot run ${command}: ${err.message}`)));
    child.once('close', (code) => {
      if (code === 0) resolve(`${stdout}\n${stderr}`);
      else {
        const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-15).join('\n');
        reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${tail}`));
      }
    });
  });
}

async function main(): Promise<void> {
  const options = parseReleaseArgs(process.argv.slice(2));
  if (options === 'help') {
    console.log(USAGE);
    return;
  }
  const root = repoRoot();
  const chartDir = join(root, 'charts', 'karmada-quota');
  const { version, chartName } = releaseVersion(
    readFileSync(join(root, 'package.json'), 'utf8'),
    readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'),
  );
  const refs = releaseReferences(options.registry, version, chartName);
  progress(
    `releasing ${chartName} ${version} to ${options.registry}${options.plainHttp ? ' (plain HTTP)' : ''}`,
  );
  const helm = options.helm ?? (await ensureBinaries()).helm;

  const work = mkdtempSync(join(tmpdir(), 'karmada-quota-release-'));
  try {
    let image = options.image;
    if (!image) {
      image = `localhost/karmada-quota:${version}`;
      progress(`building ${image} from the Dockerfile${options.nodeImage ? ` on ${options.nodeImage}` : ''}`);
      await run('podman', buildArgs(image, options.nodeImage), root);
    }

    progress(`pushing ${image} to ${refs.imageTag}`);
    const digestFile = join(work, 'image.digest');
    await run('podman', pushArgs(image, refs.imageTag, digestFile, options.plainHttp));
    const digest = parseDigest(readFileSync(digestFile, 'utf8'), `podman push --digestfile ${digestFile}`);
    const pinnedImage = `${refs.imageRepository}@${digest}`;
    progress(`the registry has the image as ${pinnedImage}`);

    progress(`packaging the chart ${version} with image ${pinnedImage}`);
    const chartCopy = join(work, 'chart', chartName);
    cpSync(chartDir, chartCopy, { recursive: true });
    const valuesFile = join(chartCopy, 'values.yaml');
    writeFileSync(
      valuesFile,
      withReleasedImage(readFileSync(valuesFile, 'utf8'), refs.imageRepository, digest),
    );
    const packages = join(work, 'packages');
    await run(helm, ['package', chartCopy, '--version', version, '--app-version', version, '-d', packages]);
    const [archive, ...others] = readdirSync(packages);
    if (!archive || others.length) throw new Error(`helm package made ${readdirSync(packages).join(', ')}`);

    progress(`pushing ${archive} to ${refs.chartRepository}`);
    const pushed = await run(helm, [
      'push',
      join(packages, archive),
      refs.chartRepository,
      ...(options.plainHttp ? ['--plain-http'] : []),
    ]);
    const chartDigestText = chartDigest(pushed);

    progress(`released ${chartName} ${version}`);
    console.log(`chart: ${refs.chartWithVersion}${chartDigestText ? ` (${chartDigestText})` : ''}`);
    console.log(`image: ${pinnedImage}`);
    console.log(`install: helm install ${chartName} ${refs.chart} --version ${version}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`[release] failed: ${err.message}\n`);
  process.exitCode = 1;
});
