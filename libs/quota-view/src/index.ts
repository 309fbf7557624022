export { age, percentOf, quotaView } from './quota-view.js';
export type { ClusterRow, QuotaView, ReservationRow, ResourceRow } from './quota-view.js';
