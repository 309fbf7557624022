export {
  bindingCharge,
  bindingTemplates,
  clusterOverridesOf,
  countResourceName,
  groupOf,
  guessPlural,
  KNOWN_PLURALS,
  LEGACY_COUNT_NAMES,
  missingRequestErrors,
  unboundedPodsRefusals,
  withClusterOverrides,
  memberShares,
  withMemberShares,
} from './charge.js';
export {
  capsAnyMember,
  memberKey,
  memberPart,
  splitMemberKey,
  withoutMemberKeys,
  type MemberLabels,
} from './member-caps.js';
export { labelsMatch, requirementMatches } from './label-selector.js';
export {
  capRoomFor,
  heldEvent,
  heldForRoom,
  heldWaitingStatus,
  NO_ESTIMATE,
  perReplicaCharge,
  replicasRoomOn,
} from './estimate.js';
export type { HeldBinding } from './estimate.js';
export type { BindingCharge, BindingTemplate, ClusterOverride } from './charge.js';
export {
  bindingMatchesScopes,
  hasPriorityClassScope,
  priorityClassMatches,
  sameScopeInputs,
  SUPPORTED_SCOPES,
  templateClassNeeded,
  templateRefOf,
  withTemplateClass,
} from './scopes.js';
export type { TemplateRef } from './scopes.js';
export {
  CLASS_MEMO_VERSIONS,
  classForVersion,
  decodeClassMemo,
  encodeClassMemo,
  namesOlderVersion,
  rememberClass,
  type ClassMemo,
  type ReadClass,
} from './template-class-memo.js';
export {
  interpretTemplate,
  isNativeReplicaKind,
  memberReplicas,
  reviseReplicas,
  templatePriorityClass,
} from './karmada-interpreter.js';
export type { InterpretedTemplate } from './karmada-interpreter.js';
export { quotaResourceNameErrors, validateClusterKarmadaQuota, validateKarmadaQuota } from './validation.js';
export {
  COMPUTE_RESOURCES,
  INTEGER_QUOTA_RESOURCES,
  isExtendedResourceName,
  isIntegerQuotaResource,
  isStandardQuotaResource,
  quotaNamesForRequest,
  STANDARD_QUOTA_RESOURCES,
} from './resource-names.js';
export {
  bindingKeyString,
  clusterQuotaNamed,
  countedNamespaces,
  namespacesWaitingOn,
  isClusterQuota,
  limitsNamespace,
  quotaName,
  selectsNamespace,
  claimAdmittedAt,
  isExpired,
  isAtOrAfterVersion,
  isLaterVersion,
  isResourceVersion,
  parseQuotaState,
  sumReserved,
  toWireReservations,
} from './state.js';
export type {
  BindingKey,
  ClusterQuotaBatch,
  QuotaState,
  ReservationEntry,
  SelectedNamespace,
} from './state.js';
export {
  admitBatch,
  exceededMessage,
  increasesNothing,
  memberUnknownMessage,
  usageUnknownMessage,
} from './admission.js';
export type { AdmissionItem, AdmitOptions, BatchResult, Decision, NotEnforced } from './admission.js';
export {
  clipMessage,
  computeQuotaStatus,
  QuotaConditionReason,
  QuotaEventReason,
  RETIREMENT_COALESCE_MS,
} from './status.js';
export type { NamespaceInput, QuotaEvent, QuotaStatusInput, QuotaStatusResult } from './status.js';
export { compareNames, isTime, isWireList, observedUsageOf } from './cluster-usage.js';
export type { ObservedCluster, ObservedWorkload, UsageList } from './cluster-usage.js';
export {
  beingDeleted,
  holdsNothing,
  checksChangeOn,
  oldChargeHeld,
  settleReservations,
  storedCharge,
  workloadFinished,
} from './reservations.js';
export type { ClaimTiming } from './reservations.js';
export { addDenial, denialEvent } from './denial-events.js';
export type { DenialTally } from './denial-events.js';
export {
  ABANDONED_AFTER_MS,
  bySince,
  decodeWaiting,
  liveWaiting,
  recordRefusal,
  refusalNeedsWrite,
  refusedWriter,
  requeueOrder,
  REQUEUE_SETTLE_MS,
  STARVING_AFTER_MS,
  roomOf,
  specChanged,
  REQUEUED_AT_ANNOTATION,
  waitingRefusal,
  waitingStatus,
  admissionMark,
  decodeAdmittedMark,
  flushedFields,
  flushWaiting,
  waitingField,
  ADMITTED_MARK_MS,
} from './waiting.js';
export type { AdmittedMark, QuotaRoom, RetryVia, WaitingChange, WaitingNews } from './waiting.js';
export {
  addWouldBeDenied,
  decodeWouldBeDenied,
  enforcementWarning,
  liveWouldBeDenied,
  parseEnforcement,
  WOULD_BE_DENIED_LIMIT,
  WOULD_BE_DENIED_TTL_MS,
} from './enforcement.js';
export {
  FRQ_ENFORCEMENT_ANNOTATION,
  frqLimitChange,
  frqLimitChangeNeeds,
  frqStatus,
  frqStatusEquals,
  SERVES_FRQ_LABEL,
  servesAsWanted,
  servesFrq,
  servingQuota,
  servingQuotaName,
  QUOTA_ADMIN_RIGHT,
} from './federated-resource-quota.js';
export type { FrqLimitChange, ServingQuota } from './federated-resource-quota.js';
export {
  APPLIED_MANAGED_BY,
  APPLIED_SELECTOR,
  appliedClusterQuota,
  appliedNamespaces,
  appliedStatus,
} from './applied-cluster-quota.js';
export {
  claimedFor,
  decideBy,
  decideByRead,
  joinAttempt,
  needsRead,
  outcomeOf,
  retirable,
  retireOn,
} from './owner-claims.js';
export type { Attempt, BindingSeen, Change, ClaimRecord, QuotaClaim } from './owner-claims.js';
