import { Quantity } from '#quantity';
import { sleep } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { ChaosScenario } from './support/scenario.js';
import { expectRecountMatches } from './support/recount.js';
import type { CreateOutcome } from './support/tenant.js';

/**
 * Fault 1: the host API server (Karmada's control plane, where quotas, bindings and reservations
 * live) crashes and comes back while a burst of ResourceBindings is being admitted.
 */
const scenario = ChaosScenario.setUp('host-restart', {
  members: 1,
  quotas: { team: { cpu: '10', pods: '50' } },
});

test('a host API server crash during a burst of admissions neither leaks nor over-admits', async () => {
  // Usage before the fault: three running workloads of 1 CPU.
  for (let i = 0; i < 3; i++) {
    await scenario.tenant.createBinding(`before-${i}`, { replicas: 1, cpu: '1', cluster: 'member1' });
  }
  await scenario.tenant.propagateAll();
  await expectRecountMatches(scenario.tenant);

  // The burst: 8 clients create bindings of 250m (7 CPU free: room for 28) until the host is back
  // and they have each created 3 more; the host crashes once the first creates are through.
  let crashedAt = 0;
  let restartedAt = 0;
  const spans: { start: number; end: number; outcome: CreateOutcome }[] = [];
  const client = async (c: number) => {
    let afterRestart = 0;
    for (let i = 0; afterRestart < 3; i++) {
      const start = Date.now();
      const outcome = await scenario.tenant.createBinding(`burst-${c}-${i}`, {
        replicas: 1,
        cpu: '250m',
        cluster: 'member1',
      });
      spans.push({ start, end: Date.now(), outcome });
      if (restartedAt > 0 && start > restartedAt) afterRestart++;
      await sleep(200);
    }
  };
  const burst = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));

  await eventually(
    async () => spans.length,
    (done) => done >= 4,
    60_000,
  );
  crashedAt = Date.now();
  await scenario.chaos.federation.stopHost({ crash: true });
  await sleep(2_000);
  await scenario.chaos.federation.startHost();
  restartedAt = Date.now();
  await burst;

  const admitted = spans.filter((s) => s.outcome === 'admitted').length;
  // Creates caught by the outage: begun before the host could be back (it stays down at least 2 s),
  // finished after; each client starts its next create within ~200 ms, so the outage catches some.
  // Those in flight at the crash itself lost their answer: up to timing, so reported, not asserted.
  const downUntil = crashedAt + 2_000;
  const caught = spans.filter((s) => s.start < downUntil && s.end > downUntil).length;
  const inFlightAtCrash = spans.filter((s) => s.start < crashedAt && s.end > crashedAt).length;
  process.stderr.write(
    `[host-restart] host down ${restartedAt - crashedAt} ms; ${admitted} of ${spans.length} admitted, ` +
      `${caught} creates waited out the outage, ${inFlightAtCrash} were in flight at the crash; recorder reconnects ${scenario.recorder.reconnects}, relists ${scenario.recorder.relists}\n`,
  );

  // Every persisted binding holds exactly its charge; leaked reservations (admitted creates that
  // never persisted because the host died) have expired.
  const reserved = await expectRecountMatches(scenario.tenant, 120_000);
  // At least the admitted ones (a retried create whose first answer was lost may be refused and yet
  // have persisted the first time).
  expect(scenario.recorder.violations()).toEqual([]);
  expect(reserved.bindings).toBeGreaterThanOrEqual(3 + admitted);
  expect(caught).toBeGreaterThan(0); // the crash really hit the burst
  expect(admitted).toBeLessThanOrEqual(28);
  expect(spans.some((s) => s.outcome === 'denied')).toBe(true); // the limit was reached

  // Karmada propagates what was admitted: the reservations turn into usage, within the limit.
  await scenario.tenant.propagateAll();
  const final = await expectRecountMatches(scenario.tenant, 120_000);
  expect(final.used.cpu!.cmp(Quantity.parse('10'))).toBeLessThanOrEqual(0);
  expect(scenario.recorder.violations()).toEqual([]);
}, 600_000);
