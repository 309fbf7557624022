/**
 * The priority class of bindings Karmada wrote without its ResourceQuotaEstimate gate (its default),
 * read from their resource templates on the Karmada API server, so that PriorityClass scopes judge
 * what the pods will run with (libs/quota scopes.ts; docs/concepts/scopes.md, "Karmada's feature
 * gate"). Only in namespaces with a quota that selects by priority class; a template is read again
 * only when its binding names a later resourceVersion than the one read.
 */
import * as k8s from '@kubernetes/client-node';
import { describeError, isApiStatus, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  hasPriorityClassScope,
  isLaterVersion,
  templateClassNeeded,
  templatePriorityClass,
  withTemplateClass,
  type TemplateRef,
} from '#quota';
import { abortAt, type StoreCallOptions } from './quota-store.js';

/** The plural of each kind Karmada interprets natively (karmada-interpreter.ts). */
const PLURALS: Readonly<Record<string, string>> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  Job: 'jobs',
  Pod: 'pods',
};

/** Templates read at once by one call: a first reconcile of a large namespace reads many. */
const CONCURRENT_READS = 16;
/** Cached classes; cleared when full (each entry is a few short strings). */
const CACHE_LIMIT = 20_000;

interface CachedClass {
  uid?: string;
  resourceVersion?: string;
  priorityClassName: string;
}

/** Thrown when a template that decides a binding's scope cannot be read; the message says what to fix. */
export class TemplateClassUnreadable extends Error {}

export class TemplateClasses {
  private readonly objects: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly cache = new Map<string, CachedClass>();

  constructor(host: k8s.KubeConfig) {
    this.objects = host.makeApiClient(k8s.CustomObjectsApi);
    this.core = host.makeApiClient(k8s.CoreV1Api);
  }

  /**
   * The bindings as PriorityClass scopes must judge them: each one Karmada wrote without the gate
   * given its template's class, when one of `quotas` selects by priority class; the same array
   * otherwise. Throws TemplateClassUnreadable when a template cannot be read (a gone template reads
   * as no class: its binding is going too).
   */
  async classify<T extends ResourceBinding | undefined>(
    bindings: readonly T[],
    quotas: readonly KarmadaQuota[],
    options: StoreCallOptions = {},
  ): Promise<T[]> {
    if (!quotas.some(hasPriorityClassScope)) return [...bindings];
    const result = [...bindings];
    const needed = result.flatMap((rb, i) => {
      const ref = rb && templateClassNeeded(rb);
      return ref ? [{ i, ref }] : [];
    });
    for (let start = 0; start < needed.length; start += CONCURRENT_READS) {
      await Promise.all(
        needed.slice(start, start + CONCURRENT_READS).map(async ({ i, ref }) => {
          const priorityClassName = await this.classOf(ref, options);
          result[i] = withTemplateClass(result[i]!, priorityClassName) as T;
        }),
      );
    }
    return result;
  }

  private async classOf(ref: TemplateRef, options: StoreCallOptions): Promise<string> {
    const key = `${ref.namespace}/${ref.kind}/${ref.name}`;
    const cached = this.cache.get(key);
    const current =
      cached !== undefined &&
      ref.uid !== undefined &&
      cached.uid === ref.uid &&
      ref.resourceVersion !== undefined &&
      !isLaterVersion(ref.resourceVersion, cached.resourceVersion);
    if (current) return cached.priorityClassName;
    let template: k8s.KubernetesObject;
    try {
      template = await this.read(ref, options);
    } catch (err) {
      if (isApiStatus(err, 404)) return '';
      throw new TemplateClassUnreadable(
        `cannot read ${ref.kind} ${ref.namespace}/${ref.name}, whose pod template gives its ResourceBinding ` +
          `the priority class a PriorityClass-scoped KarmadaQuota judges (Karmada writes it into the binding ` +
          `only with its ResourceQuotaEstimate gate): ${describeError(err)}; karmada-quota needs get on ` +
          `${PLURALS[ref.kind]} in the Karmada API server`,
      );
    }
    const priorityClassName =
      templatePriorityClass({ ...template, apiVersion: ref.apiVersion, kind: ref.kind }) ?? '';
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const { uid, resourceVersion } = template.metadata ?? {};
    this.cache.set(key, { uid, resourceVersion, priorityClassName });
    return priorityClassName;
  }

  private async read(ref: TemplateRef, options: StoreCallOptions): Promise<k8s.KubernetesObject> {
    const abort = abortAt(options.deadline);
    if (ref.kind === 'Pod')
      return this.core.readNamespacedPod({ namespace: ref.namespace, name: ref.name }, abort);
    const [group, version] = ref.apiVersion.split('/') as [string, string];
    const read = this.objects.getNamespacedCustomObject(
      { group, version, plural: PLURALS[ref.kind]!, namespace: ref.namespace, name: ref.name },
      abort,
    );
    return (await read) as k8s.KubernetesObject;
  }
}
