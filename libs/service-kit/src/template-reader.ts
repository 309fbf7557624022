/**
 * Reads resource templates (the kinds Karmada interprets natively) from the Karmada API server, keeping
 * what a caller projects from each; a template is read again only when a binding names a later
 * resourceVersion (or another uid) than the one read. Shared by the priority class of a binding
 * (template-classes.ts) and the OverridePolicies it is charged with (binding-overrides.ts).
 */
import * as k8s from '@kubernetes/client-node';
import { isApiStatus } from '#api';
import { isLaterVersion, type TemplateRef } from '#quota';
import { abortAt, type StoreCallOptions } from './quota-store.js';

/** The plural of each kind Karmada interprets natively (karmada-interpreter.ts). */
export const TEMPLATE_PLURALS: Readonly<Record<string, string>> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  Job: 'jobs',
  Pod: 'pods',
};

/** Templates read at once by one call: a first reconcile of a large namespace reads many. */
const CONCURRENT_READS = 16;

/** Runs `read` on each item, CONCURRENT_READS at a time. */
export async function inReadBatches<T>(items: readonly T[], read: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += CONCURRENT_READS)
    await Promise.all(items.slice(start, start + CONCURRENT_READS).map(read));
}

interface Cached<T> {
  uid?: string;
  resourceVersion?: string;
  value: T;
}

/** A template's projection, the version it was taken from, and whether this read asked the API server. */
export interface TemplateRead<T> {
  value: T;
  resourceVersion?: string;
  fresh: boolean;
}

export class TemplateReader<T> {
  private readonly objects: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly cache = new Map<string, Cached<T>>();

  /** `limit`: entries kept; the cache is cleared when full. */
  constructor(
    karmada: k8s.KubeConfig,
    private readonly project: (template: k8s.KubernetesObject) => T,
    private readonly limit: number,
  ) {
    this.objects = karmada.makeApiClient(k8s.CustomObjectsApi);
    this.core = karmada.makeApiClient(k8s.CoreV1Api);
  }

  /** The projection of the template `ref` names; undefined when it is gone. Throws when unreadable. */
  async read(ref: TemplateRef, options: StoreCallOptions): Promise<T | undefined> {
    return (await this.readVersion(ref, options))?.value;
  }

  /**
   * The projection with the resourceVersion it was taken from (the cached one when the binding names
   * no later version), and whether it was read from the API server by this call.
   */
  async readVersion(ref: TemplateRef, options: StoreCallOptions): Promise<TemplateRead<T> | undefined> {
    const key = `${ref.namespace}/${ref.kind}/${ref.name}`;
    const cached = this.cache.get(key);
    const current =
      cached !== undefined &&
      ref.uid !== undefined &&
      cached.uid === ref.uid &&
      ref.resourceVersion !== undefined &&
      !isLaterVersion(ref.resourceVersion, cached.resourceVersion);
    if (current) return { value: cached.value, resourceVersion: cached.resourceVersion, fresh: false };
    let template: k8s.KubernetesObject;
    try {
      template = await this.get(ref, options);
    } catch (err) {
      if (isApiStatus(err, 404)) return undefined;
      throw err;
    }
    const value = this.project({ ...template, apiVersion: ref.apiVersion, kind: ref.kind });
    if (this.cache.size >= this.limit) this.cache.clear();
    const { uid, resourceVersion } = template.metadata ?? {};
    this.cache.set(key, { uid, resourceVersion, value });
    return { value, resourceVersion, fresh: true };
  }

  private async get(ref: TemplateRef, options: StoreCallOptions): Promise<k8s.KubernetesObject> {
    const abort = abortAt(options.deadline);
    if (ref.kind === 'Pod')
      return this.core.readNamespacedPod({ namespace: ref.namespace, name: ref.name }, abort);
    const [group, version] = ref.apiVersion.split('/') as [string, string];
    const read = this.objects.getNamespacedCustomObject(
      { group, version, plural: TEMPLATE_PLURALS[ref.kind]!, namespace: ref.namespace, name: ref.name },
      abort,
    );
    return (await read) as k8s.KubernetesObject;
  }
}
