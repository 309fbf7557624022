import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import {
  RECONCILE_JOB_NAME,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_PREFIX,
  reconcileJobOptions,
  requestCount,
  type ReconcileJob,
} from '#usage';
import { testRedisUrl } from '../../../test/support/federation.js';
import type { ReconcilerConfig } from './config.js';
import type { NamespaceReconcile, ReconcileService } from './reconcile.service.js';
import { RETRY_EVERY_MS, ReconcileWorker } from './reconcile.worker.js';
import type { TriggersService } from './triggers.service.js';

// Real BullMQ on a Redis database of this file's own: the retry guarantee lives in its scripts.
const REDIS_URL = testRedisUrl(14);
const NAMESPACE = 'team-a';
const done: NamespaceReconcile = { quotas: 1, written: 1, conflicts: 0, skipped: false };

let redis: Redis;
let queueConnection: Redis;
let queue: Queue<ReconcileJob>;
let metrics: Registry;
let worker: ReconcileWorker | undefined;

beforeEach(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await redis.flushdb();
  queueConnection = redis.duplicate();
  queue = new Queue<ReconcileJob>(RECONCILE_QUEUE, {
    connection: queueConnection,
    prefix: RECONCILE_QUEUE_PREFIX,
  });
  metrics = new Registry();
});

afterEach(async () => {
  await worker?.onModuleDestroy();
  worker = undefined;
  await queue.close();
  queueConnection.disconnect(); // BullMQ leaves a connection it was given open
  redis.disconnect();
});

/**
 * A reconcile service whose reconcileNamespace answers the given results in turn, then succeeds;
 * `restamps` says of each call whether it was a count on request.
 */
function reconcileAnswering(...results: Error[]): {
  service: ReconcileService;
  calls: string[];
  restamps: boolean[];
} {
  const calls: string[] = [];
  const restamps: boolean[] = [];
  const reconcileNamespace = async (
    namespace: string,
    { restamp = false } = {},
  ): Promise<NamespaceReconcile> => {
    const failure = results[calls.length];
    calls.push(namespace);
    restamps.push(restamp);
    if (failure) throw failure;
    return done;
  };
  return { service: { reconcileNamespace } as unknown as ReconcileService, calls, restamps };
}

function startWorker(service: ReconcileService): void {
  // No ClusterKarmadaQuota selects any namespace here.
  const triggers = {
    namespaceReconciled: async () => {},
    waitingOnClusterQuota: async () => {},
  } as unknown as TriggersService;
  worker = new ReconcileWorker(
    service,
    triggers,
    redis,
    { WORKER_CONCURRENCY: 1 } as ReconcilerConfig,
    metrics,
  );
  worker.onApplicationBootstrap();
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function retries(cause: string): Promise<number> {
  const counter = await metrics.getSingleMetric('karmada_quota_reconcile_retries_total')!.get();
  return counter.values.find((v) => v.labels.cause === cause)?.value ?? 0;
}

const addJob = (data: ReconcileJob, options: Partial<ReturnType<typeof reconcileJobOptions>> = {}) =>
  queue.add(RECONCILE_JOB_NAME, data, { ...reconcileJobOptions(NAMESPACE), ...options });

test('a reconcile failing past its attempts is delayed, never failed, until it succeeds', async () => {
  const down = new Error('connect ECONNREFUSED 127.0.0.1:6443');
  const { service, calls } = reconcileAnswering(down, down, down);
  startWorker(service);
  // Two attempts with a short back-off: BullMQ's own retry, then the worker's.
  const job = await addJob(
    { namespace: NAMESPACE, reason: 'test' },
    { attempts: 2, backoff: { type: 'exponential', delay: 10 } },
  );

  for (const runs of [2, 3]) {
    await until(
      `run ${runs} failed and was delayed`,
      async () => calls.length === runs && (await queue.getJobState(job.id!)) === 'delayed',
    );
    const delayed = (await queue.getJob(job.id!))!;
    // BullMQ derives the delay from the due time and its own clock read: a millisecond may pass between.
    expect(delayed.delay).toBeGreaterThan(RETRY_EVERY_MS - 1000);
    expect(delayed.delay).toBeLessThanOrEqual(RETRY_EVERY_MS);
    expect(delayed.attemptsMade).toBe(1); // spent, yet the job is not failed
    await delayed.promote(); // instead of waiting RETRY_EVERY_MS
  }

  await until('the job completed', async () => (await queue.getJob(job.id!)) === undefined);
  expect(calls).toEqual([NAMESPACE, NAMESPACE, NAMESPACE, NAMESPACE]);
  expect(await queue.getFailedCount()).toBe(0);
  expect(await retries('error')).toBe(3);
});

test('a job stalled more often than BullMQ allows by default still runs to completion', async () => {
  const { service, calls } = reconcileAnswering();
  const job = await addJob({ namespace: NAMESPACE, reason: 'test' });
  // A worker takes the job and dies holding it: its lock lapses with the job still active.
  const deadConnection = redis.duplicate({ maxRetriesPerRequest: null });
  const dead = new Worker<ReconcileJob>(RECONCILE_QUEUE, null, {
    connection: deadConnection,
    prefix: RECONCILE_QUEUE_PREFIX,
    lockDuration: 50,
  });
  expect((await dead.getNextJob('dead-worker'))?.id).toBe(job.id);
  await dead.close();
  deadConnection.disconnect();
  await until(
    'the dead worker lock lapsed',
    async () => (await redis.exists(`${queue.toKey(job.id!)}:lock`)) === 0,
  );
  // As BullMQ records it after five earlier stalls and a check that saw this one's lock lapse.
  await redis.hset(queue.toKey(job.id!), 'stc', 5);
  await redis.sadd(queue.keys.stalled!, job.id!);

  startWorker(service); // a worker's stalled check runs as it starts
  await until('the job completed', async () => (await queue.getJob(job.id!)) === undefined);
  expect(calls).toEqual([NAMESPACE]);
  expect(await queue.getFailedCount()).toBe(0);
  expect(await retries('stalled')).toBe(1);
});

test('a malformed job fails for good without a reconcile', async () => {
  const { service, calls } = reconcileAnswering();
  startWorker(service);
  const job = await addJob({ namespace: 'Team A', reason: 'test' });
  await until('the job failed', async () => (await queue.getJobState(job.id!)) === 'failed');
  const failed: Job | undefined = await queue.getJob(job.id!);
  expect(failed?.failedReason).toBe(
    'invalid reconcile job: namespace: must be a DNS-1123 name, got "Team A"',
  );
  expect(failed?.attemptsMade).toBe(1);
  expect(calls).toEqual([]);
});

test('a count on request queued behind a waiting plain reconcile still runs, as a restamp', async () => {
  const { service, calls, restamps } = reconcileAnswering();
  // Both added before any worker runs: under one deduplication id the second add would be dropped.
  await addJob({ namespace: NAMESPACE, reason: 'binding changed' });
  await requestCount(queue, { namespace: NAMESPACE }, 'owner takeover');
  expect(await queue.getWaitingCount()).toBe(2);
  startWorker(service);
  await until('both jobs ran', async () => calls.length === 2);
  expect(calls).toEqual([NAMESPACE, NAMESPACE]);
  expect(restamps).toEqual([false, true]);
});
