import { Agent, type AgentOptions } from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** The TLS settings that make two agents interchangeable. */
const TLS_SETTINGS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

const sameTls = (a: AgentOptions, b: AgentOptions) =>
  TLS_SETTINGS.every((setting) => String(a[setting]) === String(b[setting]));

/**
 * client-node gives every API call a new https.Agent, so each read and each write opens a new TCP and
 * TLS connection: a handshake per call for the service and, worse, for the API server it waits on
 * (the bench's profiles showed the reconciler spending 15 % of its CPU in handshakes). Makes the API
 * clients built from `kc` share one keep-alive agent with the same TLS settings instead; a new one
 * when those settings change (a rotated client certificate). Watches keep their own connections.
 */
export function reuseConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  let shared: Agent | undefined;
  kc.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    const fresh = context.getAgent();
    if (!(fresh instanceof Agent)) return; // plain HTTP or a proxy: left as client-node made it
    if (!shared || !sameTls(shared.options, fresh.options))
      shared = new Agent({ ...fresh.options, keepAlive: true });
    context.setAgent(shared);
  };
  return kc;
}
