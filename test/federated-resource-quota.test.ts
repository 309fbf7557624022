import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  loadCrds,
  RESOURCE_BINDING,
  type FederatedResourceQuota,
  type KarmadaQuota,
} from '#api';
import {
  ensureKarmadaBinaries,
  Federation,
  installCrds,
  kubeConfigFor,
  startServices,
} from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName } from './support/federation.js';
import { binding } from './support/fixtures.js';

/**
 * Serving Karmada's FederatedResourceQuota (docs/operating/switch-from-frq.md): Karmada's own CRD
 * from its v1.18.2 module, the webhook and two reconcilers with SERVE_FEDERATED_RESOURCE_QUOTAS on, and
 * no Karmada FRQ controller (as after the switch).
 */
const REDIS_URL = testRedisUrl(6);

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-frq-'));
  federation = await Federation.start({ stateDir, members: 1 });
  const { crdDir } = await ensureKarmadaBinaries();
  await installCrds(
    federation.info.host,
    loadCrds([join(crdDir, 'policy', 'policy.karmada.io_federatedresourcequotas.yaml')]),
  );
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  const env = { SERVE_FEDERATED_RESOURCE_QUOTAS: 'true' };
  await startServices(federation, {
    redisUrl: REDIS_URL,
    services: ['webhook', 'aggregator', 'reconciler'],
    env,
  });
  // Every reconciler replica serves the FRQs: two race for each write, as the chart's two replicas do.
  await startServices(federation, { redisUrl: REDIS_URL, services: ['reconciler'], env, instance: 'second' });
}, 300_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
});

const objects = () => kubeConfigFor(federation.info.host).makeApiClient(k8s.CustomObjectsApi);
const readFrq = (namespace: string, name: string) =>
  objects().getNamespacedCustomObject({
    ...FEDERATED_RESOURCE_QUOTA,
    namespace,
    name,
  }) as Promise<FederatedResourceQuota>;
const readQuota = (namespace: string, name: string) =>
  objects()
    .getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name })
    .then(
      (q) => q as KarmadaQuota,
      () => undefined,
    );
/** A binding of replicas asking 1 CPU and 100Mi each (the FRQ limits both: both must be declared). */
const createBinding = (namespace: string, name: string, replicas: number) => {
  const body = binding(namespace, name, { replicas, cpu: '1' });
  body.spec.replicaRequirements!.resourceRequest!['memory'] = '100Mi';
  return objects().createNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, body });
};
const annotate = (namespace: string, name: string, enforcement: string | null) =>
  objects().patchNamespacedCustomObject(
    {
      ...FEDERATED_RESOURCE_QUOTA,
      namespace,
      name,
      body: { metadata: { annotations: { 'quota.karmada.io/enforcement': enforcement } } },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
/** A namespace of the test's own. */
async function newNamespace(): Promise<string> {
  const namespace = uniqueName('frq');
  await kubeConfigFor(federation.info.host)
    .makeApiClient(k8s.CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  return namespace;
}

const createFrq = (
  namespace: string,
  name: string,
  overall: Record<string, string>,
  annotations?: Record<string, string>,
) =>
  objects().createNamespacedCustomObject({
    ...FEDERATED_RESOURCE_QUOTA,
    namespace,
    body: {
      apiVersion: FEDERATED_RESOURCE_QUOTA.apiVersion,
      kind: FEDERATED_RESOURCE_QUOTA.kind,
      metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
      spec: { overall },
    },
  });

const kubectl = (...args: string[]) =>
  spawnSync(federation.info.kubectl, ['--kubeconfig', federation.info.host.kubeconfig, ...args], {
    encoding: 'utf8',
  });

test('an FRQ is served: adopted in DryRun, enforced after, its status in Karmada’s shape, and gone with it', async () => {
  const namespace = await newNamespace();
  await createFrq(
    namespace,
    'team',
    { cpu: '2', memory: '4Gi' },
    { 'quota.karmada.io/enforcement': 'DryRun' },
  );

  // Adopted in DryRun: the quota beside it is made, owned by it, and counted; the FRQ shows its figures.
  const served = await eventually(
    () => readQuota(namespace, 'frq-team'),
    (q) => q?.status?.used !== undefined && q.status.observedGeneration === q.metadata?.generation,
  );
  expect(served!.spec).toEqual({ hard: { cpu: '2', memory: '4Gi' }, enforcement: 'DryRun' });
  expect(served!.metadata?.ownerReferences?.[0]).toMatchObject({
    kind: 'FederatedResourceQuota',
    name: 'team',
  });
  await createBinding(namespace, 'big', 3); // would be denied: admitted and counted
  const counted = await eventually(
    () => readFrq(namespace, 'team'),
    (frq) => frq.status?.overallUsed?.['cpu'] === '3',
  );
  expect(counted.status).toMatchObject({
    overall: { cpu: '2', memory: '4Gi' },
    overallUsed: { cpu: '3', memory: '300Mi' },
  });
  expect((await readQuota(namespace, 'frq-team'))?.status?.wouldBeDenied?.[0]).toMatchObject({
    binding: 'big',
  });
  const table = kubectl('get', 'federatedresourcequotas', '-n', namespace);
  expect(table.stderr).toBe('');
  expect(table.stdout).toMatch(/team\s+\{"cpu":"2","memory":"4Gi"\}\s+\{"cpu":"3","memory":"300Mi"\}/);

  // Enforced: the annotation removed, a further increase is refused, naming the quota.
  await annotate(namespace, 'team', null);
  await eventually(
    () => readQuota(namespace, 'frq-team'),
    (q) => q?.spec.enforcement === 'Deny' && q.status?.observedGeneration === q.metadata?.generation,
  );
  await expect(createBinding(namespace, 'more', 1)).rejects.toThrow(
    /exceeded quota: frq-team, requested: cpu=1/,
  );

  // Deleting the FRQ deletes the quota serving it.
  await objects().deleteNamespacedCustomObject({ ...FEDERATED_RESOURCE_QUOTA, namespace, name: 'team' });
  await eventually(
    () => readQuota(namespace, 'frq-team'),
    (q) => q === undefined,
  );
});

test('what cannot be served is named in an Event on the FRQ; a KarmadaQuota of the same name is not taken over', async () => {
  const namespace = await newNamespace();
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    body: {
      apiVersion: KARMADA_QUOTA.apiVersion,
      kind: KARMADA_QUOTA.kind,
      metadata: { name: 'frq-mine', namespace },
      spec: { hard: { cpu: '5' } },
    },
  });
  await createFrq(namespace, 'limits', { cpu: '1', 'limits.cpu': '2' });
  await createFrq(namespace, 'mine', { cpu: '1' });
  const events = await eventually(
    async () =>
      (
        await kubeConfigFor(federation.info.host)
          .makeApiClient(k8s.CoreV1Api)
          .listNamespacedEvent({ namespace })
      ).items,
    // Each reconciler replica records what it cannot serve (both run here): at least one per FRQ.
    (items) =>
      ['limits', 'mine'].every((name) =>
        items.some((e) => e.reason === 'NotServed' && e.involvedObject.name === name),
      ),
  );
  const message = (name: string) => events.find((e) => e.involvedObject.name === name)?.message;
  expect(message('limits')).toMatch(/^spec\.overall\[limits\.cpu\]: .*it is not enforced$/);
  expect(message('mine')).toContain('a KarmadaQuota frq-mine that karmada-quota did not make exists');
  expect((await readQuota(namespace, 'frq-limits'))?.spec.hard).toEqual({ cpu: '1' });
  expect((await readQuota(namespace, 'frq-mine'))?.spec.hard).toEqual({ cpu: '5' });
});
