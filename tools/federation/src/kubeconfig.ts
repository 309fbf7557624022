import { writeFileSync } from 'node:fs';
import yaml from 'js-yaml';

export interface ClusterAccess {
  /** Context, cluster and user name in the kubeconfig. */
  name: string;
  server: string;
  caPem: string;
  token: string;
  /** The name to check the server's certificate against, when `server` names it otherwise. */
  tlsServerName?: string;
}

/** Writes a kubeconfig with one context that authenticates with a bearer token (mode 0600). */
export function writeKubeconfig(path: string, access: ClusterAccess): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: access.name,
        cluster: {
          server: access.server,
          'certificate-authority-data': Buffer.from(access.caPem).toString('base64'),
          ...(access.tlsServerName ? { 'tls-server-name': access.tlsServerName } : {}),
        },
      },
    ],
    users: [{ name: access.name, user: { token: access.token } }],
    contexts: [{ name: access.name, context: { cluster: access.name, user: access.name } }],
    'current-context': access.name,
  };
  writeFileSync(path, yaml.dump(config), { mode: 0o600 });
}
