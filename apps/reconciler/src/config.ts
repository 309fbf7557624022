import { loadConfig, redisEnv, serviceEnv } from '#service-kit';

export const reconcilerEnv = { ...serviceEnv(8082), ...redisEnv };
export type ReconcilerConfig = ReturnType<typeof loadReconcilerConfig>;
export const loadReconcilerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(reconcilerEnv, env);
