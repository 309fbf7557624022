import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { RECONCILE_QUEUE, RECONCILE_QUEUE_PREFIX } from '#usage';
import { sleep, type RunningService } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { ChaosFederation } from './support/chaos-federation.js';
import { get } from './support/metrics.js';
import { expectRecountMatches } from './support/recount.js';
import { StatusRecorder } from './support/recorder.js';
import { Tenant } from './support/tenant.js';

/**
 * Fault 4: a reconciler worker is killed (SIGKILL) while it runs a job. The job's lock lapses and
 * another worker must run it again (BullMQ's stalled-job recovery); nothing the first worker wrote
 * half-way may stay wrong, and no reconcile job of the namespace may end failed, however busy the
 * machine is. A namespace with many quotas makes one job long enough to be caught running: it
 * writes every quota's status, one compare-and-swap each.
 */
const QUOTAS = 60;
/** Tries at catching the job mid-run; each misses only if the job ends between two polls. */
const CATCH_TRIES = 5;
/** Bounds only a hang: the stall recovery takes about a minute, however busy the machine is. */
const SETTLE_TIMEOUT_MS = 420_000;

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
  queue = new Queue(RECONCILE_QUEUE, { connection, prefix: RECONCILE_QUEUE_PREFIX });
}, 600_000);

afterAll(async () => {
  recorder?.stop();
  await queue?.close();
  connection?.disconnect(); // BullMQ leaves a connection it was given open
  await chaos?.stop();
});

const jobsOf = async (namespace: string, states: Parameters<Queue['getJobs']>[0]): Promise<Job[]> =>
  (await queue.getJobs(states)).filter((job) => job.data?.namespace === namespace);

/**
 * Makes every quota's used change (a new workload's pods appear), then SIGKILLs the first worker
 * while it runs the resulting job: the second worker is paused meanwhile, so the job stays active
 * under the dead worker's lock. Tries again with another workload when the job ended first.
 */
async function killFirstWorkerMidJob(): Promise<Job> {
  second.process.pause();
  for (let attempt = 1; attempt <= CATCH_TRIES; attempt++) {
    const startedAt = Date.now();
    const pods = String(2 + attempt - 1); // `web` has 2 replicas, each later workload 1
    if (attempt > 1)
      await tenant.createBinding(`web-${attempt}`, { replicas: 1, cpu: '1', cluster: 'member1' });
    await tenant.propagateAll();
    const written = () =>
      new Set(recorder.samples.filter((s) => s.at >= startedAt && s.used.pods === pods).map((s) => s.quota))
        .size;
    let running: Job | undefined;
    while (!running) {
      const [active] = await jobsOf(tenant.namespace, ['active']);
      if (active && written() > 0) running = active;
      else if (written() === QUOTAS)
        break; // the job ended between two polls
      else if (Date.now() - startedAt > SETTLE_TIMEOUT_MS)
        throw new Error(
          `no reconcile of ${tenant.namespace} wrote its quotas; the first worker's log:\n${first.process.logTail()}`,
        );
      else await sleep(10);
    }
    // Frozen first, so that the job's state read after the kill is where the worker was stopped.
    first.process.pause();
    await first.process.kill();
    if (running && (await queue.getJobState(running.id!)) === 'active') {
      process.stderr.write(
        `[reconciler-kill] killed the worker running job ${running.id} with ${written()} of ${QUOTAS} ` +
          `quotas written (try ${attempt})\n`,
      );
      return running;
    }
    first = await chaos.restart(first);
  }
  throw new Error(`every reconcile job ended before the worker could be killed (${CATCH_TRIES} tries)`);
}

const stalledRetries = async (service: RunningService): Promise<number> => {
  const { body } = await get(`${service.url}/metrics`);
  return Number(
    /^karmada_quota_reconcile_retries_total\{[^}]*cause="stalled"[^}]*\} (\d+)/m.exec(body)?.[1] ?? 0,
  );
};

test('a reconciler worker killed mid-job: another worker runs the job again, and no job fails', async () => {
  await tenant.createBinding('web', { replicas: 2, cpu: '1', cluster: 'member1' });
  await expectRecountMatches(tenant, 120_000);

  const job = await killFirstWorkerMidJob();
  second.process.resume();

  // Done when the killed job has finished (completed jobs are removed) and the namespace has no
  // job left to run: a failing reconcile stays delayed for its next try, never failed.
  await eventually(
    async () => ({
      killedJob: await queue.getJob(job.id!),
      pending: await jobsOf(tenant.namespace, ['waiting', 'active', 'delayed', 'prioritized']),
    }),
    ({ killedJob, pending }) =>
      (killedJob === undefined || killedJob.finishedOn !== undefined) && pending.length === 0,
    SETTLE_TIMEOUT_MS,
  );
  const failed = await jobsOf(tenant.namespace, ['failed']);
  expect(failed.map((j) => `job ${j.id}: ${j.failedReason}`)).toEqual([]);
  expect(await stalledRetries(second)).toBeGreaterThan(0); // the second worker took the job over
  await expectRecountMatches(tenant, SETTLE_TIMEOUT_MS);
  expect(first.process.running).toBe(false);
  expect(second.process.running).toBe(true);
  expect(recorder.violations()).toEqual([]);
}, 600_000);
