import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota, type ResourceBinding } from '#api';
import { Quantity } from '#quantity';
import { Federation, karmadaWorkload, kubeConfigFor, startServices } from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';

/**
 * Real Karmada v1.18 with its alpha ResourceQuotaEstimate gate on (karmada.test.ts runs its defaults):
 * its detector then writes the pod template's priority class and namespace into each binding, and a
 * PriorityClass scope judges the binding as written (docs/concepts/scopes.md). A federation and
 * Redis database (3) of their own.
 */
const REDIS_URL = testRedisUrl(3);
const GATE = 'ResourceQuotaEstimate';

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-karmada-gates-'));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  federation = await Federation.start({ stateDir, members: 1, karmada: true, karmadaFeatureGates: [GATE] });
  await startServices(federation, { redisUrl: REDIS_URL, services: ['webhook', 'aggregator', 'reconciler'] });
}, 900_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const host = () => kubeConfigFor(federation.info.host);
const custom = () => host().makeApiClient(k8s.CustomObjectsApi);
const cpu = (s: string | undefined) => Number(Quantity.parse(s ?? '0').milliValue());

test(`with Karmada's ${GATE} gate on, the binding carries its class and a PriorityClass scope limits it`, async () => {
  const namespace = uniqueName('gate');
  await host()
    .makeApiClient(k8s.CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  for (const [name, operator] of [
    ['high', 'In'],
    ['others', 'NotIn'],
  ] as const) {
    await custom().createNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      body: karmadaQuota(
        namespace,
        name,
        { cpu: '2' },
        { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, values: ['high'] }] } },
      ),
    });
    await usageCounted(host(), namespace, name);
  }
  const member = kubeConfigFor(federation.info.members[0]!);
  await member
    .makeApiClient(k8s.SchedulingV1Api)
    .createPriorityClass({ body: { metadata: { name: 'high' }, value: 1000 } })
    .catch((err: unknown) => {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
    });
  const objects = k8s.KubernetesObjectApi.makeApiClient(host());
  const ofClass = async (name: string, replicas: number) => {
    const workload = karmadaWorkload({ name, namespace, replicas, cpu: '1', clusters: ['member1'] });
    (workload.workload as unknown as k8s.V1Deployment).spec!.template.spec!.priorityClassName = 'high';
    await objects.create(workload.policy);
    await objects.create(workload.workload);
  };

  // 4 x 1 cpu of class high against high's 2: refused at the detector.
  await ofClass('web', 4);
  const [refusal] = await eventually(
    () =>
      host()
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedEvent({ namespace })
        .then((events) =>
          events.items.filter(
            (e) => e.involvedObject.name === 'web' && e.message?.includes('exceeded quota'),
          ),
        ),
    (events) => events.length > 0,
  );
  expect(refusal!.message).toContain('exceeded quota: high, requested: cpu=4, used: cpu=0, limited: cpu=2');

  // 2 fit: the binding says its class itself, high counts it, others does not.
  await ofClass('small', 2);
  const stored = (await eventually(
    () => custom().getNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, name: 'small-deployment' }),
    (rb) => (rb as ResourceBinding).spec.replicaRequirements !== undefined,
  )) as ResourceBinding;
  expect(stored.spec.replicaRequirements).toMatchObject({ priorityClassName: 'high', namespace });
  const quota = (name: string) =>
    custom().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name }) as Promise<KarmadaQuota>;
  const counted = (q: KarmadaQuota) => cpu(q.status?.used?.['cpu']) + cpu(q.status?.reserved?.['cpu']);
  await eventually(
    () => quota('high'),
    (q) => counted(q) === 2000,
  );
  expect(counted(await quota('others'))).toBe(0);
});
