import { parseArgs } from 'node:util';
import yaml from 'js-yaml';

/**
 * The pure part of `npm run release` (main.ts runs podman and helm): its options, the version check,
 * the references it pushes to and the chart values that pin the image by digest.
 */

export const USAGE = `Usage: npm run release -- --registry HOST[:PORT][/PATH] [options]

Pushes the image to HOST[:PORT][/PATH]/karmada-quota:<version> and the chart, set to run that image by
digest, to oci://HOST[:PORT][/PATH]/charts/karmada-quota:<version>. The version is package.json's,
which must equal Chart.yaml's version and appVersion.

Options:
  --registry REF       where to push (required), e.g. ghcr.io/karmada-quota or 127.0.0.1:5000/kq
  --plain-http         the registry speaks HTTP, not HTTPS (a local test registry)
  --image REF          push this local image instead of building one from the Dockerfile
  --node-image REF     build on this local base (Dockerfile's NODE_IMAGE) without pulling
                       (machines without a registry: npm run image:bases prints one)
  --helm PATH          the helm binary (default: the one npm run kube:binaries builds)
  -h, --help           this text`;

export interface ReleaseOptions {
  /** Registry host and optional path, without scheme or trailing slash: `127.0.0.1:5000/kq`. */
  registry: string;
  plainHttp: boolean;
  /** A local image to push as it is; undefined: build the Dockerfile. */
  image?: string;
  /** Build on this local base (NODE_IMAGE) with --pull=never. */
  nodeImage?: string;
  helm?: string;
}

/** Reads the command line; throws a message naming what is wrong (with the usage). */
export function parseReleaseArgs(argv: readonly string[]): ReleaseOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        registry: { type: 'string' },
        'plain-http': { type: 'boolean', default: false },
        image: { type: 'string' },
        'node-image': { type: 'string' },
        helm: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n\n${USAGE}`, { cause: err });
  }
  const { values } = parsed;
  if (values.help) return 'help';
  if (!values.registry) throw new Error(`--registry is required\n\n${USAGE}`);
  if (values.image && values['node-image'])
    throw new Error('--image pushes an image as it is and --node-image builds one: give one of them');
  return {
    registry: normalizeRegistry(values.registry),
    plainHttp: values['plain-http'],
    ...(values.image ? { image: values.image } : {}),
    ...(values['node-image'] ? { nodeImage: values['node-image'] } : {}),
    ...(values.helm ? { helm: values.helm } : {}),
  };
}

/**
 * `oci://host:port/path/` -> `host:port/path`. A registry is a host (with a port, a dot or
 * `localhost`) and a lower-case path: anything else would make references podman or helm read as
 * something else (Docker Hub's library, a tag).
 */
export function normalizeRegistry(input: string): string {
  const registry = input.replace(/^oci:\/\//, '').replace(/\/+$/, '');
  const [host = '', ...path] = registry.split('/');
  const hostOk =
    /^[A-Za-z0-9.-]+(:\d+)?$/.test(host) &&
    (host.includes('.') || host.includes(':') || host.startsWith('localhost'));
  const pathOk = path.every((part) => /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/.test(part));
  if (!hostOk || !pathOk)
    throw new Error(
      `--registry ${JSON.stringify(input)} is not a registry reference: want HOST[:PORT][/path], ` +
        'e.g. ghcr.io/karmada-quota or 127.0.0.1:5000/karmada-quota (host with a dot or a port; lower-case path)',
    );
  return registry;
}

/** The version being released: package.json's, when Chart.yaml's version and appVersion say the same. */
export function releaseVersion(
  packageJson: string,
  chartYaml: string,
): { version: string; chartName: string } {
  const pkg = JSON.parse(packageJson) as { version?: unknown };
  const chart = yaml.load(chartYaml) as { name?: unknown; version?: unknown; appVersion?: unknown } | null;
  const version = typeof pkg.version === 'string' ? pkg.version : undefined;
  if (!version) throw new Error('package.json has no version');
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version))
    throw new Error(
      `package.json's version ${JSON.stringify(version)} is not a release version (x.y.z[-pre])`,
    );
  const chartName = typeof chart?.name === 'string' ? chart.name : undefined;
  if (!chartName) throw new Error('charts/karmada-quota/Chart.yaml has no name');
  const mismatches: string[] = [];
  // YAML may read an unquoted version as a number (1.0): compare what it says, as text.
  for (const key of ['version', 'appVersion'] as const)
    if (String(chart?.[key]) !== version)
      mismatches.push(`Chart.yaml's ${key} is ${JSON.stringify(String(chart?.[key]))}`);
  if (mismatches.length)
    throw new Error(
      `the image and the chart are released together, with one version: package.json's is ${version} but ` +
        `${mismatches.join(' and ')}. Set all three to the version being released.`,
    );
  return { version, chartName };
}

export interface ReleaseReferences {
  /** Where the image goes, without tag: the chart's image.repository. */
  imageRepository: string;
  /** The tag podman pushes (`repository:version`); the chart refers to the digest instead. */
  imageTag: string;
  /** helm push's destination. */
  chartRepository: string;
  /** What users install: `oci://.../charts/<name>` with `--version <version>`. */
  chart: string;
  chartWithVersion: string;
}

export function releaseReferences(registry: string, version: string, chartName: string): ReleaseReferences {
  const imageRepository = `${registry}/karmada-quota`;
  const chart = `oci://${registry}/charts/${chartName}`;
  return {
    imageRepository,
    imageTag: `${imageRepository}:${version}`,
    chartRepository: `oci://${registry}/charts`,
    chart,
    chartWithVersion: `${chart}:${version}`,
  };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** podman push --digestfile's content (the manifest's digest as pushed), checked. */
export function parseDigest(text: string, what = 'the digest file'): string {
  const digest = text.trim();
  if (!DIGEST.test(digest)) throw new Error(`${what} holds ${JSON.stringify(digest)}, not sha256:<64 hex>`);
  return digest;
}

/**
 * values.yaml with image.repository and image.digest set, everything else (comments included)
 * as it was: the chart's text is edited, not re-dumped, and the result is read back to check it.
 */
export function withReleasedImage(valuesYaml: string, repository: string, digest: string): string {
  parseDigest(digest, 'the image digest');
  const lines = valuesYaml.split('\n');
  const start = lines.findIndex((line) => /^image:\s*(#.*)?$/.test(line));
  if (start < 0) throw new Error('values.yaml has no top-level image: block');
  let end = start + 1;
  while (end < lines.length && (/^\s/.test(lines[end]!) || lines[end] === '')) end++;
  const set = (key: string, value: string) => {
    const at = lines.findIndex((line, i) => i > start && i < end && new RegExp(`^  ${key}:`).test(line));
    if (at < 0) throw new Error(`values.yaml's image block has no ${key}: (the chart must name it)`);
    lines[at] = `  ${key}: ${JSON.stringify(value)}`;
  };
  set('repository', repository);
  set('digest', digest);
  const result = lines.join('\n');
  const image = (yaml.load(result) as { image?: { repository?: unknown; digest?: unknown } }).image;
  if (image?.repository !== repository || image.digest !== digest)
    throw new Error(`values.yaml's image did not read back as ${repository}@${digest}`);
  return result;
}

/** `podman build` arguments for the Dockerfile in the current directory, tagged `tag`. */
export function buildArgs(tag: string, nodeImage?: string): string[] {
  return [
    'build',
    ...(nodeImage ? ['--pull=never', '--build-arg', `NODE_IMAGE=${nodeImage}`] : []),
    '-t',
    tag,
    '.',
  ];
}

/** `podman push` arguments: `image` to `destination`, its manifest digest written to `digestFile`. */
export function pushArgs(
  image: string,
  destination: string,
  digestFile: string,
  plainHttp: boolean,
): string[] {
  return [
    'push',
    ...(plainHttp ? ['--tls-verify=false'] : []),
    '--digestfile',
    digestFile,
    image,
    `docker://${destination}`,
  ];
}

/** The chart's digest from `helm push` output (`Digest: sha256:...`), if it printed one. */
export function chartDigest(helmPushOutput: string): string | undefined {
  return helmPushOutput.match(/^Digest:\s*(sha256:[0-9a-f]{64})\s*$/m)?.[1];
}
