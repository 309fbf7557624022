/**
 * What a ResourceBinding is charged: the one place that answers "what does a binding cost". A binding
 * is never charged less than what Karmada may apply to the member clusters for it, as far as the
 * binding describes it. The rules, case by case, are docs/concepts/binding-cost.md#replicas and the
 * sections after it; the cases where the rule does not hold are listed in
 * docs/concepts/binding-cost.md#what-the-charge-does-not-bound. Zero entries are dropped from the
 * charge (absent means zero everywhere in this library).
 */
import {
  describeFieldError,
  excessOf,
  maskList,
  Quantity,
  parseResourceList,
  removeZeros,
  type ResourceList,
} from '#quantity';
import { isJsonObject, type KarmadaQuota, type ResourceBinding } from '#api';
import { isScoped } from './scopes.js';
import { quotaName } from './state.js';
import { capsAnyMember, onMember } from './member-caps.js';
import {
  LEGACY_COUNT_NAMES,
  LIMITS_PREFIX,
  quotaNamesForRequest,
  REQUESTS_PREFIX,
} from './resource-names.js';

// The library index lists it with the charge.
export { LEGACY_COUNT_NAMES };

export interface BindingCharge {
  /** Quota name -> amount, zero entries removed. Entries with errors are left out. */
  charge: ResourceList;
  /**
   * One message per problem in the binding, each naming its field, e.g.
   * `spec.replicaRequirements.resourceRequest[cpu]: invalid quantity "lots": ...`. Callers should deny
   * a binding whose charge has errors: the charge is incomplete.
   */
  errors: string[];
}

/** One pod template of a binding, as charged. */
export interface BindingTemplate {
  /** The component name, or undefined for the single template of `spec.replicaRequirements`. */
  component?: string;
  /** Field path of the template's requirements, e.g. `spec.components[1].replicaRequirements`. */
  path: string;
  /** Pods charged for this template, over all target clusters. */
  replicas: number;
  /** The raw wire `resourceRequest` (quantities as strings or numbers), or undefined. */
  resourceRequest: unknown;
  /** The template's priority class (a component without one inherits `spec.replicaRequirements`'). */
  priorityClassName?: string;
  /** The one target cluster this entry charges, for a cluster an OverridePolicy changes. */
  cluster?: string;
}

/**
 * What the OverridePolicies that apply to a binding make one of its target clusters run, where that
 * differs from the binding's own description (single-template bindings of kinds Karmada interprets).
 */
export interface ClusterOverride {
  cluster: string;
  /** The replicas the overridden workload declares there, when an override changes them. */
  replicas?: number;
  /** One replica's requests there (resource name -> quantity), when an override changes them. */
  resourceRequest?: Readonly<Record<string, string>>;
  /** The policies that changed it, `OverridePolicy ns/name` or `ClusterOverridePolicy name`. */
  policies: readonly string[];
}

/*
 * The overrides travel with the binding as it is judged, never on the wire: a symbol key no JSON
 * carries, set only by withClusterOverrides (like withTemplateClass's class, read by whoever charges).
 */
const CLUSTER_OVERRIDES = Symbol('karmada-quota cluster overrides');
type WithOverrides = ResourceBinding & { [CLUSTER_OVERRIDES]?: readonly ClusterOverride[] };

/** The binding as charged with what OverridePolicies make its clusters run (none: the binding itself). */
export function withClusterOverrides(
  rb: ResourceBinding,
  overrides: readonly ClusterOverride[],
): ResourceBinding {
  if (overrides.length === 0 && clusterOverridesOf(rb).length === 0) return rb;
  return { ...rb, [CLUSTER_OVERRIDES]: overrides } as WithOverrides;
}

/** The cluster overrides a binding was given by withClusterOverrides; none for a wire object. */
export const clusterOverridesOf = (rb: ResourceBinding): readonly ClusterOverride[] =>
  (rb as WithOverrides)[CLUSTER_OVERRIDES] ?? [];

/** Well-known kinds -> plural resource name. Anything else: `guessPlural`. */
export const KNOWN_PLURALS: Readonly<Record<string, string>> = {
  // core
  ConfigMap: 'configmaps',
  Endpoints: 'endpoints',
  Event: 'events',
  LimitRange: 'limitranges',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  Pod: 'pods',
  PodTemplate: 'podtemplates',
  ReplicationController: 'replicationcontrollers',
  ResourceQuota: 'resourcequotas',
  Secret: 'secrets',
  Service: 'services',
  ServiceAccount: 'serviceaccounts',
  // apps
  ControllerRevision: 'controllerrevisions',
  DaemonSet: 'daemonsets',
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  // batch
  CronJob: 'cronjobs',
  Job: 'jobs',
  // networking.k8s.io, discovery.k8s.io
  EndpointSlice: 'endpointslices',
  Ingress: 'ingresses',
  IngressClass: 'ingressclasses',
  NetworkPolicy: 'networkpolicies',
  // autoscaling, policy, rbac.authorization.k8s.io, coordination.k8s.io, storage.k8s.io
  HorizontalPodAutoscaler: 'horizontalpodautoscalers',
  PodDisruptionBudget: 'poddisruptionbudgets',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Lease: 'leases',
  CSIStorageCapacity: 'csistoragecapacities',
};

/**
 * Kubernetes' UnsafeGuessKindToResource, with one fix: a `y` after a vowel takes `s` (Gateway ->
 * gateways, as CRD generators pluralize), not `ies`. Lowercase; `...endpoints` stays; `...s` -> `...ses`;
 * consonant + `y` -> `...ies`; otherwise `+s`.
 */
export function guessPlural(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular.length === 0 || singular.endsWith('endpoints')) return singular;
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y') && !'aeiou'.includes(singular.charAt(singular.length - 2))) {
    return `${singular.slice(0, -1)}ies`;
  }
  return `${singular}s`;
}

/** `apps/v1` -> `apps`; `v1` -> `` (core). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The object-count quota name of a kind: `count/deployments.apps`, `count/services`. */
export function countResourceName(apiVersion: string, kind: string): string {
  const group = groupOf(apiVersion);
  const plural = Object.hasOwn(KNOWN_PLURALS, kind) ? (KNOWN_PLURALS[kind] as string) : guessPlural(kind);
  return group === '' ? `count/${plural}` : `count/${plural}.${group}`;
}

/** A replica count from the wire: absent -> 0; anything but a whole number >= 0 is an error (-> 0). */
function readCount(value: unknown, field: string, errors: string[]): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  errors.push(`${field}: must be a whole number of 0 or more, got ${JSON.stringify(value)}`);
  return 0;
}

function readArray(value: unknown, field: string, errors: string[]): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  errors.push(`${field}: must be a list, got ${typeof value}`);
  return [];
}

function readString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Whether Karmada divides spec.replicas over the clusters. Anything but an explicit Divided is
 * Duplicated, the larger charge: Karmada itself reads an absent `replicaScheduling` as Duplicated.
 */
function isDivided(placement: unknown): boolean {
  if (!isJsonObject(placement)) return false;
  const scheduling = placement['replicaScheduling'];
  return isJsonObject(scheduling) && scheduling['replicaSchedulingType'] === 'Divided';
}

/** The clusters Karmada scheduled the binding to (`spec.clusters[].name`, named ones only). */
export function scheduledClusterNames(rb: ResourceBinding): Set<string> {
  const clusters: unknown = rb?.spec?.clusters;
  const names = new Set<string>();
  if (!Array.isArray(clusters)) return names;
  for (const target of clusters) {
    if (isJsonObject(target) && typeof target['name'] === 'string' && target['name'] !== '')
      names.add(target['name']);
  }
  return names;
}

/**
 * The clusters a binding's workload is being moved away from while their copy still runs: each
 * `spec.gracefulEvictionTasks[].fromCluster` not (or no longer) in `spec.clusters`, once, with the
 * task's `replicas` when it has them.
 */
export function evictedCopies(
  rb: ResourceBinding,
  errors: string[],
): { cluster: string; replicas?: number }[] {
  const spec: unknown = rb?.spec;
  const tasks = isJsonObject(spec) ? spec['gracefulEvictionTasks'] : undefined;
  if (tasks === undefined || tasks === null) return []; // the common case, on every charge
  const targets = scheduledClusterNames(rb);
  const found = new Map<string, { cluster: string; replicas?: number }>();
  readArray(tasks, 'spec.gracefulEvictionTasks', errors).forEach((task, i) => {
    if (!isJsonObject(task)) return;
    const cluster = readString(task['fromCluster']);
    if (cluster === undefined || targets.has(cluster) || found.has(cluster)) return;
    const raw = task['replicas'];
    found.set(
      cluster,
      raw === undefined || raw === null
        ? { cluster }
        : { cluster, replicas: readCount(raw, `spec.gracefulEvictionTasks[${i}].replicas`, errors) },
    );
  });
  return [...found.values()];
}

/**
 * The binding's overridden target clusters with the share of its replicas each has without the
 * override: `spec.clusters[].replicas`, at least `spec.replicas` when Duplicated (older Karmada gives
 * every cluster the full count), at least 1 for a bare Pod.
 */
function overriddenClusters(
  rb: ResourceBinding,
  clusters: readonly unknown[],
  declared: number,
): { override: ClusterOverride; share: number }[] {
  const overrides = clusterOverridesOf(rb);
  if (overrides.length === 0) return [];
  const divided = isDivided(rb.spec?.placement);
  const pod = isCorePod(rb);
  return overrides.flatMap((override) => {
    const target = clusters.find((c) => isJsonObject(c) && c['name'] === override.cluster);
    if (!isJsonObject(target)) return [];
    const share = shareOf(target, divided, declared);
    return [{ override, share: pod ? Math.max(1, share) : share }];
  });
}

/**
 * A target cluster's share of the binding's replicas: its `spec.clusters[].replicas`; Duplicated, at
 * least `spec.replicas` (older Karmada gives every cluster the full count).
 */
function shareOf(target: Readonly<Record<string, unknown>>, divided: boolean, declared: number): number {
  const assigned = readCount(target['replicas'], 'spec.clusters[].replicas', []);
  return divided ? assigned : Math.max(declared, assigned);
}

function isCorePod(rb: ResourceBinding): boolean {
  const resource: unknown = rb.spec?.resource;
  return (
    isJsonObject(resource) &&
    resource['kind'] === 'Pod' &&
    groupOf(String(resource['apiVersion'] ?? '')) === ''
  );
}

/**
 * The binding's pod templates as charged: its components when it has any, else the single template of
 * `spec.replicas`/`spec.replicaRequirements` (returned even with 0 replicas, e.g. for a ConfigMap).
 * Problems reading replica counts are appended to `errors`.
 */
export function bindingTemplates(rb: ResourceBinding, errors: string[] = []): BindingTemplate[] {
  const spec: unknown = rb?.spec;
  if (!isJsonObject(spec)) return [];
  const clusters = readArray(spec['clusters'], 'spec.clusters', errors);
  const copies = Math.max(1, clusters.length);
  const evictions = evictedCopies(rb, errors);
  const topRequirements = isJsonObject(spec['replicaRequirements']) ? spec['replicaRequirements'] : {};
  const topPriority = readString(topRequirements['priorityClassName']);
  const components = readArray(spec['components'], 'spec.components', errors);

  if (components.length === 0) {
    let scheduled = 0;
    clusters.forEach((cluster, i) => {
      if (isJsonObject(cluster))
        scheduled += readCount(cluster['replicas'], `spec.clusters[${i}].replicas`, errors);
    });
    const declared = readCount(spec['replicas'], 'spec.replicas', errors);
    const applied = isDivided(spec['placement']) ? declared : declared * copies;
    const evicted = evictions.reduce((sum, task) => sum + (task.replicas ?? declared), 0);
    let replicas = Math.max(applied, scheduled) + evicted;
    if (isCorePod(rb)) replicas = Math.max(replicas, copies + evictions.length);
    const template = {
      path: 'spec.replicaRequirements',
      resourceRequest: topRequirements['resourceRequest'],
      priorityClassName: topPriority,
    };
    const overridden = overriddenClusters(rb, clusters, declared);
    const moved = overridden.reduce((sum, entry) => sum + entry.share, 0);
    return [
      { ...template, replicas: Math.max(0, replicas - moved) },
      ...overridden.map(({ override, share }) => ({
        ...template,
        path: `spec.clusters[${override.cluster}] as overridden by ${override.policies.join(', ')}`,
        cluster: override.cluster,
        replicas: override.replicas ?? share,
        resourceRequest: override.resourceRequest ?? template.resourceRequest,
      })),
    ];
  }

  return components.map((raw, i): BindingTemplate => {
    const component = isJsonObject(raw) ? raw : {};
    const name = readString(component['name']) ?? `#${i}`;
    const declared = readCount(component['replicas'], `spec.components[${i}].replicas`, errors);
    let assigned = 0;
    clusters.forEach((cluster, j) => {
      if (!isJsonObject(cluster)) return;
      readArray(cluster['components'], `spec.clusters[${j}].components`, errors).forEach((target, k) => {
        if (isJsonObject(target) && target['name'] === name) {
          assigned += readCount(target['replicas'], `spec.clusters[${j}].components[${k}].replicas`, errors);
        }
      });
    });
    const requirements = isJsonObject(component['replicaRequirements'])
      ? component['replicaRequirements']
      : {};
    return {
      component: name,
      path: `spec.components[${i}].replicaRequirements`,
      replicas: Math.max(declared * copies, assigned) + declared * evictions.length,
      resourceRequest: requirements['resourceRequest'],
      priorityClassName: readString(requirements['priorityClassName']) ?? topPriority,
    };
  });
}

/** The binding's charge (docs/concepts/binding-cost.md). Never throws; problems are returned in `errors`. */
export function bindingCharge(rb: ResourceBinding): BindingCharge {
  const errors: string[] = [];
  const totals = new Map<string, Quantity>();
  const add = (key: string, amount: Quantity): void => {
    const current = totals.get(key);
    totals.set(key, current === undefined ? amount : current.add(amount));
  };

  const spec: unknown = rb?.spec;
  if (!isJsonObject(spec)) {
    return { charge: {}, errors: ['spec: required: a ResourceBinding must have a spec'] };
  }

  let pods = 0;
  for (const template of bindingTemplates(rb, errors)) {
    pods += template.replicas;
    const field = `${template.path}.resourceRequest`;
    const parsed = parseResourceList(template.resourceRequest, field);
    errors.push(...parsed.errors.map(describeFieldError));
    for (const [name, perReplica] of Object.entries(parsed.list)) {
      if (perReplica.sign() < 0) {
        errors.push(
          `${field}[${name}]: must be greater than or equal to 0, got ${JSON.stringify(perReplica.toString())}`,
        );
        continue;
      }
      const total = perReplica.mul(BigInt(template.replicas));
      for (const key of quotaNamesForRequest(name)) add(key, total);
    }
  }
  add('pods', Quantity.fromInt(BigInt(pods)));

  const resource = spec['resource'];
  if (!isJsonObject(resource)) {
    errors.push('spec.resource: required: the binding must reference the resource it propagates');
  } else {
    const kind = readString(resource['kind']);
    const apiVersion = typeof resource['apiVersion'] === 'string' ? resource['apiVersion'] : undefined;
    if (kind === undefined) errors.push('spec.resource.kind: required: the kind of the propagated resource');
    if (apiVersion === undefined || apiVersion === '') {
      errors.push('spec.resource.apiVersion: required: the apiVersion of the propagated resource');
    }
    if (kind !== undefined && apiVersion !== undefined && apiVersion !== '') {
      const clusters = Array.isArray(spec['clusters']) ? spec['clusters'] : [];
      const evicted = evictedCopies(rb, []).length;
      const copies = Quantity.fromInt(BigInt(Math.max(1, clusters.length) + evicted));
      add(countResourceName(apiVersion, kind), copies);
      if (groupOf(apiVersion) === '' && Object.hasOwn(LEGACY_COUNT_NAMES, kind)) {
        add(LEGACY_COUNT_NAMES[kind] as string, copies);
      }
    }
  }

  const charge: ResourceList = {};
  for (const key of [...totals.keys()].sort()) {
    const amount = totals.get(key) as Quantity;
    if (!amount.isZero()) charge[key] = amount;
  }
  return { charge, errors };
}

/**
 * The binding's charge split by target cluster: each cluster in `spec.clusters` is charged its share
 * (`spec.clusters[].replicas`; Duplicated: at least `spec.replicas`; what an override makes it run),
 * each evicted copy's cluster that copy, and `rest` what is left (replicas not assigned yet, a
 * scale-up Karmada has not split yet). The clusters' shares and `rest` sum to bindingCharge's charge,
 * or more in an odd Duplicated assignment (`rest` is then empty). Undefined for a binding with
 * `spec.components`, whose charge is not split per cluster. Each share is the charge of the binding
 * as if scheduled to that one cluster alone: one rule (bindingCharge) for both.
 */
export function chargeByCluster(rb: ResourceBinding): ChargeSplit | undefined {
  if (splits.has(rb)) return splits.get(rb);
  const split = splitCharge(rb);
  splits.set(rb, split);
  return split;
}

export interface ChargeSplit {
  clusters: ReadonlyMap<string, ResourceList>;
  rest: ResourceList;
}

/*
 * A reconcile asks for each binding's split several times (its reservation, its detection, each
 * quota of the namespace): kept per binding object, which no one changes once decoded.
 */
const splits = new WeakMap<ResourceBinding, ChargeSplit | undefined>();

function splitCharge(rb: ResourceBinding): ChargeSplit | undefined {
  const spec: unknown = rb?.spec;
  if (!isJsonObject(spec)) return undefined;
  if (Array.isArray(spec['components']) && spec['components'].length > 0) return undefined;
  const declared = readCount(spec['replicas'], 'spec.replicas', []);
  const divided = isDivided(spec['placement']);
  const overrides = clusterOverridesOf(rb);
  const alone = (cluster: string, replicas: number): ResourceList => {
    const single = {
      ...rb,
      spec: {
        ...spec,
        gracefulEvictionTasks: undefined,
        replicas,
        clusters: [{ name: cluster, replicas }],
        placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
      },
    } as unknown as ResourceBinding;
    const override = overrides.filter((o) => o.cluster === cluster);
    return bindingCharge(withClusterOverrides(single, override)).charge;
  };
  const clusters = new Map<string, ResourceList>();
  for (const target of readArray(spec['clusters'], 'spec.clusters', [])) {
    if (!isJsonObject(target) || typeof target['name'] !== 'string' || clusters.has(target['name'])) continue;
    clusters.set(target['name'], alone(target['name'], shareOf(target, divided, declared)));
  }
  for (const { cluster, replicas } of evictedCopies(rb, []))
    clusters.set(cluster, alone(cluster, replicas ?? declared));
  let rest = bindingCharge(rb).charge;
  for (const share of clusters.values()) rest = excessOf(rest, share);
  return { clusters, rest };
}

/**
 * The clusters a binding's charge covers: those Karmada scheduled it to (`spec.clusters[].name`) and
 * those it is moving away from while their copy still runs (`spec.gracefulEvictionTasks`, charged on
 * top until the task goes: evictedCopies).
 */
export function targetClusterNames(rb: ResourceBinding): ReadonlySet<string> {
  const names = scheduledClusterNames(rb);
  for (const { cluster } of evictedCopies(rb, [])) names.add(cluster);
  return names;
}

/**
 * The binding's share on each member it targets, under the member keys (member-caps.ts): its
 * chargeByCluster share there, or for a binding whose charge is not split, its whole charge on each
 * target cluster (never less than a member may run).
 */
export function memberShares(rb: ResourceBinding): ResourceList {
  if (shares.has(rb)) return shares.get(rb)!;
  const split = chargeByCluster(rb);
  let found: ResourceList = {};
  if (split !== undefined) {
    for (const [member, share] of split.clusters) found = { ...found, ...onMember(share, member) };
  } else {
    const charge = bindingCharge(rb).charge;
    for (const member of targetClusterNames(rb)) found = { ...found, ...onMember(charge, member) };
  }
  found = removeZeros(found);
  shares.set(rb, found);
  return found;
}

const shares = new WeakMap<ResourceBinding, ResourceList>();

/**
 * `charge` (the binding's bindingCharge) with its memberShares on the member keys among `keys` (a
 * quota's hard keys); `charge` itself when no key caps a member, as for most quotas.
 */
export function withMemberShares(
  rb: ResourceBinding,
  charge: ResourceList,
  keys: Iterable<string>,
): ResourceList {
  if (!capsAnyMember(keys)) return charge;
  return { ...charge, ...maskList(memberShares(rb), [...keys]) };
}

/** Resources whose request is mandatory once a quota tracks them (Kubernetes' "validationSet"). */
const REQUIRED_WHEN_TRACKED = ['cpu', 'memory'] as const;

/**
 * ResourceQuota's "must specify" rule: when the quota tracks cpu (`cpu` or `requests.cpu` in hard) or
 * memory, every template of the binding that has replicas must declare a request for it. Returns one
 * message per template and resource, each naming `requests.<resource>`; [] when nothing is missing.
 * `quotaNamed` only improves the message.
 */
export function missingRequestErrors(
  rb: ResourceBinding,
  hardKeys: Iterable<string>,
  quotaNamed?: string,
): string[] {
  const hard = new Set(hardKeys);
  const tracked = REQUIRED_WHEN_TRACKED.filter((r) => hard.has(r) || hard.has(REQUESTS_PREFIX + r));
  if (tracked.length === 0) return [];
  const namespace = rb?.metadata?.namespace ?? '';
  const bindingName = rb?.metadata?.name ?? '';
  const resource: unknown = rb?.spec?.resource;
  const workload = isJsonObject(resource)
    ? `${String(resource['kind'] ?? 'workload')} ${String(resource['name'] ?? '')}`.trim()
    : 'workload';
  const binding = namespace ? `${namespace}/${bindingName}` : bindingName;
  const quota = quotaNamed ? `quota ${quotaNamed}` : 'a KarmadaQuota of this namespace';

  const messages: string[] = [];
  for (const template of bindingTemplates(rb)) {
    if (template.replicas <= 0) continue;
    const requests = isJsonObject(template.resourceRequest) ? template.resourceRequest : {};
    for (const name of tracked) {
      if (Object.hasOwn(requests, name)) continue;
      const subject =
        template.component === undefined ? workload : `component ${template.component} of ${workload}`;
      messages.push(
        `must specify requests.${name} for ${subject} (ResourceBinding ${binding}): ${quota} tracks ${name}, ` +
          `so every replica must declare a ${name} request; set resources.requests.${name} on its containers ` +
          `(${template.path}.resourceRequest has none)`,
      );
    }
  }
  return messages;
}

/**
 * Kinds that run pods but for which Karmada's default resource interpreter declares no replicas (it
 * declares them for the kinds of karmada-interpreter.ts only): their bindings carry neither
 * `spec.replicas` nor `spec.replicaRequirements`, so they are charged their object count only.
 * `<group>/<Kind>`, the core group empty. `extensions` is the group older clusters served them in.
 */
const PODS_WITHOUT_DECLARED_REPLICAS: ReadonlySet<string> = new Set([
  'apps/DaemonSet',
  'batch/CronJob',
  '/ReplicationController',
  'extensions/DaemonSet',
  'extensions/ReplicaSet',
]);

/** Does a quota key limit what pods use (`pods`, a request or limit of theirs)? Object counts do not. */
function limitsPods(key: string): boolean {
  return (
    key === 'pods' ||
    key.startsWith(REQUESTS_PREFIX) ||
    key.startsWith(LIMITS_PREFIX) ||
    quotaNamesForRequest(key).length > 0
  );
}

/**
 * How many copies of a binding run pods its charge cannot bound: `max(1, len(spec.clusters))` for a
 * kind of PODS_WITHOUT_DECLARED_REPLICAS whose binding declares no replicas (no `spec.replicas`,
 * `spec.replicaRequirements`, `spec.components` nor scheduled replicas: a ResourceInterpreterCustomization
 * declaring them makes it bounded); 0 for any other binding.
 */
function unboundedCopies(rb: ResourceBinding | undefined): number {
  const spec: unknown = rb?.spec;
  if (!isJsonObject(spec) || !isJsonObject(spec['resource'])) return 0;
  const resource = spec['resource'];
  const kind = `${groupOf(String(resource['apiVersion'] ?? ''))}/${String(resource['kind'] ?? '')}`;
  if (!PODS_WITHOUT_DECLARED_REPLICAS.has(kind)) return 0;
  const declared =
    (spec['replicas'] !== undefined && spec['replicas'] !== null) ||
    isJsonObject(spec['replicaRequirements']) ||
    (Array.isArray(spec['components']) && spec['components'].length > 0) ||
    bindingTemplates(rb!).some((template) => template.replicas > 0);
  if (declared) return 0;
  return Math.max(1, Array.isArray(spec['clusters']) ? spec['clusters'].length : 0);
}

/**
 * Why `quota` refuses a binding whose pods it cannot bound, or undefined. The rule, beside "must
 * specify": a binding of a kind that runs pods but declares no replicas (unboundedCopies) is charged
 * nothing for its pods, so a quota limiting `pods`, a compute resource or any `requests.*`/`limits.*`
 * key would never bound them; such a quota refuses a CREATE, or an UPDATE that adds copies (more
 * target clusters). A scoped quota refuses it too: the binding does not carry its pods' priority
 * class, so any scope may select them. Custom kinds without a replica interpreter are not known to
 * run pods and are admitted (documented as an exception). `old` is the stored object of an UPDATE.
 */
function unboundedPodsError(
  rb: ResourceBinding,
  old: ResourceBinding | undefined,
  quota: KarmadaQuota,
): string | undefined {
  const copies = unboundedCopies(rb);
  if (copies === 0 || copies <= unboundedCopies(old)) return undefined;
  const limited = Object.keys(quota.spec?.hard ?? {})
    .filter(limitsPods)
    .sort();
  if (limited.length === 0) return undefined;
  const resource = rb.spec!.resource as unknown as Record<string, unknown>;
  const apiVersion = String(resource['apiVersion'] ?? '');
  const kind = String(resource['kind'] ?? '');
  const namespace = rb.metadata?.namespace ?? '';
  const bindingName = rb.metadata?.name ?? '';
  const binding = namespace ? `${namespace}/${bindingName}` : bindingName;
  const quotaName = quota.metadata?.name ?? '';
  const scope = isScoped(quota)
    ? `; its scopeSelector may select these pods, since the binding does not carry their priority class`
    : '';
  return (
    `cannot bound the pods of ${kind} ${String(resource['name'] ?? '')} (ResourceBinding ${binding}): ` +
    `Karmada declares no replicas for ${apiVersion} ${kind}, so the binding carries neither how many pods ` +
    `it runs nor their requests, and quota ${quotaName} limits ${limited.join(', ')}${scope}. Run such ` +
    `workloads in a namespace whose KarmadaQuotas limit only object counts (e.g. ` +
    `${countResourceName(apiVersion, kind)}), or declare their replicas and requests to Karmada with a ` +
    `ResourceInterpreterCustomization (replicaResource) for ${apiVersion} ${kind}`
  );
}

/**
 * Each of `quotas` (scoped or not) that refuses a binding whose pods it cannot bound, by name in the
 * given order, with its message (see unboundedPodsError); `{}` when none. `old` is the stored object
 * of an UPDATE.
 */
export function unboundedPodsRefusals(
  rb: ResourceBinding,
  old: ResourceBinding | undefined,
  quotas: readonly KarmadaQuota[],
): Record<string, string> {
  const refusals: Record<string, string> = {};
  for (const quota of quotas) {
    const message = unboundedPodsError(rb, old, quota);
    if (message !== undefined) refusals[quotaName(quota)] = message;
  }
  return refusals;
}
