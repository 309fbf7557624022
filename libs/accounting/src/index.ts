// The admission core and the reconcile loop, with their IO behind the QuotaStore and ReconcileAccess
// seams: the webhook and the reconciler adapt them, the simulation drives them.
export { asksNothing, bindingChange, failClosed, NO_OBSERVER, uidProblem } from './admission-strategy.js';
export type {
  AdmissionOutcome,
  AdmissionStrategy,
  BatchObserver,
  BindingChange,
  Pending,
} from './admission-strategy.js';
export { admitWithCas, decide, projected, refuseOrProject, selectionOf } from './cas-round.js';
export type { CasContext, CasOptions, Projection, SelectionOf } from './cas-round.js';
export { AdmissionBatcher } from './admission-batcher.js';
export type { BatcherOptions } from './admission-batcher.js';
export {
  CAS_PER_ADMISSION_RETRIES,
  CAS_PER_ADMISSION_RETRY_DELAY_MS,
  CasPerAdmission,
} from './cas-per-admission.js';
export { CachedQuotaStore } from './cached-quota-store.js';
export {
  countedClusters,
  reconcileClusterQuota,
  reconcileQuotas,
  statusesCurrentIn,
} from './reconcile-loop.js';
export type {
  BindingList,
  CachedView,
  ClusterQuotaAccess,
  ClusterQuotaOutcome,
  CountedNamespace,
  ReconcileAccess,
  ReconcileInput,
  ReconcileOutcome,
} from './reconcile-loop.js';
export { ADMISSION_ANNOTATION, ADMISSION_LEASE_NAME, AdmissionLease } from './admission-lease.js';
export type {
  AdmissionLeaseOptions,
  AdmissionLeaseState,
  AdmissionRecord,
  LeaseApi,
  LeaseStep,
} from './admission-lease.js';
export { ledgerKey, OwnerLedger, type TakenOver } from './owner-ledger.js';
export { OwnerAdmission } from './owner-admission.js';
export type { OwnerHost, OwnerQuotaView, OwnerTiming } from './owner-admission.js';
export { BatchedFence } from './batched-fence.js';
export type { BatchedFenceOptions, FenceHost, FenceView } from './batched-fence.js';
export { CountRequests } from './count-requests.js';
