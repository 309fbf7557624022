export { ensureBinaries, type KubeBinaries } from './binaries.js';
export type { ApiEndpoint, RedisServer } from './components.js';
export {
  Federation,
  MEMBER_ACCESS_ACCOUNT,
  type FederationInfo,
  type FederationOptions,
} from './federation.js';
export {
  CLUSTER_SECRET_NAMESPACE,
  ensureNamespace,
  installCrds,
  kubeConfigFor,
  registerMember,
  serviceAccountToken,
  unregisterMember,
} from './host-setup.js';
export { writeKubeconfig } from './kubeconfig.js';
export { freePort, probe, sleep, waitFor } from './net.js';
export { isProcessAlive, ManagedProcess, OrphanGuard } from './processes.js';
export { repoRoot } from './paths.js';
export { SERVICES, startServices, type RunningService, type ServiceName } from './services.js';
export { createServingCertificate, type ServingCertificate } from './pki.js';
