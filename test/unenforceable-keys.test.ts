/**
 * A KarmadaQuota may only limit what the product enforces: a key that no binding is charged for, or
 * that nothing observes in the members, would be a limit that silently never holds. Through the host
 * API server, such a key is refused at create and at update, with a message naming the key and what
 * to use instead.
 */
import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { client, createNamespace, federation, uniqueName } from './support/federation.js';
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
