import * as k8s from '@kubernetes/client-node';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { reuseConnections } from '#service-kit';
import type { ApiEndpoint } from '../../tools/federation/src/index.js';
import { client } from './federation.js';

/*
 * An API server that stops answering without closing its connections (its machine gone, a network
 * partition): what a call bounded in time must survive.
 */

/** A TCP proxy to `port`. `silence()` stops every open connection for good, and new ones until `restore()`. */
export async function silenceableProxy(port: number) {
  const open = new Set<{ silent: boolean }>();
  let silent = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const link = { silent };
    open.add(link);
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.on('data', (chunk) => link.silent || upstream.write(chunk));
    upstream.on('data', (chunk) => link.silent || downstream.write(chunk));
    downstream.on('close', () => upstream.destroy());
    upstream.on('close', () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    silence: () => {
      silent = true;
      for (const link of open) link.silent = true;
    },
    restore: () => {
      silent = false;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The endpoint's kubeconfig, but reaching it through the proxy on `port`, with the webhook's keep-alive agent. */
export function throughProxy(endpoint: ApiEndpoint, port: number, requestTimeoutMs?: number): k8s.KubeConfig {
  const direct = client(endpoint);
  const cluster = direct.getCurrentCluster()!;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }],
    users: direct.users,
    contexts: direct.contexts,
    currentContext: direct.currentContext,
  });
  return reuseConnections(kc, { requestTimeoutMs });
}

/** How `promise` settled within `ms`: 'resolved', its error, or 'still waiting'. */
export const settledWithin = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise.then(
      () => 'resolved' as const,
      (err: Error) => err,
    ),
    new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms).unref()),
  ]);
