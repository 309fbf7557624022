import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { clusterStateKey, decodeHealth, usageIndexKey, type ClusterHealth } from '#usage';
import {
  Federation,
  kubeConfigFor,
  registerMember,
  startServices,
  unregisterMember,
  type ApiEndpoint,
  type RunningService,
} from '../tools/federation/src/index.js';
import { publishedUsage } from './support/usage.js';
import { eventually, testRedisUrl, uniqueName } from './support/federation.js';
import { deployment, pod } from './support/fixtures.js';

/**
 * The aggregator against a federation of its own (members are stopped and unregistered here) and
 * a Redis database of its own, so nothing else sees or disturbs what these tests do.
 */
const REDIS_URL = testRedisUrl(11);

let federation: Federation;
let stateDir: string;
let redis: Redis;
const replicas: RunningService[] = [];

const startAggregator = async (id: string) => {
  const [service] = await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['aggregator'],
    instance: id,
    env: {
      AGGREGATOR_ID: id,
      LEASE_DURATION_SECONDS: '3',
      UNREACHABLE_AFTER_MS: '2000',
      MAX_RETRY_BACKOFF_MS: '1000',
    },
  });
  replicas.push(service!);
  return service!;
};

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-aggregator-'));
  federation = await Federation.start({ stateDir, members: 2 });
  redis = new Redis(REDIS_URL);
  await redis.flushdb();
  await startAggregator('a');
}, 300_000);

afterAll(async () => {
  redis?.disconnect();
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const member = (name: string): ApiEndpoint => federation.info.members.find((m) => m.name === name)!;

const snapshot = (namespace: string, cluster: string) => publishedUsage(redis, namespace, cluster);

async function health(cluster: string): Promise<ClusterHealth | undefined> {
  const raw = await redis.get(clusterStateKey(cluster));
  if (raw === null) return undefined;
  const decoded = decodeHealth(raw);
  if (!decoded.ok) throw new Error(decoded.error);
  return decoded.value;
}

async function memberNamespace(memberName: string): Promise<{ namespace: string; kc: k8s.KubeConfig }> {
  const namespace = uniqueName('agg');
  const kc = kubeConfigFor(member(memberName));
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  return { namespace, kc };
}

describe('the aggregator', () => {
  test('tracks a Deployment as it is created, scaled and deleted, attributed to the Deployment', async () => {
    const { namespace, kc } = await memberNamespace('member1');
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({ namespace, body: deployment('web', 3, '200m') });
    const created = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.pods === '3',
    );
    expect(created!.used).toEqual({ cpu: '600m', pods: '3', 'requests.cpu': '600m' });
    expect(created!.workloads).toEqual([
      { kind: 'Deployment', name: 'web', used: { cpu: '600m', pods: '3', 'requests.cpu': '600m' } },
    ]);
    expect(await redis.sismember(usageIndexKey(namespace), 'member1')).toBe(1);

    await apps.patchNamespacedDeploymentScale(
      { namespace, name: 'web', body: [{ op: 'replace', path: '/spec/replicas', value: 1 }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    const scaled = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.pods === '1',
    );
    expect(scaled!.used.cpu).toBe('200m');

    await apps.deleteNamespacedDeployment({ namespace, name: 'web', propagationPolicy: 'Foreground' });
    const deleted = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s !== undefined && s.used.pods === undefined,
    );
    expect(deleted!.used).toEqual({});
    expect(deleted!.workloads).toEqual([]);
  });

  test('a bare Pod counts as its own workload; a Succeeded pod does not count', async () => {
    const { namespace, kc } = await memberNamespace('member2');
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({ namespace, body: pod('bare', '250m') });
    await core.createNamespacedPod({ namespace, body: pod('done', '1') });
    const both = await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s?.used.pods === '2',
    );
    expect(both!.used.cpu).toBe('1250m');
    expect(both!.workloads.map((w) => `${w.kind}/${w.name}`)).toEqual(['Pod/bare', 'Pod/done']);

    const done = await core.readNamespacedPod({ namespace, name: 'done' });
    await core.replaceNamespacedPodStatus({
      namespace,
      name: 'done',
      body: { ...done, status: { ...done.status, phase: 'Succeeded' } },
    });
    const after = await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s?.used.pods === '1',
    );
    expect(after!.used).toEqual({ cpu: '250m', pods: '1', 'requests.cpu': '250m' });
  });

  test('counts the objects a KarmadaQuota limits, as they come and go', async () => {
    const { namespace, kc } = await memberNamespace('member1');
    // Some quota on the host limits these object counts: the aggregator starts counting them.
    await kubeConfigFor(federation.info.host)
      .makeApiClient(k8s.CustomObjectsApi)
      .createNamespacedCustomObject({
        group: 'quota.karmada.io',
        version: 'v1alpha1',
        plural: 'karmadaquotas',
        namespace: 'default',
        body: {
          apiVersion: 'quota.karmada.io/v1alpha1',
          kind: 'KarmadaQuota',
          metadata: { name: 'objects', namespace: 'default' },
          spec: {
            hard: { services: '10', 'count/services': '10', 'count/deployments.apps': '5', configmaps: '5' },
          },
        },
      });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const service = (name: string): k8s.V1Service => ({
      metadata: { name },
      spec: { ports: [{ port: 80 }], clusterIP: 'None' },
    });
    await core.createNamespacedService({ namespace, body: service('a') });
    await core.createNamespacedService({ namespace, body: service('b') });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { k: 'v' } },
    });
    await kc
      .makeApiClient(k8s.AppsV1Api)
      .createNamespacedDeployment({ namespace, body: deployment('web', 0, '100m') });
    const counted = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) =>
        s?.used['count/deployments.apps'] === '1' && s.used.services === '2' && s.used.configmaps === '1',
    );
    expect(counted!.used).toEqual({
      configmaps: '1',
      'count/deployments.apps': '1',
      'count/services': '2',
      services: '2',
    });
    await core.deleteNamespacedService({ namespace, name: 'a' });
    await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.services === '1' && s.used['count/services'] === '1',
    );
  });

  test('a removed Cluster stops being tracked and its usage is withdrawn; added again, it is picked up', async () => {
    const { namespace, kc } = await memberNamespace('member2');
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('p', '100m') });
    await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s?.used.pods === '1',
    );

    await unregisterMember(federation.info.host, 'member2');
    await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s === undefined,
    );
    expect(await redis.sismember(usageIndexKey(namespace), 'member2')).toBe(0);
    expect(await health('member2')).toBeUndefined();

    await registerMember(federation.info.host, member('member2'));
    const back = await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s?.used.pods === '1',
    );
    expect(back!.used.cpu).toBe('100m');
    expect((await health('member2'))?.state).toBe('Ready');
  });

  test('a stopped member keeps its last usage, turns Stale then Unreachable, and recovers', async () => {
    const { namespace, kc } = await memberNamespace('member1');
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('kept', '300m') });
    await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.pods === '1',
    );
    const readyAt = (await health('member1'))!.lastSyncTime;

    await federation.stopMember('member1');
    const stale = await eventually(
      () => health('member1'),
      (h) => h?.state === 'Stale',
      15_000,
    );
    expect((await snapshot(namespace, 'member1'))!.used.cpu).toBe('300m');
    expect(stale!.message).toMatch(/watch of [a-z.]+ failed: /);
    const unreachable = await eventually(
      () => health('member1'),
      (h) => h?.state === 'Unreachable',
      30_000,
    );
    expect(unreachable!.message).toMatch(/watch of [a-z.]+ failed: /);
    expect(Date.parse(unreachable!.lastSyncTime)).toBeGreaterThanOrEqual(Date.parse(readyAt));
    expect((await snapshot(namespace, 'member1'))!.used.cpu).toBe('300m'); // kept, never zero

    await federation.startMember('member1');
    await eventually(
      () => health('member1'),
      (h) => h?.state === 'Ready',
      60_000,
    );
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('after', '100m') });
    const recovered = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.pods === '2',
    );
    expect(recovered!.used.cpu).toBe('400m');
  }, 180_000);

  test('two replicas track every cluster exactly once; a killed replica hands its clusters over', async () => {
    const second = await startAggregator('b');
    const holders = async () => {
      const leases = await kubeConfigFor(federation.info.host)
        .makeApiClient(k8s.CoordinationV1Api)
        .listNamespacedLease({ namespace: 'karmada-quota-system' });
      return Object.fromEntries(leases.items.map((l) => [l.metadata!.name!, l.spec?.holderIdentity]));
    };
    const watching = (replica: RunningService) =>
      readFileSync(replica.process.logFile, 'utf8')
        .split('\n')
        .filter((line) => /acquired cluster|took over cluster/.test(line)).length;
    const before = await holders();
    expect(Object.keys(before).sort()).toEqual(['kq-aggregator.member1', 'kq-aggregator.member2']);
    for (const holder of Object.values(before)) expect(holder).toBe('a'); // the first replica holds both
    expect(watching(second)).toBe(0); // and the second watches none of them

    await replicas[0]!.process.kill(); // a crash: its Leases are not released, they expire
    const after = await eventually(
      holders,
      (h) => Object.values(h).every((holder) => holder === 'b'),
      30_000,
    );
    expect(Object.keys(after)).toHaveLength(2);
    const { namespace, kc } = await memberNamespace('member2');
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({ namespace, body: pod('after-failover', '50m') });
    await eventually(
      () => snapshot(namespace, 'member2'),
      (s) => s?.used.cpu === '50m',
    );

    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    for (const cluster of ['member1', 'member2']) {
      expect(metrics).toMatch(
        new RegExp(`karmada_quota_aggregator_tracked_pods\\{[^}]*cluster="${cluster}"[^}]*\\} \\d+`),
      );
      expect(metrics).toMatch(
        new RegExp(
          `karmada_quota_aggregator_cluster_sync_age_seconds\\{[^}]*cluster="${cluster}",state="Ready"`,
        ),
      );
      expect(metrics).toMatch(
        new RegExp(
          `karmada_quota_aggregator_events_total\\{[^}]*cluster="${cluster}",resource="pods"[^}]*\\} [1-9]`,
        ),
      );
    }
  }, 120_000);

  test('the credential Secret token never appears in any log line', () => {
    const tokens = federation.info.members.map((m) => m.token);
    for (const replica of replicas) {
      const log = readFileSync(replica.process.logFile, 'utf8');
      expect(log).toContain('member1'); // the log does talk about the clusters
      for (const token of tokens) expect(log).not.toContain(token);
    }
  });
});
