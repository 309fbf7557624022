import * as k8s from '@kubernetes/client-node';
import { request } from 'node:https';
import type { CountedResource } from '#usage';

export interface ResolvedResource {
  apiVersion: string;
  kind: string;
  /** Collection path across all namespaces, as informers watch it. */
  path: string;
}

/** GET a discovery document from the cluster `kc` points at. */
async function getJson<T>(kc: k8s.KubeConfig, path: string): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in kubeconfig');
  const options: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return new Promise<T>((resolve, reject) => {
    const req = request(`${cluster.server}${path}`, { ...options, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(body) as T);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Finds the served version and kind of a counted resource in one member cluster (groups may serve
 * different versions in different members). Throws when the member does not serve it.
 */
export async function resolveResource(
  kc: k8s.KubeConfig,
  counted: CountedResource,
): Promise<ResolvedResource> {
  let apiVersion = 'v1';
  if (counted.group) {
    const group = await getJson<{ preferredVersion?: { groupVersion: string } }>(
      kc,
      `/apis/${counted.group}`,
    );
    if (!group.preferredVersion) throw new Error(`the member serves no version of ${counted.group}`);
    apiVersion = group.preferredVersion.groupVersion;
  }
  const base = counted.group ? `/apis/${apiVersion}` : '/api/v1';
  const list = await getJson<{ resources: { name: string; kind: string }[] }>(kc, base);
  const found = list.resources.find((r) => r.name === counted.resource);
  if (!found) throw new Error(`the member does not serve ${counted.resource} in ${apiVersion}`);
  return { apiVersion, kind: found.kind, path: `${base}/${counted.resource}` };
}
