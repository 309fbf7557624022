import { loadConfig, redisEnv, serviceEnv } from '#service-kit';

export const aggregatorEnv = { ...serviceEnv(8081), ...redisEnv };
export type AggregatorConfig = ReturnType<typeof loadAggregatorConfig>;
export const loadAggregatorConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(aggregatorEnv, env);
