import { Agent, type AgentOptions } from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** The TLS settings that make two agents interchangeable. */
const TLS_SETTINGS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

const sameTls = (a: AgentOptions, b: AgentOptions) =>
  TLS_SETTINGS.every((setting) => String(a[setting]) === String(b[setting]));

/**
 * How long an API call through these clients may wait for its whole answer, by default (the services'
 * API_REQUEST_TIMEOUT_SECONDS). Node gives a request on a connection that went silent (the API
 * server's machine gone, a partition) no timeout: it would wait for TCP to give up, many minutes,
 * holding a reconcile job or a Lease renewal meanwhile. It also bounds an informer's full list, so an
 * operator with a member whose pod list takes longer raises the setting; calls with a deadline of
 * their own (the webhook's) replace it with theirs.
 */
export const API_REQUEST_TIMEOUT_MS = 60_000;

/**
 * client-node gives every API call a new https.Agent, so each read and each write opens a new TCP and
 * TLS connection: a handshake per call for the service and, worse, for the API server it waits on
 * (the bench's profiles showed the reconciler spending 15 % of its CPU in handshakes). Makes the API
 * clients built from `kc` share one keep-alive agent with the same TLS settings instead; a new one
 * when those settings change (a rotated client certificate). Each call is given up after
 * `requestTimeoutMs`, its connection closed, so the next call opens a new one. Watches keep their
 * own connections and no timeout.
 */
export function reuseConnections(
  kc: k8s.KubeConfig,
  { requestTimeoutMs = API_REQUEST_TIMEOUT_MS }: { requestTimeoutMs?: number } = {},
): k8s.KubeConfig {
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  let shared: Agent | undefined;
  kc.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    context.setSignal(AbortSignal.timeout(requestTimeoutMs));
    const fresh = context.getAgent();
    if (!(fresh instanceof Agent)) return; // plain HTTP or a proxy: left as client-node made it
    if (!shared || !sameTls(shared.options, fresh.options))
      shared = new Agent({ ...fresh.options, keepAlive: true });
    context.setAgent(shared);
  };
  return kc;
}
