import * as k8s from '@kubernetes/client-node';
// Not '#service-kit': its index loads NestJS and BullMQ, over a second of start-up for every kubectl kq.
import { describeError } from '#api';

export { describeError };

/** A failure already worded for the admin: printed as is, exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** What was asked of which server: the facts an error message names. */
export interface RequestTarget {
  server: string;
  context: string;
  verb: 'get' | 'list';
  /** e.g. `karmadaquotas.quota.karmada.io`. */
  resource: string;
  /** Absent for a list across all namespaces. */
  namespace?: string;
  name?: string;
}

interface Status {
  reason?: string;
  message?: string;
  details?: { name?: string };
}

/** TLS verification failures as Node reports them (error.code). */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);
const UNREACHABLE_CODES = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

/**
 * One line for a failed API request, worded as kubectl words it (StandardErrorMessage) and, where
 * kubectl leaves the admin guessing, naming the server and the kubeconfig context to check.
 */
export function explainError(err: unknown, target: RequestTarget): string {
  const where = `kubeconfig context "${target.context}"`;
  if (err instanceof k8s.ApiException) {
    const status = parseStatus(err.body);
    if (err.code === 401) {
      return (
        `error: You must be logged in to the server (Unauthorized): ${target.server} rejected the ` +
        `credentials of ${where}`
      );
    }
    if (err.code === 404 && !isObjectNotFound(err)) {
      // The API group or resource itself is missing, not the object.
      return (
        `error: the server ${target.server} doesn't have a resource type "${target.resource}": ` +
        `is karmada-quota installed there (its CRDs), and is ${where} the Karmada control plane?`
      );
    }
    if (err.code === 403 && !status?.message) {
      const scope = target.namespace ? ` in the namespace "${target.namespace}"` : ' in any namespace';
      return (
        `Error from server (Forbidden): the user of ${where} cannot ${target.verb} ` +
        `resource "${target.resource}"${scope}`
      );
    }
    if (status?.message) {
      return status.reason
        ? `Error from server (${status.reason}): ${status.message}`
        : `Error from server: ${status.message}`;
    }
    return `Error from server: ${target.server} answered HTTP ${err.code}`;
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED') {
    return (
      `error: the connection to the server ${target.server} was refused: is the API server running, ` +
      `and is ${where} the cluster you meant? (kubectl config get-contexts)`
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return (
      `error: cannot resolve the host of the server ${target.server}: check its address in ${where} ` +
      `(kubectl config view --minify)`
    );
  }
  if (typeof code === 'string' && TLS_CODES.has(code)) {
    return (
      `error: cannot verify the TLS certificate of the server ${target.server} (${describeError(err)}): ` +
      `check certificate-authority-data of the cluster in ${where}`
    );
  }
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) {
    return `error: unable to connect to the server ${target.server} (${code}): check the network and ${where}`;
  }
  return `error: ${describeError(err)}`;
}

/** A 404 for the named object itself, not for its resource type. */
export function isObjectNotFound(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 404 && !!parseStatus(err.body)?.details?.name;
}

function parseStatus(body: unknown): Status | undefined {
  try {
    const status = JSON.parse(String(body)) as unknown;
    return typeof status === 'object' && status !== null ? (status as Status) : undefined;
  } catch {
    return undefined;
  }
}
