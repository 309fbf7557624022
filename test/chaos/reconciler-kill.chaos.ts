import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { RECONCILE_QUEUE } from '#usage';
import { sleep, type RunningService } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { ChaosFederation } from './support/chaos-federation.js';
import { expectRecountMatches } from './support/recount.js';
import { StatusRecorder } from './support/recorder.js';
import { Tenant } from './support/tenant.js';

/**
 * Fault 4: a reconciler worker is killed (SIGKILL) while it runs a job. The job's lock lapses and
 * another worker must run it again (BullMQ's stalled-job recovery); nothing the first worker wrote
 * half-way may stay wrong. A namespace with many quotas makes one job long enough to be caught
 * running: it writes every quota's status, one compare-and-swap each.
 */
const QUOTAS = 60;

let chaos: ChaosFederation;
let tenant: Tenant;
let recorder: StatusRecorder;
let first: RunningService;
let second: RunningService;
let connection: Redis;
let queue: Queue;

beforeAll(async () => {
  chaos = await ChaosFederation.start('reconciler-kill', { members: 1 });
  await chaos.startServices(['webhook', 'aggregator']);
  first = await chaos.startService('reconciler', { instance: 'first' });
  second = await chaos.startService('reconciler', { instance: 'second' });
  const quotas = Object.fromEntries(
    Array.from({ length: QUOTAS }, (_, i) => [`team-${i}`, { cpu: '100', pods: '100' }]),
  );
  tenant = await Tenant.create(chaos, 'reconciler-kill', quotas);
  recorder = new StatusRecorder(tenant);
  await recorder.start();
  connection = new Redis(chaos.redis.url(), { maxRetriesPerRequest: null });
  queue = new Queue(RECONCILE_QUEUE, { connection });
}, 600_000);

afterAll(async () => {
  recorder?.stop();
  await queue?.close();
  connection?.disconnect(); // BullMQ leaves a connection it was given open
  await chaos?.stop();
});

const activeJobOf = async (namespace: string): Promise<Job | undefined> =>
  (await queue.getActive()).find((job) => job.data?.namespace === namespace);

test('a reconciler worker killed mid-job: another worker runs the job again', async () => {
  await tenant.createBinding('web', { replicas: 2, cpu: '1', cluster: 'member1' });
  await expectRecountMatches(tenant, 120_000);

  // Only the first worker takes jobs now: the second hangs (SIGSTOP) until the first is dead.
  second.process.pause();
  const startedAt = Date.now();
  await tenant.propagateAll(); // the pods appear: a job rewrites all the quotas' used and reserved
  const writtenSince = () =>
    new Set(recorder.samples.filter((s) => s.at >= startedAt && s.used.pods === '2').map((s) => s.quota))
      .size;
  // Kill it once the job is running and has written some of the quotas, not all.
  let job: Job | undefined;
  while (Date.now() - startedAt < 60_000) {
    job = await activeJobOf(tenant.namespace);
    if (job && writtenSince() > 0) break;
    await sleep(10);
  }
  await first.process.kill();
  const written = writtenSince();
  expect(job).toBeDefined();
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(QUOTAS);
  second.process.resume();
  process.stderr.write(`[reconciler-kill] killed the worker with ${written} of ${QUOTAS} quotas written\n`);

  // The job is retried by the second worker once the dead one's lock lapses (BullMQ: about 30-60 s).
  const retried = await eventually(
    () => queue.getJob(job!.id!),
    (j) => j === undefined || j.finishedOn !== undefined,
    180_000,
  );
  if (retried) expect(retried.failedReason ?? '').toBe('');
  await expectRecountMatches(tenant, 120_000);
  expect(first.process.running).toBe(false);
  expect(second.process.running).toBe(true);
  expect(recorder.violations()).toEqual([]);
}, 600_000);
