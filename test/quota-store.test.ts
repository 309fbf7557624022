import * as k8s from '@kubernetes/client-node';
import { KARMADA_QUOTA } from '#api';
import { KubeQuotaStore } from '#service-kit';
import { StoredBindings } from '../apps/webhook/src/stored-bindings.js';
import { client, createNamespace, federation, uniqueName } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';
import { settledWithin, silenceableProxy, throughProxy } from './support/silenceable-proxy.js';

/**
 * The store the webhook reads and writes quotas with, against the real host API server behind a TCP
 * proxy that can go silent: a connection that stops answering without being closed (the API
 * server's machine gone, a partition) must not hold an admission past its deadline.
 */
const fed = federation();

/** A namespace on the host with one KarmadaQuota, `team`. */
async function namespaceWithQuota(): Promise<string> {
  const namespace = uniqueName('silent-host');
  await createNamespace(fed.host, namespace);
  await client(fed.host)
    .makeApiClient(k8s.CustomObjectsApi)
    .createNamespacedCustomObject({
      group: KARMADA_QUOTA.group,
      version: KARMADA_QUOTA.version,
      plural: KARMADA_QUOTA.plural,
      namespace,
      body: karmadaQuota(namespace, 'team', { cpu: '10' }),
    });
  return namespace;
}

test('a read or status write on a connection gone silent is given up at its deadline, and the next one works', async () => {
  const namespace = await namespaceWithQuota();
  const proxy = await silenceableProxy(Number(new URL(fed.host.server).port));
  try {
    const store = new KubeQuotaStore(throughProxy(fed.host, proxy.port));
    const [quota] = await store.list(namespace); // opens the keep-alive connection that goes silent
    expect(quota?.metadata?.name).toBe('team');

    proxy.silence();
    const write = await settledWithin(store.writeStatus(quota!, { deadline: Date.now() + 1_000 }), 8_000);
    expect(write).toBeInstanceOf(Error);
    expect((write as Error).message).toMatch(/had not answered by the admission deadline/);
    const read = await settledWithin(store.list(namespace, { deadline: Date.now() + 1_000 }), 8_000);
    expect((read as Error).message).toMatch(/had not answered by the admission deadline/);

    // The silent connections stay silent: the next calls must not be queued on them.
    proxy.restore();
    const [fresh] = await store.list(namespace, { deadline: Date.now() + 5_000 });
    const written = await store.writeStatus(fresh!, { deadline: Date.now() + 5_000 });
    expect(written.metadata?.uid).toBe(quota!.metadata?.uid);
  } finally {
    await proxy.close();
  }
}, 60_000);

test("a call without a deadline (the reconciler's) is given up at the client's request timeout", async () => {
  const namespace = await namespaceWithQuota();
  const proxy = await silenceableProxy(Number(new URL(fed.host.server).port));
  try {
    const store = new KubeQuotaStore(throughProxy(fed.host, proxy.port, 1_000));
    const [quota] = await store.list(namespace);
    proxy.silence();
    const write = await settledWithin(store.writeStatus(quota!), 8_000);
    expect(write).toBeInstanceOf(Error);
    expect((write as Error).message).toMatch(/had not answered within the request timeout/);
    proxy.restore();
    const [fresh] = await store.list(namespace);
    expect(fresh?.metadata?.uid).toBe(quota!.metadata?.uid);
  } finally {
    await proxy.close();
  }
}, 60_000);

test("a CREATE's existence check on a connection gone silent is given up at the review's deadline", async () => {
  const namespace = await namespaceWithQuota();
  const proxy = await silenceableProxy(Number(new URL(fed.host.server).port));
  try {
    const stored = new StoredBindings(throughProxy(fed.host, proxy.port));
    expect(await stored.exists(namespace, 'web')).toBe(false); // opens the connection that goes silent
    proxy.silence();
    // Without the deadline it waits for the 60 s request timeout, past the API server's own webhook
    // timeout, which would then answer instead of the webhook's fail-closed message.
    const check = await settledWithin(
      stored.exists(namespace, 'web', { deadline: Date.now() + 1_000 }),
      8_000,
    );
    expect(check).toBe('resolved');
  } finally {
    await proxy.close();
  }
}, 60_000);
