export {
  ensureBinaries,
  ensureKarmadaBinaries,
  type KarmadaBinaries,
  type KubeBinaries,
} from './binaries.js';
export { Karmada, KARMADA_CONTROLLERS, type KarmadaQuotaWebhook } from './karmada.js';
export type { ApiEndpoint, RedisServer } from './components.js';
export { redisDatabaseUrl, redisServerBinary } from './components.js';
export { startPrivateRedis, type PrivateRedis } from './private-redis.js';
export {
  Federation,
  MEMBER_ACCESS_ACCOUNT,
  type FederationInfo,
  type FederationOptions,
} from './federation.js';
export {
  BINDING_WEBHOOK_NAME,
  CLUSTER_SECRET_NAMESPACE,
  clusterLeaseHolders,
  ensureNamespace,
  installCrds,
  kubeConfigFor,
  registerMember,
  registerWebhook,
  serviceAccountToken,
  SYSTEM_NAMESPACE,
  unregisterMember,
  WEBHOOK_CONFIGURATION_NAME,
} from './host-setup.js';
export { writeKubeconfig } from './kubeconfig.js';
export { freePort, probe, waitFor } from './net.js';
// Node's own, under the name the tests and the bench know it by.
export { setTimeout as sleep } from 'node:timers/promises';
export { isProcessAlive, ManagedProcess, OrphanGuard } from './processes.js';
export { repoRoot } from './paths.js';
export { SERVICES, startServices, type RunningService, type ServiceName } from './services.js';
export {
  createClientCertificate,
  createClientCertificates,
  createServingCertificate,
  type ClientCertificate,
  type ServingCertificate,
} from './pki.js';
export { karmadaWorkload, type KarmadaWorkload } from './workloads.js';
