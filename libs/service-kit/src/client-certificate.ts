import type { TLSSocket } from 'node:tls';

/**
 * Paths every caller may reach without a client certificate: probes (the kubelet presents none) and
 * Prometheus. Anything else, the admission endpoints first, needs one once a client CA is set.
 */
export const PATHS_OPEN_WITHOUT_CLIENT_CERTIFICATE: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** What the TLS handshake established about the caller's certificate. */
export interface PeerCertificate {
  presented: boolean;
  /** Verified against the client CA. */
  authorized: boolean;
  /** OpenSSL's reason when not authorized (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, ...). */
  authorizationError?: string;
}

export type ClientCertificateVerdict =
  { allowed: true } | { allowed: false; statusCode: 401 | 403; message: string };

const HOW_TO =
  'only the API server may call this endpoint: it presents a client certificate when its admission ' +
  'configuration names a kubeconfig for webhooks (docs/operating/security.md)';

/**
 * Whether a request to `url` may be answered: open paths always; any other only to a caller whose
 * certificate the client CA verified (401 without one, 403 with one it did not sign).
 */
export function judgeClientCertificate(url: string, peer: PeerCertificate): ClientCertificateVerdict {
  const path = url.split('?', 1)[0]!;
  if (PATHS_OPEN_WITHOUT_CLIENT_CERTIFICATE.includes(path) || peer.authorized) return { allowed: true };
  if (!peer.presented)
    return { allowed: false, statusCode: 401, message: `no client certificate: ${HOW_TO}` };
  return {
    allowed: false,
    statusCode: 403,
    message: `client certificate not accepted (${peer.authorizationError ?? 'unknown reason'}): it is not from the CA in CLIENT_CA_FILE; ${HOW_TO}`,
  };
}

/** Reads what the handshake of `socket` (a server asking for client certificates) established. */
export function peerCertificateOf(socket: TLSSocket): PeerCertificate {
  // Verified: presented too. getPeerCertificate() builds a whole object (a bench profile found it at
  // 6-8 % of the webhook's CPU when called per request), so only refusals pay for it.
  if (socket.authorized) return { presented: true, authorized: true };
  const error = socket.authorizationError;
  return {
    // Node hands an empty object when the client sent no certificate.
    presented: Object.keys(socket.getPeerCertificate()).length > 0,
    authorized: false,
    ...(error ? { authorizationError: error instanceof Error ? error.message : String(error) } : {}),
  };
}
