import { existsSync } from 'node:fs';
import { z } from 'zod';
import { claimTimingEnv, loadConfig, serviceEnv } from '#service-kit';

const existingFile = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .refine(existsSync, 'no such file');

export const webhookEnv = {
  ...serviceEnv(8443),
  /** PEM serving certificate and key: the API server calls admission webhooks over HTTPS only. */
  TLS_CERT_FILE: existingFile,
  TLS_KEY_FILE: existingFile,
  /** How often the certificate files are re-read, so a renewal is served without a restart. */
  TLS_RELOAD_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  ...claimTimingEnv,
  /**
   * Answer within this many milliseconds or fail closed; keep it well inside the registration's
   * timeoutSeconds (10 s) so the API server gets our clear message rather than its own time-out.
   */
  ADMISSION_DEADLINE_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /** Status writes before giving up on a batch that keeps meeting conflicting writers. */
  MAX_CONFLICT_RETRIES: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * `batched` (the product): concurrent admissions for a namespace share one status write.
   * `cas-per-admission`: the simple design, one status write per admission, kept to benchmark against.
   */
  ADMISSION_MODE: z
    .enum(['batched', 'cas-per-admission'], { error: 'must be batched or cas-per-admission' })
    .default('batched'),
};
export type WebhookConfig = ReturnType<typeof loadWebhookConfig>;
export const loadWebhookConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(webhookEnv, env);
