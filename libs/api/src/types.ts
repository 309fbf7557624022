/**
 * Wire types (JSON as the API server sends and accepts it) for the three kinds karmada-quota works with:
 * KarmadaQuota (ours), ResourceBinding and Cluster (Karmada's). The CRD files in libs/api/crds describe the
 * same shapes; see crds.ts.
 *
 * Quantities are strings on the wire ("100m", "2Gi"). The CRDs declare them int-or-string like core types do,
 * so an object written by hand with an unquoted integer (`pods: 10`) is stored and returned as a JSON number:
 * code reading quantities from the API server must accept both (e.g. `String(value)`).
 *
 * Timestamps are RFC 3339 strings. `metadata` uses client-node's V1ObjectMeta so objects are assignable to
 * client-node's KubernetesObject (informers, KubernetesObjectApi); note its Date-typed timestamps are strings
 * in raw JSON.
 */
import type { V1NodeSelector, V1ObjectMeta, V1Toleration } from '@kubernetes/client-node';

/** Group, version and names of an API resource. */
export interface ApiResourceInfo {
  readonly group: string;
  readonly version: string;
  /** `group/version`, as in an object's apiVersion. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
}

export const KARMADA_QUOTA = {
  group: 'quota.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  listKind: 'KarmadaQuotaList',
  plural: 'karmadaquotas',
  singular: 'karmadaquota',
  shortNames: ['kq'],
  namespaced: true,
} as const satisfies ApiResourceInfo;

/**
 * One quota over the namespaces a label selector picks (docs/concepts/cluster-quotas.md): a KarmadaQuota's
 * spec plus `namespaceSelector`, cluster-scoped.
 */
export const CLUSTER_KARMADA_QUOTA = {
  group: 'quota.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'ClusterKarmadaQuota',
  listKind: 'ClusterKarmadaQuotaList',
  plural: 'clusterkarmadaquotas',
  singular: 'clusterkarmadaquota',
  shortNames: ['ckq'],
  namespaced: false,
} as const satisfies ApiResourceInfo;

/**
 * A ClusterKarmadaQuota as the users of one namespace it selects may read it (docs/concepts/cluster-quotas.md):
 * the reconciler writes one per selected namespace, named as the cluster quota, read-only.
 */
export const APPLIED_CLUSTER_KARMADA_QUOTA = {
  group: 'quota.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'AppliedClusterKarmadaQuota',
  listKind: 'AppliedClusterKarmadaQuotaList',
  plural: 'appliedclusterkarmadaquotas',
  singular: 'appliedclusterkarmadaquota',
  shortNames: ['ackq'],
  namespaced: true,
} as const satisfies ApiResourceInfo;

/** The members' usage of a namespace by workload, as the reconciler records it for display. */
export const WORKLOAD_USAGE = {
  group: 'quota.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'WorkloadUsage',
  listKind: 'WorkloadUsageList',
  plural: 'workloadusages',
  singular: 'workloadusage',
  shortNames: [],
  namespaced: true,
} as const satisfies ApiResourceInfo;

export const RESOURCE_BINDING = {
  group: 'work.karmada.io',
  version: 'v1alpha2',
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  listKind: 'ResourceBindingList',
  plural: 'resourcebindings',
  singular: 'resourcebinding',
  shortNames: ['rb'],
  namespaced: true,
} as const satisfies ApiResourceInfo;

export const CLUSTER = {
  group: 'cluster.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'cluster.karmada.io/v1alpha1',
  kind: 'Cluster',
  listKind: 'ClusterList',
  plural: 'clusters',
  singular: 'cluster',
  shortNames: [],
  namespaced: false,
} as const satisfies ApiResourceInfo;

export const FEDERATED_RESOURCE_QUOTA = {
  group: 'policy.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'FederatedResourceQuota',
  listKind: 'FederatedResourceQuotaList',
  plural: 'federatedresourcequotas',
  singular: 'federatedresourcequota',
  shortNames: [],
  namespaced: true,
} as const satisfies ApiResourceInfo;

/** Karmada's per-cluster changes of a namespace's templates (read for the charge, never written). */
export const OVERRIDE_POLICY = {
  group: 'policy.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'OverridePolicy',
  listKind: 'OverridePolicyList',
  plural: 'overridepolicies',
  singular: 'overridepolicy',
  shortNames: ['op'],
  namespaced: true,
} as const satisfies ApiResourceInfo;

/** Karmada's per-cluster changes of templates in every namespace (read for the charge, never written). */
export const CLUSTER_OVERRIDE_POLICY = {
  group: 'policy.karmada.io',
  version: 'v1alpha1',
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'ClusterOverridePolicy',
  listKind: 'ClusterOverridePolicyList',
  plural: 'clusteroverridepolicies',
  singular: 'clusteroverridepolicy',
  shortNames: ['cop'],
  namespaced: false,
} as const satisfies ApiResourceInfo;

/** A resource.Quantity in its wire form, e.g. "100m", "2Gi", "10". */
export type Quantity = string;

/** Resource name -> quantity, as core/v1 ResourceList. */
export type ResourceList = Record<string, Quantity>;

/** metav1.Condition in its wire form (lastTransitionTime is an RFC 3339 string). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

// ---------------------------------------------------------------------------------------------------------
// KarmadaQuota (quota.karmada.io/v1alpha1)
// ---------------------------------------------------------------------------------------------------------

/**
 * A KarmadaQuota, or a ClusterKarmadaQuota (`kind` says which; it has no namespace and its spec has
 * `namespaceSelector`): the accounting treats both alike (docs/concepts/cluster-quotas.md).
 */
export interface KarmadaQuota {
  apiVersion?: typeof KARMADA_QUOTA.apiVersion;
  kind?: typeof KARMADA_QUOTA.kind | typeof CLUSTER_KARMADA_QUOTA.kind;
  metadata?: V1ObjectMeta;
  spec: KarmadaQuotaSpec;
  status?: KarmadaQuotaStatus;
}

export interface ClusterKarmadaQuota extends KarmadaQuota {
  kind?: typeof CLUSTER_KARMADA_QUOTA.kind;
  spec: ClusterKarmadaQuotaSpec;
}

export interface ClusterKarmadaQuotaSpec extends KarmadaQuotaSpec {
  /** The namespaces of the Karmada API server the quota spans, by their labels ({} selects all). */
  namespaceSelector: LabelSelector;
}

/**
 * The projection of a ClusterKarmadaQuota into one namespace it selects: its spec, and its status with
 * no claims and, of the lists naming namespaces, only this namespace's entries (libs/quota
 * applied-cluster-quota.ts).
 */
export interface AppliedClusterKarmadaQuota {
  apiVersion?: typeof APPLIED_CLUSTER_KARMADA_QUOTA.apiVersion;
  kind?: typeof APPLIED_CLUSTER_KARMADA_QUOTA.kind;
  metadata?: V1ObjectMeta;
  spec: ClusterKarmadaQuotaSpec;
  status?: Omit<KarmadaQuotaStatus, 'reservations'>;
}

export interface KarmadaQuotaList {
  apiVersion?: typeof KARMADA_QUOTA.apiVersion;
  kind?: typeof KARMADA_QUOTA.listKind;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: KarmadaQuota[];
}

export interface KarmadaQuotaSpec {
  /** Limits by resource name, summed over all member clusters. */
  hard: ResourceList;
  /** What a change the quota does not admit meets (docs/concepts/enforcement.md); absent is Deny. */
  enforcement?: Enforcement;
  scopeSelector?: ScopeSelector;
  /** Caps per member cluster inside `hard` (docs/concepts/member-caps.md); they may sum to more. */
  clusters?: MemberCap[];
}

/** What one member cluster may run of the quota: the member named, or each member a selector matches. */
export interface MemberCap {
  /** The member cluster (a cluster.karmada.io Cluster) by name; or set labelSelector. */
  name?: string;
  /** The members capped, each on its own, by their Cluster labels ({} selects every member). */
  labelSelector?: LabelSelector;
  /** Limits on that member, by resource name, as in `hard`. */
  hard: ResourceList;
}

/** metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}

export type Enforcement = 'Deny' | 'Warn' | 'DryRun';

export const ENFORCEMENTS = ['Deny', 'Warn', 'DryRun'] as const satisfies readonly Enforcement[];

/** Same semantics as core/v1 ResourceQuota scopeSelector. */
export interface ScopeSelector {
  matchExpressions?: ScopedResourceSelectorRequirement[];
}

export interface ScopedResourceSelectorRequirement {
  /** e.g. `PriorityClass`. */
  scopeName: string;
  operator: ScopeSelectorOperator;
  values?: string[];
}

export type ScopeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export const SCOPE_SELECTOR_OPERATORS = [
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
] as const satisfies readonly ScopeSelectorOperator[];

export interface KarmadaQuotaStatus {
  /** Limits in force (copy of spec.hard once reconciled). */
  hard?: ResourceList;
  /** Observed usage: sum over member clusters of what exists there. */
  used?: ResourceList;
  /** Sum of reservations[].reserved. */
  reserved?: ResourceList;
  /** Admitted but not (fully) observed yet. */
  reservations?: Reservation[];
  /** Per member cluster, sorted by name. */
  clusters?: ClusterUsage[];
  /**
   * For a quota capping members by label: the members whose labels its caps in `hard` were resolved
   * against, sorted (docs/concepts/member-caps.md).
   */
  capsResolvedFor?: string[];
  /**
   * A ClusterKarmadaQuota's: each namespace it selected when the reconciler counted it, with what
   * that namespace uses and reserves of it, sorted by namespace. Increases in a namespace not listed
   * are refused until it is counted (docs/concepts/cluster-quotas.md).
   */
  namespaces?: NamespaceUsage[];
  /** Changes this quota refused that are still wanted, oldest first (docs/concepts/waiting-changes.md). */
  waiting?: WaitingChangeStatus[];
  /** Changes admitted only because enforcement is Warn or DryRun, newest first (docs/concepts/enforcement.md). */
  wouldBeDenied?: WouldBeDeniedStatus[];
  conditions?: Condition[];
  observedGeneration?: number;
  /**
   * The resourceVersion of the ResourceBinding list the count came from (a ClusterKarmadaQuota's: the
   * oldest of its namespaces' lists): every binding change at or before it is counted. Never moves
   * down; not a change of its own (docs/concepts/accounting.md, "The count's version").
   */
  observedBindingsVersion?: string;
}

export interface Reservation {
  reservedBy: ReservedBy;
  /** The part of `charge` not yet observed in the member clusters. */
  reserved: ResourceList;
  /**
   * The binding's full charge (on this quota's keys) this reservation was admitted for: what makes
   * admission idempotent, since the same change seen twice finds it already held.
   */
  charge?: ResourceList;
  /** RFC 3339; set while the admitted charge is not yet seen on the persisted binding. */
  expirationTime?: string;
  /** 'Update' when the latest claim was admitted for an UPDATE of `reservedBy.uid`, held only while it is stored. */
  operation?: 'Update';
  /**
   * On an 'Update' claim: the newest resourceVersion of `reservedBy.uid` an admission relying on the
   * claim was decided against. Once the object is seen at a later one, every such update has landed
   * or can no longer land.
   */
  resourceVersion?: string;
}

export interface WaitingChangeStatus {
  /** The ResourceBinding whose write was refused. */
  binding: string;
  /** The increase it asked, on the exceeded keys. */
  requested: Record<string, string>;
  /** What was free on those keys at the latest refusal. */
  free: Record<string, string>;
  /** RFC 3339: waiting since. */
  since: string;
}

export interface WouldBeDeniedStatus {
  /** The ResourceBinding whose change was admitted. */
  binding: string;
  /** The quota's enforcement when it was admitted. */
  enforcement: Exclude<Enforcement, 'Deny'>;
  /** The refusal it would have met under Deny. */
  message: string;
  /** RFC 3339: when it was admitted. */
  at: string;
}

export interface ReservedBy {
  apiVersion: string;
  kind: string;
  /** The binding's namespace: set on a ClusterKarmadaQuota's claims, else the quota's own. */
  namespace?: string;
  name: string;
  uid?: string;
}

/** One namespace's part of a ClusterKarmadaQuota. */
export interface NamespaceUsage {
  namespace: string;
  /** The namespace's resourceVersion the reconciler counted it at. */
  resourceVersion?: string;
  used: ResourceList;
  reserved?: ResourceList;
}

export interface ClusterUsage {
  name: string;
  used: ResourceList;
  /** The member's caps in force (`spec.clusters[]`), when it has any. */
  hard?: ResourceList;
  /** What admitted changes hold on the member's caps beyond its observed usage. */
  reserved?: ResourceList;
  /** RFC 3339. */
  lastSyncTime: string;
  state: ClusterUsageState;
}

export type ClusterUsageState = 'Ready' | 'Stale' | 'Unreachable';

export const CLUSTER_USAGE_STATES = [
  'Ready',
  'Stale',
  'Unreachable',
] as const satisfies readonly ClusterUsageState[];

/** Condition types of KarmadaQuota.status.conditions. */
export const KarmadaQuotaConditionType = {
  Ready: 'Ready',
  ClustersSynced: 'ClustersSynced',
  OverQuota: 'OverQuota',
  RunningBeyondCharge: 'RunningBeyondCharge',
} as const;
export type KarmadaQuotaConditionType =
  (typeof KarmadaQuotaConditionType)[keyof typeof KarmadaQuotaConditionType];

// ---------------------------------------------------------------------------------------------------------
// ResourceBinding (work.karmada.io/v1alpha2): the fields karmada-quota reads, as Karmada's CRD types them.
// ---------------------------------------------------------------------------------------------------------

export interface ResourceBinding {
  apiVersion?: typeof RESOURCE_BINDING.apiVersion;
  kind?: typeof RESOURCE_BINDING.kind;
  metadata?: V1ObjectMeta;
  spec: ResourceBindingSpec;
  /** Not read by karmada-quota beyond conditions. */
  status?: ResourceBindingStatus;
}

export interface ResourceBindingSpec {
  /** The resource (workload) being propagated. */
  resource: ObjectReference;
  /** Replica count of the referencing resource (absent for workloads without replicas). */
  replicas?: number;
  /** Requirements of each replica. */
  replicaRequirements?: ReplicaRequirements;
  /** Multi-template workloads: requirements per pod template. */
  components?: Component[];
  /** Scheduling result: target member clusters. */
  clusters?: TargetCluster[];
  /** RFC 3339: a reschedule is wanted (Karmada's scheduler re-runs when it is after its last scheduling). */
  rescheduleTriggeredAt?: string;
  placement?: Placement;
}

/** Karmada work/v1alpha2 ObjectReference. */
export interface ObjectReference {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

export interface ReplicaRequirements {
  nodeClaim?: NodeClaim;
  /** Resources requested by each replica. */
  resourceRequest?: ResourceList;
  namespace?: string;
  priorityClassName?: string;
}

export interface NodeClaim {
  hardNodeAffinity?: V1NodeSelector;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
}

export interface Component {
  name: string;
  /** Replicas of this component (pod template). */
  replicas: number;
  replicaRequirements?: ComponentReplicaRequirements;
}

export interface ComponentReplicaRequirements {
  nodeClaim?: NodeClaim;
  resourceRequest?: ResourceList;
  priorityClassName?: string;
}

export interface TargetCluster {
  name: string;
  /** Replicas assigned to this cluster (absent for non-workload resources). */
  replicas?: number;
  /** Per-component assignment (Karmada master only; no release has it yet). */
  components?: TargetComponent[];
}

export interface TargetComponent {
  name: string;
  replicas: number;
}

/** PropagationPolicy placement, as copied into the binding. Only replicaScheduling is typed. */
export interface Placement {
  replicaScheduling?: ReplicaSchedulingStrategy;
  [field: string]: unknown;
}

export interface ReplicaSchedulingStrategy {
  /** Defaults to Divided. */
  replicaSchedulingType?: ReplicaSchedulingType;
  replicaDivisionPreference?: 'Aggregated' | 'Weighted';
  weightPreference?: unknown;
}

export type ReplicaSchedulingType = 'Duplicated' | 'Divided';

export interface ResourceBindingStatus {
  conditions?: Condition[];
  [field: string]: unknown;
}

// ---------------------------------------------------------------------------------------------------------
// FederatedResourceQuota (policy.karmada.io/v1alpha1): Karmada's own quota, which karmada-quota can serve
// (docs/operating/switch-from-frq.md). As Karmada v1.18's types have it.
// ---------------------------------------------------------------------------------------------------------

export interface FederatedResourceQuota {
  apiVersion?: typeof FEDERATED_RESOURCE_QUOTA.apiVersion;
  kind?: typeof FEDERATED_RESOURCE_QUOTA.kind;
  metadata?: V1ObjectMeta;
  spec: FederatedResourceQuotaSpec;
  status?: FederatedResourceQuotaStatus;
}

export interface FederatedResourceQuotaSpec {
  /** The limits summed over all member clusters. */
  overall: ResourceList;
  /** Per-cluster limits, which Karmada's sync controller applies as ResourceQuotas in those members. */
  staticAssignments?: { clusterName: string; hard: ResourceList }[];
}

export interface FederatedResourceQuotaStatus {
  overall?: ResourceList;
  overallUsed?: ResourceList;
  aggregatedStatus?: { clusterName: string; hard?: ResourceList; used?: ResourceList }[];
}

// ---------------------------------------------------------------------------------------------------------
// Cluster (cluster.karmada.io/v1alpha1, cluster-scoped), from Karmada's OpenAPI definitions.
// ---------------------------------------------------------------------------------------------------------

export interface Cluster {
  apiVersion?: typeof CLUSTER.apiVersion;
  kind?: typeof CLUSTER.kind;
  metadata?: V1ObjectMeta;
  spec: ClusterSpec;
  status?: ClusterStatus;
}

export interface ClusterSpec {
  id?: string;
  syncMode: ClusterSyncMode;
  /** hostname, hostname:port, IP or IP:port, or an https URL. */
  apiEndpoint?: string;
  /** Secret with `token` and `caBundle` for the member cluster. */
  secretRef?: LocalSecretReference;
  impersonatorSecretRef?: LocalSecretReference;
  insecureSkipTLSVerification?: boolean;
  /** http, https or socks5 proxy URL. */
  proxyURL?: string;
  proxyHeader?: Record<string, string>;
  provider?: string;
  region?: string;
  zone?: string;
  zones?: string[];
  taints?: Taint[];
  resourceModels?: unknown[];
}

export type ClusterSyncMode = 'Push' | 'Pull';

export interface LocalSecretReference {
  namespace: string;
  name: string;
}

/** core/v1 Taint in its wire form. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface ClusterStatus {
  kubernetesVersion?: string;
  apiEnablements?: ApiEnablement[];
  /** Condition `Ready` tells whether Karmada can reach the member cluster. */
  conditions?: Condition[];
  nodeSummary?: { totalNum?: number; readyNum?: number };
  resourceSummary?: {
    allocatable?: ResourceList;
    allocating?: ResourceList;
    allocated?: ResourceList;
    allocatableModelings?: { grade: number; count: number }[];
  };
  remedyActions?: string[];
}

export interface ApiEnablement {
  groupVersion: string;
  resources?: { name: string; kind: string }[];
}
