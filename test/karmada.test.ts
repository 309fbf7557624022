import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  WORKLOAD_USAGE,
  type FederatedResourceQuota,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { bindingCharge } from '#quota';
import { recordedObservations, USAGE_RECORD_NAME, workloadUsage } from '#quota-view';
import {
  Federation,
  karmadaWorkload,
  sleep,
  startServices,
  type KarmadaWorkload,
} from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';
import { cpu, karmadaSuite, scheduledCondition } from './support/karmada.js';

/**
 * Real Karmada v1.18 in the loop: users apply Deployments and PropagationPolicies to the host;
 * Karmada's detector writes the bindings, its scheduler places them, its controllers run them in the
 * members. No binding is written by hand here. A federation and Redis database (7) of their own.
 */
const REDIS_URL = testRedisUrl(7);
const CLUSTERS = ['member1', 'member2'];

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-karmada-'));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  federation = await Federation.start({ stateDir, members: CLUSTERS.length, karmada: true });
  await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['webhook', 'aggregator', 'reconciler'],
    // Karmada's detector may race its own creates; a claim merged from one is held until it expires
    // when its binding is deleted (docs/concepts/accounting.md): short claims keep the releases quick here.
    // Karmada's own FRQ controllers are not run here (KARMADA_CONTROLLERS): FRQs are served by us.
    env: {
      RESERVATION_TTL_SECONDS: '20',
      ADMISSION_LANDING_WINDOW_SECONDS: '10',
      SERVE_FEDERATED_RESOURCE_QUOTAS: 'true',
    },
  });
}, 900_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const {
  host,
  member,
  objects,
  custom,
  teamWithQuota,
  apply,
  readQuota,
  readBinding,
  podCount,
  detectorRefusal,
} = karmadaSuite(() => federation, 'kmd');

/** A user scaling a Deployment on the host (Karmada propagates it). */
const scaleDeployment = (namespace: string, name: string, replicas: number) =>
  host()
    .makeApiClient(k8s.AppsV1Api)
    .patchNamespacedDeployment(
      { namespace, name, body: { spec: { replicas } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );

/** CPU requested by the pods of a namespace in one member, in millicores. */
async function memberPodCpu(cluster: string, namespace: string): Promise<number> {
  const pods = await member(cluster).makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace });
  return pods.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .flatMap((p) => p.spec?.containers ?? [])
    .reduce((sum, c) => sum + cpu(c.resources?.requests?.['cpu'] as string | undefined), 0);
}

/** What Karmada applied in the members, per workload name: replicas it runs at once x CPU per pod, in millicores. */
async function appliedCpu(namespace: string): Promise<Map<string, number>> {
  const applied = new Map<string, number>();
  const add = (name: string, replicas: number, podSpec: k8s.V1PodSpec | undefined) => {
    const perPod = (podSpec?.containers ?? []).reduce(
      (sum, c) => sum + cpu(c.resources?.requests?.['cpu'] as string | undefined),
      0,
    );
    applied.set(name, (applied.get(name) ?? 0) + replicas * perPod);
  };
  for (const cluster of CLUSTERS) {
    const [deployments, jobs] = await Promise.all([
      member(cluster).makeApiClient(k8s.AppsV1Api).listNamespacedDeployment({ namespace }),
      member(cluster).makeApiClient(k8s.BatchV1Api).listNamespacedJob({ namespace }),
    ]);
    for (const d of deployments.items) add(d.metadata!.name!, d.spec?.replicas ?? 1, d.spec?.template.spec);
    // A Job runs at most its parallelism, and never more pods than completions remain.
    for (const j of jobs.items)
      add(
        j.metadata!.name!,
        Math.min(j.spec?.parallelism ?? 1, j.spec?.completions ?? Infinity),
        j.spec?.template.spec,
      );
  }
  return applied;
}

/**
 * Samples, until stopped, what the members run (read first) against each binding's charge and the
 * quota's used + reserved (read after): a binding must never be charged less than Karmada applied for
 * it, except while it shrinks (Karmada lowers the binding before the members; the quota still counts
 * the members' pods then), and the quota must never count less than what all of them applied.
 */
function chargeSampler(namespace: string) {
  const shrinking = new Set<string>();
  const violations: string[] = [];
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const applied = await appliedCpu(namespace);
      const [bindings, quota] = await Promise.all([
        custom().listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace }) as Promise<{
          items: ResourceBinding[];
        }>,
        readQuota(namespace),
      ]);
      const appliedAfter = await appliedCpu(namespace);
      samples++;
      for (const rb of bindings.items) {
        const name = rb.spec.resource.name;
        const charged = cpu(bindingCharge(rb).charge['cpu']?.toString());
        if (!shrinking.has(name) && charged < (applied.get(name) ?? 0))
          violations.push(`${name}: charged ${charged}m < applied ${applied.get(name)}m`);
      }
      // The quota was read between two readings of the members. A workload moves one way at a time
      // (scaled up, or down), so what it applied when the quota was read is at least the smaller of
      // the two: a scale-down that lands between the readings is not taken for an under-count.
      const total = [...applied].reduce(
        (sum, [name, milli]) => sum + Math.min(milli, appliedAfter.get(name) ?? 0),
        0,
      );
      const counted = cpu(quota.status?.used?.['cpu']) + cpu(quota.status?.reserved?.['cpu']);
      if (counted < total) violations.push(`quota counts ${counted}m < applied ${total}m`);
      await sleep(100);
    }
  })();
  return {
    shrinking,
    async stop(): Promise<{ samples: number; violations: string[] }> {
      running = false;
      await loop;
      return { samples, violations };
    },
  };
}

describe("Karmada's FederatedResourceQuota served after the switch, with real Karmada", () => {
  test('a Deployment through Karmada is counted in the FRQ status per cluster, and a scale-up past it is refused', async () => {
    const namespace = uniqueName('kmd');
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    await custom().createNamespacedCustomObject({
      ...FEDERATED_RESOURCE_QUOTA,
      namespace,
      body: {
        apiVersion: FEDERATED_RESOURCE_QUOTA.apiVersion,
        kind: FEDERATED_RESOURCE_QUOTA.kind,
        metadata: { name: 'team', namespace },
        spec: { overall: { cpu: '3', memory: '2Gi' } },
      },
    });
    await usageCounted(host(), namespace, 'frq-team');
    await apply(karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS }));

    const served = await eventually(
      () =>
        custom().getNamespacedCustomObject({
          ...FEDERATED_RESOURCE_QUOTA,
          namespace,
          name: 'team',
        }) as Promise<FederatedResourceQuota>,
      (frq) =>
        frq.status?.aggregatedStatus?.length === 2 &&
        frq.status.aggregatedStatus.every((c) => c.used?.['cpu'] === '1'),
      120_000,
    );
    expect(served.status).toEqual({
      overall: { cpu: '3', memory: '2Gi' },
      overallUsed: { cpu: '2', memory: '512Mi' },
      aggregatedStatus: [
        { clusterName: 'member1', used: { cpu: '1', memory: '256Mi' } },
        { clusterName: 'member2', used: { cpu: '1', memory: '256Mi' } },
      ],
    });

    await scaleDeployment(namespace, 'web', 4);
    const refusal = await detectorRefusal(namespace, 'web');
    expect(refusal.message).toContain(
      'exceeded quota: frq-team, requested: cpu=2, used: cpu=2, limited: cpu=3',
    );
  });
});

describe('PropagationPolicy-driven workloads under a KarmadaQuota, with real Karmada', () => {
  test('a Deployment runs in both members, its usage is counted per cluster, and deleting it releases the usage', async () => {
    const namespace = await teamWithQuota({ cpu: '4', pods: '10' });
    const web = karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS });
    await apply(web);

    const binding = await eventually(
      () => readBinding(namespace, 'web'),
      (rb) => (rb.spec?.clusters?.length ?? 0) === 2,
    );
    expect(binding.spec?.clusters).toEqual([
      { name: 'member1', replicas: 1 },
      { name: 'member2', replicas: 1 },
    ]);
    for (const cluster of CLUSTERS) {
      await eventually(
        () => podCount(cluster, namespace),
        (n) => n === 1,
      );
    }
    const counted = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.['cpu'] === '2' && q.status.reserved?.['cpu'] === undefined,
    );
    expect(counted.status?.clusters?.map((c) => [c.name, c.used['cpu']])).toEqual([
      ['member1', '1'],
      ['member2', '1'],
    ]);

    await objects().delete(web.workload);
    await eventually(
      () => readQuota(namespace),
      (q) => cpu(q.status?.used?.['cpu']) === 0 && cpu(q.status?.reserved?.['cpu']) === 0,
    );
    await eventually(
      () =>
        readBinding(namespace, 'web').then(
          () => 'present',
          () => 'gone',
        ),
      (state) => state === 'gone',
    );
  });

  test("a Warn quota warns whoever applies the workload (kubectl prints the refusal its binding would meet); Karmada's binding is admitted and counted", async () => {
    const namespace = uniqueName('kmd');
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    const quota = karmadaQuota(namespace, 'team', { cpu: '2' }, { enforcement: 'Warn' });
    await custom().createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, body: quota });
    await usageCounted(host(), namespace, 'team');
    const kubectlCreate = (object: object) =>
      spawnSync(
        federation.info.kubectl,
        ['--kubeconfig', federation.info.host.kubeconfig, 'create', '-f', '-'],
        {
          input: JSON.stringify(object),
          encoding: 'utf8',
        },
      );

    // Within the quota: no warning.
    const small = karmadaWorkload({ name: 'small', namespace, replicas: 1, cpu: '1', clusters: CLUSTERS });
    expect(kubectlCreate(small.policy).status).toBe(0);
    expect(kubectlCreate(small.workload)).toMatchObject({ status: 0, stderr: '' });
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.['cpu'] === '1',
    );

    const web = karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS });
    expect(kubectlCreate(web.policy).status).toBe(0);
    const applied = kubectlCreate(web.workload);
    expect(applied.status).toBe(0);
    expect(applied.stderr).toContain(
      'Warning: KarmadaQuota team would deny the ResourceBinding web-deployment of this workload ' +
        '(spec.enforcement: Warn, not enforced): exceeded quota: team, requested: cpu=2, used: cpu=1, limited: cpu=2',
    );
    // Not enforced: Karmada's binding is admitted, counted, and noted where refusals show.
    const counted = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.['cpu'] === '3',
    );
    expect(counted.status?.wouldBeDenied).toEqual([
      expect.objectContaining({ binding: 'web-deployment', enforcement: 'Warn' }),
    ]);
  });

  test('a scale-up past the quota is refused at the detector: members never run more than the quota allows, the Deployment shows why', async () => {
    const namespace = await teamWithQuota({ cpu: '4', pods: '10' });
    const web = karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS });
    await apply(web);
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.['cpu'] === '2',
    );

    await scaleDeployment(namespace, 'web', 6);
    const refusal = await detectorRefusal(namespace, 'web');
    expect(refusal.type).toBe('Warning');
    expect(refusal.message).toContain('exceeded quota: team, requested: cpu=4, used: cpu=2, limited: cpu=4');
    // What waits, and why, is in the quota's status (kubectl kq describe and the console show it).
    const waiting = await eventually(
      () => readQuota(namespace),
      (q) => (q.status?.waiting?.length ?? 0) > 0,
    );
    expect(waiting.status?.waiting).toEqual([
      { binding: 'web-deployment', requested: { cpu: '4' }, free: { cpu: '2' }, since: expect.any(String) },
    ]);

    // Karmada keeps retrying; for a while, nothing beyond the quota ever reaches the members.
    for (let sample = 0; sample < 20; sample++) {
      const running = (await Promise.all(CLUSTERS.map((c) => memberPodCpu(c, namespace)))).reduce(
        (a, b) => a + b,
      );
      expect(running).toBeLessThanOrEqual(4000);
      await sleep(250);
    }
    expect((await readBinding(namespace, 'web')).spec?.replicas).toBe(2);
  });

  test('a spread by the scheduler past the quota is refused at its placement: Scheduled=False with reason QuotaExceeded', async () => {
    // Duplicated: the unscheduled binding is charged 2 cpu; placing it on two members makes it 4 > 3.
    const namespace = await teamWithQuota({ cpu: '3', pods: '10' });
    await apply(
      karmadaWorkload({
        name: 'dup',
        namespace,
        replicas: 2,
        cpu: '1',
        clusters: CLUSTERS,
        placement: 'Duplicated',
      }),
    );
    const binding = await eventually(
      () => readBinding(namespace, 'dup'),
      (rb) => scheduledCondition(rb)?.status === 'False',
    );
    expect(scheduledCondition(binding)).toMatchObject({ reason: 'QuotaExceeded' });
    expect(scheduledCondition(binding)?.message).toContain('exceeded quota: team');
    expect(binding.spec?.clusters ?? []).toEqual([]);
    for (const cluster of CLUSTERS) expect(await podCount(cluster, namespace)).toBe(0);
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting?.[0]?.binding === 'dup-deployment',
    );

    // Long enough for Karmada's scheduler to back off to gaps well over 10 s.
    await sleep(30_000);

    // Raising the limit frees room: the reconciler requeues the binding through Karmada's scheduler
    // (spec.rescheduleTriggeredAt), which places it at once instead of after its back-off.
    await custom().patchNamespacedCustomObject(
      { ...KARMADA_QUOTA, namespace, name: 'team', body: { spec: { hard: { cpu: '4', pods: '10' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.hard?.['cpu'] === '4',
    );
    const placed = await eventually(
      () => readBinding(namespace, 'dup'),
      (rb) => (rb.spec?.clusters?.length ?? 0) === 2,
      10_000,
    );
    expect(placed.spec?.rescheduleTriggeredAt).toEqual(expect.any(String));
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting === undefined && q.status?.used?.['cpu'] === '4',
    );
  });

  test("a Divided placement over a member's cap is refused at its placement, naming the member; placed once the cap allows", async () => {
    // hard 10 with caps member1 = 4 and member2 = 8: Karmada's equal static weights split 10 replicas
    // 5 + 5, over member1's cap (its scheduler does not know the caps).
    const namespace = await teamWithQuota({ cpu: '10', pods: '20' }, [
      { name: 'member1', hard: { cpu: '4' } },
      { name: 'member2', hard: { cpu: '8' } },
    ]);
    await apply(karmadaWorkload({ name: 'split', namespace, replicas: 10, cpu: '1', clusters: CLUSTERS }));
    const binding = await eventually(
      () => readBinding(namespace, 'split'),
      (rb) => scheduledCondition(rb)?.status === 'False',
    );
    expect(scheduledCondition(binding)).toMatchObject({ reason: 'QuotaExceeded' });
    expect(scheduledCondition(binding)?.message).toContain(
      'exceeded quota: team on member cluster member1, requested: cpu=5, used: cpu=0, limited: cpu=4',
    );
    expect(binding.spec?.clusters ?? []).toEqual([]);
    for (const cluster of CLUSTERS) expect(await podCount(cluster, namespace)).toBe(0);
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting?.[0]?.binding === 'split-deployment',
    );

    // The admin raises member1's cap: the reconciler requeues the binding and Karmada places it.
    await custom().patchNamespacedCustomObject(
      {
        ...KARMADA_QUOTA,
        namespace,
        name: 'team',
        body: {
          spec: {
            clusters: [
              { name: 'member1', hard: { cpu: '5' } },
              { name: 'member2', hard: { cpu: '8' } },
            ],
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const placed = await eventually(
      () => readBinding(namespace, 'split'),
      (rb) => (rb.spec?.clusters?.length ?? 0) === 2,
      30_000,
    );
    expect(placed.spec?.clusters).toEqual(
      expect.arrayContaining([
        { name: 'member1', replicas: 5 },
        { name: 'member2', replicas: 5 },
      ]),
    );
    // Admitted within a second of its refusal, the write does not end the record (it may stand for
    // a refusal that late): its requeue settles it, 30 s on, and the expiry sweep shows that.
    const counted = await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting === undefined && q.status?.used?.['cpu@member1'] === '5',
      90_000,
    );
    expect(counted.status?.clusters?.find((c) => c.name === 'member1')).toMatchObject({
      hard: { cpu: '5' },
      used: { cpu: '5' },
    });
  });

  test('when another workload frees the quota, the waiting scale-up is requeued and scheduled within 10 s', async () => {
    const namespace = await teamWithQuota({ cpu: '4', pods: '10' });
    const other = karmadaWorkload({ name: 'other', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS });
    const web = karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS });
    await apply(other);
    await apply(web);
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.used?.['cpu'] === '4',
    );
    await scaleDeployment(namespace, 'web', 4);
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting?.[0]?.binding === 'web-deployment',
    );
    // Long enough for Karmada's detector to back off to gaps well over 10 s.
    await sleep(30_000);

    // Freeing and filling again can fall between two status writes: timed from the delete itself.
    await objects().delete(other.workload);
    const scheduled = await eventually(
      () => readBinding(namespace, 'web'),
      (rb) =>
        rb.spec?.replicas === 4 && (rb.spec.clusters ?? []).reduce((n, c) => n + (c.replicas ?? 0), 0) === 4,
      10_000,
    );
    expect(scheduled.spec?.clusters).toEqual([
      { name: 'member1', replicas: 2 },
      { name: 'member2', replicas: 2 },
    ]);
    // It was our requeue, not Karmada's back-off, that retried it.
    const template = await host()
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDeployment({ namespace, name: 'web' });
    expect(template.metadata?.annotations?.['karmada-quota/requeued-at']).toEqual(expect.any(String));
    await eventually(
      () => readQuota(namespace),
      (q) => q.status?.waiting === undefined && q.status?.used?.['cpu'] === '4',
    );
  });

  test('a binding is never charged less than Karmada applies in the members: creates, Divided, Duplicated, a Job, scale-ups and scale-downs', async () => {
    const namespace = await teamWithQuota({ cpu: '100', pods: '100' });
    const sampler = chargeSampler(namespace);
    const scale = (name: string, replicas: number) => scaleDeployment(namespace, name, replicas);
    const applies = (expected: Record<string, number>) =>
      eventually(
        () => appliedCpu(namespace),
        (applied) => Object.entries(expected).every(([name, milli]) => applied.get(name) === milli),
      );
    try {
      await Promise.all([
        apply(karmadaWorkload({ name: 'web', namespace, replicas: 2, cpu: '1', clusters: CLUSTERS })),
        apply(
          karmadaWorkload({
            name: 'dup',
            namespace,
            replicas: 2,
            cpu: '500m',
            clusters: CLUSTERS,
            placement: 'Duplicated',
          }),
        ),
        apply(
          karmadaWorkload({
            name: 'batch',
            namespace,
            replicas: 3,
            completions: 5,
            cpu: '250m',
            clusters: CLUSTERS,
            kind: 'Job',
          }),
        ),
      ]);
      await applies({ web: 2000, dup: 2000, batch: 750 });
      await Promise.all([scale('web', 6), scale('dup', 3)]);
      await applies({ web: 6000, dup: 3000 });
      sampler.shrinking.add('web').add('dup');
      await Promise.all([scale('web', 1), scale('dup', 1)]);
      await applies({ web: 1000, dup: 1000 });
    } finally {
      const { samples, violations } = await sampler.stop();
      expect(violations).toEqual([]);
      // It did sample the transitions (each sample reads both members, the bindings and the quota:
      // a fraction of a second on a loaded machine).
      expect(samples).toBeGreaterThanOrEqual(5);
    }
  });
});

/** A PriorityClass in every member: the members' API servers refuse pods of a class they lack. */
async function priorityClassInMembers(name: string): Promise<void> {
  for (const cluster of CLUSTERS) {
    await member(cluster)
      .makeApiClient(k8s.SchedulingV1Api)
      .createPriorityClass({ body: { metadata: { name }, value: 1000 } })
      .catch((err: unknown) => {
        if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
      });
  }
}

/**
 * Holds `pods` (of `namespace` in `cluster`) in termination once they are deleted, and keeps their
 * replacements from being made meanwhile: bound to a Node (no kubelet runs it), a deleted pod
 * terminates for its grace period instead of going at once, and a member ResourceQuota of as many
 * pods, which counts terminating pods as Kubernetes does, refuses new ones until then. Returns what
 * lets them go: the Node deleted (the member's pod GC removes pods bound to a Node that is gone).
 */
async function holdInTermination(
  cluster: string,
  namespace: string,
  pods: k8s.V1Pod[],
): Promise<() => Promise<void>> {
  const core = member(cluster).makeApiClient(k8s.CoreV1Api);
  const node = uniqueName('node');
  await core.createNode({ body: { metadata: { name: node } } });
  for (const pod of pods)
    await core.createNamespacedPodBinding({
      namespace,
      name: pod.metadata!.name!,
      body: { metadata: { name: pod.metadata!.name! }, target: { kind: 'Node', name: node } },
    });
  await core.createNamespacedResourceQuota({
    namespace,
    body: { metadata: { name: 'pods' }, spec: { hard: { pods: String(pods.length) } } },
  });
  await eventually(
    () => core.readNamespacedResourceQuota({ namespace, name: 'pods' }),
    (q) => q.status?.used?.['pods'] === String(pods.length),
  );
  return async () => {
    await core.deleteNode({ name: node });
  };
}

/** `workload` with pods that take `seconds` to terminate once deleted, as a server draining its connections. */
function terminatingFor(workload: KarmadaWorkload, seconds: number): KarmadaWorkload {
  (workload.workload.spec['template'] as { spec: k8s.V1PodSpec }).spec.terminationGracePeriodSeconds =
    seconds;
  return workload;
}

/**
 * The pods of `namespace` in `cluster` are `leaving` (all of them, by uid), every one still being
 * deleted (`deletionTimestamp` set, not gone), and no other pod has been made beside them.
 */
async function expectStillTerminating(
  cluster: string,
  namespace: string,
  leaving: k8s.V1Pod[],
): Promise<void> {
  const pods = await member(cluster).makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace });
  expect(pods.items.map((p) => p.metadata?.uid).sort()).toEqual(leaving.map((p) => p.metadata?.uid).sort());
  expect(pods.items.filter((p) => !p.metadata?.deletionTimestamp)).toEqual([]);
}

describe('the limit holds with Karmada as it ships (default feature gates)', () => {
  test("a PriorityClass scope limits a Deployment of that class: Karmada writes no class into the binding, the template's is judged", async () => {
    const namespace = uniqueName('kmd');
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    const scoped = (name: string, operator: 'In' | 'NotIn') =>
      custom().createNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        body: karmadaQuota(
          namespace,
          name,
          { cpu: '2' },
          {
            scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, values: ['high'] }] },
          },
        ),
      });
    await scoped('high', 'In');
    await scoped('others', 'NotIn');
    await usageCounted(host(), namespace, 'high');
    await usageCounted(host(), namespace, 'others');
    await priorityClassInMembers('high');
    const ofClass = (name: string, replicas: number) => {
      const workload = karmadaWorkload({ name, namespace, replicas, cpu: '1', clusters: ['member1'] });
      (workload.workload as unknown as k8s.V1Deployment).spec!.template.spec!.priorityClassName = 'high';
      return workload;
    };

    // 4 x 1 cpu of class high against high's 2: refused at the detector; others (NotIn high) is not asked.
    await apply(ofClass('web', 4));
    const refusal = await detectorRefusal(namespace, 'web');
    expect(refusal.message).toContain('exceeded quota: high, requested: cpu=4, used: cpu=0, limited: cpu=2');

    // 2 x 1 cpu fits: admitted, counted by high only, though its binding names no class.
    await apply(ofClass('small', 2));
    const high = await eventually(
      () => custom().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'high' }),
      (q) => {
        const status = (q as KarmadaQuota).status;
        return cpu(status?.used?.['cpu']) + cpu(status?.reserved?.['cpu']) === 2000;
      },
    );
    expect(high).toBeDefined();
    const stored = await readBinding(namespace, 'small');
    expect(stored.spec.replicaRequirements?.priorityClassName).toBeUndefined();
    expect(stored.spec.replicaRequirements?.namespace).toBeUndefined();
    const others = (await custom().getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name: 'others',
    })) as KarmadaQuota;
    expect(cpu(others.status?.used?.['cpu']) + cpu(others.status?.reserved?.['cpu'])).toBe(0);

    // kubectl kq and the console judge the binding as the reconciler did, from its usage record:
    // `small` holds high's quota, not others'.
    const shown = async (quota: string) => {
      const [q, bindings, record] = await Promise.all([
        custom().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: quota }),
        custom().listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace }),
        custom()
          .getNamespacedCustomObject({ ...WORKLOAD_USAGE, namespace, name: USAGE_RECORD_NAME })
          .catch(() => undefined),
      ]);
      const items = (bindings as { items: ResourceBinding[] }).items;
      const view = workloadUsage(q as KarmadaQuota, items, recordedObservations(record, new Date()));
      return view.rows.map((row) => row.binding);
    };
    // The record follows the reconcile within USAGE_RECORD_SECONDS; until then others, NotIn high,
    // judges the binding by its own word (no class) and lists it.
    const [inHigh, inOthers] = await eventually(
      () => Promise.all([shown('high'), shown('others')]),
      ([high, others]) => high.includes('small-deployment') && !others.includes('small-deployment'),
    );
    expect(inHigh).toContain('small-deployment');
    expect(inOthers).not.toContain('small-deployment');
  });

  test('pods on their way out never stand in for a scale-up: 4 -> 2 -> 4 while the old pods terminate', async () => {
    const namespace = await teamWithQuota({ cpu: '10' });
    const core1 = member('member1').makeApiClient(k8s.CoreV1Api);
    await apply(karmadaWorkload({ name: 'web', namespace, replicas: 4, cpu: '1', clusters: ['member1'] }));
    const pods = await eventually(
      () => core1.listNamespacedPod({ namespace }),
      (list) => list.items.length === 4,
    );
    // The scaled-down pods terminate for their grace period (30 s), the scale-up's wait for them.
    // (Scaled to 0, Karmada would delete the member Deployment and make a new one: the next test.)
    const release = await holdInTermination('member1', namespace, pods.items);

    await scaleDeployment(namespace, 'web', 2);
    await eventually(
      () => core1.listNamespacedPod({ namespace }),
      (list) => list.items.filter((p) => p.metadata?.deletionTimestamp).length === 2,
    );
    await scaleDeployment(namespace, 'web', 4);
    // Once the reconciler has counted the stored scale-up (its claim retired, no longer listed): the
    // 2 old pods still run beside web's 2 others, used 4, and the scale-up's 2 are not running yet,
    // so they stay reserved.
    const counted = await eventually(
      () => readQuota(namespace),
      (q) =>
        (q.status?.reservations ?? []).length === 0 &&
        cpu(q.status?.used?.['cpu']) === 4000 &&
        cpu(q.status?.reserved?.['cpu']) === 2000,
      20_000,
    );
    expect(counted.status?.used?.['cpu']).toBe('4');

    // So a further 6 cpu does not fit (2 old + 4 + 6 would run, 12 of 10): refused.
    await apply(karmadaWorkload({ name: 'more', namespace, replicas: 6, cpu: '1', clusters: ['member2'] }));
    const refusal = await detectorRefusal(namespace, 'more');
    expect(refusal.message).toContain('exceeded quota: team, requested: cpu=6, used: cpu=6, limited: cpu=10');
    await release();
  });

  // Pods of a previous incarnation of a member workload, still terminating, are counted in `used`
  // and never stand in for the new binding's charge (docs/concepts/observed-usage.md, "Pods on their
  // way out"). Their grace period is 5 minutes, so they outlast the assertions on a loaded machine.
  test("a scale 4 -> 0 -> 4 is charged beside the old pods while they terminate: Karmada's new member Deployment reuses the ReplicaSet's name", async () => {
    const namespace = await teamWithQuota({ cpu: '10' });
    const core1 = member('member1').makeApiClient(k8s.CoreV1Api);
    const apps1 = member('member1').makeApiClient(k8s.AppsV1Api);
    await apply(
      terminatingFor(
        karmadaWorkload({ name: 'web', namespace, replicas: 4, cpu: '1', clusters: ['member1'] }),
        300,
      ),
    );
    const pods = await eventually(
      () => core1.listNamespacedPod({ namespace }),
      (list) => list.items.length === 4,
    );
    const [oldReplicaSet] = (await apps1.listNamespacedReplicaSet({ namespace })).items;
    const release = await holdInTermination('member1', namespace, pods.items);
    try {
      // Scaled to 0, Karmada deletes the member Deployment; the garbage collector then its ReplicaSet
      // and its pods.
      await scaleDeployment(namespace, 'web', 0);
      await eventually(
        () => core1.listNamespacedPod({ namespace }),
        (list) => list.items.length === 4 && list.items.every((p) => p.metadata?.deletionTimestamp),
      );
      // Scaled back, a new member Deployment: its ReplicaSet has the old one's name, not its uid.
      await scaleDeployment(namespace, 'web', 4);
      await eventually(
        () => apps1.listNamespacedReplicaSet({ namespace }),
        (list) =>
          list.items.some(
            (rs) =>
              rs.metadata?.name === oldReplicaSet!.metadata!.name &&
              rs.metadata?.uid !== oldReplicaSet!.metadata!.uid,
          ),
      );
      await expectOldBesideNew(namespace, pods.items);
    } finally {
      await release();
    }
  });

  /**
   * Once the reconciler has counted the new charge (its claim retired), the 4 old pods, still on their
   * way out, are used and the new incarnation's 4, not running yet, stay reserved: so a further 6 cpu
   * (4 old + 4 new + 6 would run, 14 of 10) is refused.
   */
  async function expectOldBesideNew(namespace: string, old: k8s.V1Pod[]): Promise<void> {
    await eventually(
      () => readQuota(namespace),
      (q) =>
        (q.status?.reservations ?? []).length === 0 &&
        cpu(q.status?.used?.['cpu']) === 4000 &&
        cpu(q.status?.reserved?.['cpu']) === 4000,
      60_000,
    );
    await apply(karmadaWorkload({ name: 'more', namespace, replicas: 6, cpu: '1', clusters: ['member2'] }));
    const refusal = await detectorRefusal(namespace, 'more');
    expect(refusal.message).toContain('exceeded quota: team, requested: cpu=6, used: cpu=8, limited: cpu=10');
    await expectStillTerminating('member1', namespace, old);
  }

  test('a Job deleted and created again under its name is charged beside its old pods while they terminate', async () => {
    const namespace = await teamWithQuota({ cpu: '10' });
    const core1 = member('member1').makeApiClient(k8s.CoreV1Api);
    const batch1 = member('member1').makeApiClient(k8s.BatchV1Api);
    const job = terminatingFor(
      karmadaWorkload({
        name: 'batch',
        namespace,
        replicas: 4,
        cpu: '1',
        clusters: ['member1'],
        kind: 'Job',
      }),
      300,
    );
    await apply(job);
    const pods = await eventually(
      () => core1.listNamespacedPod({ namespace }),
      (list) => list.items.length === 4,
    );
    const oldJob = await batch1.readNamespacedJob({ namespace, name: 'batch' });
    const release = await holdInTermination('member1', namespace, pods.items);
    try {
      // Deleted as kubectl deletes it: in the background (a batch/v1 Job orphans its dependents by
      // default, Karmada's binding among them). Karmada then deletes the member Job, in the
      // background too, and the member's garbage collector its pods.
      await host()
        .makeApiClient(k8s.BatchV1Api)
        .deleteNamespacedJob({ namespace, name: 'batch', propagationPolicy: 'Background' });
      await eventually(
        () => core1.listNamespacedPod({ namespace }),
        (list) => list.items.length === 4 && list.items.every((p) => p.metadata?.deletionTimestamp),
      );
      await eventually(
        () =>
          custom().listNamespacedCustomObject({ ...RESOURCE_BINDING, namespace }) as Promise<{
            items: ResourceBinding[];
          }>,
        (list) => list.items.length === 0,
      );
      // Run again: a new binding, and a new member Job of the name.
      await objects().create(job.workload);
      await eventually(
        () => batch1.readNamespacedJob({ namespace, name: 'batch' }),
        (current) => current.metadata?.uid !== oldJob.metadata?.uid,
      );
      await expectOldBesideNew(namespace, pods.items);
    } finally {
      await release();
    }
  });

  test("an OverridePolicy raising one member's replicas is charged at admission: 2 + 2 runs 4 + 2", async () => {
    const namespace = await teamWithQuota({ cpu: '10' });
    // As a user writes it: member1 runs 4 of web, whatever share the scheduler gives it.
    await objects().create({
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'OverridePolicy',
      metadata: { name: 'web-member1', namespace },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
        overrideRules: [
          {
            targetCluster: { clusterNames: ['member1'] },
            overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 4 }] },
          },
        ],
      },
    });
    // member2 makes no pods yet (a member ResourceQuota of none), as a member slow to start them:
    // its share must stay reserved, not be netted by member1's overridden 4.
    const core2 = member('member2').makeApiClient(k8s.CoreV1Api);
    await eventually(
      () => core2.readNamespace({ name: namespace }).catch(() => undefined),
      (ns) => ns !== undefined,
    );
    await core2.createNamespacedResourceQuota({
      namespace,
      body: { metadata: { name: 'none-yet' }, spec: { hard: { pods: '0' } } },
    });
    await apply(karmadaWorkload({ name: 'web', namespace, replicas: 4, cpu: '1', clusters: CLUSTERS }));
    await eventually(
      () => podCount('member1', namespace),
      (n) => n === 4,
    );
    // Charged 4 + 2: used 4 in member1, member2's 2 reserved (charged 2 + 2, used 4 would net them).
    await eventually(
      () => readQuota(namespace),
      (q) =>
        (q.status?.reservations ?? []).length === 0 &&
        cpu(q.status?.used?.['cpu']) === 4000 &&
        cpu(q.status?.reserved?.['cpu']) === 2000,
      30_000,
    );
    // So 6 more cpu do not fit (4 + 2 + 6 = 12 of 10); charged for the binding alone (4), they would.
    await apply(karmadaWorkload({ name: 'more', namespace, replicas: 6, cpu: '1', clusters: ['member1'] }));
    const refusal = await detectorRefusal(namespace, 'more');
    expect(refusal.message).toContain('exceeded quota: team, requested: cpu=6, used: cpu=6, limited: cpu=10');
    expect(await podCount('member2', namespace)).toBe(0);
  });
});
