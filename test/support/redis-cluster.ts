import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import {
  freePort,
  ManagedProcess,
  OrphanGuard,
  redisServerBinary,
  waitFor,
} from '../../tools/federation/src/index.js';

const run = promisify(execFile);

/**
 * A real Redis Cluster of three masters (`redis-server --cluster-enabled yes`, no replicas, no
 * persistence) on free ports, made with `redis-cli --cluster create`. The binaries are
 * `REDIS_SERVER` / `REDIS_CLI` or `redis-server` / `redis-cli` on the PATH.
 */
export class RedisCluster {
  private constructor(
    private readonly guard: OrphanGuard,
    private readonly servers: ManagedProcess[],
    readonly ports: number[],
  ) {}

  static async start(dir: string, size = 3): Promise<RedisCluster> {
    mkdirSync(dir, { recursive: true });
    const guard = OrphanGuard.start(join(dir, 'pids'));
    const cluster = new RedisCluster(guard, [], []);
    try {
      for (let i = 0; i < size; i++) {
        const port = await freePort();
        const nodeDir = join(dir, `node-${i}`);
        mkdirSync(nodeDir, { recursive: true });
        const server = ManagedProcess.start(
          `redis-${i}`,
          redisServerBinary(),
          [
            ...['--port', String(port), '--bind', '127.0.0.1', '--dir', nodeDir],
            ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
            ...['--save', '', '--appendonly', 'no'],
          ],
          { logFile: join(nodeDir, 'log') },
        );
        guard.track(server);
        cluster.servers.push(server);
        cluster.ports.push(port);
        await waitFor(
          `redis-server ${i} on port ${port}`,
          async () => {
            if (!server.running)
              throw new Error(`redis-server exited during start-up; its log:\n${server.logTail()}`);
            return (await cluster.cli(port, 'ping').catch(() => '')).trim() === 'PONG';
          },
          { timeoutMs: 30_000, describe: () => server.logTail() },
        );
      }
      await run(process.env.REDIS_CLI ?? 'redis-cli', [
        '--cluster',
        'create',
        ...cluster.ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      await waitFor(
        'the Redis Cluster to cover every slot on every node',
        async () => {
          const infos = await Promise.all(cluster.ports.map((port) => cluster.cli(port, 'cluster', 'info')));
          return infos.every((info) => info.includes('cluster_state:ok'));
        },
        { timeoutMs: 30_000 },
      );
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** `REDIS_CLUSTER_NODES` for the services: every node as host:port. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** A client of the cluster for the test itself. */
  client(): Cluster {
    return new Cluster(this.ports.map((port) => ({ host: '127.0.0.1', port })));
  }

  /** The port of the node serving a key's slot. */
  async nodeOf(key: string): Promise<number> {
    const node = new Redis(this.ports[0]!);
    try {
      const slot = (await node.cluster('KEYSLOT', key)) as number;
      const range = (await node.cluster('SLOTS')).find(([start, end]) => slot >= start && slot <= end);
      if (!range?.[2]) throw new Error(`no node serves slot ${slot} of ${key}`);
      return range[2][1];
    } finally {
      node.disconnect();
    }
  }

  /** Flushes one node only, as a master that restarted empty does (its slots lose their keys). */
  async flushNode(port: number): Promise<void> {
    await this.cli(port, 'flushall');
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()));
    this.guard.dispose();
  }

  private async cli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await run(process.env.REDIS_CLI ?? 'redis-cli', ['-p', String(port), ...args]);
    return stdout;
  }
}
