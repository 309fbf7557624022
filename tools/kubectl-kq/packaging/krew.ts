import yaml from 'js-yaml';

/**
 * The one file a kubectl-kq package holds besides its README: the bundle, which runs on Node >= 20.
 * Named .mjs so that every Node 20 loads it as a module through any symlink (Node reads the real name).
 */
export const BUNDLE = 'kubectl-kq.mjs';
/** kubectl's convention for a plugin's completion helper; the bundle answers as one under this name. */
export const COMPLETION_HELPER = 'kubectl_complete-kq';
export const PACKAGE_NAME = 'karmada-quota';
export const MIN_NODE_MAJOR = 20;

const SHORT_DESCRIPTION = 'Show KarmadaQuota usage across a Karmada federation';

export interface KrewInput {
  version: string;
  homepage: string;
  /** Where the archive is downloaded from, and its sha256 (hex). */
  uri: string;
  sha256: string;
}

/**
 * The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2 Plugin) for the archive.
 * krew links `bin` as kubectl-karmada_quota, so the plugin runs as `kubectl karmada-quota`; the
 * bundle is a Node program, hence one platform for every OS that has Node.
 */
export function krewManifest(input: KrewInput): string {
  const version = `v${input.version.replace(/^v/, '')}`;
  const manifest = {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: PACKAGE_NAME },
    spec: {
      version,
      homepage: input.homepage,
      shortDescription: SHORT_DESCRIPTION,
      description: [
        'Shows KarmadaQuotas (quota.karmada.io), the federation-wide quotas of karmada-quota, as',
        'kubectl shows ResourceQuotas: how full each quota is, used, reserved and hard per resource,',
        'every member cluster with its usage and sync state, the usage of each workload, the changes',
        "waiting for quota and the quota's Events. Run it against the Karmada control plane.",
      ].join('\n'),
      caveats: [
        `This plugin is a Node.js program: it needs node ${MIN_NODE_MAJOR} or later on PATH.`,
        'It runs as `kubectl karmada-quota`; for the short name `kubectl kq` and its shell completion:',
        `  ln -s "$HOME/.krew/store/${PACKAGE_NAME}/${version}/${BUNDLE}" "$HOME/.krew/bin/kubectl-kq"`,
        '  ln -s "$HOME/.krew/bin/kubectl-kq" "$HOME/.krew/bin/kubectl_complete-kq"',
      ].join('\n'),
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['darwin', 'linux'] }] },
          uri: input.uri,
          sha256: input.sha256,
          bin: BUNDLE,
          files: [
            { from: BUNDLE, to: '.' },
            { from: 'README.md', to: '.' },
          ],
        },
      ],
    },
  };
  return yaml.dump(manifest, { lineWidth: -1 });
}

/** package.json of the npm package: no dependencies, the bundle under both names kubectl looks for. */
export function npmManifest(version: string, description: string): Record<string, unknown> {
  return {
    name: PACKAGE_NAME,
    version,
    description,
    license: 'Apache-2.0',
    type: 'module',
    bin: { 'kubectl-kq': BUNDLE, [COMPLETION_HELPER]: BUNDLE },
    files: [BUNDLE, 'README.md'],
    engines: { node: `>=${MIN_NODE_MAJOR}` },
  };
}
