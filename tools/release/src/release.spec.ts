import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../../federation/src/paths.js';
import {
  buildArgs,
  chartDigest,
  normalizeRegistry,
  parseDigest,
  parseReleaseArgs,
  pushArgs,
  releaseReferences,
  releaseVersion,
  withReleasedImage,
} from './release.js';

const DIGEST = `sha256:${'ab12'.repeat(16)}`;
const chart = (version: string, appVersion: string) =>
  `apiVersion: v2\nname: karmada-quota\nversion: ${version}\nappVersion: ${appVersion}\n`;

describe('releaseVersion', () => {
  test("is package.json's version when Chart.yaml's version and appVersion agree", () => {
    expect(releaseVersion('{"version":"1.2.3"}', chart('1.2.3', '1.2.3'))).toEqual({
      version: '1.2.3',
      chartName: 'karmada-quota',
    });
    expect(releaseVersion('{"version":"1.2.3-rc.1"}', chart('1.2.3-rc.1', "'1.2.3-rc.1'")).version).toBe(
      '1.2.3-rc.1',
    );
  });

  test('refuses a chart version or appVersion that differs, naming each and what to do', () => {
    expect(() => releaseVersion('{"version":"1.2.3"}', chart('1.2.2', '1.2.3'))).toThrow(
      'package.json\'s is 1.2.3 but Chart.yaml\'s version is "1.2.2". Set all three to the version being released.',
    );
    expect(() => releaseVersion('{"version":"1.2.3"}', chart('1.2.2', '1.2.0'))).toThrow(
      'Chart.yaml\'s version is "1.2.2" and Chart.yaml\'s appVersion is "1.2.0"',
    );
  });

  test('refuses a missing or non-release version', () => {
    expect(() => releaseVersion('{}', chart('1.0.0', '1.0.0'))).toThrow('package.json has no version');
    expect(() => releaseVersion('{"version":"latest"}', chart('latest', 'latest'))).toThrow(
      'is not a release version',
    );
  });

  test("holds for this repository's package.json and chart (else npm run release refuses)", () => {
    const root = repoRoot();
    expect(() =>
      releaseVersion(
        readFileSync(join(root, 'package.json'), 'utf8'),
        readFileSync(join(root, 'charts', 'karmada-quota', 'Chart.yaml'), 'utf8'),
      ),
    ).not.toThrow();
  });
});

describe('parseReleaseArgs and normalizeRegistry', () => {
  test('reads the registry (oci:// and trailing slashes dropped) and the options', () => {
    expect(
      parseReleaseArgs(['--registry', 'oci://127.0.0.1:5000/kq/', '--plain-http', '--node-image', 'n']),
    ).toEqual({ registry: '127.0.0.1:5000/kq', plainHttp: true, nodeImage: 'n' });
    expect(parseReleaseArgs(['--registry', 'ghcr.io/karmada-quota', '--image', 'localhost/x:1'])).toEqual({
      registry: 'ghcr.io/karmada-quota',
      plainHttp: false,
      image: 'localhost/x:1',
    });
    expect(parseReleaseArgs(['-h'])).toBe('help');
  });

  test('refuses a missing registry, an unknown option, or --image with --node-image', () => {
    expect(() => parseReleaseArgs([])).toThrow('--registry is required');
    expect(() => parseReleaseArgs(['--registry', 'r.io', '--push'])).toThrow("Unknown option '--push'");
    expect(() => parseReleaseArgs(['--registry', 'r.io', '--image', 'a', '--node-image', 'b'])).toThrow(
      'give one of them',
    );
  });

  test('refuses what podman and helm would read as another registry or a tag', () => {
    for (const bad of ['karmada-quota', 'ghcr.io/Karmada', 'ghcr.io/kq:1.0', 'https://ghcr.io/kq', ''])
      expect(() => normalizeRegistry(bad)).toThrow('is not a registry reference');
    expect(normalizeRegistry('localhost:5000')).toBe('localhost:5000');
  });
});

test('releaseReferences: the image beside the charts, the chart under /charts', () => {
  expect(releaseReferences('127.0.0.1:5000/kq', '1.2.3', 'karmada-quota')).toEqual({
    imageRepository: '127.0.0.1:5000/kq/karmada-quota',
    imageTag: '127.0.0.1:5000/kq/karmada-quota:1.2.3',
    chartRepository: 'oci://127.0.0.1:5000/kq/charts',
    chart: 'oci://127.0.0.1:5000/kq/charts/karmada-quota',
    chartWithVersion: 'oci://127.0.0.1:5000/kq/charts/karmada-quota:1.2.3',
  });
});

test('parseDigest takes a sha256 digest (trimmed) and refuses anything else', () => {
  expect(parseDigest(`${DIGEST}\n`)).toBe(DIGEST);
  expect(() => parseDigest('sha256:abc')).toThrow('not sha256:<64 hex>');
  expect(() => parseDigest('')).toThrow('not sha256:<64 hex>');
});

describe('withReleasedImage', () => {
  const valuesPath = join(repoRoot(), 'charts', 'karmada-quota', 'values.yaml');

  test("sets the chart's image.repository and image.digest and leaves every other line as it was", () => {
    const original = readFileSync(valuesPath, 'utf8');
    const released = withReleasedImage(original, '127.0.0.1:5000/kq/karmada-quota', DIGEST);
    const values = yaml.load(released) as Record<string, unknown> & { image: Record<string, unknown> };
    const before = yaml.load(original) as Record<string, unknown> & { image: Record<string, unknown> };
    expect(values.image).toEqual({
      ...before.image,
      repository: '127.0.0.1:5000/kq/karmada-quota',
      digest: DIGEST,
    });
    expect({ ...values, image: undefined }).toEqual({ ...before, image: undefined });
    const changed = released.split('\n').filter((line, i) => line !== original.split('\n')[i]);
    expect(changed).toEqual(['  repository: "127.0.0.1:5000/kq/karmada-quota"', `  digest: "${DIGEST}"`]);
  });

  test('refuses values without the image block or its digest key, and a bad digest', () => {
    expect(() => withReleasedImage('redis: {}\n', 'r.io/x', DIGEST)).toThrow('no top-level image: block');
    expect(() =>
      withReleasedImage("image:\n  repository: a\n  tag: ''\nother: 1\n", 'r.io/x', DIGEST),
    ).toThrow('image block has no digest: (the chart must name it)');
    // A digest key of another block is not the image's.
    expect(() =>
      withReleasedImage("image:\n  repository: a\nother:\n  digest: ''\n", 'r.io/x', DIGEST),
    ).toThrow('image block has no digest:');
    expect(() => withReleasedImage("image:\n  repository: a\n  digest: ''\n", 'r.io/x', 'sha256:1')).toThrow(
      'the image digest holds',
    );
  });
});

test('podman build and push arguments: a local base without pulling, the digest file, plain HTTP', () => {
  expect(buildArgs('localhost/karmada-quota:1.2.3')).toEqual([
    'build',
    '-t',
    'localhost/karmada-quota:1.2.3',
    '.',
  ]);
  expect(buildArgs('t', 'localhost/base/node:24')).toEqual([
    'build',
    '--pull=never',
    '--build-arg',
    'NODE_IMAGE=localhost/base/node:24',
    '-t',
    't',
    '.',
  ]);
  expect(pushArgs('localhost/x:1', 'r.io/kq/karmada-quota:1', '/tmp/d', true)).toEqual([
    'push',
    '--tls-verify=false',
    '--digestfile',
    '/tmp/d',
    'localhost/x:1',
    'docker://r.io/kq/karmada-quota:1',
  ]);
  expect(pushArgs('i', 'd', 'f', false)).not.toContain('--tls-verify=false');
});

test("chartDigest reads helm push's Digest line", () => {
  expect(chartDigest(`Pushed: r.io/kq/charts/karmada-quota:1.2.3\nDigest: ${DIGEST}\n`)).toBe(DIGEST);
  expect(chartDigest('Pushed: r.io/kq/charts/karmada-quota:1.2.3\n')).toBeUndefined();
});
