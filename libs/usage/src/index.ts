export {
  controllerOf,
  controllerRefOf,
  groupOf,
  isKubernetesGroup,
  OwnerIndex,
  POD,
  realPodLink,
  topLevelWorkload,
} from './attribution.js';
export type { ControllerRef, ObjectRef, OwnerLookup, WorkloadRef } from './attribution.js';
export { isChargeable, podRequests, podUsage, podWorkload, quotaRequests } from './pod-usage.js';
export type { PodUsage } from './pod-usage.js';
export { PODS, UsageLedger } from './ledger.js';
export type { NamespaceUsage, WorkloadUsage } from './ledger.js';
export {
  CLUSTERS_KEY,
  clusterNamespacesKey,
  clusterRemovedKey,
  clusterRepublishKey,
  clusterStateKey,
  clusterUsageVerdict,
  DELETED_BINDING_RETENTION_MS,
  deletedBindingsKey,
  decodeHealth,
  decodeReconcileJob,
  decodeSnapshot,
  encodeHealth,
  encodeSnapshot,
  isClusterName,
  KEY_PREFIX,
  nextGeneration,
  parseUsageKey,
  RECONCILE_JOB_NAME,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_MARKER_KEY,
  RECONCILE_QUEUE_PREFIX,
  reconcileJobId,
  reconcileJobOptions,
  requestCount,
  restampJobOptions,
  clusterQuotaJobOptions,
  usageIndexKey,
  usageKey,
  waitingAdmittedKey,
  waitingKey,
  templateClassField,
  templateClassKey,
  templateClassWrittenKey,
  TEMPLATE_CLASS_TTL_MS,
} from './snapshot-layout.js';
export type {
  ClusterHealth,
  ClusterRead,
  ClusterNamespaceSnapshot,
  Decoded,
  ReconcileJob,
  ReconcileJobOptions,
  ReconcileQueue,
  ReconcileTarget,
  WorkloadSnapshot,
} from './snapshot-layout.js';
export { countedResource, countedResourceId, type CountedResource } from './counted-resources.js';
export { bindingForTemplate, templateBindingName, updatedForTemplate } from './template-binding.js';
export { clusterOverrides, type ClusterOverridesInput, type OverridePolicies } from './cluster-overrides.js';
