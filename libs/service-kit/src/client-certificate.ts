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
  /** The verified certificate's subject common name: read only when allowed names are checked. */
  commonName?: string;
}

export type ClientCertificateVerdict =
  { allowed: true } | { allowed: false; statusCode: 401 | 403; message: string };

const HOW_TO =
  'only the API server may call this endpoint: it presents a client certificate when its admission ' +
  'configuration names a kubeconfig for webhooks (docs/operating/security.md)';

/**
 * Whether a request to `url` may be answered: open paths always; any other only to a caller whose
 * certificate the client CA verified (401 without one, 403 with one it did not sign) and, when
 * `allowedNames` are given, whose common name is one of them (403 otherwise: a CA that signs other
 * clients' certificates too must not let them admit).
 */
export function judgeClientCertificate(
  url: string,
  peer: PeerCertificate,
  allowedNames: readonly string[] = [],
): ClientCertificateVerdict {
  const path = url.split('?', 1)[0]!;
  if (PATHS_OPEN_WITHOUT_CLIENT_CERTIFICATE.includes(path)) return { allowed: true };
  if (peer.authorized) {
    if (allowedNames.length === 0 || allowedNames.includes(peer.commonName ?? '')) return { allowed: true };
    return {
      allowed: false,
      statusCode: 403,
      message: `client certificate CN "${peer.commonName ?? ''}" is not one of CLIENT_CERT_ALLOWED_NAMES (${allowedNames.join(', ')}); ${HOW_TO}`,
    };
  }
  if (!peer.presented)
    return { allowed: false, statusCode: 401, message: `no client certificate: ${HOW_TO}` };
  return {
    allowed: false,
    statusCode: 403,
    message: `client certificate not accepted (${peer.authorizationError ?? 'unknown reason'}): it is not from the CA in CLIENT_CA_FILE; ${HOW_TO}`,
  };
}

/**
 * Reads what the handshake of `socket` (a server asking for client certificates) established; the
 * common name too with `commonName`.
 */
export function peerCertificateOf(
  socket: TLSSocket,
  options: { commonName?: boolean } = {},
): PeerCertificate {
  // Verified: presented too. getPeerCertificate() builds a whole object (a bench profile found it at
  // 6-8 % of the webhook's CPU when called per request), so only refusals pay for it, and the common
  // name is read once per connection.
  if (socket.authorized)
    return {
      presented: true,
      authorized: true,
      ...(options.commonName ? { commonName: commonNameOf(socket) } : {}),
    };
  const error = socket.authorizationError;
  return {
    // Node hands an empty object when the client sent no certificate.
    presented: Object.keys(socket.getPeerCertificate()).length > 0,
    authorized: false,
    ...(error ? { authorizationError: error instanceof Error ? error.message : String(error) } : {}),
  };
}

const commonNames = new WeakMap<TLSSocket, string>();

function commonNameOf(socket: TLSSocket): string {
  let name = commonNames.get(socket);
  if (name === undefined) {
    const cn = socket.getPeerCertificate().subject?.CN as string | string[] | undefined;
    name = (Array.isArray(cn) ? cn[0] : cn) ?? '';
    commonNames.set(socket, name);
  }
  return name;
}
