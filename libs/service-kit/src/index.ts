export {
  jsonLogger,
  serviceMain,
  startService,
  type ServiceConfig,
  type ServiceOptions,
} from './bootstrap.js';
export {
  claimTimingEnv,
  ConfigError,
  loadConfig,
  redisEnv,
  serviceEnv,
  type RedisConfig,
  type RedisNode,
} from './config.js';
export {
  API_SERVER_WRITE_BOUND_SECONDS,
  ClockCheck,
  ClockCheckModule,
  clockDistrust,
  clockOffsetLimitMs,
  clockOffsetMs,
} from './clock-check.js';
export {
  customObjectInformer,
  KARMADA_KUBECONFIG,
  karmadaKubeConfig,
  namespaceInformer,
  NamespaceLabelChanges,
} from './dependencies.js';
export { reuseConnections } from './reuse-connections.js';
export { HealthModule } from './health.module.js';
export { closeQueue, duplicateRedis, REDIS, RedisModule, type RedisClient } from './redis.module.js';
export type { ReadinessCheck } from './health.js';
export { METRICS, MetricsModule } from './metrics.module.js';
export { quotaResourceSamples, registerQuotaMetrics, type QuotaResourceSample } from './quota-metrics.js';
export { KeyQueue } from './key-queue.js';
export { ResilientInformer } from './resilient-informer.js';
export {
  abortAt,
  ConflictError,
  KubeQuotaStore,
  type NamespaceSelection,
  type QuotaStore,
  type StoreCallOptions,
} from './quota-store.js';
export { QuotaEventWriter, quotaRefOf, type QuotaRef } from './quota-events.js';
export { TemplateClasses, TemplateClassUnreadable } from './template-classes.js';
export { BindingOverrides, OverridesUnknown } from './binding-overrides.js';
export { stopIntervals } from './intervals.js';
export { leaseNamespaceMissing, microTime } from './leases.js';
export {
  ADMISSION_ANNOTATION,
  ADMISSION_LEASE_NAME,
  admissionLeaseInformer,
  admissionLeaseObjectFor,
  admissionLeaseStateOf,
  admissionRecordOf,
  KubeAdmissionLeaseApi,
  type AdmissionLeaseState,
  type AdmissionRecord,
  type KubeAdmissionLeaseOptions,
  type LeaseApi,
} from './admission-lease-api.js';
