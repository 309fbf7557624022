import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { RESOURCE_BINDING } from '#api';
import { Quantity } from '#quantity';
import { sleep, type RunningService } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { ChaosFederation } from './support/chaos-federation.js';
import { expectRecountMatches } from './support/recount.js';
import { StatusRecorder } from './support/recorder.js';
import { Tenant } from './support/tenant.js';

/**
 * Fault 2: Redis (usage snapshots and the reconcile queue) crashes and comes back empty, then is
 * flushed while everything runs. Redis is a private redis-server without persistence: a restart
 * loses every key, as a crashed Redis without a volume does.
 *
 * Two namespaces: `running` has pods in the member (usage the aggregator must publish again), and
 * `reserved` has only reservations (bindings whose pods do not exist yet): no usage event will
 * ever trigger its reconcile, so nothing but the product's own recovery can settle it.
 */
let chaos: ChaosFederation;
let running: Tenant;
let reserved: Tenant;
let recorders: StatusRecorder[];
let redis: Redis;
let reconciler: RunningService;

/** Workloads that exist from start to end: `status.used` must never count them as zero. */
const STEADY_PODS = 3;

beforeAll(async () => {
  chaos = await ChaosFederation.start('redis', { members: 1 });
  await chaos.startServices(['webhook', 'aggregator']);
  reconciler = await chaos.startService('reconciler');
  running = await Tenant.create(chaos, 'redis-running', { team: { cpu: '10', pods: '50' } });
  reserved = await Tenant.create(chaos, 'redis-reserved', { team: { cpu: '10', pods: '50' } });
  recorders = [new StatusRecorder(running), new StatusRecorder(reserved)];
  for (const r of recorders) await r.start();
  redis = new Redis(chaos.redis.url(), { maxRetriesPerRequest: null });
}, 300_000);

afterAll(async () => {
  recorders?.forEach((r) => r.stop());
  redis?.disconnect();
  await chaos?.stop();
});

const shape = { replicas: 1, cpu: '1', cluster: 'member1' };

/** How many times the reconciler found the reconcile queue gone and reconciled everything again. */
const queueLossesNoticed = () =>
  reconciler.process.logTail(100_000).split('the reconcile queue has no record of earlier work').length - 1;

const deleteBinding = (tenant: Tenant, name: string) =>
  tenant.chaos.hostApi(k8s.CustomObjectsApi).deleteNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: tenant.namespace,
    name,
  });

test('a Redis crash (restart with no data) and a flush: usage rebuilt, work redone, admissions go on', async () => {
  for (let i = 0; i < STEADY_PODS; i++) await running.createBinding(`steady-${i}`, shape);
  await running.createBinding('retired-during-crash', shape);
  await running.createBinding('retired-during-flush', shape);
  await running.propagateAll();
  for (const name of ['kept', 'deleted-during-crash', 'deleted-during-flush'])
    await reserved.createBinding(name, shape);
  await expectRecountMatches(running);
  await expectRecountMatches(reserved);

  // Redis crashes. The webhook does not need it: admissions go on; pods come and go meanwhile.
  await chaos.redis.stop({ crash: true });
  expect(await running.createBinding('admitted-during-crash', shape)).toBe('admitted');
  expect(await reserved.createBinding('admitted-during-crash', shape)).toBe('admitted');
  await running.propagateAll();
  await running.retire((await running.bindings()).find((b) => b.metadata!.name === 'retired-during-crash')!);
  await deleteBinding(reserved, 'deleted-during-crash');
  await sleep(3_000); // the aggregator and reconciler keep failing against the dead Redis meanwhile
  await chaos.redis.start(); // empty: no snapshots, no queue, no deleted-binding records
  // The reconciler notices that the queue was lost with everything else (its start was the first).
  await eventually(
    async () => queueLossesNoticed(),
    (n) => n >= 2,
    30_000,
  );

  // Rebuilt well before the periodic resync (300 s) could be what repaired it.
  await expectRecountMatches(running, 90_000);
  await expectRecountMatches(reserved, 90_000);

  // Redis is flushed under the running services (no reconnect to notice).
  await redis.flushall();
  await eventually(
    async () => queueLossesNoticed(),
    (n) => n >= 3,
    30_000,
  );
  expect(await running.createBinding('admitted-after-flush', shape)).toBe('admitted');
  await running.propagateAll();
  await running.retire((await running.bindings()).find((b) => b.metadata!.name === 'retired-during-flush')!);
  await deleteBinding(reserved, 'deleted-during-flush');
  await expectRecountMatches(running, 90_000);
  await expectRecountMatches(reserved, 90_000);

  for (const r of recorders) expect(r.violations()).toEqual([]);
  // The steady pods existed throughout: once counted, no version of the status may drop below them.
  const pods = (s: { used: Record<string, string> }) => Quantity.parse(s.used.pods ?? '0');
  const steady = Quantity.parse(String(STEADY_PODS));
  const samples = recorders[0]!.of('team');
  const counted = samples.findIndex((s) => pods(s).cmp(steady) >= 0);
  const undercounted = samples.slice(counted).filter((s) => pods(s).cmp(steady) < 0);
  expect(counted).toBeGreaterThanOrEqual(0);
  expect(undercounted.map((s) => `${s.resourceVersion}: used ${JSON.stringify(s.used)}`)).toEqual([]);
}, 600_000);
