import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ResourceBinding } from '#api';
import { bindingCharge } from '#quota';
import {
  Federation,
  karmadaWorkload,
  sleep,
  startServices,
  type KarmadaWorkload,
} from '../tools/federation/src/index.js';
import { eventually, testRedisUrl } from './support/federation.js';
import { cpu, karmadaSuite } from './support/karmada.js';

/**
 * Real Karmada v1.18 (default feature gates) failing a workload over with a graceful eviction
 * (docs/concepts/binding-cost.md#moves-and-graceful-eviction): members have no kubelet, so a member
 * Deployment never has available replicas, Karmada's health interpreter calls it Unhealthy, and its
 * application failover controller evicts the cluster after `tolerationSeconds`. In ONE binding update
 * it removes the cluster from spec.clusters and lists it in spec.gracefulEvictionTasks (with the
 * cluster's replicas); the scheduler then places the replicas elsewhere while the old copy runs on.
 * That write asks the quota for the copy left running (charge.ts evictedCopies).
 *
 * Both tests were checked to FAIL with that rule undone (evictedCopies returning [] in a copy of the
 * tree, rebuilt): the first sees member2 get the 4 pods (8 of 6 run), the second a binding charged
 * 4 cpu while Karmada applies 8 in the members. (With the rule undone the quota's count in the second
 * still reaches 8 once the members are observed: member1's pods count in `used` though not as the
 * binding's, as after a move without a task. It is the eviction write's admission, and the binding's
 * charge, that the rule decides.)
 *
 * The federation runs karmada-controller-manager's `applicationFailover` and `gracefulEviction`
 * controllers beside the ones karmada.test.ts needs. A federation and Redis database (4) of its own.
 */
const REDIS_URL = testRedisUrl(4);
const CLUSTERS = ['member1', 'member2'];
const TOLERATION_SECONDS = 5;

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-karmada-failover-'));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  federation = await Federation.start({
    stateDir,
    members: CLUSTERS.length,
    karmada: true,
    karmadaControllers: ['applicationFailover', 'gracefulEviction'],
  });
  await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['webhook', 'aggregator', 'reconciler'],
    env: { RESERVATION_TTL_SECONDS: '20', ADMISSION_LANDING_WINDOW_SECONDS: '10' },
  });
}, 900_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const { member, teamWithQuota, apply, readQuota, readBinding, podCount, eventsOn, detectorRefusal } =
  karmadaSuite(() => federation, 'kfo');

/**
 * A Deployment of `replicas` x `cpu` that runs in one member at a time, member1 first, and fails over
 * gracefully once its copy is Unhealthy for TOLERATION_SECONDS. Static weights naming member1 alone
 * put all replicas there; once member1 is evicted, member2, the only candidate left, has weight 0,
 * and Karmada gives every candidate weight 1 when the weights sum to 0 (getStaticWeightInfoList): all
 * replicas go to member2. (Karmada ignores spreadConstraints under static weights
 * (shouldIgnoreSpreadConstraint), and dynamic or Aggregated division needs member capacity, which
 * node-less members lack.) The failover controller only acts on bindings with propagateDeps.
 */
function failingOver(name: string, namespace: string, replicas: number): KarmadaWorkload {
  const workload = karmadaWorkload({ name, namespace, replicas, cpu: '1', clusters: CLUSTERS });
  workload.policy.spec = {
    ...workload.policy.spec,
    propagateDeps: true,
    failover: {
      application: {
        decisionConditions: { tolerationSeconds: TOLERATION_SECONDS },
        purgeMode: 'Gracefully',
        gracePeriodSeconds: 600,
      },
    },
    placement: {
      clusterAffinity: { clusterNames: CLUSTERS },
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        replicaDivisionPreference: 'Weighted',
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ['member1'] }, weight: 1 }] },
      },
    },
  };
  return workload;
}

interface EvictionTask {
  fromCluster: string;
  replicas?: number;
  reason?: string;
  producer?: string;
  purgeMode?: string;
  gracePeriodSeconds?: number;
}
const evictionTasks = (rb: ResourceBinding): EvictionTask[] =>
  (rb.spec as { gracefulEvictionTasks?: EvictionTask[] }).gracefulEvictionTasks ?? [];

/** CPU Karmada applied in the members for the namespace's Deployments: replicas x requests, in millicores. */
async function appliedCpu(namespace: string): Promise<number> {
  let total = 0;
  for (const cluster of CLUSTERS) {
    const deployments = await member(cluster)
      .makeApiClient(k8s.AppsV1Api)
      .listNamespacedDeployment({ namespace });
    for (const d of deployments.items) {
      const perPod = (d.spec?.template.spec?.containers ?? []).reduce(
        (sum, c) => sum + cpu(c.resources?.requests?.['cpu'] as string | undefined),
        0,
      );
      total += (d.spec?.replicas ?? 1) * perPod;
    }
  }
  return total;
}

/** Karmada's failover controller reports a refused eviction write so, on the template and on the binding. */
const EVICTION_FAILED = 'EvictWorkloadFromClusterFailed';

test('a failover the quota has no room for is refused at its eviction write: the workload stays where it runs', async () => {
  const namespace = await teamWithQuota({ cpu: '6' });
  await apply(failingOver('web', namespace, 4));
  await eventually(
    () => podCount('member1', namespace, { leaving: false }),
    (n) => n === 4,
  );

  // Member1's copy turns Unhealthy (no kubelet makes the pods available); TOLERATION_SECONDS later
  // Karmada writes the eviction: spec.clusters [] and a task for member1's 4, charged 4 + 4 = 8 of 6.
  // Waited for until Karmada reports it refused, or (the rule undone) the move happens.
  const attempted = await eventually(
    async () => {
      const [refused, binding, moved] = await Promise.all([
        eventsOn(namespace, 'web', EVICTION_FAILED),
        readBinding(namespace, 'web'),
        podCount('member2', namespace, { leaving: false }),
      ]);
      return { refused, tasks: evictionTasks(binding), moved };
    },
    (s) => s.refused.length > 0 || s.tasks.length > 0 || s.moved > 0,
    120_000,
  );
  // Whichever came first, member2 must never get the workload's pods over a window in which the move
  // would have happened many times over (with the rule undone it gets the 4: 8 of 6 run).
  let mostInMember2 = 0;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(500)) {
    mostInMember2 = Math.max(mostInMember2, await podCount('member2', namespace, { leaving: false }));
  }
  expect(mostInMember2).toBe(0);
  const binding = await readBinding(namespace, 'web');
  expect(binding.spec.clusters).toEqual([{ name: 'member1', replicas: 4 }]);
  expect(evictionTasks(binding)).toEqual([]);
  expect(await podCount('member1', namespace, { leaving: false })).toBe(4);

  // Karmada's failover controller reports each refused eviction on the template and the binding (the
  // webhook's message is only in its log), and retries with its back-off: the event's count grows.
  expect(attempted.refused[0]).toMatchObject({
    type: 'Warning',
    message: 'Evict from cluster member1 failed.',
    involvedObject: expect.objectContaining({ kind: 'Deployment', name: 'web' }),
  });
  expect(await eventsOn(namespace, 'web-deployment', EVICTION_FAILED)).not.toEqual([]);
  const firstCount = attempted.refused[0]?.count ?? 1;
  // Our side of the refusal: the eviction asked for member1's 4 cpu with 2 free.
  const waiting = await readQuota(namespace);
  expect(waiting.status?.waiting).toEqual([
    { binding: 'web-deployment', requested: { cpu: '4' }, free: { cpu: '2' }, since: expect.any(String) },
  ]);
  const [retried] = await eventsOn(namespace, 'web', EVICTION_FAILED);
  expect(retried?.count ?? 1).toBeGreaterThan(firstCount);
});

test('a failover with room moves the workload; while the old copy runs beside the new one both are counted', async () => {
  const namespace = await teamWithQuota({ cpu: '10' });
  await apply(failingOver('web', namespace, 4));

  // The eviction (charged 4 + 4 = 8 of 10) is admitted; the scheduler puts the 4 on member2.
  const moved = await eventually(
    () => readBinding(namespace, 'web'),
    (rb) => rb.spec.clusters?.[0]?.name === 'member2' && evictionTasks(rb).length > 0,
    120_000,
  );
  expect(moved.spec.clusters).toEqual([{ name: 'member2', replicas: 4 }]);
  expect(evictionTasks(moved)).toEqual([
    expect.objectContaining({
      fromCluster: 'member1',
      replicas: 4,
      reason: 'ApplicationFailure',
      purgeMode: 'Gracefully',
      gracePeriodSeconds: 600,
    }),
  ]);
  for (const cluster of CLUSTERS) {
    await eventually(
      () => podCount(cluster, namespace, { leaving: false }),
      (n) => n === 4,
    );
  }
  // The old copy runs on beside the new one: Karmada applies 8 cpu, and the binding is charged for both.
  expect(await appliedCpu(namespace)).toBe(8000);
  expect(cpu(bindingCharge(await readBinding(namespace, 'web')).charge['cpu']?.toString())).toBe(8000);
  // Wait for both copies in use: member2's pods can exist before the aggregator has published them,
  // and meanwhile the binding's charge holds their place as reserved.
  const counted = await eventually(
    () => readQuota(namespace),
    (q) =>
      (q.status?.reservations ?? []).length === 0 &&
      cpu(q.status?.used?.['cpu']) === 8000 &&
      cpu(q.status?.reserved?.['cpu']) === 0,
    30_000,
  );
  expect(counted.status?.clusters?.map((c) => [c.name, c.used['cpu']])).toEqual([
    ['member1', '4'],
    ['member2', '4'],
  ]);

  // So 3 more cpu do not fit (8 + 3 = 11 of 10): refused at the detector.
  await apply(karmadaWorkload({ name: 'more', namespace, replicas: 3, cpu: '1', clusters: ['member1'] }));
  const refusal = await detectorRefusal(namespace, 'more');
  expect(refusal.message).toContain('exceeded quota: team, requested: cpu=3, used: cpu=8, limited: cpu=10');
  for (const cluster of CLUSTERS) expect(await podCount(cluster, namespace, { leaving: false })).toBe(4);
});
