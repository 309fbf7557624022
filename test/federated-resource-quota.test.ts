import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Redis } from 'ioredis';
import {
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  type FederatedResourceQuota,
  type KarmadaQuota,
} from '#api';
import { loadCrds } from '#api/crds';
import { FRQ_ENFORCEMENT_ANNOTATION } from '#quota';
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
 * from its v1.18.2 module, the webhook (registered for FRQs too, as the chart does when they are
 * served) and two reconcilers with SERVE_FEDERATED_RESOURCE_QUOTAS on, and no Karmada FRQ controller
 * (as after the switch). Writes as a team member go through the host API server as that user
 * (kubectl --as: Impersonate-User), so its RBAC, and the webhook's SubjectAccessReview, decide.
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
    chartValues: { 'reconciler.serveFederatedResourceQuotas': true },
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
/** kubectl on the host as `user` (impersonated, in system:authenticated), `input` on its stdin. */
const kubectlAs = (user: string, args: string[], input?: string) =>
  spawnSync(
    federation.info.kubectl,
    ['--kubeconfig', federation.info.host.kubeconfig, '--as', user, ...args],
    { encoding: 'utf8', input },
  );
const FRQ = `${FEDERATED_RESOURCE_QUOTA.plural}.${FEDERATED_RESOURCE_QUOTA.group}`;

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

describe('who may change a served FRQ’s limit', () => {
  /** A Role of `rules` in `namespace` bound to `user`, both named after the user. */
  async function grant(namespace: string, user: string, rules: k8s.V1PolicyRule[]): Promise<void> {
    const rbac = kubeConfigFor(federation.info.host).makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: user }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: user },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
  }
  /** What a team writing its own PropagationPolicies is often given: policy.karmada.io/*. */
  const POLICY_WRITES: k8s.V1PolicyRule = {
    apiGroups: [FEDERATED_RESOURCE_QUOTA.group],
    resources: ['*'],
    verbs: ['get', 'list', 'create', 'update', 'patch'],
  };
  /** The right the chart's quota-admin role holds on KarmadaQuotas. */
  const QUOTA_WRITES: k8s.V1PolicyRule = {
    apiGroups: [KARMADA_QUOTA.group],
    resources: [KARMADA_QUOTA.plural],
    verbs: ['get', 'list', 'create', 'update', 'patch'],
  };
  /** A namespace with FRQ `team` (cpu 2, in DryRun), served, and a member who may write policy.karmada.io. */
  async function team(): Promise<{ namespace: string; member: string }> {
    const namespace = await newNamespace();
    const member = `${namespace}-member`;
    await grant(namespace, member, [POLICY_WRITES]);
    await createFrq(namespace, 'team', { cpu: '2' }, { [FRQ_ENFORCEMENT_ANNOTATION]: 'DryRun' });
    await servedAs(namespace, { hard: { cpu: '2' }, enforcement: 'DryRun' });
    return { namespace, member };
  }
  /** Waits until the serving quota's spec is `spec` (the CRD writes an absent enforcement as Deny). */
  const servedAs = (namespace: string, spec: KarmadaQuota['spec']) =>
    eventually(
      () => readQuota(namespace, 'frq-team'),
      (q) => isDeepStrictEqual(q?.spec, spec),
    );
  const patch = (user: string, namespace: string, body: object) =>
    kubectlAs(user, ['patch', FRQ, 'team', '-n', namespace, '--type=merge', '-p', JSON.stringify(body)]);
  const raise = (user: string, namespace: string) =>
    patch(user, namespace, { spec: { overall: { cpu: '10' } } });
  const unannotate = (user: string, namespace: string) =>
    kubectlAs(user, ['annotate', FRQ, 'team', '-n', namespace, `${FRQ_ENFORCEMENT_ANNOTATION}-`]);
  const refusal = (user: string, namespace: string, name: string, change: string, decides: string) =>
    `admission webhook "federatedresourcequotas.quota.karmada.io" denied the request: ${change} of ` +
    `FederatedResourceQuota ${namespace}/${name} ${decides}: it needs the right to update ` +
    `karmadaquotas.quota.karmada.io in ${namespace} (karmada-quota's quota-admin role), which user ` +
    `"${user}" lacks`;
  const LIMIT = "sets the team's limit";
  const ENFORCEMENT = "sets how the team's limit is enforced";

  test('a team that may write FRQs but not KarmadaQuotas cannot change its limit or its enforcement; other changes pass', async () => {
    const { namespace, member } = await team();
    const refused = (change: string, decides: string, name = 'team') =>
      refusal(member, namespace, name, change, decides);

    expect(raise(member, namespace).stderr).toContain(refused('changing spec.overall', LIMIT));
    expect(unannotate(member, namespace).stderr).toContain(
      refused(`removing annotation ${FRQ_ENFORCEMENT_ANNOTATION} (DryRun)`, ENFORCEMENT),
    );
    const another = {
      apiVersion: FEDERATED_RESOURCE_QUOTA.apiVersion,
      kind: FEDERATED_RESOURCE_QUOTA.kind,
      metadata: { name: 'another', namespace },
      spec: { overall: { cpu: '1' } },
    };
    expect(kubectlAs(member, ['create', '-f', '-'], JSON.stringify(another)).stderr).toContain(
      refused('setting spec.overall', LIMIT, 'another'),
    );
    // Enforced by the admin: the member cannot turn it back to DryRun.
    await annotate(namespace, 'team', null);
    const relaxed = kubectlAs(member, [
      'annotate',
      FRQ,
      'team',
      '-n',
      namespace,
      `${FRQ_ENFORCEMENT_ANNOTATION}=DryRun`,
    ]);
    expect(relaxed.stderr).toContain(
      refused(`adding annotation ${FRQ_ENFORCEMENT_ANNOTATION}=DryRun`, ENFORCEMENT),
    );

    // What sets neither passes: a label, another annotation, the same limit written otherwise.
    for (const args of [
      ['label', FRQ, 'team', '-n', namespace, 'owner=team'],
      ['annotate', FRQ, 'team', '-n', namespace, 'note=ours'],
      ['patch', FRQ, 'team', '-n', namespace, '--type=merge', '-p', '{"spec":{"overall":{"cpu":"2000m"}}}'],
    ])
      expect(kubectlAs(member, args)).toMatchObject({ status: 0, stderr: '' });
    const frq = await readFrq(namespace, 'team');
    expect(frq.metadata?.labels).toEqual({ owner: 'team' });
    expect(frq.metadata?.annotations).toEqual({ note: 'ours' });
    expect(frq.spec.overall).toEqual({ cpu: '2000m' });
    await servedAs(namespace, { hard: { cpu: '2' }, enforcement: 'Deny' });
  });

  test('who may update KarmadaQuotas there changes an FRQ’s limit and enforcement, as the admin does; the team cannot', async () => {
    const { namespace, member } = await team();
    const quotaAdmin = `${namespace}-quota-admin`;
    await grant(namespace, quotaAdmin, [POLICY_WRITES, QUOTA_WRITES]);

    expect(raise(member, namespace).stderr).toContain(
      refusal(member, namespace, 'team', 'changing spec.overall', LIMIT),
    );
    expect(raise(quotaAdmin, namespace)).toMatchObject({ status: 0, stderr: '' });
    expect(unannotate(quotaAdmin, namespace)).toMatchObject({ status: 0, stderr: '' });
    await servedAs(namespace, { hard: { cpu: '10' }, enforcement: 'Deny' });
    // The federation admin (the harness's kubeconfig: system:masters) too.
    await annotate(namespace, 'team', 'Warn');
    await servedAs(namespace, { hard: { cpu: '10' }, enforcement: 'Warn' });
  });
});
