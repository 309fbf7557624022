import { existsSync } from 'node:fs';
import { z } from 'zod';
import { API_REQUEST_TIMEOUT_MS } from './reuse-connections.js';

/** Start-up configuration that cannot be used; the message lists every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const port = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a whole number')
    .min(1, 'must be between 1 and 65535')
    .max(65535, 'must be between 1 and 65535')
    .default(fallback);

/** Variables every service reads. */
export function serviceEnv(defaultPort: number) {
  return {
    PORT: port(defaultPort),
    BIND_ADDRESS: z.string().min(1).default('0.0.0.0'),
    // Nest's level names; pino's `info` and `trace`, which the JSON lines show, mean `log` and `verbose`.
    LOG_LEVEL: z
      .enum(['error', 'warn', 'log', 'info', 'debug', 'verbose', 'trace'], {
        error: 'must be error, warn, log (or info), debug or verbose (or trace)',
      })
      .default('log')
      .transform((level) => (level === 'info' ? 'log' : level === 'trace' ? 'verbose' : level)),
    KUBECONFIG: z
      .string()
      .optional()
      .refine((path) => path === undefined || path === '' || existsSync(path), 'no such file'),
    /** How long a call to an API server (Karmada or member) may wait for its whole answer; watches excepted. */
    API_REQUEST_TIMEOUT_SECONDS: z.coerce
      .number({ error: 'must be a number of seconds' })
      .int('must be a whole number of seconds')
      .min(1, 'must be between 1 and 3600')
      .max(3600, 'must be between 1 and 3600')
      .default(API_REQUEST_TIMEOUT_MS / 1000),
  };
}

/** What every service's API clients for the Karmada API server are built from. */
export interface KarmadaApiConfig {
  KUBECONFIG?: string;
  API_REQUEST_TIMEOUT_SECONDS: number;
}

/** One `host:port` of REDIS_CLUSTER_NODES. */
export interface RedisNode {
  host: string;
  port: number;
}

const CLUSTER_NODES_FORMAT =
  'must be the Redis Cluster nodes to start from, as comma-separated host:port (e.g. redis-0.redis:6379,redis-1.redis:6379)';

export const redisEnv = {
  /** The Redis; with REDIS_CLUSTER_NODES only its user, password and TLS (rediss://) are used. */
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
    .default('redis://127.0.0.1:6379'),
  /** Set: the services use a Redis Cluster (discovered from these nodes) instead of one Redis. */
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .transform((text, ctx): RedisNode[] | undefined => {
      if (text === undefined || text.trim() === '') return undefined;
      const nodes: RedisNode[] = [];
      for (const entry of text.split(',').map((part) => part.trim())) {
        const match = /^([^\s:/@,]+):(\d{1,5})$/.exec(entry);
        const port = Number(match?.[2]);
        if (!match || port < 1 || port > 65535) {
          ctx.addIssue({
            code: 'custom',
            message: `${CLUSTER_NODES_FORMAT}: ${JSON.stringify(entry)} is not host:port`,
          });
          return z.NEVER;
        }
        nodes.push({ host: match[1]!, port });
      }
      return nodes;
    }),
};

export type RedisConfig = z.infer<z.ZodObject<typeof redisEnv>>;

/**
 * How admitted claims are timed, read by the webhook (which writes them) and the reconciler (which
 * settles them); both must have the same values. docs/concepts/accounting.md#settings explains both.
 */
export const claimTimingEnv = {
  /** How long an admitted claim is held whatever the stored binding says. */
  RESERVATION_TTL_SECONDS: z.coerce.number().int().min(2).max(86_400).default(120),
  /**
   * The longest an admitted change can take to be stored: the Karmada API server's request timeout
   * (its --request-timeout, 60 s unless changed). Must stay below RESERVATION_TTL_SECONDS.
   */
  ADMISSION_LANDING_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
};

/**
 * Parses the environment against `shape`. Throws ConfigError naming every variable that is wrong,
 * what is wrong with it and the value it had, so an operator can fix them all at once.
 */
export function loadConfig<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<Shape>> {
  const result = z
    .object(shape)
    .refine(
      (c: Record<string, unknown>) =>
        typeof c['RESERVATION_TTL_SECONDS'] !== 'number' ||
        typeof c['ADMISSION_LANDING_WINDOW_SECONDS'] !== 'number' ||
        c['ADMISSION_LANDING_WINDOW_SECONDS'] < c['RESERVATION_TTL_SECONDS'],
      {
        path: ['ADMISSION_LANDING_WINDOW_SECONDS'],
        message:
          'must be less than RESERVATION_TTL_SECONDS (a claim must outlive the time its change takes to land)',
      },
    )
    .safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const variable = String(issue.path[0]);
    return `  ${variable}=${JSON.stringify(env[variable] ?? '')}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration, fix these environment variables:\n${lines.join('\n')}`);
}
