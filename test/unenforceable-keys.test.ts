/**
 * A KarmadaQuota may only limit what the product enforces: a key that no binding is charged for, or
 * that nothing observes in the members, would be a limit that silently never holds. Through the host
 * API server, such a key is refused at create and at update, with a message naming the key and what
 * to use instead. Likewise a binding whose pods no charge can bound (a DaemonSet: Karmada declares no
 * replicas for it) is refused by a quota limiting pods or compute, scoped or not.
 */
import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { client, countNoUsage, createNamespace, federation, uniqueName } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';

const fed = federation();
const objects = () => client(fed.host).makeApiClient(k8s.CustomObjectsApi);

const createQuota = (q: KarmadaQuota) =>
  objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace: q.metadata!.namespace!,
    body: q,
  }) as Promise<KarmadaQuota>;

const replaceQuota = (q: KarmadaQuota) =>
  objects().replaceNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace: q.metadata!.namespace!,
    name: q.metadata!.name!,
    body: q,
  }) as Promise<KarmadaQuota>;

/** The Status the API server answered a refused request with. */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, message: body.message };
    }
    throw err;
  }
  throw new Error('the request was admitted, a refusal was expected');
}

describe('keys the product cannot enforce, through the host API server', () => {
  let namespace: string;
  beforeEach(async () => {
    namespace = uniqueName('uk');
    await createNamespace(fed.host, namespace);
  });

  test.each([
    ['requests.storage', 'limit the number of claims with persistentvolumeclaims'],
    ['services.nodeports', 'limit services'],
    ['count/pods', 'use pods'],
  ])('a KarmadaQuota limiting %s is refused at create, saying: %s', async (key, instead) => {
    const status = await refusal(createQuota(karmadaQuota(namespace, 'bad', { cpu: '10', [key]: '1' })));
    expect(status.code).toBe(422);
    expect(status.message).toContain(`spec.hard[${key}]: ${key} is not supported`);
    expect(status.message).toContain(instead);
  });

  test('adding requests.storage to an existing KarmadaQuota is refused, and the quota keeps its limits', async () => {
    const created = await createQuota(karmadaQuota(namespace, 'team', { cpu: '10' }));
    const status = await refusal(
      replaceQuota({ ...created, spec: { ...created.spec, hard: { cpu: '10', 'requests.storage': '1Ti' } } }),
    );
    expect(status.code).toBe(422);
    expect(status.message).toContain('spec.hard[requests.storage]: requests.storage is not supported');
    const stored = (await objects().getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name: 'team',
    })) as KarmadaQuota;
    expect(stored.spec.hard).toEqual({ cpu: '10' });
  });
});

describe('bindings whose pods the charge cannot bound, through the host API server', () => {
  let namespace: string;
  beforeEach(async () => {
    namespace = uniqueName('ub');
    await createNamespace(fed.host, namespace);
  });

  /** Creates the quota with its usage counted (no reconciler runs here). */
  const createCountedQuota = async (q: KarmadaQuota) => {
    await createQuota(q);
    await countNoUsage(client(fed.host), q.metadata!.namespace!, q.metadata!.name!);
  };

  const createBinding = (rb: ResourceBinding) =>
    objects().createNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: rb.metadata!.namespace!,
      body: rb,
    }) as Promise<ResourceBinding>;

  /** A ResourceBinding as Karmada makes it for DaemonSet `name` on two members: no replicas, no requirements. */
  const daemonSetBinding = (namespace: string, name: string): ResourceBinding =>
    ({
      apiVersion: RESOURCE_BINDING.apiVersion,
      kind: RESOURCE_BINDING.kind,
      metadata: { name: `${name}-daemonset`, namespace },
      spec: {
        resource: { apiVersion: 'apps/v1', kind: 'DaemonSet', name, namespace },
        clusters: [{ name: 'member1' }, { name: 'member2' }],
      },
    }) as ResourceBinding;

  test('a DaemonSet binding is refused by a cpu quota, and admitted and counted by a count-only quota', async () => {
    await createCountedQuota(karmadaQuota(namespace, 'compute', { cpu: '10', pods: '10' }));
    const status = await refusal(createBinding(daemonSetBinding(namespace, 'agent')));
    expect(status.code).toBe(403);
    expect(status.message).toContain(
      `cannot bound the pods of DaemonSet agent (ResourceBinding ${namespace}/agent-daemonset): Karmada ` +
        'declares no replicas for apps/v1 DaemonSet',
    );
    expect(status.message).toContain('quota compute limits cpu, pods.');
    expect(status.message).toContain(
      'ResourceInterpreterCustomization (replicaResource) for apps/v1 DaemonSet',
    );

    // Only object counts: nothing unbounded, the binding is admitted and claims its two copies.
    const counted = uniqueName('ub');
    await createNamespace(fed.host, counted);
    await createCountedQuota(karmadaQuota(counted, 'counts', { 'count/daemonsets.apps': '5' }));
    await createBinding(daemonSetBinding(counted, 'agent'));
    const quota = (await objects().getNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace: counted,
      name: 'counts',
    })) as KarmadaQuota;
    expect(quota.status?.reserved).toEqual({ 'count/daemonsets.apps': '2' });
  });

  test("a DaemonSet binding is refused by a scoped cpu quota: the binding does not carry its pods' priority class", async () => {
    await createCountedQuota(
      karmadaQuota(
        namespace,
        'high',
        { cpu: '10' },
        {
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
          },
        },
      ),
    );
    const status = await refusal(createBinding(daemonSetBinding(namespace, 'agent')));
    expect(status.code).toBe(403);
    expect(status.message).toContain(
      'quota high limits cpu; its scopeSelector may select these pods, since the binding does not carry their priority class',
    );
  });
});
