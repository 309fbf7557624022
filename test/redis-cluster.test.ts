import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from 'ioredis';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota } from '#api';
import {
  clusterStateKey,
  decodeSnapshot,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_PREFIX,
  usageKey,
  waitingKey,
} from '#usage';
import {
  Federation,
  kubeConfigFor,
  startServices,
  type RunningService,
} from '../tools/federation/src/index.js';
import { eventually, uniqueName, usageCounted } from './support/federation.js';
import { binding, deployment, karmadaQuota } from './support/fixtures.js';
import { RedisCluster } from './support/redis-cluster.js';

/**
 * The services on a real Redis Cluster (three masters, REDIS_CLUSTER_NODES) against a federation
 * of their own: every script and transaction of theirs must stay within one slot, which a single
 * Redis never checks.
 */
let dir: string;
let redisCluster: RedisCluster;
let federation: Federation;
let services: RunningService[] = [];
let redis: Cluster;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'karmada-quota-redis-cluster-'));
  redisCluster = await RedisCluster.start(join(dir, 'redis'));
  redis = redisCluster.client();
  federation = await Federation.start({ stateDir: join(dir, 'federation'), members: 1 });
  const options = {
    // Only its credentials would be used (there are none): the nodes are what counts.
    redisUrl: `redis://127.0.0.1:${redisCluster.ports[0]}`,
    env: {
      REDIS_CLUSTER_NODES: redisCluster.nodes,
      RESERVATION_TTL_SECONDS: '4',
      ADMISSION_LANDING_WINDOW_SECONDS: '2',
      UNREACHABLE_AFTER_MS: '2000',
      MAX_RETRY_BACKOFF_MS: '1000',
    },
  };
  services = await startServices(federation, { ...options, services: ['webhook'] });
  services.push(...(await startServices(federation, { ...options, services: ['aggregator', 'reconciler'] })));
}, 300_000);

afterAll(async () => {
  redis?.disconnect();
  await federation?.stop();
  await redisCluster?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(dir, { recursive: true, force: true });
});

const host = () => kubeConfigFor(federation.info.host);
const objects = () => host().makeApiClient(k8s.CustomObjectsApi);
const member = () => kubeConfigFor(federation.info.members[0]!);
const readQuota = (namespace: string) =>
  objects().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'team' }) as Promise<KarmadaQuota>;

/** A namespace on the host and the member, whose quota `team` the reconciler has counted. */
async function team(hard: Record<string, string>, namespace = uniqueName('rcl')): Promise<string> {
  for (const kc of [host(), member()])
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    body: karmadaQuota(namespace, 'team', hard),
  });
  await usageCounted(host(), namespace, 'team'); // a reconcile job went through the queue
  return namespace;
}

const runPods = (namespace: string, name: string, replicas: number, cpu: string) =>
  member()
    .makeApiClient(k8s.AppsV1Api)
    .createNamespacedDeployment({ namespace, body: deployment(name, replicas, cpu) });

const snapshotOf = async (namespace: string) => {
  const raw = await redis.get(usageKey(namespace, 'member1'));
  return raw === null ? undefined : decodeSnapshot(raw);
};

/** What every service logged that says Redis refused a command spanning slots. */
const crossSlotErrors = () =>
  services.flatMap((s) =>
    s.process
      .logTail(100_000)
      .split('\n')
      .filter((line) => line.includes('CROSSSLOT'))
      .map((line) => `${s.name}: ${line}`),
  );

afterEach(() => expect(crossSlotErrors()).toEqual([]));

describe('on a Redis Cluster', () => {
  test('the aggregator publishes usage, reconcile jobs flow through BullMQ, the reconciler writes the status', async () => {
    const namespace = await team({ cpu: '4', pods: '10' });
    await runPods(namespace, 'web', 2, '500m');
    const counted = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.cpu === '1',
    );
    expect(counted.status?.clusters?.map((c) => [c.name, c.used.cpu, c.state])).toEqual([
      ['member1', '1', 'Ready'],
    ]);
    // The data is on the cluster, spread over its nodes, the queue's under its hash tag.
    expect((await snapshotOf(namespace))?.ok).toBe(true);
    expect(await redis.exists(clusterStateKey('member1'))).toBe(1);
    expect(await redis.exists(`${RECONCILE_QUEUE_PREFIX}:${RECONCILE_QUEUE}:meta`)).toBe(1);
  });

  test('a refused change waits in kq:waiting:{namespace} and shows in the status', async () => {
    const namespace = await team({ cpu: '2', pods: '10' });
    await expect(
      objects().createNamespacedCustomObject({
        ...RESOURCE_BINDING,
        namespace,
        body: binding(namespace, 'big', { replicas: 3, cpu: '1' }),
      }),
    ).rejects.toMatchObject({ code: 403 });
    await eventually(
      async () => Object.keys(await redis.hgetall(waitingKey(namespace))),
      (fields) => fields.join() === 'big/create', // a refused create's field (waitingField)
    );
    const waiting = await eventually(
      () => readQuota(namespace),
      (q) => (q.status?.waiting?.length ?? 0) > 0,
    );
    expect(waiting.status?.waiting).toEqual([
      { binding: 'big', requested: { cpu: '3' }, free: { cpu: '2' }, since: expect.any(String) },
    ]);
  });

  test('a node that loses its data is noticed: the usage is published again, never counted as zero', async () => {
    // A namespace whose usage lives on another node than the cluster's state key.
    const stateNode = await redisCluster.nodeOf(clusterStateKey('member1'));
    let namespace = uniqueName('rcl');
    while ((await redisCluster.nodeOf(usageKey(namespace, 'member1'))) === stateNode)
      namespace = uniqueName('rcl');
    await team({ cpu: '4', pods: '10' }, namespace);
    await runPods(namespace, 'web', 2, '500m');
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.cpu === '1',
    );
    const before = (await snapshotOf(namespace))!;

    await redisCluster.flushNode(await redisCluster.nodeOf(usageKey(namespace, 'member1')));
    expect(await snapshotOf(namespace)).toBeUndefined();
    // Nothing changes in the member: only the reader's check of the namespace against the
    // cluster's slot can find the loss. A quota change makes it read now.
    await objects().patchNamespacedCustomObject(
      { ...KARMADA_QUOTA, namespace, name: 'team', body: { spec: { hard: { cpu: '5', pods: '10' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const usedMeanwhile: unknown[] = [];
    const republished = await eventually(
      async () => {
        usedMeanwhile.push((await readQuota(namespace)).status?.used?.cpu);
        return snapshotOf(namespace);
      },
      (s) => s?.ok === true,
      30_000,
    );
    expect(republished!.ok && before.ok && republished!.value.epoch > before.value.epoch).toBe(true);
    const quota = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.hard?.cpu === '5',
    );
    expect(quota.status?.used?.cpu).toBe('1');
    expect(usedMeanwhile.filter((cpu) => cpu !== '1')).toEqual([]);
  });
});
