import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  CLUSTER,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  WORKLOAD_USAGE,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { Quantity } from '#quantity';
import { isAtOrAfterVersion } from '#quota';
import { readUsageRecord, recordedObservations, USAGE_RECORD_NAME, workloadUsage } from '#quota-view';
import {
  RECONCILE_JOB_NAME,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_PREFIX,
  reconcileJobOptions,
  requestCount,
} from '#usage';
import {
  Federation,
  kubeConfigFor,
  startServices,
  type RunningService,
} from '../tools/federation/src/index.js';
import { postToWebhook } from './chaos/support/admission.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { karmadaQuota, binding as shapedBinding, deployment, pod } from './support/fixtures.js';

/**
 * End to end: webhook, aggregator and two reconciler workers on a federation of their own (members
 * are stopped here) and a Redis database of their own.
 */
const REDIS_URL = testRedisUrl(12);
const TTL_SECONDS = 4;

let federation: Federation;
let stateDir: string;
let webhook: RunningService;
let aggregator: RunningService;
let reconcilers: RunningService[];

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-reconciler-'));
  federation = await Federation.start({ stateDir, members: 2 });
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  const env = {
    RESERVATION_TTL_SECONDS: String(TTL_SECONDS),
    ADMISSION_LANDING_WINDOW_SECONDS: String(Math.floor(TTL_SECONDS / 2)),
    EXPIRY_SWEEP_SECONDS: '1',
    UNREACHABLE_AFTER_MS: '2000',
    MAX_RETRY_BACKOFF_MS: '1000',
    USAGE_RECORD_SECONDS: '1',
  };
  [webhook] = (await startServices(federation, { redisUrl: REDIS_URL, services: ['webhook'], env })) as [
    RunningService,
  ];
  let first: RunningService;
  [aggregator, first] = (await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['aggregator', 'reconciler'],
    env,
  })) as [RunningService, RunningService];
  reconcilers = [
    first,
    ...(await startServices(federation, {
      redisUrl: REDIS_URL,
      services: ['reconciler'],
      env,
      instance: 'second',
    })),
  ];
}, 300_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const host = () => kubeConfigFor(federation.info.host);
const objects = () => host().makeApiClient(k8s.CustomObjectsApi);
const memberKc = (name: string) => kubeConfigFor(federation.info.members.find((m) => m.name === name)!);
const q = (s: string) => Quantity.parse(s);

async function namespaceEverywhere(): Promise<string> {
  const namespace = uniqueName('rc');
  for (const kc of [host(), memberKc('member1'), memberKc('member2')]) {
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  }
  return namespace;
}

/** Creates the quota and waits for the reconciler to count its usage (until then increases are refused). */
const createQuota = async (
  namespace: string,
  hard: Record<string, string>,
  clusters?: KarmadaQuota['spec']['clusters'],
) => {
  const body = karmadaQuota(namespace, 'team', hard);
  if (clusters) body.spec.clusters = clusters;
  await objects().createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, body });
  await usageCounted(host(), namespace, 'team');
};

const readQuota = (namespace: string) =>
  objects().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'team' }) as Promise<KarmadaQuota>;

const binding = (
  namespace: string,
  name: string,
  replicas: number,
  cpu: string,
  clusters?: { name: string; replicas: number }[],
) => shapedBinding(namespace, name, { replicas, cpu, clusters });

const createBinding = (rb: ResourceBinding) =>
  objects().createNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: rb.metadata!.namespace!,
    body: rb,
  });

/** A Deployment as Karmada propagates it: same namespace and name in the member. */
const propagate = (member: string, namespace: string, name: string, replicas: number, cpu: string) =>
  memberKc(member)
    .makeApiClient(k8s.AppsV1Api)
    .createNamespacedDeployment({ namespace, body: deployment(name, replicas, cpu) });

/** The Events recorded on the quota `team` of a namespace. */
const quotaEvents = async (namespace: string) =>
  (await host().makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace })).items.filter(
    (e) => e.involvedObject.kind === 'KarmadaQuota' && e.involvedObject.name === 'team',
  );
const eventReasons = async (namespace: string) =>
  (await quotaEvents(namespace)).map((e) => `${e.type}/${e.reason}`);

/** GET over HTTP or HTTPS (the webhook's certificate is from the harness's throwaway CA). */
const getText = (url: string) =>
  new Promise<string>((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      let data = '';
      res.on('data', (d: Buffer) => (data += d.toString()));
      res.on('end', () => resolve(data));
    });
    req.on('error', reject);
    req.end();
  });
const scrape = (service: RunningService) =>
  service.url.startsWith('https:')
    ? getText(`${service.url}/metrics`)
    : fetch(`${service.url}/metrics`).then((r) => r.text());

const reservation = (quota: KarmadaQuota, name: string) =>
  quota.status?.reservations?.find((r) => r.reservedBy.name === name);
const usedCpu = (quota: KarmadaQuota) => q(String(quota.status?.used?.cpu ?? '0'));
const reservedCpu = (quota: KarmadaQuota) => q(String(quota.status?.reserved?.cpu ?? '0'));
/** The claims in flight the status lists (a stored binding is its own record: none for it). */
const claims = (quota: KarmadaQuota) => quota.status?.reservations ?? [];

describe('the reconciler, end to end', () => {
  test('a reservation gives way to observed usage, split per cluster', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10', pods: '20' });
    const stored = (await createBinding(
      binding(namespace, 'web', 3, '200m', [
        { name: 'member1', replicas: 2 },
        { name: 'member2', replicas: 1 },
      ]),
    )) as ResourceBinding;
    // The create's claim retires once the binding is stored: reserved holds its charge, no entry lists it.
    const reserved = await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).cmp(q('600m')) === 0 && claims(k).length === 0,
    );
    expect(reserved.status?.reserved).toMatchObject({ cpu: '600m', pods: '3' });
    // The count names the list it came from: one holding the stored binding.
    const counted = reserved.status?.observedBindingsVersion;
    const created = stored.metadata!.resourceVersion;
    expect(isAtOrAfterVersion(counted, created!)).toBe(true);

    await propagate('member1', namespace, 'web', 2, '200m');
    await propagate('member2', namespace, 'web', 1, '200m');
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).isZero() && usedCpu(k).cmp(q('600m')) === 0,
      30_000,
    );
    expect(settled.status?.used).toMatchObject({ cpu: '600m', pods: '3' });
    expect(settled.status?.clusters?.map((c) => [c.name, c.used.cpu, c.state])).toEqual([
      ['member1', '400m', 'Ready'],
      ['member2', '200m', 'Ready'],
    ]);
    expect(settled.status?.hard).toMatchObject({ cpu: '10', pods: '20' });
    const synced = settled.status?.conditions?.find((c) => c.type === 'ClustersSynced');
    expect(synced?.status).toBe('True');
  });

  test("a member's cap is counted from that member alone: its caps, usage and reservations per member", async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10' }, [{ name: 'member1', hard: { cpu: '1', pods: '3' } }]);
    await createBinding(
      binding(namespace, 'web', 3, '200m', [
        { name: 'member1', replicas: 2 },
        { name: 'member2', replicas: 1 },
      ]),
    );
    const reserved = await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).cmp(q('600m')) === 0 && claims(k).length === 0,
    );
    expect(reserved.status?.reserved).toMatchObject({
      cpu: '600m',
      'cpu@member1': '400m',
      'pods@member1': '2',
    });

    // member2 runs its share; member1 not yet: member1's cap still holds its whole share.
    await propagate('member2', namespace, 'web', 1, '200m');
    const half = await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('200m')) === 0,
      30_000,
    );
    expect(half.status?.used).toMatchObject({ cpu: '200m', 'cpu@member1': '0', 'pods@member1': '0' });
    expect(half.status?.reserved).toMatchObject({ cpu: '400m', 'cpu@member1': '400m', 'pods@member1': '2' });

    await propagate('member1', namespace, 'web', 2, '200m');
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).isZero() && usedCpu(k).cmp(q('600m')) === 0,
      30_000,
    );
    expect(settled.status?.hard).toEqual({ cpu: '10', 'cpu@member1': '1', 'pods@member1': '3' });
    expect(settled.status?.used).toEqual({ cpu: '600m', 'cpu@member1': '400m', 'pods@member1': '2' });
    expect(
      settled.status?.clusters?.map(({ name, hard, used, reserved }) => ({ name, hard, used, reserved })),
    ).toEqual([
      {
        name: 'member1',
        hard: { cpu: '1', pods: '3' },
        used: { cpu: '400m', pods: '2' },
        reserved: { cpu: '0', pods: '0' },
      },
      { name: 'member2', hard: undefined, used: { cpu: '200m' }, reserved: undefined },
    ]);
  });

  test("a cap by label is resolved from the Clusters' labels, and the webhook refuses a placement over it", async () => {
    const namespace = await namespaceEverywhere();
    // A label of this test's own on member1's Cluster object (the other tests do not see it).
    const label = `caps-${namespace}`;
    await objects().patchClusterCustomObject(
      { ...CLUSTER, name: 'member1', body: { metadata: { labels: { [label]: 'on' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    try {
      await createQuota(namespace, { cpu: '10' }, [
        { labelSelector: { matchLabels: { [label]: 'on' } }, hard: { cpu: '1' } },
      ]);
      const counted = await readQuota(namespace);
      expect(counted.status?.hard).toEqual({ cpu: '10', 'cpu@member1': '1' });
      const refused = await createBinding(
        binding(namespace, 'web', 3, '500m', [{ name: 'member1', replicas: 3 }]),
      ).then(
        () => 'admitted',
        (err: unknown) => String((err as { body?: unknown }).body),
      );
      expect(refused).toContain('exceeded quota: team on member cluster member1, requested: cpu=1500m');
      // member2 carries no such label: no cap there.
      await createBinding(binding(namespace, 'other', 3, '500m', [{ name: 'member2', replicas: 3 }]));
    } finally {
      await objects().patchClusterCustomObject(
        { ...CLUSTER, name: 'member1', body: { metadata: { labels: { [label]: null } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
  });

  test('the usage by workload is recorded in the namespace for kubectl kq and the console, and goes with the quota', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10', pods: '20' });
    const web = binding(namespace, 'web', 3, '200m', [
      { name: 'member1', replicas: 2 },
      { name: 'member2', replicas: 1 },
    ]);
    await createBinding(web);
    await propagate('member1', namespace, 'web', 2, '200m');
    const readRecord = () =>
      objects().getNamespacedCustomObject({
        ...WORKLOAD_USAGE,
        namespace,
        name: USAGE_RECORD_NAME,
      }) as Promise<{
        metadata?: k8s.V1ObjectMeta;
      }>;
    const workloadCpu = (record: unknown) => {
      const read = readUsageRecord(record);
      if (!('usage' in read)) return [read.problem];
      return read.usage.clusters.flatMap((c) => c.workloads.map((w) => `${c.name} ${w.name} ${w.used.cpu}`));
    };
    await eventually(readRecord, (r) => workloadCpu(r).join() === 'member1 web 400m', 30_000);
    await propagate('member2', namespace, 'web', 1, '200m');
    const record = await eventually(
      readRecord,
      (r) => workloadCpu(r).join() === 'member1 web 400m,member2 web 200m',
      30_000,
    );
    const quota = await readQuota(namespace);
    expect(record.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'KarmadaQuota', name: 'team', uid: quota.metadata?.uid }),
    ]);
    const stored = (await objects().getNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace,
      name: 'web',
    })) as ResourceBinding;
    expect(workloadUsage(quota, [stored], recordedObservations(record, new Date())).rows).toEqual([
      expect.objectContaining({ binding: 'web', observed: { cpu: '600m', pods: '3' }, reserved: {} }),
    ]);

    await objects().deleteNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'team' });
    await eventually(
      () =>
        readRecord().then(
          () => 'present',
          (err: unknown) => String(err),
        ),
      (result) => result.includes('404'),
      30_000,
    );
  });

  test('a workload running beyond its charge (an override raised its replicas) is named by RunningBeyondCharge, an Event and a gauge', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10', pods: '20' });
    await createBinding(binding(namespace, 'web', 1, '200m', [{ name: 'member1', replicas: 1 }]));
    // What an OverridePolicy setting /spec/replicas to 3 in member1 makes it run: no binding change.
    await propagate('member1', namespace, 'web', 3, '200m');
    // The member's pods are observed one by one: the condition turns True with the second.
    const beyond = await eventually(
      () => readQuota(namespace),
      (k) =>
        /pods=3 against/.test(
          k.status?.conditions?.find((c) => c.type === 'RunningBeyondCharge')?.message ?? '',
        ),
      30_000,
    );
    const condition = beyond.status!.conditions!.find((c) => c.type === 'RunningBeyondCharge')!;
    expect(condition.status).toBe('True');
    expect(condition.message).toMatch(/^web runs cpu=600m,pods=3 against a charge of cpu=200m,pods=1/);
    await eventually(
      () => eventReasons(namespace),
      (reasons) => reasons.includes('Warning/RunningBeyondCharge'),
    );
    const gauge = new RegExp(
      `karmada_quota_running_beyond_charge\\{(?=[^}]*namespace="${namespace}")(?=[^}]*quota="team")[^}]*\\} 1`,
    );
    await eventually(
      () => Promise.all(reconcilers.map(scrape)),
      (pages) => pages.some((page) => gauge.test(page)),
    );
  });

  test('a pod created directly in a member raises used, and the webhook admits correspondingly less', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '1' });
    await memberKc('member1')
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({
        namespace,
        body: pod('direct', '600m'),
      });
    await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('600m')) === 0,
      30_000,
    );
    await expect(createBinding(binding(namespace, 'too-big', 1, '500m'))).rejects.toMatchObject({
      code: 403,
    });
    // The denial is on record where `kubectl describe kq` shows it: an Event carrying the quota's uid.
    const [denied] = await eventually(
      async () => (await quotaEvents(namespace)).filter((e) => e.reason === 'AdmissionDenied'),
      (events) => events.length > 0,
      30_000,
    );
    expect(denied).toMatchObject({ type: 'Warning', count: 1 });
    expect(denied!.message).toMatch(
      /^denied ResourceBinding too-big: exceeded quota: team, requested: cpu=500m/,
    );
    expect(denied!.involvedObject.uid).toBe((await readQuota(namespace)).metadata!.uid);
    await createBinding(binding(namespace, 'fits', 1, '400m'));

    // More pods made directly in a member push usage over the limit: the quota says so.
    await memberKc('member2')
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({
        namespace,
        body: pod('direct-2', '600m'),
      });
    const over = await eventually(
      () => readQuota(namespace),
      (k) => k.status?.conditions?.find((c) => c.type === 'OverQuota')?.status === 'True',
      30_000,
    );
    expect(over.status!.conditions!.find((c) => c.type === 'OverQuota')!.message).toContain('cpu');
    await eventually(
      () => eventReasons(namespace),
      (reasons) => reasons.includes('Warning/OverQuota'),
    );
  });

  test('a malformed job fails for good without blocking the queue', async () => {
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue(RECONCILE_QUEUE, { connection, prefix: RECONCILE_QUEUE_PREFIX });
    try {
      const job = await queue.add(RECONCILE_JOB_NAME, { namespace: 'Not A Namespace!' });
      const namespace = await namespaceEverywhere();
      await createQuota(namespace, { cpu: '1' });
      await eventually(
        () => readQuota(namespace),
        (k) => k.status?.hard !== undefined,
        30_000,
      );
      await eventually(
        () => job.getState(),
        (state) => state === 'failed',
        30_000,
      );
      expect((await queue.getJob(job.id!))?.attemptsMade).toBe(1); // not retried: it cannot get better
    } finally {
      await queue.close();
      connection.disconnect(); // BullMQ leaves a connection it was given open
    }
  });

  test("a count on request moves a quiet quota's stamp past a later write; a plain reconcile does not", async () => {
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue(RECONCILE_QUEUE, { connection, prefix: RECONCILE_QUEUE_PREFIX });
    try {
      const namespace = await namespaceEverywhere();
      await createQuota(namespace, { cpu: '10' });
      await createBinding(binding(namespace, 'quiet', 1, '1'));
      const counted = await eventually(
        () => readQuota(namespace),
        (k) => reservedCpu(k).cmp(q('1')) === 0 && claims(k).length === 0,
      );
      // A write that is no binding: it moves the etcd revision, so any later list of bindings is newer.
      const other = await host()
        .makeApiClient(k8s.CoreV1Api)
        .createNamespacedConfigMap({ namespace, body: { metadata: { name: 'unrelated' } } });
      const otherVersion = other.metadata!.resourceVersion!;
      expect(isAtOrAfterVersion(counted.status?.observedBindingsVersion, otherVersion)).toBe(false);

      // A plain reconcile finds nothing changed but the stamp: it writes nothing.
      const plain = await queue.add(
        RECONCILE_JOB_NAME,
        { namespace, reason: 'test' },
        reconcileJobOptions(namespace),
      );
      await eventually(
        () => queue.getJob(plain.id!),
        (job) => job === undefined, // removed on completion
        30_000,
      );
      const after = await readQuota(namespace);
      expect(after.metadata?.resourceVersion).toBe(counted.metadata?.resourceVersion);
      expect(after.status?.observedBindingsVersion).toBe(counted.status?.observedBindingsVersion);

      // A count on request writes the status for its stamp alone, from a list made after the request.
      await requestCount(queue, { namespace }, 'test: count on request');
      const restamped = await eventually(
        () => readQuota(namespace),
        (k) => isAtOrAfterVersion(k.status?.observedBindingsVersion, otherVersion),
        30_000,
      );
      expect(restamped.status?.reserved).toEqual(counted.status?.reserved);
      expect(restamped.status?.used).toEqual(counted.status?.used);
    } finally {
      await queue.close();
      connection.disconnect(); // BullMQ leaves a connection it was given open
    }
  });

  test('deleting a binding releases its reservation, deleting pods lowers used, each within 2 s', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10' });
    await createBinding(binding(namespace, 'gone', 2, '1'));
    await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).cmp(q('2')) === 0,
    );
    let started = Date.now();
    await objects().deleteNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, name: 'gone' });
    await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).isZero(),
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000);

    await propagate('member2', namespace, 'pods', 2, '500m');
    await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('1')) === 0,
      30_000,
    );
    await memberKc('member2')
      .makeApiClient(k8s.AppsV1Api)
      .deleteNamespacedDeployment({ namespace, name: 'pods', propagationPolicy: 'Foreground' });
    // Pod deletion goes through the member's garbage collector; measure from when the pods are gone.
    const core = memberKc('member2').makeApiClient(k8s.CoreV1Api);
    await eventually(
      () => core.listNamespacedPod({ namespace }),
      (l) => l.items.length === 0,
      30_000,
    );
    started = Date.now();
    await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).isZero(),
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('usage that falls is reserved again: a competing binding is denied while the pods are gone', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '4' });
    await createBinding(binding(namespace, 'web', 4, '1', [{ name: 'member1', replicas: 4 }]));
    await propagate('member1', namespace, 'web', 4, '1');
    // Fully observed once its claim has lapsed: used 4, nothing reserved.
    await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('4')) === 0 && reservedCpu(k).isZero(),
    );
    // The pods go (evicted, a rollout deleting first, a member lost): the binding still holds 4.
    await memberKc('member1')
      .makeApiClient(k8s.AppsV1Api)
      .deleteNamespacedDeployment({ namespace, name: 'web', propagationPolicy: 'Foreground' });
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).isZero() && reservedCpu(k).cmp(q('4')) === 0,
    );
    expect(settled.status?.reserved).toEqual({ cpu: '4' });
    const denied = await objects()
      .createNamespacedCustomObject({
        ...RESOURCE_BINDING,
        namespace,
        body: binding(namespace, 'competitor', 1, '1'),
      })
      .then(
        () => undefined,
        (err: k8s.ApiException<string>) => err,
      );
    expect(denied?.code).toBe(403);
    expect(String(denied?.body)).toContain(
      'exceeded quota: team, requested: cpu=1, used: cpu=4, limited: cpu=4',
    );
  });

  test('a stored scale-down is released by the reconciler within 2 s, and others can take it', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '4' });
    await createBinding(binding(namespace, 'big', 4, '1'));
    await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).cmp(q('4')) === 0 && claims(k).length === 0,
    );
    const stored = (await objects().getNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace,
      name: 'big',
    })) as ResourceBinding;
    const started = Date.now();
    await objects().replaceNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace,
      name: 'big',
      body: {
        ...stored,
        spec: { ...stored.spec!, replicas: 1, clusters: [{ name: 'member1', replicas: 1 }] },
      },
    });
    // Admission released nothing; the reconciler does once it sees the stored binding.
    const released = await eventually(
      () => readQuota(namespace),
      (k) => reservedCpu(k).cmp(q('1')) === 0,
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(released.status?.reserved).toEqual({ cpu: '1' });
    await createBinding(binding(namespace, 'next', 3, '1'));
  });

  test('a waiting change that can never fit does not hold up a younger one that fits: that one is requeued', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10' });
    await createBinding(binding(namespace, 'filler', 5, '1'));
    await createBinding(binding(namespace, 'other', 5, '1'));
    // The templates a requeue annotates (Karmada's detector would retry on the change).
    const apps = host().makeApiClient(k8s.AppsV1Api);
    for (const name of ['big', 'small'])
      await apps.createNamespacedDeployment({ namespace, body: deployment(name, 1, '1') });
    // big asks more than hard (+20 of 10), then small asks +1: both refused, big the older.
    for (const [name, replicas] of [
      ['big', 20],
      ['small', 1],
    ] as const) {
      const refused = await createBinding(binding(namespace, name, replicas, '1')).then(
        () => undefined,
        (err: k8s.ApiException<string>) => err,
      );
      expect(refused?.code).toBe(403);
    }
    await eventually(
      () => readQuota(namespace),
      (k) => (k.status?.waiting ?? []).length === 2,
    );
    await objects().deleteNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, name: 'filler' });
    const requeuedAt = async (name: string) =>
      (await apps.readNamespacedDeployment({ namespace, name })).metadata?.annotations?.[
        'karmada-quota/requeued-at'
      ];
    await eventually(
      () => requeuedAt('small'),
      (at) => at !== undefined,
      30_000,
    );
    expect(await requeuedAt('big')).toBeUndefined();
  });

  test('an orphan reservation (an admitted create that never persisted) is removed after its TTL', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '10' });
    await eventually(
      () => readQuota(namespace),
      (k) => k.status?.hard !== undefined,
    );
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'orphan-1',
        operation: 'CREATE',
        kind: { group: 'work.karmada.io', version: 'v1alpha2', kind: 'ResourceBinding' },
        namespace,
        name: 'never-persisted',
        object: {
          ...binding(namespace, 'never-persisted', 1, '2'),
          metadata: { name: 'never-persisted', namespace, uid: 'u-orphan' },
        },
        dryRun: false,
      },
    };
    const answer = await postToWebhook(webhook, '/validate/resourcebindings', JSON.stringify(review));
    expect(JSON.parse(answer.body).response.allowed).toBe(true);
    const held = await eventually(
      () => readQuota(namespace),
      (k) => reservation(k, 'never-persisted') !== undefined,
    );
    expect(reservation(held, 'never-persisted')!.expirationTime).toBeTruthy();
    await eventually(
      () => readQuota(namespace),
      (k) => reservation(k, 'never-persisted') === undefined,
      (TTL_SECONDS + 10) * 1000,
    );
  });

  test('two reconciler workers and the webhook under load lose no reservation and no usage', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '20', pods: '100' });
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => createBinding(binding(namespace, `load-${i}`, 1, '1'))),
    );
    // Pods churn in the members meanwhile, so the reconcilers write the same quota as the webhook.
    await Promise.all([
      propagate('member1', namespace, 'churn-a', 3, '100m'),
      propagate('member2', namespace, 'churn-b', 2, '100m'),
    ]);
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    expect(admitted).toBe(20);
    const final = await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('500m')) === 0 && reservedCpu(k).cmp(q('20')) === 0 && claims(k).length === 0,
      30_000,
    );
    // Independent recount: every admitted binding holds its full charge (none of their pods exist),
    // every claim retired as its binding was stored, and used is what runs in the members.
    const bindings = (await objects().listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace })) as {
      items: ResourceBinding[];
    };
    expect(bindings.items).toHaveLength(20);
    expect(final.status?.reserved).toMatchObject({ cpu: '20' });
    let pods = 0;
    for (const m of ['member1', 'member2'])
      pods += (await memberKc(m).makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace })).items.length;
    expect(pods).toBe(5);
    expect(final.status?.used).toMatchObject({ cpu: '500m', pods: '5' });
  });

  test('a stopped member keeps its last usage, is marked Stale/Unreachable, and the quota is still enforced', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { cpu: '2' });
    await propagate('member1', namespace, 'kept', 1, '1500m');
    await eventually(
      () => readQuota(namespace),
      (k) => usedCpu(k).cmp(q('1500m')) === 0,
      30_000,
    );
    await federation.stopMember('member1');
    try {
      const marked = await eventually(
        () => readQuota(namespace),
        (k) => k.status?.clusters?.find((c) => c.name === 'member1')?.state !== 'Ready',
        30_000,
      );
      const slice = marked.status!.clusters!.find((c) => c.name === 'member1')!;
      expect(['Stale', 'Unreachable']).toContain(slice.state);
      expect(slice.used.cpu).toBe('1500m');
      const synced = marked.status!.conditions!.find((c) => c.type === 'ClustersSynced')!;
      expect(synced.status).toBe('False');
      expect(synced.message).toContain('member1');
      await eventually(
        () => eventReasons(namespace),
        (reasons) => reasons.includes('Warning/ClusterStale'),
      );
      await expect(createBinding(binding(namespace, 'over', 1, '1'))).rejects.toMatchObject({ code: 403 });
    } finally {
      await federation.startMember('member1');
    }
  }, 120_000);

  test('every service exposes the metrics an operator alerts on', async () => {
    // The tests above admitted, denied, reconciled and synced: every series has samples by now.
    const webhookMetrics = await scrape(webhook);
    expect(webhookMetrics).toMatch(
      /karmada_quota_admission_duration_seconds_count\{[^}]*result="allowed"[^}]*\} [1-9]/,
    );
    expect(webhookMetrics).toMatch(/karmada_quota_admissions_total\{[^}]*result="denied"[^}]*\} [1-9]/);
    expect(webhookMetrics).toMatch(/karmada_quota_admission_batch_size_count\{[^}]*\} [1-9]/);
    expect(webhookMetrics).toMatch(/karmada_quota_status_conflicts_total\{[^}]*\} \d/);
    // Its clock against the host API server's, measured at start (all here run on one machine).
    const clockOffset = /karmada_quota_clock_offset_seconds\{[^}]*\} (\S+)/;
    expect(Math.abs(Number(webhookMetrics.match(clockOffset)?.[1]))).toBeLessThan(1.5);

    const reconciled = await Promise.all(reconcilers.map(scrape));
    for (const text of reconciled) {
      expect(text).toMatch(/karmada_quota_reconcile_queue_depth\{[^}]*\} \d/);
      expect(Math.abs(Number(text.match(clockOffset)?.[1]))).toBeLessThan(1.5);
      expect(text).toMatch(/karmada_quota_reconcile_duration_seconds_bucket\{/);
    }
    // Jobs go to whichever worker is free: together they have timed reconciles.
    expect(reconciled.join('\n')).toMatch(/karmada_quota_reconcile_duration_seconds_count\{[^}]*\} [1-9]/);

    const aggregated = await scrape(aggregator);
    for (const cluster of ['member1', 'member2']) {
      expect(aggregated).toMatch(
        new RegExp(
          `karmada_quota_cluster_last_sync_timestamp_seconds\\{[^}]*cluster="${cluster}"[^}]*\\} [1-9]`,
        ),
      );
    }
    expect(aggregated).toMatch(/karmada_quota_aggregator_events_total\{[^}]*\} [1-9]/);
  });
});
