export { age, percentOf, quotaView } from './quota-view.js';
export type { ClusterRow, QuotaView, ReservationRow, ResourceRow } from './quota-view.js';
export { sparkline } from './trend.js';
export type { Sparkline, TrendSample } from './trend.js';
export { OTHER_USAGE, workloadUsage } from './workload-usage.js';
export type { WorkloadRow, WorkloadUsage } from './workload-usage.js';
