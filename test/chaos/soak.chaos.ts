import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import type { ResourceBinding } from '#api';
import { sleep, type RunningService } from '../../tools/federation/src/index.js';
import { ChaosFederation } from './support/chaos-federation.js';
import { mib, processFigures, type ProcessFigures } from './support/metrics.js';
import { expectRecountMatches } from './support/recount.js';
import { StatusRecorder } from './support/recorder.js';
import { Tenant } from './support/tenant.js';

/**
 * Fault 8: a soak at steady admission and pod churn (CHAOS_SOAK_SECONDS: 120 in `npm test`, 600 in
 * `npm run test:soak`).
 * Workloads are admitted, propagated and retired in a rolling window while pods are deleted at
 * random (their ReplicaSets recreate them). Every service's memory and open handles and the Redis
 * key count are sampled; after a warm-up (the first quarter) they must not grow beyond the bounds
 * below, and the quota must still match the independent recount at the end.
 */
const SOAK_SECONDS = Number(process.env.CHAOS_SOAK_SECONDS ?? 120);
const SAMPLE_EVERY_MS = Math.min(15_000, (SOAK_SECONDS * 1000) / 12);
/** Live workloads kept in the rolling window. */
const WINDOW = 12;

/**
 * V8 grows RSS towards a plateau over about five minutes (the reconciler's from ~180 to ~450 MiB),
 * so only a soak of ten minutes or more can tell a leak from that climb: shorter ones (the one in
 * `npm test`) judge the heap, handles and Redis keys, and print RSS.
 */
const RSS_JUDGED = SOAK_SECONDS >= 600;

/** Growth allowed from the warm-up baseline to the end, per service. */
const BOUNDS = {
  rssBytes: 64 * 1024 * 1024,
  heapUsedBytes: 32 * 1024 * 1024,
  activeHandles: 50,
  /**
   * Redis keys that never expire beyond the most seen during warm-up. Keys with a time to live (a
   * waiting change's admission mark, for a minute) cannot leak: their number follows the admission
   * rate, and they are printed apart.
   */
  redisKeys: 20,
};

let chaos: ChaosFederation;
let tenant: Tenant;
let recorder: StatusRecorder;
let services: RunningService[];
let redis: Redis;

beforeAll(async () => {
  chaos = await ChaosFederation.start('soak', { members: 2 });
  services = await chaos.startServices(['webhook', 'aggregator', 'reconciler']);
  tenant = await Tenant.create(chaos, 'soak', { team: { cpu: '12', pods: '100' } });
  recorder = new StatusRecorder(tenant);
  await recorder.start();
  redis = new Redis(chaos.redis.url());
}, 300_000);

afterAll(async () => {
  recorder?.stop();
  redis?.disconnect();
  await chaos?.stop();
});

interface Sample {
  at: number;
  figures: Record<string, ProcessFigures>;
  /** Keys without a time to live. */
  redisKeys: number;
  expiringKeys: number;
}

/** Redis's keys, those that never expire apart from those with a time to live. */
async function countKeys(): Promise<{ redisKeys: number; expiringKeys: number }> {
  let redisKeys = 0;
  let expiringKeys = 0;
  for await (const keys of redis.scanStream({ count: 500 }) as AsyncIterable<string[]>) {
    if (keys.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.pttl(key);
    for (const [, ttl] of (await pipeline.exec()) ?? []) {
      // -1: no expiry; -2: gone since the scan.
      if (ttl === -1) redisKeys++;
      else if (typeof ttl === 'number' && ttl >= 0) expiringKeys++;
    }
  }
  return { redisKeys, expiringKeys };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

test(
  `a ${SOAK_SECONDS} s soak: no growth in memory, handles or Redis keys`,
  async () => {
    const startedAt = Date.now();
    const endAt = startedAt + SOAK_SECONDS * 1000;
    const samples: Sample[] = [];
    const counters = { admitted: 0, denied: 0, retired: 0, podsDeleted: 0 };

    const sample = async () => {
      const figures: Record<string, ProcessFigures> = {};
      for (const s of services) figures[s.name] = await processFigures(s.url);
      samples.push({ at: Date.now(), figures, ...(await countKeys()) });
    };

    const live: ResourceBinding[] = [];
    let n = 0;
    const admissions = async () => {
      while (Date.now() < endAt) {
        const name = `w-${n++}`;
        const shape = { replicas: 1 + (n % 3), cpu: '250m', cluster: n % 2 === 0 ? 'member1' : 'member2' };
        if ((await tenant.createBinding(name, shape)) === 'admitted') {
          counters.admitted++;
          const rb = tenant.binding(name, shape);
          await tenant.propagate(rb);
          live.push(rb);
        } else counters.denied++;
        if (live.length > WINDOW) {
          await tenant.retire(live.shift()!);
          counters.retired++;
        }
        await sleep(250);
      }
    };
    const churn = async () => {
      let i = 0;
      while (Date.now() < endAt) {
        const member = chaos.members[i++ % chaos.members.length]!.name;
        const core = chaos.memberApi(member, k8s.CoreV1Api);
        const pods = (await core.listNamespacedPod({ namespace: tenant.namespace })).items;
        const victim = pods[i % Math.max(pods.length, 1)];
        if (victim) {
          await core
            .deleteNamespacedPod({
              namespace: tenant.namespace,
              name: victim.metadata!.name!,
              gracePeriodSeconds: 0,
            })
            .then(() => counters.podsDeleted++)
            .catch(() => undefined); // already gone with its workload
        }
        await sleep(1_000);
      }
    };
    const sampler = async () => {
      while (Date.now() < endAt) {
        await sample();
        await sleep(SAMPLE_EVERY_MS);
      }
      await sample();
    };
    await Promise.all([admissions(), churn(), sampler()]);

    // Drain the window: the final recount covers a quiet namespace.
    await expectRecountMatches(tenant, 120_000);
    for (const rb of live.splice(0)) await tenant.retire(rb);
    await expectRecountMatches(tenant, 120_000);
    expect(recorder.violations()).toEqual([]);

    const warmupEnd = startedAt + (SOAK_SECONDS * 1000) / 4;
    const warm = samples.filter((s) => s.at <= warmupEnd);
    const steady = samples.filter((s) => s.at > warmupEnd);
    const tail = steady.slice(-Math.max(1, Math.floor(steady.length / 3)));
    const lines = [
      `[soak] ${SOAK_SECONDS} s: ${JSON.stringify(counters)}, ${recorder.samples.length} status versions`,
    ];
    const failures: string[] = [];
    for (const s of services) {
      const series = (pick: (f: ProcessFigures) => number | undefined) =>
        samples.map((x) => pick(x.figures[s.name]!)).filter((v): v is number => v !== undefined);
      lines.push(
        `[soak] ${s.name.padEnd(10)} RSS MiB ${series((f) => f.rssBytes)
          .map((v) => (v / 2 ** 20).toFixed(0))
          .join(' ')}`,
        `[soak] ${s.name.padEnd(10)} heap MiB ${series((f) => f.heapUsedBytes)
          .map((v) => (v / 2 ** 20).toFixed(0))
          .join(' ')}`,
        `[soak] ${s.name.padEnd(10)} handles ${series((f) => f.activeHandles).join(' ')}`,
      );
      const judged = RSS_JUDGED
        ? (['rssBytes', 'heapUsedBytes', 'activeHandles'] as const)
        : (['heapUsedBytes', 'activeHandles'] as const);
      for (const key of judged) {
        const at = (set: Sample[]) =>
          median(set.map((x) => x.figures[s.name]![key]).filter((v): v is number => v !== undefined));
        // V8 grows its heap space towards a plateau over minutes and gives it back in steps, so RSS
        // is compared with the most seen in the soak's first half (a leak still climbs past it in
        // the second); the heap and handles with the median of the warm-up's second half. The heap
        // at the end is its floor over the last third (a sample can fall anywhere on the
        // collector's sawtooth; a leak raises the floor).
        const firstHalf = samples.filter((x) => x.at <= startedAt + (SOAK_SECONDS * 1000) / 2);
        const baseline =
          key === 'rssBytes'
            ? Math.max(...firstHalf.map((x) => x.figures[s.name]![key] ?? 0))
            : at(warm.slice(-Math.max(1, Math.floor(warm.length / 2))));
        const end =
          key === 'heapUsedBytes'
            ? Math.min(...tail.map((x) => x.figures[s.name]![key] ?? Infinity))
            : at(tail);
        const growth = end - baseline;
        const shown = key === 'activeHandles' ? String : mib;
        lines.push(
          `[soak] ${s.name.padEnd(10)} ${key}: ${shown(baseline)} after warm-up -> ${shown(end)} at the end`,
        );
        if (growth > BOUNDS[key])
          failures.push(`${s.name} ${key} grew by ${shown(growth)} (bound ${shown(BOUNDS[key])})`);
      }
    }
    const warmKeys = Math.max(...warm.map((x) => x.redisKeys));
    const steadyKeys = Math.max(...steady.map((x) => x.redisKeys));
    lines.push(
      `[soak] Redis keys ${samples.map((x) => x.redisKeys).join(' ')} (warm-up max ${warmKeys}, after ${steadyKeys}); expiring ${samples.map((x) => x.expiringKeys).join(' ')}`,
    );
    if (steadyKeys > warmKeys + BOUNDS.redisKeys)
      failures.push(`Redis keys grew from ${warmKeys} to ${steadyKeys} (bound +${BOUNDS.redisKeys})`);
    if (!RSS_JUDGED)
      lines.push(`[soak] RSS not judged: ${SOAK_SECONDS} s is too short to tell a leak from V8's climb`);
    process.stderr.write(`${lines.join('\n')}\n`);
    expect(counters.admitted).toBeGreaterThan(WINDOW);
    expect(counters.podsDeleted).toBeGreaterThan(0);
    expect(warm.length).toBeGreaterThan(0);
    expect(steady.length).toBeGreaterThan(1);
    expect(failures).toEqual([]);
  },
  (SOAK_SECONDS + 600) * 1000,
);
