import yaml from 'js-yaml';
import { BUNDLE, COMPLETION_HELPER, krewManifest, npmManifest } from './krew.js';

describe('krewManifest', () => {
  const manifest = yaml.load(
    krewManifest({
      version: '0.3.1',
      homepage: 'https://example.org/karmada-quota',
      uri: 'https://example.org/releases/v0.3.1/karmada-quota-0.3.1.tar.gz',
      sha256: 'a'.repeat(64),
    }),
  ) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('is a krew v1alpha2 Plugin named karmada-quota with a v-prefixed version', () => {
    expect(manifest).toMatchObject({
      apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
      kind: 'Plugin',
      metadata: { name: 'karmada-quota' },
      spec: { version: 'v0.3.1', homepage: 'https://example.org/karmada-quota' },
    });
    expect(manifest.spec.shortDescription.length).toBeLessThanOrEqual(60); // krew's guideline
  });

  it('has one platform for linux and darwin that downloads the archive, checks it and links the bundle', () => {
    expect(manifest.spec.platforms).toEqual([
      {
        selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['darwin', 'linux'] }] },
        uri: 'https://example.org/releases/v0.3.1/karmada-quota-0.3.1.tar.gz',
        sha256: 'a'.repeat(64),
        bin: BUNDLE,
        files: [
          { from: BUNDLE, to: '.' },
          { from: 'README.md', to: '.' },
        ],
      },
    ]);
  });

  it('tells how to get the short name and completion from the installed version', () => {
    expect(manifest.spec.caveats).toContain(`$HOME/.krew/store/karmada-quota/v0.3.1/${BUNDLE}`);
    expect(manifest.spec.caveats).toContain(COMPLETION_HELPER);
  });
});

describe('npmManifest', () => {
  it('has no dependencies and installs the bundle as kubectl-kq and kubectl_complete-kq', () => {
    expect(npmManifest('0.3.1', 'd')).toEqual({
      name: 'karmada-quota',
      version: '0.3.1',
      description: 'd',
      license: 'Apache-2.0',
      type: 'module',
      bin: { 'kubectl-kq': BUNDLE, 'kubectl_complete-kq': BUNDLE },
      files: [BUNDLE, 'README.md'],
      engines: { node: '>=20' },
    });
  });
});
