export { age, percentOf, quotaView } from './quota-view.js';
export type { ClusterRow, MemberCapRow, QuotaView, ReservationRow, ResourceRow } from './quota-view.js';
export { sparkline } from './trend.js';
export type { Sparkline, TrendSample } from './trend.js';
export { OTHER_USAGE, workloadUsage } from './workload-usage.js';
export type { WorkloadObservations, WorkloadRow, WorkloadUsage } from './workload-usage.js';
export {
  judgmentsOf,
  readUsageRecord,
  recordedObservations,
  USAGE_RECORD_NAME,
  usageFingerprint,
  usageRecord,
} from './usage-record.js';
export type { JudgedBinding, RecordedUsage } from './usage-record.js';
