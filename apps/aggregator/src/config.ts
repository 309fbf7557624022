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
  /**
   * Identity of this replica in the Leases (default: host name and pid); it also names the replica's
   * membership Lease, so it must be unique among the replicas and a valid object name.
   */
  AGGREGATOR_ID: z
    .string()
    .max(200, 'must be at most 200 characters (it names the Lease kq-aggregator-replica.<id>)')
    .regex(
      /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
      "must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit " +
        '(it names the Lease kq-aggregator-replica.<id>); the pod name is one',
    )
    .default(
      `${hostname()
        .toLowerCase()
        .replace(/[^a-z0-9.-]+/g, '-')}-${process.pid}`,
    ),
  /**
   * Namespace on the Karmada API server for the Leases that split member clusters between replicas:
   * one per cluster (its watcher) and one per replica (alive, counted in the fair share of each).
   */
  LEASE_NAMESPACE: z.string().min(1).default('karmada-quota-system'),
  /**
   * Lease timing: renewed every third of this; a replica that could not renew for two thirds stops
   * publishing its clusters; another takes them over once it has seen a Lease unrenewed this long.
   */
  LEASE_DURATION_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(2, 'must be at least 2 (Leases are renewed every third of it)')
    .max(300, "must be at most 300 (a dead replica's clusters go unwatched this long)")
    .default(15),
};
export type AggregatorConfig = ReturnType<typeof loadAggregatorConfig>;
export const loadAggregatorConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(aggregatorEnv, env);
