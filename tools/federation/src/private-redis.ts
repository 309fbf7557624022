import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RedisServer, redisServerBinary } from './components.js';
import { OrphanGuard } from './processes.js';

/** A private redis-server of its own, outside any federation. */
export interface PrivateRedis {
  /** `redis://127.0.0.1:PORT/db`. */
  url(db?: number): string;
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server (RedisServer: a free port on 127.0.0.1, no persistence, its data
 * and log in `dir`) that no federation owns: what jest's global setup runs for the whole test run
 * when no REDIS_URL is given. It never outlives this process, even one killed with SIGKILL (an
 * orphan guard, as for a federation's processes).
 */
export async function startPrivateRedis(dir: string): Promise<PrivateRedis> {
  redisServerBinary(); // no redis-server: say how to get one before starting anything
  mkdirSync(dir, { recursive: true });
  const guard = OrphanGuard.start(join(dir, 'pids'));
  const server = await RedisServer.create(join(dir, 'redis'), guard);
  const stop = async () => {
    await server.stop();
    guard.dispose();
  };
  try {
    await server.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: (db) => server.url(db), stop };
}
