import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy spreading connections over `ports` in turn, as a Service spreads them over its pods
 * (TLS passes through: every upstream serves the same certificate). A connection to an upstream that
 * refuses it (its process killed) goes to the next one; a stopped process accepts and never answers.
 */
export async function roundRobinProxy(ports: readonly number[]) {
  const sockets = new Set<Socket>();
  let next = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((downstream) => {
    track(downstream);
    downstream.pause();
    const tryUpstream = (attempt: number) => {
      if (attempt >= ports.length) return downstream.destroy();
      const port = ports[next++ % ports.length]!;
      const upstream = connect(port, '127.0.0.1');
      upstream.once('error', () => tryUpstream(attempt + 1));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        track(upstream);
        downstream.pipe(upstream).pipe(downstream);
        downstream.on('close', () => upstream.destroy());
        upstream.on('close', () => downstream.destroy());
        downstream.resume();
      });
    };
    tryUpstream(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
