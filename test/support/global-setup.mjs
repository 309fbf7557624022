// Plain ESM: jest imports global setup natively, not through ts-jest, so this uses the compiled
// harness (`npm test` builds first).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Federation } from '../../dist/tools/federation/src/index.js';

/** Starts one real federation (etcd, host + 2 members, controller managers) for all integration tests. */
export default async function globalSetup() {
  const stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-test-'));
  const federation = await Federation.start({
    stateDir,
    members: 2,
    log: (message) => process.stderr.write(`[federation] ${message}\n`),
  });
  const infoFile = join(stateDir, 'federation.json');
  writeFileSync(infoFile, JSON.stringify(federation.info));
  process.env.KARMADA_QUOTA_TEST_FEDERATION = infoFile;
  globalThis.karmadaQuotaTest = { federation, stateDir };
}
