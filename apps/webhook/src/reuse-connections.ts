import { Agent } from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/**
 * client-node gives every API call a new https.Agent, so each read and each status write opens a new
 * TCP and TLS connection: on the admission path that is a handshake per call for the webhook and,
 * worse, for the API server it waits on. Makes the API clients built from `kc` share one keep-alive
 * agent with the same TLS settings instead (watches keep their own connections).
 */
export function reuseConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  let shared: Agent | undefined;
  kc.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    const fresh = context.getAgent();
    if (!(fresh instanceof Agent)) return; // plain HTTP or a proxy: left as client-node made it
    shared ??= new Agent({ ...fresh.options, keepAlive: true });
    context.setAgent(shared);
  };
  return kc;
}
