import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { claimTimingEnv, loadConfig, redisEnv, serviceEnv } from '#service-kit';

const existingFile = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .refine(existsSync, 'no such file');

function holdsPemCertificate(path: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes('-----BEGIN CERTIFICATE-----');
  } catch {
    return false; // a directory, say
  }
}

export const webhookEnv = {
  ...serviceEnv(8443),
  /** PEM serving certificate and key: the API server calls admission webhooks over HTTPS only. */
  TLS_CERT_FILE: existingFile,
  TLS_KEY_FILE: existingFile,
  /**
   * PEM CA that signs the client certificate the Karmada API server presents to webhooks (its
   * admission kubeconfig). Set: the admission endpoints answer only callers with a certificate it
   * signs (401 without one, 403 with another), probes and /metrics stay open. Unset: anything that
   * reaches the port can post AdmissionReviews and hold quota (a warning at start); the chart sets
   * it by default.
   */
  CLIENT_CA_FILE: z
    .string()
    .optional()
    .refine((path) => !path || existsSync(path), 'no such file')
    .refine(
      (path) => !path || !existsSync(path) || holdsPemCertificate(path),
      "holds no PEM certificate: give the CA of the API server's webhook client certificate",
    )
    .transform((path) => path || undefined),
  /**
   * With CLIENT_CA_FILE: the common names (comma-separated) the client certificate must have, for a
   * CA that signs other clients' certificates too (403 for any other). Empty: any the CA signs.
   */
  CLIENT_CERT_ALLOWED_NAMES: z
    .string()
    .optional()
    .transform((text) =>
      (text ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  /** How often the certificate files are re-read, so a renewal is served without a restart. */
  TLS_RELOAD_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  /**
   * Claim timing, shared with the reconciler (same values; docs/concepts/accounting.md#settings).
   * RESERVATION_TTL_SECONDS: an admitted increase is written as a claim expiring this long after
   * admission. Until then nobody shrinks or drops it: the binding holds the larger of the claimed and
   * the stored charge (a scale-down is released only after it), and a create never stored holds its
   * whole charge. The webhook counts a claim as already held (a retry charges nothing) only while
   * ADMISSION_LANDING_WINDOW_SECONDS of it remain.
   */
  ...claimTimingEnv,
  /** Where refused changes are recorded for the reconciler to show and requeue (not on the admission path). */
  ...redisEnv,
  /**
   * Answer within this many milliseconds or fail closed; keep it well inside the registration's
   * timeoutSeconds (10 s) so the API server gets our clear message rather than its own time-out.
   */
  ADMISSION_DEADLINE_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /**
   * Serve Karmada's scheduler-estimator gRPC API on this port (plaintext, on BIND_ADDRESS), so that
   * karmada-scheduler places Divided replicas only where the member caps have room
   * (docs/concepts/scheduler-estimator.md). Unset: not served.
   */
  SCHEDULER_ESTIMATOR_PORT: z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(1, 'must be between 1 and 65535')
    .max(65_535, 'must be between 1 and 65535')
    .optional(),
  /**
   * With SCHEDULER_ESTIMATOR_PORT, where members already run Karmada's own karmada-scheduler-estimator:
   * its address, `{member}` standing for the member's name (Karmada's default Services:
   * `karmada-scheduler-estimator-{member}.karmada-system.svc.cluster.local:10352`). Each question is
   * passed on to it and the lower answer given (plaintext gRPC); a member it does not answer for gets
   * the caps' answer. Unset: the caps alone answer.
   */
  SCHEDULER_ESTIMATOR_FORWARD_TO: z
    .string()
    .optional()
    .refine(
      (text) => !text || /^[a-z0-9{}]([-a-z0-9.{}]*[a-z0-9{}])?:[0-9]{1,5}$/.test(text),
      'must be <host>:<port>, e.g. karmada-scheduler-estimator-{member}.karmada-system.svc.cluster.local:10352',
    )
    .transform((text) => text || undefined),
  /** Status writes before giving up on a batch that keeps meeting conflicting writers. */
  MAX_CONFLICT_RETRIES: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * `batched` (the product): concurrent admissions for a namespace share one status write.
   * `cas-per-admission`: the simple design, one status write per admission, kept to benchmark against.
   * `owner` (experimental): the holder of the admission Lease decides from memory, with no write per
   * admission; the other replicas forward to it (docs/concepts/admission-owner.md).
   */
  ADMISSION_MODE: z
    .enum(['batched', 'cas-per-admission', 'owner'], { error: 'must be batched, cas-per-admission or owner' })
    .default('batched'),
  /**
   * Namespace on the Karmada API server of the admission Lease (karmada-quota-admission): it names the
   * owner deciding increases from memory, or says the batched modes decide (the fence; every mode reads
   * it: docs/concepts/admission-owner.md). Must exist.
   */
  LEASE_NAMESPACE: z.string().min(1).default('karmada-quota-system'),
  /** Another owner takes the admission Lease, or the batched modes end its tenure, once seen unrenewed this long. */
  ADMISSION_LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).max(300).default(15),
  /**
   * The owner decides nothing once this long passed since its last renew began; a batched webhook
   * decides nothing once this long passed since its last read saying the batched modes decide.
   */
  ADMISSION_LEASE_RENEW_DEADLINE_SECONDS: z.coerce.number().int().min(1).max(299).default(10),
  /** How often the admission Lease is renewed or tried for (owner), or read (the batched modes). */
  ADMISSION_LEASE_RETRY_SECONDS: z.coerce.number().int().min(1).max(60).default(2),
  /**
   * ADMISSION_MODE=owner: the port (on BIND_ADDRESS) where the owner answers the decisions other
   * replicas forward to it, over mutual TLS with the serving certificate (TLS_CERT_FILE).
   */
  ADMISSION_PEER_PORT: z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(1, 'must be between 1 and 65535')
    .max(65_535, 'must be between 1 and 65535')
    .default(8444),
  /**
   * ADMISSION_MODE=owner: PEM CA that signed the serving certificate (the TLS Secret's ca.crt). A
   * peer is a process presenting a certificate it signs for the same names as TLS_CERT_FILE.
   */
  ADMISSION_PEER_CA_FILE: z
    .string()
    .optional()
    .refine((path) => !path || existsSync(path), 'no such file')
    .refine((path) => !path || !existsSync(path) || holdsPemCertificate(path), 'holds no PEM certificate')
    .transform((path) => path || undefined),
  /**
   * ADMISSION_MODE=owner: the address other replicas reach this process at (the chart sets it from
   * the downward API); unset, BIND_ADDRESS, which must then not be a wildcard.
   */
  POD_IP: z
    .string()
    .optional()
    .refine((ip) => !ip || isIP(ip) !== 0, 'must be an IP address')
    .transform((ip) => ip || undefined),
};
export type WebhookConfig = ReturnType<typeof loadWebhookConfig>;
export function loadWebhookConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(webhookEnv, env);
  if (config.CLIENT_CERT_ALLOWED_NAMES.length > 0 && !config.CLIENT_CA_FILE)
    throw new Error(
      'CLIENT_CERT_ALLOWED_NAMES is set without CLIENT_CA_FILE: names are checked only on certificates ' +
        'the client CA verified; set CLIENT_CA_FILE too (docs/operating/security.md)',
    );
  const lease = [
    config.ADMISSION_LEASE_RETRY_SECONDS,
    config.ADMISSION_LEASE_RENEW_DEADLINE_SECONDS,
    config.ADMISSION_LEASE_DURATION_SECONDS,
  ];
  if (!(lease[0]! < lease[1]! && lease[1]! < lease[2]!))
    throw new Error(
      `ADMISSION_LEASE_RETRY_SECONDS (${lease[0]}) < ADMISSION_LEASE_RENEW_DEADLINE_SECONDS (${lease[1]}) < ` +
        `ADMISSION_LEASE_DURATION_SECONDS (${lease[2]}) must hold: the owner must stop deciding before ` +
        'another process may take the Lease, and renew more than once before it stops (docs/concepts/admission-owner.md)',
    );
  if (config.ADMISSION_MODE === 'owner') {
    if (!config.ADMISSION_PEER_CA_FILE)
      throw new Error(
        "ADMISSION_MODE=owner needs ADMISSION_PEER_CA_FILE, the CA of the serving certificate (the TLS Secret's " +
          'ca.crt): replicas forward decisions to the owner over mutual TLS (docs/concepts/admission-owner.md)',
      );
    const host = config.POD_IP ?? config.BIND_ADDRESS;
    if (['0.0.0.0', '::', '[::]', ''].includes(host))
      throw new Error(
        `ADMISSION_MODE=owner needs POD_IP (or a BIND_ADDRESS other than ${host || 'empty'}): the owner's ` +
          'address other replicas forward to (the chart sets POD_IP from the downward API)',
      );
    if (config.POD_IP && isLoopback(config.BIND_ADDRESS))
      throw new Error(
        `ADMISSION_MODE=owner with POD_IP=${config.POD_IP} needs a BIND_ADDRESS other pods reach, not ${config.BIND_ADDRESS}: ` +
          'the peer port listens there',
      );
  }
  return config;
}

function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || address.startsWith('127.');
}

/** Where the other replicas reach this process's peer port (host:port, an IPv6 host in brackets). */
export function peerAddress(config: WebhookConfig): string {
  const host = config.POD_IP ?? config.BIND_ADDRESS;
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.ADMISSION_PEER_PORT}`;
}
