import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { estimatorProtoFile, type ResourceBinding } from '#api';
import { Federation, freePort, karmadaWorkload, startServices } from '../tools/federation/src/index.js';
import { eventually, testRedisUrl } from './support/federation.js';
import { karmadaSuite, scheduledCondition } from './support/karmada.js';

/**
 * Karmada's scheduler asks the quota before it places (docs/concepts/scheduler-estimator.md): real
 * Karmada v1.18 runs `--enable-scheduler-estimator`, the webhook serves the estimator API, and the
 * reconciler registers it per member as Karmada finds estimators (an ExternalName Service). Members
 * get a Node with room to spare, so only the caps limit where Divided replicas go. A federation and
 * Redis database (2) of their own.
 */
const REDIS_URL = testRedisUrl(2);
const CLUSTERS = ['member1', 'member2'];

let federation: Federation;
let stateDir: string;
let karmadasEstimator: string;
let ourEstimator: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-estimator-'));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  federation = await Federation.start({
    stateDir,
    members: CLUSTERS.length,
    karmada: true,
    karmadaSchedulerEstimator: true,
  });
  // Karmada's own estimator for member2, which ours asks too (it refuses questions about member1).
  karmadasEstimator = await federation.startKarmadaSchedulerEstimator('member2');
  const estimatorPort = await freePort();
  ourEstimator = `127.0.0.1:${estimatorPort}`;
  await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['webhook', 'aggregator', 'reconciler'],
    env: {
      RESERVATION_TTL_SECONDS: '20',
      ADMISSION_LANDING_WINDOW_SECONDS: '10',
      SCHEDULER_ESTIMATOR_PORT: String(estimatorPort),
      SCHEDULER_ESTIMATOR_ADDRESS: `127.0.0.1:${estimatorPort}`,
      SCHEDULER_ESTIMATOR_FORWARD_TO: karmadasEstimator,
    },
  });
  await federation.karmadaControlPlane.estimatorsConnected(CLUSTERS);
}, 900_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const { host, objects, teamWithQuota, apply, readBinding, readQuota, eventsOn } = karmadaSuite(
  () => federation,
  'est',
);

/** The Deployment a user applied, to delete it. */
const workloadOf = (namespace: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace },
});

/** The binding once Karmada's scheduler has decided about it: placed, or not. */
const decided = (namespace: string, name: string) =>
  eventually(
    () => readBinding(namespace, name),
    (rb) => (rb.spec?.clusters?.length ?? 0) > 0 || scheduledCondition(rb)?.status === 'False',
    120_000,
  );

const placement = (rb: ResourceBinding): Record<string, number> =>
  Object.fromEntries((rb.spec?.clusters ?? []).map((c) => [c.name, c.replicas ?? 0]));

/** Asks an estimator how many more replicas of `requests` fit on `member`, as karmada-scheduler does. */
async function maxAvailableReplicas(
  address: string,
  member: string,
  namespace: string,
  requests: Record<string, string>,
): Promise<number> {
  const definition = protoLoader.loadSync(estimatorProtoFile(), { keepCase: true });
  const packages = grpc.loadPackageDefinition(definition) as unknown as {
    github: {
      com: {
        karmada_io: {
          karmada: { pkg: { estimator: { service: { Estimator: grpc.ServiceClientConstructor } } } };
        };
      };
    };
  };
  const client = new packages.github.com.karmada_io.karmada.pkg.estimator.service.Estimator(
    address,
    grpc.credentials.createInsecure(),
  );
  const metadata = new grpc.Metadata();
  metadata.add('object', `kind=Deployment, name=${namespace}/web`);
  const request = {
    cluster: member,
    replicaRequirements: {
      resourceRequestBytes: Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, { string: v }])),
    },
  };
  const call = client['MaxAvailableReplicas'] as (
    request: unknown,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, reply?: { maxReplicas?: number }) => void,
  ) => void;
  try {
    return await new Promise<number>((resolve, reject) =>
      call.call(client, request, metadata, { deadline: Date.now() + 5_000 }, (err, reply) =>
        err ? reject(err) : resolve(reply?.maxReplicas ?? 0),
      ),
    );
  } finally {
    client.close();
  }
}

/** No write of this workload's binding was refused by a quota. */
async function neverRefused(namespace: string, name: string): Promise<void> {
  const refusals = await eventsOn(namespace, name, 'ApplyPolicyFailed');
  expect(refusals.filter((e) => e.message?.includes('exceeded quota'))).toEqual([]);
}

describe('karmada-scheduler with the quota as its estimator', () => {
  test('the estimator Service of each member points at the webhook', async () => {
    const core = host().makeApiClient(k8s.CoreV1Api);
    for (const member of CLUSTERS) {
      const service = await eventually(
        () =>
          core.readNamespacedService({
            namespace: 'karmada-system',
            name: `karmada-scheduler-estimator-${member}`,
          }),
        () => true,
      );
      expect(service.spec).toMatchObject({ type: 'ExternalName', externalName: '127.0.0.1' });
      expect(service.spec?.ports?.[0]?.port).toBe(10352);
    }
  });

  test('a Divided Deployment of 10 under caps 4 and 8 is placed within the caps, never refused', async () => {
    const namespace = await teamWithQuota({ cpu: '10', pods: '20' }, [
      { name: 'member1', hard: { cpu: '4' } },
      { name: 'member2', hard: { cpu: '8' } },
    ]);
    const workload = karmadaWorkload({
      name: 'split',
      namespace,
      replicas: 10,
      cpu: '1',
      clusters: CLUSTERS,
      placement: 'Dynamic',
    });
    await apply(workload);
    const binding = await decided(namespace, 'split');
    const placed = placement(binding);
    expect((placed['member1'] ?? 0) + (placed['member2'] ?? 0)).toBe(10);
    expect(placed['member1'] ?? 0).toBeLessThanOrEqual(4);
    expect(placed['member2'] ?? 0).toBeLessThanOrEqual(8);
    await neverRefused(namespace, 'split');
  });

  test('with member1 full a new workload goes to member2; with both full it waits unscheduled, unrefused', async () => {
    const namespace = await teamWithQuota({ cpu: '100', pods: '100' }, [
      { name: 'member1', hard: { cpu: '4' } },
      { name: 'member2', hard: { cpu: '8' } },
    ]);
    // Member1 filled by a workload placed there alone.
    await apply(karmadaWorkload({ name: 'first', namespace, replicas: 4, cpu: '1', clusters: ['member1'] }));
    expect(placement(await decided(namespace, 'first'))).toEqual({ member1: 4 });

    await apply(
      karmadaWorkload({
        name: 'second',
        namespace,
        replicas: 3,
        cpu: '1',
        clusters: CLUSTERS,
        placement: 'Dynamic',
      }),
    );
    expect(placement(await decided(namespace, 'second'))).toEqual({ member2: 3 });

    // 6 more fit nowhere (member2 has 5 left): Karmada leaves it unscheduled; nothing is refused.
    await apply(
      karmadaWorkload({
        name: 'third',
        namespace,
        replicas: 6,
        cpu: '1',
        clusters: CLUSTERS,
        placement: 'Dynamic',
      }),
    );
    const waiting = await decided(namespace, 'third');
    expect(waiting.spec?.clusters ?? []).toEqual([]);
    expect(scheduledCondition(waiting)).toMatchObject({ status: 'False' });
    // The quota lists it as waiting for room under its caps (Karmada's condition cannot name it).
    const listed = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting?.some((w) => w.binding === 'third-deployment') ?? false,
    );
    expect(listed.status?.waiting?.find((w) => w.binding === 'third-deployment')).toMatchObject({
      requested: { cpu: '6' },
      free: { cpu: '5' },
    });
    // And names it on the workload, where Karmada's own events say only that no member has room.
    const [named] = await eventually(
      () => eventsOn(namespace, 'third', 'WaitingForQuota'),
      (events) => events.length > 0,
    );
    expect(named!.message).toContain('the member caps of quota team leave too little room');
    await neverRefused(namespace, 'third');
    await neverRefused(namespace, 'second');

    // Room frees on member1: the reconciler requeues it at once, not at Karmada's back-off.
    await objects().delete(workloadOf(namespace, 'first'));
    const placed = await eventually(
      () => readBinding(namespace, 'third'),
      (rb) => (rb.spec?.clusters?.length ?? 0) > 0,
      120_000,
    );
    expect(placed.spec?.rescheduleTriggeredAt).toBeDefined();
    // Requeued for the room the caps left then, which covered its 6 replicas: up to member1 4 +
    // member2 5, less what first's pods still used as they went.
    const room = Number(placed.metadata?.annotations?.['karmada-quota/requeued-for-room']);
    expect(room).toBeGreaterThanOrEqual(6);
    expect(room).toBeLessThanOrEqual(9);
    const split = placement(placed);
    expect((split['member1'] ?? 0) + (split['member2'] ?? 0)).toBe(6);
    expect(split['member1'] ?? 0).toBeLessThanOrEqual(4);
    expect(split['member2'] ?? 0).toBeLessThanOrEqual(5);
    await neverRefused(namespace, 'third');
    await eventually(
      () => readQuota(namespace),
      (q) => !(q.status?.waiting ?? []).some((w) => w.binding === 'third-deployment'),
    );
  }, 300_000);

  test("asks Karmada's own estimator of a member and answers the lower figure; the caps alone where it cannot answer", async () => {
    const namespace = await teamWithQuota({ cpu: '100', memory: '100Ti' }, [
      { name: 'member1', hard: { cpu: '4' } },
      { name: 'member2', hard: { cpu: '8' } },
    ]);
    // 1 cpu and 1Ti per replica: member2's cap leaves room for 8, its Node (4Ti) for 4.
    const ask = (address: string, member: string) =>
      maxAvailableReplicas(address, member, namespace, { cpu: '1', memory: '1Ti' });
    expect(await ask(karmadasEstimator, 'member2')).toBe(4);
    expect(await ask(ourEstimator, 'member2')).toBe(4);
    // Karmada's estimator of member2 refuses to answer for member1: the cap answers.
    expect(await ask(ourEstimator, 'member1')).toBe(4);
    await expect(ask(karmadasEstimator, 'member1')).rejects.toThrow();
    // Fewer per replica: the cap is the lower figure.
    expect(await maxAvailableReplicas(ourEstimator, 'member2', namespace, { cpu: '1', memory: '1Gi' })).toBe(
      8,
    );

    // A workload an OverridePolicy may select: what a member runs is not in the question, no opinion
    // of ours (member1: Karmada's estimator of member2 does not answer for it either).
    await objects().create({
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'OverridePolicy',
      metadata: { name: 'web', namespace },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
        overrideRules: [
          { targetCluster: { clusterNames: ['member1'] }, overriders: { labelsOverrider: [] } },
        ],
      },
    } as k8s.KubernetesObject);
    await eventually(
      () => maxAvailableReplicas(ourEstimator, 'member1', namespace, { cpu: '1' }),
      (answer) => answer === -1,
    );
  });

  test("a ClusterKarmadaQuota's caps steer as a KarmadaQuota's, once it has counted the namespace", async () => {
    const namespace = await teamWithQuota({ cpu: '100' }, [{ name: 'member1', hard: { cpu: '4' } }]);
    const ask = () => maxAvailableReplicas(ourEstimator, 'member1', namespace, { cpu: '1' });
    expect(await ask()).toBe(4);
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .patchNamespace(
        { name: namespace, body: { metadata: { labels: { 'estimator-team': namespace } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    await objects().create({
      apiVersion: 'quota.karmada.io/v1alpha1',
      kind: 'ClusterKarmadaQuota',
      metadata: { name: namespace },
      spec: {
        namespaceSelector: { matchLabels: { 'estimator-team': namespace } },
        hard: {},
        clusters: [{ name: 'member1', hard: { cpu: '2' } }],
      },
    } as k8s.KubernetesObject);
    await eventually(ask, (answer) => answer === 2);
  });

  test('a member that leaves loses its estimator Service; a Service karmada-quota did not make is left alone', async () => {
    const core = host().makeApiClient(k8s.CoreV1Api);
    const serviceOf = (member: string) =>
      core
        .readNamespacedService({ namespace: 'karmada-system', name: `karmada-scheduler-estimator-${member}` })
        .catch(() => undefined);
    // Karmada's own estimator for one member, registered by its admin (a host-cluster DNS name).
    await core.createNamespacedService({
      namespace: 'karmada-system',
      body: {
        metadata: { name: 'karmada-scheduler-estimator-member9' },
        spec: {
          type: 'ExternalName',
          externalName: 'karmada-scheduler-estimator-member9.karmada-system.svc.cluster.local',
          ports: [{ port: 10352, targetPort: 10352 }],
        },
      },
    });
    const custom = host().makeApiClient(k8s.CustomObjectsApi);
    const cluster = (name: string) => ({
      apiVersion: 'cluster.karmada.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name },
      spec: { apiEndpoint: 'https://127.0.0.1:1', syncMode: 'Push' },
    });
    for (const name of ['member8', 'member9'])
      await custom.createClusterCustomObject({
        group: 'cluster.karmada.io',
        version: 'v1alpha1',
        plural: 'clusters',
        body: cluster(name),
      });
    await eventually(
      () => serviceOf('member8'),
      (s) => s?.spec?.externalName === '127.0.0.1',
    );
    expect((await serviceOf('member9'))?.spec?.externalName).toBe(
      'karmada-scheduler-estimator-member9.karmada-system.svc.cluster.local',
    );

    await custom.deleteClusterCustomObject({
      group: 'cluster.karmada.io',
      version: 'v1alpha1',
      plural: 'clusters',
      name: 'member8',
    });
    await eventually(
      () => serviceOf('member8'),
      (s) => s === undefined,
      120_000,
    );
    expect(await serviceOf('member9')).toBeDefined();
  }, 300_000);
});
