import * as k8s from '@kubernetes/client-node';
import { AdmissionLease } from '#accounting';
import {
  ADMISSION_ANNOTATION,
  ADMISSION_LEASE_NAME,
  ConflictError,
  KubeAdmissionLeaseApi,
  type AdmissionRecord,
} from '#service-kit';
import { client, createNamespace, federation, uniqueName } from './support/federation.js';
import { settledWithin, silenceableProxy, throughProxy } from './support/silenceable-proxy.js';

/**
 * The admission owner's Lease (AdmissionLease over KubeAdmissionLeaseApi) on the real host API
 * server: two processes, a.1 and b.1, each with its own adapter and a fake monotonic clock, so expiry
 * is stepped by hand while every read and write is the API server's.
 */
const fed = federation();
const kc = client(fed.host);
const leases = kc.makeApiClient(k8s.CoordinationV1Api);
const DURATION_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;

const namespaces: string[] = [];
afterAll(async () => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await Promise.all(namespaces.map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
});

/** A namespace of this test's own (LEASE_NAMESPACE). */
async function leaseNamespace(): Promise<string> {
  const namespace = uniqueName('admission-lease');
  await createNamespace(fed.host, namespace);
  namespaces.push(namespace);
  return namespace;
}

/** One webhook process: its adapter, its AdmissionLease, and its clock (moved by `advance`). */
function webhookProcess(identity: string, namespace: string) {
  let now = 0;
  const api = new KubeAdmissionLeaseApi(kc, { namespace, callTimeoutMs: 5_000 });
  const lease = new AdmissionLease(
    api,
    { identity, address: `${identity}:9443`, durationMs: DURATION_MS, renewDeadlineMs: RENEW_DEADLINE_MS },
    () => now,
  );
  return { api, lease, advance: (ms: number) => (now += ms) };
}

const HELD_BY_A = {
  holder: 'a.1',
  durationSeconds: 15,
  transitions: 0,
  record: { ghosts: {}, unknownInFlight: false, counted: {} },
};

const stored = (namespace: string) => leases.readNamespacedLease({ name: ADMISSION_LEASE_NAME, namespace });
const recordOn = (lease: k8s.V1Lease): unknown =>
  JSON.parse(lease.metadata?.annotations?.[ADMISSION_ANNOTATION] ?? 'null');

describe('the admission Lease on a real API server', () => {
  test('a missing Lease: the first to step creates and holds it, the other sees it held', async () => {
    const namespace = await leaseNamespace();
    const a = webhookProcess('a.1', namespace);
    const b = webhookProcess('b.1', namespace);

    expect(await a.lease.step()).toBe('acquired');
    expect(await b.lease.step()).toBe('held elsewhere');
    expect(a.lease.owns()).toBe(true);
    expect(b.lease.owns()).toBe(false);

    const created = await stored(namespace);
    expect(created.spec).toMatchObject({
      holderIdentity: 'a.1',
      leaseDurationSeconds: DURATION_MS / 1000,
      leaseTransitions: 0,
    });
    // MicroTime as the API server stores it (client-node hands it back as the string).
    expect(String(created.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(created.spec?.acquireTime).toEqual(created.spec?.renewTime);
    expect(recordOn(created)).toEqual({
      address: 'a.1:9443',
      ghosts: {},
      unknownInFlight: false,
      counted: {},
      budgets: {},
    } satisfies AdmissionRecord);

    // A renew replaces it: renewTime moves, acquireTime stays the holder's first.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await a.lease.step()).toBe('renewed');
    const renewed = await stored(namespace);
    expect(renewed.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    expect(renewed.spec?.acquireTime).toEqual(created.spec?.acquireTime);
    expect(Date.parse(String(renewed.spec?.renewTime))).toBeGreaterThan(
      Date.parse(String(created.spec?.renewTime)),
    );
  });

  test("expiry: once b's clock has seen the Lease unchanged for its duration, b takes it over", async () => {
    const namespace = await leaseNamespace();
    const a = webhookProcess('a.1', namespace);
    const b = webhookProcess('b.1', namespace);
    expect(await a.lease.step()).toBe('acquired');
    expect(await b.lease.step()).toBe('held elsewhere'); // b first sees this version now

    // a writes its in-flight budgets with a renew, then renews no more.
    const budgets = { 'team-a/quota': { cpu: '3' } };
    expect(
      await a.lease.step((carried) => ({ ...carried, budgets, counted: { 'team-a/quota': '42' } })),
    ).toBe('renewed');
    expect(await b.lease.step()).toBe('held elsewhere'); // b first sees this version now
    b.advance(DURATION_MS - 1);
    expect(await b.lease.step()).toBe('held elsewhere');
    b.advance(1);
    expect(await b.lease.step()).toBe('acquired');
    // a stopped without handing over: what it admitted may still land, within its budgets.
    expect(b.lease.carried()).toEqual({
      address: 'b.1:9443',
      ghosts: budgets,
      unknownInFlight: false,
      counted: { 'team-a/quota': '42' },
      budgets: {},
    } satisfies AdmissionRecord);
    const taken = await stored(namespace);
    expect(taken.spec).toMatchObject({ holderIdentity: 'b.1', leaseTransitions: 1 });
    expect(recordOn(taken)).toEqual(b.lease.carried());

    expect(await a.lease.step()).toBe('lost');
    expect(a.lease.owns()).toBe(false);
  });

  test('release: the successor takes the Lease at once, with the ghosts handed over', async () => {
    const namespace = await leaseNamespace();
    const a = webhookProcess('a.1', namespace);
    const b = webhookProcess('b.1', namespace);
    expect(await a.lease.step()).toBe('acquired');
    expect(await b.lease.step()).toBe('held elsewhere');

    const inFlight = { 'team-a/quota': { cpu: '1500m', memory: '2Gi' }, 'team-b/quota': { pods: '1' } };
    const counted = { 'team-a/quota': '4711', 'team-b/quota': '4712' };
    expect(await a.lease.release(inFlight, counted)).toBe(true);
    expect(a.lease.owns()).toBe(false);
    const released = await stored(namespace);
    expect(released.spec?.holderIdentity ?? '').toBe('');
    expect(released.spec?.acquireTime).toBeUndefined();

    // No time passes on b's clock: a released Lease is free at once.
    expect(await b.lease.step()).toBe('acquired');
    expect(b.lease.carried()).toEqual({
      address: 'b.1:9443',
      ghosts: inFlight,
      unknownInFlight: false,
      counted,
      budgets: {},
    } satisfies AdmissionRecord);
    expect((await stored(namespace)).spec).toMatchObject({ holderIdentity: 'b.1', leaseTransitions: 1 });
    expect(await a.lease.step()).toBe('held elsewhere');
  });

  test('compare-and-swap: a write at a version no longer current conflicts, as does a create of one that exists', async () => {
    const namespace = await leaseNamespace();
    const a = webhookProcess('a.1', namespace).api;
    const b = webhookProcess('b.1', namespace).api;
    const held = (holder: string) => ({
      holder,
      durationSeconds: 15,
      transitions: 0,
      record: { ghosts: {}, unknownInFlight: false, counted: {} },
    });

    const first = await a.write(held('a.1'), undefined);
    await expect(b.write(held('b.1'), undefined)).rejects.toThrow(ConflictError);
    const renewed = await a.write(held('a.1'), first.resourceVersion);
    await expect(b.write(held('b.1'), first.resourceVersion)).rejects.toThrow(ConflictError);
    expect(await b.read()).toEqual({ ...held('a.1'), resourceVersion: renewed.resourceVersion });

    // Deleted under the writer: a conflict too (the API server answers 409 to a replace at a version
    // of an object not there); the next read finds none, and the next write creates it.
    await leases.deleteNamespacedLease({ name: ADMISSION_LEASE_NAME, namespace });
    await expect(a.write(held('a.1'), renewed.resourceVersion)).rejects.toThrow(ConflictError);
    expect(await a.read()).toBeUndefined();
    expect(await a.write(held('a.1'), undefined)).toMatchObject({ holder: 'a.1' });
  });

  test('a garbled record written by hand reads as the most cautious one, and the holder writes its own back', async () => {
    const namespace = await leaseNamespace();
    const a = webhookProcess('a.1', namespace);
    const b = webhookProcess('b.1', namespace);
    expect(await a.lease.step()).toBe('acquired');

    const lease = await stored(namespace);
    lease.metadata!.annotations = {
      ...lease.metadata?.annotations,
      [ADMISSION_ANNOTATION]: '{"ghosts": oops',
    };
    await leases.replaceNamespacedLease({ name: ADMISSION_LEASE_NAME, namespace, body: lease });

    expect(await b.api.read()).toMatchObject({
      holder: 'a.1',
      record: { ghosts: {}, unknownInFlight: true, counted: {} },
    });
    expect(await b.lease.step()).toBe('held elsewhere');
    // The holder renews from its own memory, not from what it read.
    expect(await a.lease.step()).toBe('renewed');
    expect(recordOn(await stored(namespace))).toEqual(a.lease.carried());
  });

  test('a silent API server: each call is given up after its timeout, saying so, and the next goes through', async () => {
    const namespace = await leaseNamespace();
    const proxy = await silenceableProxy(Number(new URL(fed.host.server).port));
    try {
      const api = new KubeAdmissionLeaseApi(throughProxy(fed.host, proxy.port), {
        namespace,
        callTimeoutMs: 1_000,
      });
      const held = await api.write(HELD_BY_A, undefined);
      proxy.silence();
      const lease = `Lease ${namespace}/${ADMISSION_LEASE_NAME}`;
      const read = await settledWithin(api.read(), 8_000);
      expect((read as Error).message).toBe(
        `the Karmada API server did not answer within 1000 ms when asked to get ${lease}; is it up and reachable?`,
      );
      const renew = await settledWithin(api.write(HELD_BY_A, held.resourceVersion), 8_000);
      expect((renew as Error).message).toBe(
        `the Karmada API server did not answer within 1000 ms when asked to update ${lease}; is it up and reachable?`,
      );
      proxy.restore();
      expect(await api.read()).toMatchObject({ holder: 'a.1' });
    } finally {
      await proxy.close();
    }
  }, 60_000);

  test('without the RBAC rule: the error names the rule to grant, and where', async () => {
    const namespace = await leaseNamespace();
    const admin = client(fed.host);
    const user = admin.getCurrentUser()!;
    const nobody = new k8s.KubeConfig();
    nobody.loadFromOptions({
      clusters: admin.clusters,
      users: [{ ...user, impersonateUser: 'someone-without-lease-rights' }],
      contexts: admin.contexts,
      currentContext: admin.currentContext,
    });
    const api = new KubeAdmissionLeaseApi(nobody, { namespace });
    await expect(api.read()).rejects.toThrow(
      `grant the webhook coordination.k8s.io leases get, create and update in namespace ${namespace}`,
    );
  });

  test('a missing namespace: the write says which, and to create it or set LEASE_NAMESPACE', async () => {
    const namespace = uniqueName('no-such-namespace');
    const a = webhookProcess('a.1', namespace);
    expect(await a.api.read()).toBeUndefined();
    await expect(a.api.write(HELD_BY_A, undefined)).rejects.toThrow(
      `namespace ${namespace} does not exist on the Karmada API server: create it or set LEASE_NAMESPACE`,
    );
  });
});
