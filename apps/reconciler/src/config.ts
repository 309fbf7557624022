import { z } from 'zod';
import { claimTimingEnv, loadConfig, redisEnv, serviceEnv } from '#service-kit';

const seconds = (fallback: number) => z.coerce.number().int().min(1).max(86_400).default(fallback);

export const reconcilerEnv = {
  ...serviceEnv(8082),
  ...redisEnv,
  ...claimTimingEnv,
  /** Namespaces reconciled at once by this replica (any number of replicas may run). */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Full resync of every KarmadaQuota. */
  RESYNC_INTERVAL_SECONDS: seconds(300),
  /** How often claims that expired, or may be retired, are looked for. */
  EXPIRY_SWEEP_SECONDS: seconds(15),
  /**
   * A waiting change requeued through Karmada is not requeued again for this long: its retry is in
   * flight, and what it asked counts as taken meanwhile (no storm of retries).
   */
  REQUEUE_MIN_INTERVAL_SECONDS: seconds(10),
  /**
   * The usage by workload kubectl kq and the console show (a WorkloadUsage in each namespace with a
   * quota) is written at most this often per namespace, when it changed.
   */
  USAGE_RECORD_SECONDS: seconds(10),
  /** Status writes before a reconcile gives up on a quota that keeps changing (the job retries). */
  MAX_CONFLICT_RETRIES: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Serve Karmada's FederatedResourceQuotas: a KarmadaQuota beside each, and their status written
   * from it (docs/operating/switch-from-frq.md). Off unless Karmada's own FRQ status controller is.
   */
  SERVE_FEDERATED_RESOURCE_QUOTAS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * `<host>:<port>` where karmada-scheduler reaches the webhook's scheduler-estimator port (its
   * SCHEDULER_ESTIMATOR_PORT): each member gets an ExternalName Service
   * `karmada-system/karmada-scheduler-estimator-<member>` on the Karmada API server pointing there
   * (docs/concepts/scheduler-estimator.md). Unset: none is made.
   */
  SCHEDULER_ESTIMATOR_ADDRESS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (!text) return undefined;
      const match = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?):([0-9]{1,5})$/.exec(text);
      const port = Number(match?.[3]);
      if (!match || port < 1 || port > 65_535) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be <host>:<port>, a DNS name (an ExternalName Service points there) and the port of ' +
            "the webhook's SCHEDULER_ESTIMATOR_PORT, e.g. karmada-quota-webhook.karmada-quota.svc:10352",
        });
        return z.NEVER;
      }
      return { host: match[1]!, port };
    }),
};
export type ReconcilerConfig = ReturnType<typeof loadReconcilerConfig>;
export const loadReconcilerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(reconcilerEnv, env);

/** Nest injection token of the loaded config (the Karmada API server's KubeConfig is #service-kit's KARMADA_KUBECONFIG). */
export const RECONCILER_CONFIG = Symbol('RECONCILER_CONFIG');
