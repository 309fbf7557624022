import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { Quantity } from '#quantity';
import { Federation, kubeConfigFor, startServices } from '../tools/federation/src/index.js';
import { publishedUsage } from './support/usage.js';
import { eventually, testRedisUrl, uniqueName } from './support/federation.js';
import { binding, deployment, karmadaQuota } from './support/fixtures.js';

/**
 * Object counts and pods are attributed to the workload Karmada propagated, so a binding's whole
 * charge settles against what its members run: webhook, aggregator and reconciler on a federation
 * of their own and a Redis database of their own.
 */
const REDIS_URL = testRedisUrl(8);
const MEMBERS = ['member1', 'member2'];

let federation: Federation;
let stateDir: string;
let redis: Redis;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-object-counts-'));
  federation = await Federation.start({ stateDir, members: 2 });
  redis = new Redis(REDIS_URL);
  await redis.flushdb();
  const env = {
    RESERVATION_TTL_SECONDS: '4',
    ADMISSION_LANDING_WINDOW_SECONDS: '2',
    EXPIRY_SWEEP_SECONDS: '1',
    MAX_RETRY_BACKOFF_MS: '1000',
  };
  await startServices(federation, { redisUrl: REDIS_URL, services: ['webhook'], env });
  await startServices(federation, { redisUrl: REDIS_URL, services: ['aggregator', 'reconciler'], env });
}, 300_000);

afterAll(async () => {
  redis?.disconnect();
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const host = () => kubeConfigFor(federation.info.host);
const objects = () => host().makeApiClient(k8s.CustomObjectsApi);
const memberKc = (name: string) => kubeConfigFor(federation.info.members.find((m) => m.name === name)!);

async function namespaceEverywhere(): Promise<string> {
  const namespace = uniqueName('oc');
  for (const kc of [host(), ...MEMBERS.map(memberKc)]) {
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  }
  return namespace;
}

const readQuota = (namespace: string) =>
  objects().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name: 'team' }) as Promise<KarmadaQuota>;

/** Creates the quota and waits until its usage is known (the webhook refuses increases before). */
async function createQuota(namespace: string, hard: Record<string, string>): Promise<void> {
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    body: karmadaQuota(namespace, 'team', hard),
  });
  await eventually(
    () => readQuota(namespace),
    (k) => Object.keys(hard).every((key) => k.status?.used?.[key] !== undefined),
    30_000,
  );
}

/** Stores the binding as Karmada's detector and scheduler would, scheduled 1 + 1. */
const createBinding = (rb: ResourceBinding) =>
  objects().createNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: rb.metadata!.namespace!,
    body: rb,
  });

/** Two replicas divided 1 + 1 over the members, as a static-weight PropagationPolicy schedules them. */
const dividedOnBoth = {
  replicas: 2,
  cpu: '100m',
  clusters: MEMBERS.map((name) => ({ name, replicas: 1 })),
  placement: {
    replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
  },
};

const same = (a: unknown, b: string) => Quantity.parse(String(a ?? '0')).cmp(Quantity.parse(b)) === 0;

const snapshot = (namespace: string, cluster: string) => publishedUsage(redis, namespace, cluster);

describe('object counts and pods are attributed to the propagated workload', () => {
  test('one Deployment on two members holds count/deployments.apps 2 and its pods, nothing reserved', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { 'count/deployments.apps': '4', pods: '10', cpu: '2' });
    // Karmada names the binding `<name>-<kind>`; what matches usage is spec.resource's kind/name.
    const rb = binding(namespace, 'web', dividedOnBoth);
    rb.metadata!.name = 'web-deployment';
    await createBinding(rb);
    const reserved = await eventually(
      () => readQuota(namespace),
      (k) => same(k.status?.reserved?.['count/deployments.apps'], '2'),
    );
    expect(reserved.status?.reserved).toMatchObject({ 'count/deployments.apps': '2', pods: '2' });

    for (const member of MEMBERS) {
      await memberKc(member)
        .makeApiClient(k8s.AppsV1Api)
        .createNamespacedDeployment({ namespace, body: deployment('web', 1, '100m') });
    }
    const settled = await eventually(
      () => readQuota(namespace),
      (k) =>
        (k.status?.reservations ?? []).length === 0 &&
        same(k.status?.used?.['count/deployments.apps'], '2') &&
        same(k.status?.used?.pods, '2'),
      60_000,
    );
    expect(settled.status?.used).toMatchObject({ 'count/deployments.apps': '2', cpu: '200m', pods: '2' });
    expect(same(settled.status?.reserved?.['count/deployments.apps'], '0')).toBe(true);
    expect(same(settled.status?.reserved?.pods, '0')).toBe(true);

    // Counted twice (used 2 + reserved 2) a second Deployment on both members would not fit.
    const second = binding(namespace, 'api', dividedOnBoth);
    second.metadata!.name = 'api-deployment';
    await createBinding(second);

    // Each member publishes the Deployment and its pods (through their ReplicaSet) under Deployment/web.
    for (const member of MEMBERS) {
      const published = await snapshot(namespace, member);
      expect(published?.workloads).toEqual([
        {
          kind: 'Deployment',
          name: 'web',
          used: { 'count/deployments.apps': '1', cpu: '100m', pods: '1', 'requests.cpu': '100m' },
        },
      ]);
    }
  });

  test('a Service on two members holds services 2, counted under the Service, nothing reserved', async () => {
    const namespace = await namespaceEverywhere();
    await createQuota(namespace, { services: '4', 'count/services': '4' });
    const serviceBinding = (name: string) =>
      ({
        apiVersion: RESOURCE_BINDING.apiVersion,
        kind: RESOURCE_BINDING.kind,
        metadata: { name: `${name}-service`, namespace },
        spec: {
          resource: { apiVersion: 'v1', kind: 'Service', name, namespace },
          clusters: MEMBERS.map((member) => ({ name: member })),
        },
      }) as ResourceBinding;
    await createBinding(serviceBinding('api'));
    await eventually(
      () => readQuota(namespace),
      (k) => same(k.status?.reserved?.services, '2'),
    );

    for (const member of MEMBERS) {
      await memberKc(member)
        .makeApiClient(k8s.CoreV1Api)
        .createNamespacedService({
          namespace,
          body: { metadata: { name: 'api' }, spec: { ports: [{ port: 80 }], clusterIP: 'None' } },
        });
    }
    const settled = await eventually(
      () => readQuota(namespace),
      (k) => (k.status?.reservations ?? []).length === 0 && same(k.status?.used?.services, '2'),
      60_000,
    );
    expect(settled.status?.used).toMatchObject({ 'count/services': '2', services: '2' });
    expect(same(settled.status?.reserved?.services, '0')).toBe(true);
    // The quota holds 2 of 4, so a second Service on both members fits.
    await createBinding(serviceBinding('web'));
  });
});
