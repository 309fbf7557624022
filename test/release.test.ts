import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import {
  ensureBinaries,
  freePort,
  ManagedProcess,
  OrphanGuard,
  probe,
  repoRoot,
  waitFor,
  type KubeBinaries,
} from '../tools/federation/src/index.js';
import { buildImage, localBases, mustRun, podman, run } from './support/containers.js';

/**
 * `npm run release` (tools/release) against a local OCI registry (go-containerregistry's
 * cmd/registry from the binaries cache): the image is pushed and the chart, set to run it by
 * digest, pushed beside it; then, as a user would, the chart is pulled from the registry and
 * rendered, and the image pulled back by the digest the chart names. The digest is checked against
 * the registry's own manifest, not against what the release tool says. Needs podman (runtime runc)
 * and debootstrap, like container-image.test.ts (whose image build cache it shares), and the
 * compiled tool (`npm test` builds first).
 */
const IMAGE = 'localhost/karmada-quota:release-test';
const progress = (message: string): void => void process.stderr.write(`[release-test] ${message}\n`);
const version = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string })
  .version;

let dir: string;
let binaries: KubeBinaries;
let guard: OrphanGuard | undefined;
let registry: ManagedProcess | undefined;
/** `127.0.0.1:PORT/karmada-quota`: what the release pushes under. */
let target: string;
let port: number;
/** The release tool's stdout (its final references). */
let released: string;
/** What the last test pulled, `...@sha256:...`. */
let pulledReference: string | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-release-'));
  binaries = await ensureBinaries();
  guard = OrphanGuard.start(join(dir, 'pids'));
  port = await freePort();
  registry = guard.track(
    ManagedProcess.start('registry', binaries.registry, ['--port', String(port)], {
      logFile: join(dir, 'registry.log'),
    }),
  );
  await waitFor(
    `the OCI registry at 127.0.0.1:${port}`,
    async () => {
      if (!registry!.running) throw new Error(`the registry stopped:\n${registry!.logTail()}`);
      return (await probe(`http://127.0.0.1:${port}/v2/`)) === 200;
    },
    { timeoutMs: 30_000, describe: () => registry!.logTail() },
  );
  target = `127.0.0.1:${port}/karmada-quota`;

  const bases = await localBases();
  const built = Date.now();
  await buildImage(IMAGE, bases.nodeImage);
  progress(`image built in ${Math.round((Date.now() - built) / 1000)} s`);

  const started = Date.now();
  const result = await mustRun(
    'node',
    [
      join(repoRoot(), 'dist', 'tools', 'release', 'src', 'main.js'),
      ...['--registry', target, '--plain-http', '--image', IMAGE, '--helm', binaries.helm],
    ],
    { onLine: (line) => progress(line) },
  );
  progress(`npm run release took ${Math.round((Date.now() - started) / 1000)} s`);
  released = result.stdout;
}, 40 * 60_000);

afterAll(async () => {
  await registry?.stop();
  if (registry) guard?.untrack(registry);
  guard?.dispose();
  // The name the pull gave the image only: the image stays as IMAGE, for the next run's build cache.
  if (pulledReference) await run('podman', ['untag', pulledReference, pulledReference]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The digest of the manifest the registry holds under `repository:tag`, computed from its bytes. */
async function manifestDigest(repository: string, tag: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/${repository}/manifests/${tag}`, {
    headers: {
      accept: [
        'application/vnd.oci.image.manifest.v1+json',
        'application/vnd.oci.image.index.v1+json',
        'application/vnd.docker.distribution.manifest.v2+json',
        'application/vnd.docker.distribution.manifest.list.v2+json',
      ].join(', '),
    },
  });
  expect(response.status).toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  expect(response.headers.get('docker-content-digest')).toBe(digest);
  return digest;
}

const helm = (...args: string[]) => mustRun(binaries.helm, args);

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { image: string }[]; initContainers?: { image: string }[] } } };
}

test('the release prints the chart and the image it pushed, the image by digest', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  expect(released).toMatch(
    new RegExp(`^chart: oci://${target}/charts/karmada-quota:${version} \\(sha256:[0-9a-f]{64}\\)$`, 'm'),
  );
  expect(released).toContain(`\nimage: ${target}/karmada-quota@${digest}\n`);
});

test('the chart pulled from the registry runs exactly the pushed image, by digest, in every Deployment', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  const pulledDir = join(dir, 'pulled');
  mkdirSync(pulledDir);
  await helm(
    'pull',
    `oci://${target}/charts/karmada-quota`,
    '--version',
    version,
    '--plain-http',
    '-d',
    pulledDir,
  );
  expect(readdirSync(pulledDir)).toEqual([`karmada-quota-${version}.tgz`]);
  const archive = join(pulledDir, `karmada-quota-${version}.tgz`);

  const chart = yaml.load((await helm('show', 'chart', archive)).stdout) as Record<string, unknown>;
  expect(chart).toMatchObject({ name: 'karmada-quota', version, appVersion: version });

  const rendered = await helm(
    'template',
    'karmada-quota',
    archive,
    '--set',
    'redis.url=redis://redis.example:6379',
  );
  const deployments = yaml
    .loadAll(rendered.stdout)
    .filter((doc): doc is Deployment => (doc as Deployment | null)?.kind === 'Deployment');
  expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
    'karmada-quota-aggregator',
    'karmada-quota-console',
    'karmada-quota-reconciler',
    'karmada-quota-webhook',
  ]);
  const images = deployments.flatMap((d) =>
    [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers].map((c) => c.image),
  );
  expect(new Set(images)).toEqual(new Set([`${target}/karmada-quota@${digest}`]));
  // Nothing else the chart renders names an image by tag either.
  const everyImage = [...rendered.stdout.matchAll(/^\s*(?:- )?image: *(\S+)/gm)].map((m) => m[1]);
  expect(new Set(everyImage)).toEqual(new Set([`${target}/karmada-quota@${digest}`]));
});

test('the image pulls back from the registry by that digest and is the image released', async () => {
  const digest = await manifestDigest('karmada-quota/karmada-quota', version);
  const reference = `${target}/karmada-quota@${digest}`;
  pulledReference = reference;
  await podman('pull', '--tls-verify=false', reference);
  const id = async (ref: string) =>
    (await podman('image', 'inspect', '--format', '{{.Id}}', ref)).stdout.trim();
  expect(await id(reference)).toBe(await id(IMAGE));
  const digests = (await podman('image', 'inspect', '--format', '{{json .RepoDigests}}', IMAGE)).stdout;
  expect(JSON.parse(digests)).toContain(reference);
});
