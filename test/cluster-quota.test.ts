import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  type AppliedClusterKarmadaQuota,
  type ClusterKarmadaQuota,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { Federation, kubeConfigFor, startServices } from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { binding, deployment, karmadaQuota } from './support/fixtures.js';

/**
 * A ClusterKarmadaQuota through the real services (docs/concepts/cluster-quotas.md): webhook,
 * aggregator and reconciler on a federation of their own and a Redis database of their own.
 */
const REDIS_URL = testRedisUrl(14);

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-cluster-quota-'));
  federation = await Federation.start({ stateDir, members: 1 });
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['webhook', 'aggregator', 'reconciler'],
    env: { EXPIRY_SWEEP_SECONDS: '1' },
  });
}, 300_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const host = () => kubeConfigFor(federation.info.host);
const objects = () => host().makeApiClient(k8s.CustomObjectsApi);
const core = () => host().makeApiClient(k8s.CoreV1Api);

async function labelledNamespace(labels: Record<string, string>): Promise<string> {
  const name = uniqueName('ckq');
  await core().createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

const relabel = (name: string, labels: Record<string, string | null>) =>
  core().patchNamespace(
    { name, body: { metadata: { labels } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );

async function createClusterQuota(
  team: string,
  hard: Record<string, string>,
  extra: Partial<ClusterKarmadaQuota['spec']> = {},
): Promise<string> {
  const name = uniqueName('ckq');
  const body: ClusterKarmadaQuota = {
    apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion,
    kind: CLUSTER_KARMADA_QUOTA.kind,
    metadata: { name },
    spec: { hard, namespaceSelector: { matchLabels: { team } }, ...extra },
  };
  await objects().createClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, body });
  return name;
}

const readClusterQuota = (name: string) =>
  objects().getClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, name }) as Promise<ClusterKarmadaQuota>;

/** Until the reconciler has counted the quota for its spec over exactly these namespaces. */
const countedOver = (name: string, namespaces: string[]) =>
  eventually(
    () => readClusterQuota(name),
    (q) =>
      q.status?.observedGeneration === q.metadata?.generation &&
      JSON.stringify((q.status?.namespaces ?? []).map((n) => n.namespace)) ===
        JSON.stringify([...namespaces].sort()),
  );

const readApplied = (namespace: string, name: string) =>
  objects().getNamespacedCustomObject({
    ...APPLIED_CLUSTER_KARMADA_QUOTA,
    namespace,
    name,
  }) as Promise<AppliedClusterKarmadaQuota>;

/** The namespaces holding an AppliedClusterKarmadaQuota of the cluster quota `name`, sorted. */
const appliedIn = async (name: string) =>
  (
    (await objects().listClusterCustomObject({
      ...APPLIED_CLUSTER_KARMADA_QUOTA,
      fieldSelector: `metadata.name=${name}`,
    })) as { items: AppliedClusterKarmadaQuota[] }
  ).items
    .map((a) => a.metadata?.namespace ?? '')
    .sort();

/** Creates the binding: undefined when admitted, else the webhook's refusal. */
async function create(rb: ResourceBinding): Promise<string | undefined> {
  try {
    await objects().createNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: rb.metadata!.namespace!,
      body: rb,
    });
    return undefined;
  } catch (err) {
    if (err instanceof k8s.ApiException) return String(err.body);
    throw err;
  }
}

describe('a ClusterKarmadaQuota', () => {
  test('holds across two namespaces under concurrent creates, and its status shows each namespace', async () => {
    const [a, b] = [await labelledNamespace({ team: 'a' }), await labelledNamespace({ team: 'a' })];
    const other = await labelledNamespace({ team: 'b' });
    const quota = await createClusterQuota('a', { cpu: '4' });
    await countedOver(quota, [a, b]);

    // 12 creates of 1 cpu at once, 6 in each namespace: exactly 4 fit.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create(binding(i % 2 ? a : b, `web-${i}`, { cpu: '1' }))),
    );
    const refused = results.filter((r): r is string => r !== undefined);
    expect(results.length - refused.length).toBe(4);
    for (const refusal of refused)
      expect(refusal).toMatch(new RegExp(`exceeded quota: ClusterKarmadaQuota/${quota}|status unknown`));
    expect(refused.some((r) => r.includes(`exceeded quota: ClusterKarmadaQuota/${quota}`))).toBe(true);

    // A namespace it does not select is not limited by it.
    expect(await create(binding(other, 'web', { cpu: '10' }))).toBeUndefined();

    // The webhook's own claims make reserved 4 before the reconciler has counted the namespaces: wait
    // for the count (per namespace) too.
    const perNamespaceOf = (q: KarmadaQuota) =>
      Object.fromEntries((q.status?.namespaces ?? []).map((n) => [n.namespace, Number(n.reserved?.cpu)]));
    const counted = await eventually(
      () => readClusterQuota(quota),
      (q) => {
        const perNamespace = perNamespaceOf(q);
        return q.status?.reserved?.cpu === '4' && (perNamespace[a] ?? 0) + (perNamespace[b] ?? 0) === 4;
      },
    );
    expect(counted.status?.used).toEqual({ cpu: '0' });
    const perNamespace = perNamespaceOf(counted);
    expect(perNamespace[a]! + perNamespace[b]!).toBe(4);
    expect(Object.keys(perNamespace).sort()).toEqual([a, b].sort());
  }, 120_000);

  test('a binding must fit its namespace quota and the cluster quota, all or nothing', async () => {
    const a = await labelledNamespace({ team: 'c' });
    await objects().createNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace: a,
      body: karmadaQuota(a, 'team', { cpu: '10' }),
    });
    await usageCounted(host(), a, 'team');
    const quota = await createClusterQuota('c', { cpu: '2' });
    await countedOver(quota, [a]);

    expect(await create(binding(a, 'big', { cpu: '3' }))).toMatch(
      `exceeded quota: ClusterKarmadaQuota/${quota}`,
    );
    expect(await create(binding(a, 'fits', { cpu: '2' }))).toBeUndefined();
    // Each quota holds the admitted change only: the refused one left no claim on the namespace's
    // (a claim would hold 3 more cpu until it expired).
    const own = await eventually(
      () =>
        objects().getNamespacedCustomObject({
          ...KARMADA_QUOTA,
          namespace: a,
          name: 'team',
        }) as Promise<KarmadaQuota>,
      (q) => q.status?.reserved?.cpu === '2',
    );
    expect(own.status?.reservations?.some((r) => r.reservedBy.name === 'big')).toBe(false);
    await eventually(
      () => readClusterQuota(quota),
      (q) => q.status?.reserved?.cpu === '2',
    );
  }, 120_000);

  test('a namespace entering the selector is counted before it may grow; one leaving stops counting', async () => {
    const a = await labelledNamespace({ team: 'd' });
    const late = await labelledNamespace({});
    const quota = await createClusterQuota('d', { cpu: '3' });
    await countedOver(quota, [a]);
    expect(await create(binding(a, 'web', { cpu: '2' }))).toBeUndefined();

    // Not selected: the quota does not limit it.
    expect(await create(binding(late, 'early', { cpu: '2' }))).toBeUndefined();
    await relabel(late, { team: 'd' });
    // Once counted, its bindings count: 2 + 2 of 3, so nothing more fits in either namespace.
    await countedOver(quota, [a, late]);
    await eventually(
      () => readClusterQuota(quota),
      (q) => q.status?.reserved?.cpu === '4',
    );
    expect(await create(binding(late, 'more', { cpu: '1' }))).toMatch(
      `exceeded quota: ClusterKarmadaQuota/${quota}`,
    );

    // Each count names the namespace's resourceVersion it was made at, which a webhook compares
    // with the namespace's last label change it saw; any change of the namespace is counted again.
    const versionOf = async (ns: string) =>
      (await core().readNamespace({ name: ns })).metadata?.resourceVersion;
    const countedAt = (ns: string, q: ClusterKarmadaQuota) =>
      q.status?.namespaces?.find((line) => line.namespace === ns)?.resourceVersion;
    await eventually(
      async () => [await readClusterQuota(quota), await versionOf(late)] as const,
      ([q, version]) => countedAt(late, q) === version,
    );
    await core().patchNamespace(
      { name: a, body: { metadata: { annotations: { owner: 'team-d' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const annotated = await versionOf(a);
    await eventually(
      () => readClusterQuota(quota),
      (q) => countedAt(a, q) === annotated,
    );

    // Leaving: its bindings stop counting, and room frees in the other namespace.
    await relabel(late, { team: null });
    await countedOver(quota, [a]);
    await eventually(
      () => readClusterQuota(quota),
      (q) => q.status?.reserved?.cpu === '2',
    );
    expect(await create(binding(a, 'again', { cpu: '1' }))).toBeUndefined();
  }, 120_000);

  test("a scoped one selects by the template's priority class, as Karmada writes bindings by default", async () => {
    const a = await labelledNamespace({ team: 'scoped' });
    const quota = await createClusterQuota(
      'scoped',
      { cpu: '2' },
      {
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
      },
    );
    await countedOver(quota, [a]);
    // The template as the user applied it: pods of class `high`; its binding names no class.
    const web0 = deployment('web', 3, '1');
    web0.spec!.template.spec!.priorityClassName = 'high';
    await host().makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({ namespace: a, body: web0 });
    const web = binding(a, 'web-deployment', { replicas: 3, cpu: '1' });
    web.spec.resource.name = 'web';
    expect(await create(web)).toMatch(`exceeded quota: ClusterKarmadaQuota/${quota}, requested: cpu=3`);
  }, 120_000);

  test('deleting a binding releases what it held on the cluster quota', async () => {
    const a = await labelledNamespace({ team: 'e' });
    const quota = await createClusterQuota('e', { cpu: '2' });
    await countedOver(quota, [a]);
    expect(await create(binding(a, 'first', { cpu: '2' }))).toBeUndefined();
    expect(await create(binding(a, 'second', { cpu: '1' }))).toMatch(`ClusterKarmadaQuota/${quota}`);
    await objects().deleteNamespacedCustomObject({ ...RESOURCE_BINDING, namespace: a, name: 'first' });
    await eventually(
      () => readClusterQuota(quota),
      (q) => (q.status?.reserved?.cpu ?? '0') === '0', // a sum of nothing lists no key
    );
    expect(await create(binding(a, 'second', { cpu: '1' }))).toBeUndefined();
  }, 120_000);

  test('each namespace it counts reads it there, as an AppliedClusterKarmadaQuota, until it leaves or the quota goes', async () => {
    const [a, b] = [await labelledNamespace({ team: 'f' }), await labelledNamespace({ team: 'f' })];
    const quota = await createClusterQuota('f', { cpu: '5' });
    await countedOver(quota, [a, b]);
    expect(await create(binding(a, 'web', { cpu: '2' }))).toBeUndefined();
    expect(await create(binding(b, 'batch', { cpu: '1' }))).toBeUndefined();
    // As the reconciler counted it (the webhook's writes of its claims leave the lines as they were).
    const reservedIn = (q: ClusterKarmadaQuota) =>
      (q.status?.namespaces ?? []).map((n) => `${n.namespace}=${n.reserved?.cpu}`).join(',');
    const lines = [`${a}=2`, `${b}=1`].sort().join(',');
    const counted = await eventually(
      () => readClusterQuota(quota),
      (q) => reservedIn(q) === lines,
    );

    // In each namespace: the quota's spec and totals, and only that namespace's line.
    for (const namespace of [a, b]) {
      const applied = await eventually(
        () => readApplied(namespace, quota),
        (p) => p.status?.reserved?.cpu === '3' && p.status?.namespaces?.[0]?.reserved?.cpu !== '0',
      );
      expect(applied.spec).toEqual(counted.spec);
      expect(applied.status?.hard).toEqual({ cpu: '5' });
      expect(applied.status?.namespaces).toEqual(
        counted.status?.namespaces?.filter((n) => n.namespace === namespace),
      );
      expect(applied.status?.namespaces?.[0]?.reserved).toEqual({ cpu: namespace === a ? '2' : '1' });
      expect(applied.status).not.toHaveProperty('reservations');
      expect(applied.metadata?.labels).toEqual({ 'app.kubernetes.io/managed-by': 'karmada-quota' });
      expect(applied.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: CLUSTER_KARMADA_QUOTA.kind,
          name: quota,
          uid: counted.metadata?.uid,
        }),
      ]);
    }
    expect(await appliedIn(quota)).toEqual([a, b].sort());

    // Leaving the selector: its projection goes; the other one shows the quota without it.
    await relabel(b, { team: null });
    await countedOver(quota, [a]);
    await eventually(
      () => appliedIn(quota),
      (namespaces) => JSON.stringify(namespaces) === JSON.stringify([a]),
    );
    await eventually(
      () => readApplied(a, quota),
      (p) => p.status?.reserved?.cpu === '2',
    );

    // Deleting the quota: every projection goes.
    await objects().deleteClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, name: quota });
    await eventually(
      () => appliedIn(quota),
      (namespaces) => namespaces.length === 0,
    );
  }, 120_000);
});
