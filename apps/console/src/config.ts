import { z } from 'zod';
import { loadConfig, serviceEnv } from '#service-kit';

export const consoleEnv = {
  ...serviceEnv(8083),
  /** How long a TokenReview or SubjectAccessReview answer is reused (a revoked token or role stops working within this). */
  AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(1).max(3_600).default(30),
  /** Answers kept per cache (tokens; caller-and-namespace pairs); the least recently used go first. */
  AUTH_CACHE_MAX_ENTRIES: z.coerce.number().int().min(10).max(1_000_000).default(10_000),
  /** A live stream is re-sent at least this often: ages stay current and access is checked again. */
  LIVE_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3_600).default(30),
  /** Open live streams served at once; more are refused with 503 (the page then polls). */
  MAX_LIVE_STREAMS: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /** How often each quota's used percent is recorded for the page's 24-hour trends (kept in memory). */
  TREND_SAMPLE_SECONDS: z.coerce.number().int().min(1).max(3_600).default(300),
  /** Set: the trends come from this Prometheus' quota gauges (it scrapes the reconciler); empty: from the console's samples. */
  PROMETHEUS_URL: z
    .union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })])
    .optional()
    .transform((url) => url || undefined),
};
export type ConsoleConfig = ReturnType<typeof loadConsoleConfig>;
export const loadConsoleConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(consoleEnv, env);
