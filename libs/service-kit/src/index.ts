export { runMain, startService, jsonLogger, type ServiceOptions } from './bootstrap.js';
export { ConfigError, loadConfig, redisEnv, serviceEnv } from './config.js';
export { hostApiReadiness, hostKubeConfig, redisReadiness } from './dependencies.js';
export { HealthController, READINESS_CHECKS, type ReadinessCheck } from './health.js';
export { REDIS, RedisModule } from './redis.module.js';
