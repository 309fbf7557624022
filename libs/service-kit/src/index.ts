export { serviceMain, type ServiceConfig, type ServiceOptions } from './bootstrap.js';
export { ConfigError, loadConfig, redisEnv, serviceEnv } from './config.js';
export { customObjectInformer, hostKubeConfig } from './dependencies.js';
export { HealthModule } from './health.module.js';
export { REDIS, RedisModule } from './redis.module.js';
export type { ReadinessCheck } from './health.js';
export { METRICS, MetricsModule } from './metrics.module.js';
export { ResilientInformer } from './resilient-informer.js';
export { describeError } from './errors.js';
