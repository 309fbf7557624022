// Plain ESM: jest imports global setup natively, not through ts-jest, so this uses the compiled
// harness (`npm test` builds first).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Federation, startServices } from '../../dist/tools/federation/src/index.js';
import { acquireTestRedis } from './test-redis.mjs';

/**
 * Starts one real federation (etcd, host + 2 members, controller managers) for all integration
 * tests, with the quota webhook running and registered on the host. Its host API server is
 * reachable from containers too, for the compose test (test/container-image.test.ts). Redis is
 * REDIS_URL's, or a private redis-server when none is given (test-redis.mjs).
 */
export default async function globalSetup() {
  await acquireTestRedis();
  const stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-test-'));
  const federation = await Federation.start({
    stateDir,
    members: 2,
    hostReachableFromContainers: true,
    log: (message) => process.stderr.write(`[federation] ${message}\n`),
  });
  globalThis.karmadaQuotaTest = { federation, stateDir };
  const [webhook] = await startServices(federation, {
    redisUrl: process.env.REDIS_URL,
    services: ['webhook'],
    env: { RESERVATION_TTL_SECONDS: '5', ADMISSION_LANDING_WINDOW_SECONDS: '2' },
  });
  const infoFile = join(stateDir, 'federation.json');
  writeFileSync(infoFile, JSON.stringify({ ...federation.info, webhookUrl: webhook.url }));
  process.env.KARMADA_QUOTA_TEST_FEDERATION = infoFile;
}
