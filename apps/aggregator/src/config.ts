import { hostname } from 'node:os';
import { z } from 'zod';
import { loadConfig, redisEnv, serviceEnv } from '#service-kit';

const ms = (fallback: number, max: number) => z.coerce.number().int().min(10).max(max).default(fallback);

export const aggregatorEnv = {
  ...serviceEnv(8081),
  ...redisEnv,
  /** How often changed (cluster, namespace) usage is published to Redis. */
  PUBLISH_INTERVAL_MS: ms(100, 10_000),
  /** A member whose watch has failed this long turns from Stale to Unreachable. */
  UNREACHABLE_AFTER_MS: ms(30_000, 3_600_000),
  /** Longest back-off between attempts to re-establish a failed member watch. */
  MAX_RETRY_BACKOFF_MS: ms(10_000, 300_000),
  /** Identity of this replica in the cluster Leases (default: host name and pid). */
  AGGREGATOR_ID: z.string().min(1).default(`${hostname()}-${process.pid}`),
  /** Namespace on the host for the per-cluster Leases that split member clusters between replicas. */
  LEASE_NAMESPACE: z.string().min(1).default('karmada-quota-system'),
  LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).max(300).default(15),
};
export type AggregatorConfig = ReturnType<typeof loadAggregatorConfig>;
export const loadAggregatorConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(aggregatorEnv, env);
