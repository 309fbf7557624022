import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RECONCILE_QUEUE, RECONCILE_QUEUE_PREFIX, type ReconcileJob } from '#usage';
import { sleep } from '../../federation/src/index.js';

/** The reconciler's queue on the bench's Redis database, and how to let go of it. */
export function openReconcileQueue(redisUrl: string): {
  queue: Queue<ReconcileJob>;
  close: () => Promise<void>;
} {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue<ReconcileJob>(RECONCILE_QUEUE, {
    connection: redis,
    prefix: RECONCILE_QUEUE_PREFIX,
  });
  return {
    queue,
    close: async () => {
      await queue.close();
      redis.disconnect();
    },
  };
}

/**
 * Waits until the reconciler has no job waiting, running or due; `progress` hears the counts every
 * 10 s meanwhile, so a long drain shows what it is waiting for.
 */
export async function waitForIdleQueue(
  queue: Queue<ReconcileJob>,
  timeoutMs: number,
  progress?: (line: string) => void,
): Promise<void> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let nextProgress = started + 10_000;
  for (;;) {
    const counts = await queue.getJobCounts(
      'waiting',
      'active',
      'delayed',
      'prioritized',
      'waiting-children',
    );
    const busy = Object.values(counts).reduce((sum, n) => sum + n, 0);
    if (busy === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the reconcile queue still holds ${JSON.stringify(counts)} after ${timeoutMs / 1000} s`,
      );
    if (progress && Date.now() >= nextProgress) {
      progress(
        `reconcile queue after ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(counts)}; ` +
          `queued for: ${await waitingReasons(queue)}`,
      );
      nextProgress += 10_000;
    }
    await sleep(10);
  }
}

/** What the first 100 waiting jobs were queued for, names left out: "KarmadaQuota * changed" x 80, ... */
async function waitingReasons(queue: Queue<ReconcileJob>): Promise<string> {
  const counts = new Map<string, number>();
  for (const job of await queue.getWaiting(0, 99)) {
    const reason = String(job.data?.reason ?? '?').replace(/^(KarmadaQuota|ResourceBinding) \S+/, '$1 *');
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([reason, n]) => `"${reason}" x ${n}`).join(', ') || 'nothing';
}
