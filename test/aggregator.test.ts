import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { CLUSTERS_KEY, clusterStateKey, decodeHealth, usageIndexKey, type ClusterHealth } from '#usage';
import {
  clusterLeaseHolders,
  Federation,
  freePort,
  kubeConfigFor,
  registerMember,
  sleep,
  startServices,
  unregisterMember,
  type ApiEndpoint,
  type RunningService,
} from '../tools/federation/src/index.js';
import { MemberWatcher } from '../apps/aggregator/src/member-watcher.js';
import { publishedUsage } from './support/usage.js';
import { eventually, testRedisUrl, uniqueName } from './support/federation.js';
import { deployment, karmadaQuota, pod } from './support/fixtures.js';
import { logRecords } from './support/logs.js';

/**
 * The aggregator against a federation of its own (members are stopped and unregistered here) and
 * a Redis database of its own, so nothing else sees or disturbs what these tests do.
 */
const REDIS_URL = testRedisUrl(11);
const LEASE_NAMESPACE = 'karmada-quota-system';
const LEASE_DURATION_SECONDS = 3;
/**
 * The longest a change may wait to be published across a handover: a dead replica's Leases expire
 * (one duration), the taker notices at its next sync (a third) and lists the member first.
 */
const HANDOVER_BOUND_MS = 3 * LEASE_DURATION_SECONDS * 1000;

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
      LEASE_DURATION_SECONDS: String(LEASE_DURATION_SECONDS),
      LOG_LEVEL: 'debug', // each publish is logged: the replica test checks who published when
      UNREACHABLE_AFTER_MS: '2000',
      MAX_RETRY_BACKOFF_MS: '1000',
    },
  });
  replicas.push(service!);
  return service!;
};

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-aggregator-'));
  federation = await Federation.start({ stateDir, members: 3 });
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

const clusterHolders = () => clusterLeaseHolders(federation.info.host);

const sameCounts = (a: Record<string, number>, b: Record<string, number>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** A replica's JSON log lines. */
const logLines = (replica: RunningService) => logRecords(readFileSync(replica.process.logFile, 'utf8'));

const PUBLISHED = "published the cluster's usage";
const TOOK_OVER = 'took over the cluster from another replica';
const tookOverFrom = (replica: RunningService, previousHolder: string) =>
  logLines(replica).filter((l) => l.message === TOOK_OVER && l.previousHolder === previousHolder);

/** Watches the cluster Leases on the host and records each change of holder as it arrives. */
class LeaseRecorder {
  private readonly changes: { cluster: string; holder: string | undefined; at: number }[] = [];
  private abort?: AbortController;
  private failure?: unknown;
  private stopping = false;
  /** When the recording holds every Lease's holder (what was there is reported first). */
  startedAt = 0;

  static async start(clusters: string[]): Promise<LeaseRecorder> {
    const recorder = new LeaseRecorder();
    const watch = new k8s.Watch(kubeConfigFor(federation.info.host));
    recorder.abort = await watch.watch(
      `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`,
      {},
      (type, lease: k8s.V1Lease) => recorder.record(type, lease),
      (err) => {
        if (!recorder.stopping) recorder.failure = err ?? new Error('the Lease watch ended');
      },
    );
    await eventually(
      async () => clusters.filter((c) => recorder.holderAt(c, Date.now()) === undefined),
      (missing) => missing.length === 0,
      10_000,
    );
    recorder.startedAt = Date.now();
    return recorder;
  }

  /** The holder the Lease named at `at`, as recorded. */
  holderAt(cluster: string, at: number): string | undefined {
    return this.changes.filter((c) => c.cluster === cluster && c.at <= at).at(-1)?.holder;
  }

  /** The successive holders of a cluster's Lease (a release and a new holder make two). */
  holdersOf(cluster: string): string[] {
    return this.changes.filter((c) => c.cluster === cluster && c.holder !== undefined).map((c) => c.holder!);
  }

  stop(): void {
    this.stopping = true;
    this.abort?.abort();
  }

  /** Why the watch ended before stop(), if it did (the recording is then incomplete). */
  error(): string | undefined {
    return this.failure === undefined ? undefined : String(this.failure);
  }

  private record(type: string, lease: k8s.V1Lease): void {
    const name = lease.metadata?.name ?? '';
    if (!name.startsWith('kq-aggregator.')) return;
    const cluster = name.slice('kq-aggregator.'.length);
    const holder = type === 'DELETED' ? undefined : lease.spec?.holderIdentity || undefined;
    const last = this.changes.filter((c) => c.cluster === cluster).at(-1);
    if (!last || last.holder !== holder) this.changes.push({ cluster, holder, at: Date.now() });
  }
}

interface UsageSample {
  cluster: string;
  at: number;
  pods: number;
  state: string | undefined;
}

/**
 * Steady change in every member (a pod added to a namespace of its own every half second) and a
 * recording of what Redis holds for it (every 100 ms): the published usage across handovers.
 */
class Traffic {
  private making = true;
  private sampling = true;
  private readonly made: { cluster: string; count: number; at: number }[] = [];
  private readonly seen: UsageSample[] = [];
  private readonly loops: Promise<void>[] = [];

  private constructor(private readonly spaces: Map<string, { namespace: string; kc: k8s.KubeConfig }>) {}

  static async start(clusters: string[]): Promise<Traffic> {
    const spaces = new Map(
      await Promise.all(clusters.map(async (c) => [c, await memberNamespace(c)] as const)),
    );
    const traffic = new Traffic(spaces);
    traffic.loops.push(traffic.make(), traffic.sample());
    return traffic;
  }

  namespace(cluster: string): string {
    return this.spaces.get(cluster)!.namespace;
  }

  created(cluster: string): number {
    return this.creations(cluster).length;
  }

  creations(cluster: string): { count: number; at: number }[] {
    return this.made.filter((m) => m.cluster === cluster);
  }

  samples(): UsageSample[] {
    return this.seen;
  }

  stopMaking(): void {
    this.making = false;
  }

  async stop(): Promise<void> {
    this.making = false;
    this.sampling = false;
    await Promise.all(this.loops);
  }

  private async make(): Promise<void> {
    while (this.making) {
      for (const [cluster, { namespace, kc }] of this.spaces) {
        const count = this.created(cluster) + 1;
        await kc
          .makeApiClient(k8s.CoreV1Api)
          .createNamespacedPod({ namespace, body: pod(`p-${count}`, '10m') });
        this.made.push({ cluster, count, at: Date.now() });
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  private async sample(): Promise<void> {
    while (this.sampling) {
      await this.sampleOnce();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await this.sampleOnce(); // what Redis holds at the end
  }

  private async sampleOnce(): Promise<void> {
    for (const [cluster, { namespace }] of this.spaces) {
      const [published, state] = await Promise.all([snapshot(namespace, cluster), health(cluster)]);
      this.seen.push({
        cluster,
        at: Date.now(),
        pods: Number(published?.used.pods ?? 0),
        state: state?.state,
      });
    }
  }
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

  test("pods of a Deployment deleted and re-created under its name are not the new one's, though not being deleted yet", async () => {
    const { namespace, kc } = await memberNamespace('member3');
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await apps.createNamespacedDeployment({ namespace, body: deployment('web', 2, '100m') });
    await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s?.used.pods === '2',
    );
    // Freezes the garbage collector's lag: a finalizer keeps the first Deployment's ReplicaSet, so
    // its pods (never marked for deletion while it is there) outlive the Deployment.
    const [first] = (await apps.listNamespacedReplicaSet({ namespace })).items;
    const hold = 'test.karmada-quota.io/hold';
    await apps.patchNamespacedReplicaSet(
      { namespace, name: first!.metadata!.name!, body: { metadata: { finalizers: [hold] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await apps.deleteNamespacedDeployment({ namespace, name: 'web' });
    // Deleted and not re-created yet: its pods are on their way out already.
    const deleted = await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s?.workloads.length === 1 && s.workloads[0]!.terminating === true,
    );
    expect(deleted!.workloads).toEqual([
      {
        kind: 'Deployment',
        name: 'web',
        terminating: true,
        used: { cpu: '200m', pods: '2', 'requests.cpu': '200m' },
      },
    ]);
    await apps.createNamespacedDeployment({ namespace, body: deployment('web', 2, '100m') });

    const both = await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s?.used.pods === '4' && s.workloads.length === 2,
    );
    // The old pods are not being deleted: only their incarnation tells them apart.
    const oldPods = (await core.listNamespacedPod({ namespace })).items.filter((p) =>
      p.metadata?.ownerReferences?.some((r) => r.uid === first!.metadata!.uid),
    );
    expect(oldPods).toHaveLength(2);
    expect(oldPods.map((p) => p.metadata?.deletionTimestamp)).toEqual([undefined, undefined]);
    expect(both!.used).toEqual({ cpu: '400m', pods: '4', 'requests.cpu': '400m' });
    expect(both!.workloads).toEqual([
      { kind: 'Deployment', name: 'web', used: { cpu: '200m', pods: '2', 'requests.cpu': '200m' } },
      {
        kind: 'Deployment',
        name: 'web',
        terminating: true,
        used: { cpu: '200m', pods: '2', 'requests.cpu': '200m' },
      },
    ]);

    // Let go, the garbage collector deletes the old pods: the new Deployment's are left.
    await apps.patchNamespacedReplicaSet(
      { namespace, name: first!.metadata!.name!, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const after = await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s?.used.pods === '2' && s.workloads.length === 1,
    );
    expect(after!.workloads).toEqual([
      { kind: 'Deployment', name: 'web', used: { cpu: '200m', pods: '2', 'requests.cpu': '200m' } },
    ]);
  });

  test("a bare Pod with a controller reference to a Deployment (its real uid) is its own, not the Deployment's", async () => {
    const { namespace, kc } = await memberNamespace('member3');
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const web = await apps.createNamespacedDeployment({ namespace, body: deployment('web', 1, '100m') });
    const forged = pod('forged', '250m');
    forged.metadata!.ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: web.metadata!.uid!, controller: true },
    ];
    await core.createNamespacedPod({ namespace, body: forged });
    const both = await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s?.used.pods === '2' && s.workloads.length === 2,
    );
    expect(both!.used).toEqual({ cpu: '350m', pods: '2', 'requests.cpu': '350m' });
    expect(both!.workloads).toEqual([
      { kind: 'Deployment', name: 'web', used: { cpu: '100m', pods: '1', 'requests.cpu': '100m' } },
      { kind: 'Pod', name: 'forged', used: { cpu: '250m', pods: '1', 'requests.cpu': '250m' } },
    ]);
    // The garbage collector keeps it (its owner exists): it still counts.
    expect(
      (await core.readNamespacedPod({ namespace, name: 'forged' })).metadata?.deletionTimestamp,
    ).toBeUndefined();
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
    // A key added by an edit of the quota starts its count (status writes alone start none).
    await kubeConfigFor(federation.info.host)
      .makeApiClient(k8s.CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          group: 'quota.karmada.io',
          version: 'v1alpha1',
          plural: 'karmadaquotas',
          namespace: 'default',
          name: 'objects',
          body: { spec: { hard: { secrets: '5' } } },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'token' }, data: {} } });
    await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.secrets === '1',
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

  test('replicas share the clusters fairly as they join and leave; each cluster is published by one at a time, never left unpublished', async () => {
    const clusters = ['member1', 'member2', 'member3'];
    await eventually(clusterHolders, (h) => clusters.every((c) => h.get(c) === 'a'), 30_000);
    const leases = await LeaseRecorder.start(clusters);
    const traffic = await Traffic.start(clusters);
    const held = (h: Map<string, string | undefined>) => {
      const counts: Record<string, number> = {};
      for (const c of clusters) counts[h.get(c) ?? '-'] = (counts[h.get(c) ?? '-'] ?? 0) + 1;
      return counts;
    };
    try {
      const b = await startAggregator('b');
      // Three clusters over two replicas: the one already holding more keeps two.
      await eventually(clusterHolders, (h) => sameCounts(held(h), { a: 2, b: 1 }), 60_000);

      const c = await startAggregator('c');
      await eventually(clusterHolders, (h) => sameCounts(held(h), { a: 1, b: 1, c: 1 }), 60_000);

      await eventually(
        async () => logLines(c).some((l) => l.message === PUBLISHED),
        (published) => published,
      );
      await c.process.stop(); // a clean stop: it releases its Leases at once, no waiting for expiry
      await eventually(
        clusterHolders,
        (h) => sameCounts(held(h), { a: 2, b: 1 }) || sameCounts(held(h), { a: 1, b: 2 }),
        60_000,
      );
      for (const replica of [replicas[0]!, b]) expect(tookOverFrom(replica, 'c')).toEqual([]);

      await b.process.kill(); // a crash: its Leases expire, then a takes them over
      await eventually(clusterHolders, (h) => sameCounts(held(h), { a: 3 }), 60_000);
      // The Lease shows the new holder before its log line is written: wait for the line too.
      await eventually(
        async () => tookOverFrom(replicas[0]!, 'b').some((l) => clusters.includes(l.cluster as string)),
        (tookOver) => tookOver,
        10_000,
      );
      // Everything made was published in the end; then the recordings stop.
      traffic.stopMaking();
      for (const cluster of clusters) {
        await eventually(
          () => snapshot(traffic.namespace(cluster), cluster),
          (s) => Number(s?.used.pods ?? 0) === traffic.created(cluster),
        );
      }
    } finally {
      await traffic.stop();
      leases.stop();
    }
    expect(leases.error()).toBeUndefined();
    const samples = traffic.samples();

    for (const cluster of clusters) {
      const published = samples.filter((s) => s.cluster === cluster);
      // The published usage never went back (pods are only added) nor was a cluster ever
      // published as other than Ready: a taker publishes only once it has listed the member.
      const drops = published.filter((s, i) => i > 0 && s.pods < published[i - 1]!.pods);
      expect({ cluster, drops }).toEqual({ cluster, drops: [] });
      expect({ cluster, states: [...new Set(published.map((s) => s.state))] }).toEqual({
        cluster,
        states: ['Ready'],
      });
      // Every pod made was published within the handover bound.
      const late = traffic
        .creations(cluster)
        .map(({ count, at }) => ({
          count,
          lagMs: (published.find((s) => s.at >= at && s.pods >= count)?.at ?? Infinity) - at,
        }))
        .filter((c) => c.lagMs > HANDOVER_BOUND_MS);
      expect({ cluster, late }).toEqual({ cluster, late: [] });
    }

    // Each publish, as the replicas logged it, fell while the recorded Lease named that replica.
    const outside: string[] = [];
    const publishers = new Set<string>();
    for (const replica of replicas) {
      const id = replica.process.name.replace(/^aggregator-/, '');
      for (const { timestamp: at, message, cluster, namespaces } of logLines(replica)) {
        if (message !== PUBLISHED || at < leases.startedAt) continue;
        // Each publish line names its cluster and how many namespaces it wrote, as fields.
        expect({ cluster, namespaces }).toEqual({
          cluster: expect.stringMatching(/^member\d$/),
          namespaces: expect.any(Number),
        });
        const holder = leases.holderAt(String(cluster), at);
        publishers.add(`${id} ${cluster}`);
        if (holder !== id)
          outside.push(
            `${new Date(at).toISOString()} ${id} published ${cluster} while the Lease named ${holder ?? 'nobody'}`,
          );
      }
    }
    expect(outside).toEqual([]);
    // b and c published too (the check above saw their publishes, not only a's).
    expect([...publishers].map((p) => p.split(' ')[0]).filter((id) => id !== 'a')).toEqual(
      expect.arrayContaining(['b', 'c']),
    );
    // And the Leases did change hands: a to b, a to c, c's to a or b, b's to a (3 initial holders).
    expect(clusters.flatMap((c) => leases.holdersOf(c)).length).toBeGreaterThanOrEqual(3 + 4);

    const metrics = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
    for (const cluster of clusters) {
      expect(metrics).toMatch(
        new RegExp(`karmada_quota_aggregator_tracked_pods\\{[^}]*cluster="${cluster}"[^}]*\\} \\d+`),
      );
      // In sync now: a Ready member's last sync time is the time of the scrape.
      const lastSync = new RegExp(
        `^karmada_quota_cluster_last_sync_timestamp_seconds\\{[^}]*cluster="${cluster}"[^}]*\\} (\\S+)$`,
        'm',
      ).exec(metrics);
      expect(Math.abs(Date.now() / 1000 - Number(lastSync?.[1]))).toBeLessThan(60);
      expect(metrics).toMatch(
        new RegExp(
          `karmada_quota_aggregator_events_total\\{[^}]*cluster="${cluster}",resource="pods"[^}]*\\} [1-9]`,
        ),
      );
    }
  }, 300_000);

  test('a replica that cannot renew its Leases stops publishing before another may take them over, and resumes', async () => {
    const a = replicas[0]!;
    const { namespace, kc } = await memberNamespace('member1');
    await federation.stopHost();
    try {
      // Its renewals fail: past two thirds of the Lease duration it lets its clusters go.
      await eventually(
        async () =>
          logLines(a).some(
            (l) =>
              l.cluster === 'member1' && l.message.startsWith("the cluster's Lease could not be renewed"),
          ),
        (logged) => logged,
        30_000,
      );
      const letGo = Date.now();
      await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('unseen', '100m') });
      await sleep(2_000);
      expect(await snapshot(namespace, 'member1')).toBeUndefined();
      expect(logLines(a).filter((l) => l.timestamp > letGo && l.message === PUBLISHED)).toEqual([]);
    } finally {
      await federation.startHost();
    }
    const resumed = await eventually(
      () => snapshot(namespace, 'member1'),
      (s) => s?.used.pods === '1',
      60_000,
    );
    expect(resumed!.used.cpu).toBe('100m');
  }, 180_000);

  test('a watcher new to a cluster has nothing to publish before every watch listed, unless the member stays unreachable', async () => {
    // What a replica taking a cluster over would publish first: never a partial count over the
    // previous holder's full one (pods and counted objects), nor "not synced yet" as Unreachable.
    const { namespace, kc } = await memberNamespace('member3');
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('there', '100m') });
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedService({
      namespace,
      body: { metadata: { name: 'there' }, spec: { ports: [{ port: 80 }], clusterIP: 'None' } },
    });
    const endpoint = member('member3');
    const credentials = {
      name: 'member3',
      server: endpoint.server,
      token: endpoint.token,
      caPem: readFileSync(endpoint.caFile, 'utf8'),
      insecureSkipTLSVerify: false,
    };
    const options = { unreachableAfterMs: 60_000, maxRetryBackoffMs: 1_000, requestTimeoutMs: 500 };
    const quiet = { log: () => undefined, warn: () => undefined } as unknown as Logger;

    const watcher = new MemberWatcher(credentials, options, quiet);
    const starting = watcher.start(['services']);
    let firstNews: Record<string, string> | undefined;
    while (!firstNews) {
      if (watcher.hasNews()) firstNews = watcher.ledger.snapshot(namespace).used;
      else await new Promise(setImmediate);
    }
    await starting;
    await watcher.stop();
    expect(firstNews).toEqual({ cpu: '100m', pods: '1', 'requests.cpu': '100m', services: '1' });

    const down = new MemberWatcher(
      { ...credentials, server: `https://127.0.0.1:${await freePort()}` },
      options,
      quiet,
    );
    await down.start(['services']);
    await down.stop();
    expect(down.hasNews()).toBe(false);
    expect(down.hasNews(Date.now() + options.unreachableAfterMs)).toBe(true);
  });

  test("a member that accepts connections but never answers is given up after the watcher's request timeout", async () => {
    // A partition or a machine gone without a reset: without the timeout (API_REQUEST_TIMEOUT_SECONDS)
    // the first list would wait for TCP to give up, many minutes, and start() with it.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const quiet = { log: () => undefined, warn: () => undefined } as unknown as Logger;
    const watcher = new MemberWatcher(
      {
        name: 'silent',
        server: `https://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        token: 'never-sent',
        insecureSkipTLSVerify: true,
      },
      { unreachableAfterMs: 60_000, maxRetryBackoffMs: 1_000, requestTimeoutMs: 500 },
      quiet,
    );
    try {
      const started = Date.now();
      await watcher.start(['services']);
      // Each of its watches gives up its first list (about 20 s in all here); with the default 60 s
      // timeout the first list alone would take longer than this.
      expect(Date.now() - started).toBeLessThan(50_000);
      expect(watcher.hasNews(Date.now() + 60_000)).toBe(true);
    } finally {
      await watcher.stop();
      silent.close();
    }
  }, 120_000);

  test('the credential Secret token never appears in any log line', () => {
    const tokens = federation.info.members.map((m) => m.token);
    for (const replica of replicas) {
      const log = readFileSync(replica.process.logFile, 'utf8');
      // The log does talk about the clusters (each line naming one carries it as its `cluster` field).
      expect(logLines(replica).filter((l) => /^member\d$/.test(String(l.cluster)))).not.toEqual([]);
      for (const token of tokens) expect(log).not.toContain(token);
    }
  });
});

/**
 * Review 2, N6: a member removed from the host while no replica watches it (every replica stopped
 * cleanly, so none holds its Lease) has nobody whose watcher withdraws it. These run last: they stop
 * every replica and remove members for good.
 */
describe('a cluster removed while no replica watches it', () => {
  const hostKc = () => kubeConfigFor(federation.info.host);
  let reconciler: RunningService;

  beforeAll(async () => {
    [reconciler] = (await startServices(federation, {
      redisUrl: REDIS_URL,
      services: ['reconciler'],
    })) as [RunningService];
  }, 120_000);

  /** A namespace in `cluster` and on the host, a KarmadaQuota `team` there, and a 300m pod counted in it. */
  async function countedIn(cluster: string): Promise<string> {
    const { namespace, kc } = await memberNamespace(cluster);
    await hostKc()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    await hostKc()
      .makeApiClient(k8s.CustomObjectsApi)
      .createNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        body: karmadaQuota(namespace, 'team', { cpu: '10' }),
      });
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace, body: pod('p', '300m') });
    await eventually(
      () => readQuota(namespace),
      (k) => k.status?.clusters?.find((c) => c.name === cluster)?.used.cpu === '300m',
      30_000,
    );
    return namespace;
  }

  const readQuota = (namespace: string) =>
    hostKc()
      .makeApiClient(k8s.CustomObjectsApi)
      .getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'team' }) as Promise<KarmadaQuota>;

  /** Stops every replica cleanly (each hands its clusters over and releases their Leases). */
  const stopEveryReplica = () =>
    Promise.all(replicas.filter((r) => r.process.running).map((r) => r.process.stop()));

  test('its usage is withdrawn by the next replica to start, and the statuses stop counting it', async () => {
    const namespace = await countedIn('member3');
    await stopEveryReplica();
    await unregisterMember(federation.info.host, 'member3');
    expect((await health('member3'))?.state).toBe('Ready'); // what it last published stays

    await startAggregator('after-removal');
    await eventually(
      () => snapshot(namespace, 'member3'),
      (s) => s === undefined,
      15_000,
    );
    expect(await health('member3')).toBeUndefined();
    expect(await redis.sismember(CLUSTERS_KEY, 'member3')).toBe(0);
    expect(await redis.sismember(usageIndexKey(namespace), 'member3')).toBe(0);
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => k.status?.clusters?.every((c) => c.name !== 'member3') === true,
      15_000,
    );
    expect(settled.status?.used).toEqual({ cpu: '0' });
  }, 120_000);

  test('after Redis lost its usage, the statuses still counting it are reconciled without it', async () => {
    const namespace = await countedIn('member2');
    await stopEveryReplica();
    await unregisterMember(federation.info.host, 'member2');
    await redis.flushdb(); // the reconciler now reads member2 as counted and unknown: it keeps the status
    expect(reconciler.process.running).toBe(true);

    await startAggregator('after-flush');
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => k.status?.clusters?.every((c) => c.name !== 'member2') === true,
      30_000,
    );
    expect(settled.status?.used).toEqual({ cpu: '0' });
    expect(settled.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  }, 120_000);
});
