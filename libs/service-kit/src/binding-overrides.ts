/**
 * The OverridePolicies and ClusterOverridePolicies a binding is charged with (libs/usage
 * cluster-overrides.ts; docs/concepts/binding-cost.md#overridepolicies): watches of both kinds and of
 * Karmada's Clusters on the Karmada API server, and the binding's template, read only when a policy's
 * resource selectors could select it. A binding whose overrides cannot be told (a watch not listed yet
 * or failing, its template unreadable, a target cluster not seen yet) throws OverridesUnknown: the
 * webhook fails closed, the reconciler retries. A Karmada API server that serves neither policy kind
 * has no overrides to apply.
 */
import type * as k8s from '@kubernetes/client-node';
import {
  CLUSTER,
  CLUSTER_OVERRIDE_POLICY,
  describeError,
  isApiStatus,
  isJsonObject,
  OVERRIDE_POLICY,
  type Cluster,
  type ResourceBinding,
} from '#api';
import { templateRefOf, withClusterOverrides, type MemberLabels, type TemplateRef } from '#quota';
import { clusterOverrides } from '#usage';
import { customObjectInformer } from './dependencies.js';
import type { StoreCallOptions } from './quota-store.js';
import { ResilientInformer } from './resilient-informer.js';
import { inReadBatches, TEMPLATE_PLURALS, TemplateReader } from './template-reader.js';

/** Templates kept (what a patch reads: labels and spec); cleared when full. */
const CACHE_LIMIT = 2_000;

/** Thrown when a binding's overrides cannot be told; the message says what to fix. */
export class OverridesUnknown extends Error {}

type Policy = k8s.KubernetesObject & { spec?: unknown };

/** One watched kind: its cache and whether it can be trusted now. */
class Watched<T extends k8s.KubernetesObject> {
  readonly cache: k8s.ObjectCache<T>;
  private readonly watch: ResilientInformer<T>;
  /** undefined once listed; else why not (not listed yet, or the watch's failure). */
  problem?: string = 'not listed yet';
  /** The kind is not served (no CRD): no objects of it exist. */
  private notServed = false;

  constructor(
    karmada: k8s.KubeConfig,
    readonly resource: { group: string; version: string; plural: string },
  ) {
    const informer = customObjectInformer<T>(karmada, resource);
    this.cache = informer;
    this.watch = new ResilientInformer<T>(
      informer,
      {
        upsert: () => undefined,
        remove: () => undefined,
        synced: () => {
          this.problem = undefined;
          this.notServed = false;
        },
        failed: (err) => {
          this.notServed = isApiStatus(err, 404);
          this.problem = this.notServed ? undefined : describeError(err);
        },
      },
      10_000,
    );
  }

  list(namespace?: string): readonly T[] {
    if (this.problem !== undefined)
      throw new OverridesUnknown(
        `the watch of ${this.resource.plural}.${this.resource.group} on the Karmada API server is not ` +
          `ready (${this.problem}), so what OverridePolicies make the members run cannot be charged; ` +
          `karmada-quota needs list and watch on it`,
      );
    return this.notServed ? [] : this.cache.list(namespace);
  }

  start = (): Promise<void> => this.watch.start();
  stop = (): Promise<void> => this.watch.stop();
}

export class BindingOverrides {
  private readonly clusterPolicies: Watched<Policy>;
  private readonly policies: Watched<Policy>;
  private readonly clusters: Watched<Cluster & k8s.KubernetesObject>;
  private readonly templates: TemplateReader<Readonly<Record<string, unknown>>>;

  constructor(karmada: k8s.KubeConfig) {
    this.clusterPolicies = new Watched(karmada, CLUSTER_OVERRIDE_POLICY);
    this.policies = new Watched(karmada, OVERRIDE_POLICY);
    this.clusters = new Watched(karmada, CLUSTER);
    // What a patch or a selector reads of a template: its kind, labels and spec.
    this.templates = new TemplateReader(
      karmada,
      ({ apiVersion, kind, metadata, ...rest }) => ({
        apiVersion,
        kind,
        metadata: { name: metadata?.name, namespace: metadata?.namespace, labels: metadata?.labels ?? {} },
        spec: (rest as { spec?: unknown }).spec,
      }),
      CACHE_LIMIT,
    );
  }

  private listed?: Promise<unknown>;

  /** Starts the watches; a binding a policy may change waits for their first list within its deadline. */
  onApplicationBootstrap(): void {
    this.listed ??= Promise.all([this.clusterPolicies.start(), this.policies.start(), this.clusters.start()]);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([this.clusterPolicies.stop(), this.policies.stop(), this.clusters.stop()]);
  }

  /**
   * Each member cluster's labels as the Cluster watch lists them, for caps that select members by
   * label (libs/quota member-caps.ts); nothing while the watch cannot tell.
   */
  memberLabels(): { members?: MemberLabels } {
    try {
      const clusters = this.clusters.list();
      return {
        members: new Map(clusters.map((c) => [c.metadata?.name ?? '', { ...(c.metadata?.labels ?? {}) }])),
      };
    } catch {
      return {};
    }
  }

  /**
   * Could an override change what this binding's clusters run? True when a watched policy may select
   * its template, and while the watches cannot tell (apply then says why).
   */
  mayChange(rb: ResourceBinding): boolean {
    const ref = scheduled(rb) ? templateRefOf(rb) : undefined;
    if (ref === undefined) return false;
    try {
      return this.candidates(ref).some((list) => list.length > 0);
    } catch {
      return true;
    }
  }

  /**
   * Could an override change what the workload `kind` `namespace/name` runs, whatever its apiVersion
   * (the scheduler-estimator knows no more of it)? True while the watches cannot tell.
   */
  mayChangeWorkload(namespace: string, kind: string, name: string): boolean {
    try {
      const [cluster, namespaced] = this.candidates({ apiVersion: '', kind, namespace, name }, true);
      return cluster.length > 0 || namespaced.length > 0;
    } catch {
      return true;
    }
  }

  /** The bindings as charged with their overrides (the same objects where none applies). */
  async apply<T extends ResourceBinding | undefined>(
    bindings: readonly T[],
    options: StoreCallOptions = {},
  ): Promise<T[]> {
    const result = [...bindings];
    const needed = result.flatMap((rb, i) => {
      const ref = rb && scheduled(rb) ? templateRefOf(rb) : undefined;
      return ref ? [{ i, ref }] : [];
    });
    if (needed.length === 0) return result;
    await this.firstList(options);
    // Karmada's Clusters by name, read once per call, only when a policy may apply.
    let clusters: Map<string, Cluster> | undefined;
    await inReadBatches(needed, async ({ i, ref }) => {
      const rb = result[i]!;
      const [cluster, namespaced] = this.candidates(ref);
      if (cluster.length === 0 && namespaced.length === 0) return;
      const policies = { cluster, namespaced };
      const template = await this.template(ref, options);
      if (template === undefined) return; // gone: its binding is going too
      clusters ??= new Map(this.clusters.list().map((c) => [c.metadata?.name ?? '', c]));
      const overrides = clusterOverrides({ binding: rb, template, policies, clusters });
      if ('error' in overrides)
        throw new OverridesUnknown(`${overrides.error}; the change is refused until it is`);
      result[i] = withClusterOverrides(rb, overrides) as T;
    });
    return result;
  }

  /** The ClusterOverridePolicies and the namespace's OverridePolicies that may select the template. */
  private candidates(ref: TemplateRef, anyVersion = false): [readonly Policy[], readonly Policy[]] {
    return [
      this.clusterPolicies.list().filter((p) => maySelect(p, ref, anyVersion)),
      this.policies.list(ref.namespace).filter((p) => maySelect(p, ref, anyVersion)),
    ];
  }

  /** Waits, until the deadline at most, for the watches' first list (a service just started). */
  private async firstList({ deadline }: StoreCallOptions): Promise<void> {
    this.onApplicationBootstrap();
    const wait = deadline === undefined ? 10_000 : deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.listed,
      new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, wait)))),
    ]);
    clearTimeout(timer);
  }

  private async template(ref: TemplateRef, options: StoreCallOptions) {
    try {
      return await this.templates.read(ref, options);
    } catch (err) {
      throw new OverridesUnknown(
        `cannot read ${ref.kind} ${ref.namespace}/${ref.name}, which OverridePolicies change per member ` +
          `cluster: ${describeError(err)}; karmada-quota needs get on ${TEMPLATE_PLURALS[ref.kind]} in ` +
          `the Karmada API server`,
      );
    }
  }
}

const scheduled = (rb: ResourceBinding): boolean =>
  Array.isArray(rb.spec?.clusters) && rb.spec.clusters.length > 0;

/**
 * Could the policy's resource selectors select the template, by what the binding tells of it (kind,
 * namespace, name)? Label selectors need the template itself: they may.
 */
function maySelect(policy: Policy, ref: TemplateRef, anyVersion = false): boolean {
  const spec = isJsonObject(policy.spec) ? policy.spec : {};
  const selectors = Array.isArray(spec['resourceSelectors']) ? spec['resourceSelectors'] : [];
  if (selectors.length === 0) return true;
  return selectors.some(
    (s) =>
      isJsonObject(s) &&
      (anyVersion || s['apiVersion'] === ref.apiVersion) &&
      s['kind'] === ref.kind &&
      (!s['namespace'] || s['namespace'] === ref.namespace) &&
      (!s['name'] || s['name'] === ref.name),
  );
}
