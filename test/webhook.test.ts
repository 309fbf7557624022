import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import {
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  type ClusterKarmadaQuota,
  type KarmadaQuota,
  type ResourceBinding,
} from '#api';
import { Quantity } from '#quantity';
import {
  client,
  countNoUsage,
  createNamespace,
  eventually,
  federation,
  uniqueName,
} from './support/federation.js';
import { bindingReview } from './chaos/support/admission.js';
import { binding, karmadaQuota } from './support/fixtures.js';

const fed = federation();
const objects = () => client(fed.host).makeApiClient(k8s.CustomObjectsApi);

/** Creates the quota with its usage counted (no reconciler runs here: nothing runs in the members). */
const createQuota = async (q: KarmadaQuota) => {
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace: q.metadata!.namespace!,
    body: q,
  });
  await countNoUsage(client(fed.host), q.metadata!.namespace!, q.metadata!.name!);
};

const createBinding = (rb: ResourceBinding, dryRun = false) =>
  objects().createNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: rb.metadata!.namespace!,
    body: rb,
    ...(dryRun ? { dryRun: 'All' } : {}),
  }) as Promise<ResourceBinding>;

const readQuota = (namespace: string, name: string) =>
  objects().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name }) as Promise<KarmadaQuota>;

const readBinding = (namespace: string, name: string) =>
  objects().getNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, name }) as Promise<ResourceBinding>;

const replaceBinding = (rb: ResourceBinding) =>
  objects().replaceNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: rb.metadata!.namespace!,
    name: rb.metadata!.name!,
    body: rb,
  }) as Promise<ResourceBinding>;

/** The Status the API server answered a refused request with. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: number; reason?: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, reason: body.reason, message: body.message };
    }
    throw err;
  }
  throw new Error('the request was admitted, a refusal was expected');
}

/** TLS options of a direct caller: the host API server's client certificate, the only one the webhook answers. */
const asApiServer = () => ({
  cert: readFileSync(fed.webhookClient.certFile),
  key: readFileSync(fed.webhookClient.keyFile),
});

const reserved = (q: KarmadaQuota, key: string) => Quantity.parse(String(q.status?.reserved?.[key] ?? '0'));
const used = (q: KarmadaQuota, key: string) => Quantity.parse(String(q.status?.used?.[key] ?? '0'));
const reservationOf = (q: KarmadaQuota, name: string) =>
  q.status?.reservations?.find((r) => r.reservedBy.name === name);
const q = (s: string) => Quantity.parse(s);

describe('the quota webhook, through the host API server', () => {
  let namespace: string;
  beforeEach(async () => {
    namespace = uniqueName('wh');
    await createNamespace(fed.host, namespace);
  });

  test('a namespace without a KarmadaQuota admits bindings', async () => {
    const created = await createBinding(binding(namespace, 'web', { replicas: 1000 }));
    expect(created.metadata?.uid).toBeTruthy();
  });

  test("a namespace labelled quota.karmada.io/admission=ignore, or Kubernetes' own, is not checked", async () => {
    // The registration's namespaceSelector (the chart's default, which the harness registers).
    const core = client(fed.host).makeApiClient(k8s.CoreV1Api);
    const labelled = async (value: string | undefined) => {
      const current = await core.readNamespace({ name: namespace });
      const labels = { ...current.metadata?.labels };
      if (value === undefined) delete labels['quota.karmada.io/admission'];
      else labels['quota.karmada.io/admission'] = value;
      await core.replaceNamespace({
        name: namespace,
        body: { ...current, metadata: { ...current.metadata, labels } },
      });
    };
    /** Whether a dry-run create over the quota is refused, once the API server has seen the label. */
    const refusedInTime = async (ns: string, expected: boolean) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const refused = await createBinding(binding(ns, uniqueName('over'), { replicas: 2 }), true).then(
          () => false,
          () => true,
        );
        if (refused === expected || Date.now() > deadline) return refused;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '1' }));
    expect(await refusedInTime(namespace, true)).toBe(true);
    await labelled('ignore');
    expect(await refusedInTime(namespace, false)).toBe(false);
    await labelled(undefined);
    expect(await refusedInTime(namespace, true)).toBe(true);
    const system = karmadaQuota('kube-system', uniqueName('team'), { cpu: '1' });
    await createQuota(system);
    try {
      expect(await refusedInTime('kube-system', false)).toBe(false);
    } finally {
      await objects().deleteNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace: 'kube-system',
        name: system.metadata!.name!,
      });
    }
  });

  test('Warn and DryRun admit and count what Deny refuses: kubectl prints the Warn warning; status, Event, metric', async () => {
    const kubectlCreate = (rb: ResourceBinding) =>
      spawnSync(fed.kubectl, ['--kubeconfig', fed.host.kubeconfig, 'create', '-f', '-'], {
        input: JSON.stringify(rb),
        encoding: 'utf8',
      });
    const tryOut = (name: string, enforcement: 'Warn' | 'DryRun'): KarmadaQuota => {
      const quota = karmadaQuota(namespace, name, { cpu: '1' });
      return { ...quota, spec: { ...quota.spec, enforcement } };
    };
    await createQuota(tryOut('try-warn', 'Warn'));
    const warned = kubectlCreate(binding(namespace, 'big', { replicas: 3 }));
    expect(warned.status).toBe(0);
    expect(warned.stderr).toContain(
      'Warning: KarmadaQuota try-warn would deny this change (spec.enforcement: Warn, not enforced): ' +
        'exceeded quota: try-warn, requested: cpu=3, used: cpu=0, limited: cpu=1',
    );
    const counted = await readQuota(namespace, 'try-warn');
    expect(reserved(counted, 'cpu').cmp(q('3'))).toBe(0); // counted like any admitted change
    expect(counted.status?.wouldBeDenied).toEqual([
      expect.objectContaining({
        binding: 'big',
        enforcement: 'Warn',
        message: expect.stringContaining('cpu=3'),
      }),
    ]);

    const quiet = uniqueName('wh');
    await createNamespace(fed.host, quiet);
    await createQuota({ ...tryOut('try-dry', 'DryRun'), metadata: { name: 'try-dry', namespace: quiet } });
    const silent = kubectlCreate(binding(quiet, 'big', { replicas: 2 }));
    expect(silent.status).toBe(0);
    expect(silent.stderr).toBe('');
    const dry = await readQuota(quiet, 'try-dry');
    expect(reserved(dry, 'cpu').cmp(q('2'))).toBe(0);
    expect(dry.status?.wouldBeDenied).toEqual([
      expect.objectContaining({ binding: 'big', enforcement: 'DryRun' }),
    ]);

    // Where refusals show: an Event on the quota (within the webhook's 10 s window) and a metric.
    const core = client(fed.host).makeApiClient(k8s.CoreV1Api);
    const events = await eventually(
      () => core.listNamespacedEvent({ namespace: quiet, fieldSelector: 'reason=AdmissionNotEnforced' }),
      (list) => list.items.length > 0,
      30_000,
    );
    expect(events.items[0]).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'KarmadaQuota', name: 'try-dry' },
      message: expect.stringContaining('which it would deny (spec.enforcement: DryRun, not enforced)'),
    });
    const metrics = (await call('GET', '/metrics')).body;
    expect(metrics).toMatch(
      new RegExp(
        `karmada_quota_admissions_not_enforced_total\\{namespace="${quiet}",quota="try-dry",enforcement="DryRun"[^}]*\\} 1`,
      ),
    );
  });

  test('200 concurrent creates of 1-CPU bindings against a 50-CPU quota: exactly 50 admitted', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '50' }));
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => createBinding(binding(namespace, `rb-${i}`))),
    );
    const admitted = results.filter((r) => r.status === 'fulfilled');
    expect(admitted).toHaveLength(50);
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      const status = await refusal(Promise.reject(r.reason));
      expect(status.code).toBe(403);
      expect(status.reason).toBe('QuotaExceeded');
      expect(status.message).toBe(
        'admission webhook "resourcebindings.quota.karmada.io" denied the request: ' +
          'exceeded quota: team-a, requested: cpu=1, used: cpu=50, limited: cpu=50',
      );
    }
    const final = await readQuota(namespace, 'team-a');
    expect(used(final, 'cpu').add(reserved(final, 'cpu')).cmp(q('50'))).toBe(0);
    expect(final.status?.reservations).toHaveLength(50);
    for (const r of final.status!.reservations!) expect(r.expirationTime).toBeTruthy(); // created, not yet observed
  });

  test('a write through v1alpha1 reaches the webhook as v1alpha2: charged within the limit, refused past it', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '3' }));
    const throughV1alpha1 = (rb: ResourceBinding) =>
      objects().createNamespacedCustomObject({
        ...RESOURCE_BINDING,
        version: 'v1alpha1',
        namespace,
        body: { ...rb, apiVersion: `${RESOURCE_BINDING.group}/v1alpha1` },
      });
    await throughV1alpha1(binding(namespace, 'web', { replicas: 2 }));
    expect(reserved(await readQuota(namespace, 'team-a'), 'cpu').cmp(q('2'))).toBe(0);
    const refused = await refusal(throughV1alpha1(binding(namespace, 'api', { replicas: 2 })));
    expect(refused.code).toBe(403);
    expect(refused.message).toContain(
      'exceeded quota: team-a, requested: cpu=2, used: cpu=2, limited: cpu=3',
    );
  });

  test('the same update charges once, a scale-up charges only the increase, a scale-down passes a lowered limit', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '10' }));
    await createBinding(binding(namespace, 'web', { replicas: 2 }));
    expect(reserved(await readQuota(namespace, 'team-a'), 'cpu').cmp(q('2'))).toBe(0);

    const current = await readBinding(namespace, 'web');
    const scaledUp = await replaceBinding({ ...current, spec: { ...current.spec, replicas: 4 } });
    expect(reserved(await readQuota(namespace, 'team-a'), 'cpu').cmp(q('4'))).toBe(0);
    // Pending until the reconciler sees the persisted binding carry the admitted charge.
    expect(reservationOf(await readQuota(namespace, 'team-a'), 'web')?.expirationTime).toBeTruthy();
    // An update's claim: the reconciler drops it once this object is no longer stored.
    expect(reservationOf(await readQuota(namespace, 'team-a'), 'web')?.operation).toBe('Update');

    // The same change applied again, and the same AdmissionReview delivered five times.
    await replaceBinding(scaledUp);
    const review = bindingReview(
      'UPDATE',
      { ...scaledUp, spec: { ...scaledUp.spec, replicas: 6 } },
      { uid: 'retry-1', oldObject: scaledUp },
    );
    for (let i = 0; i < 5; i++)
      expect((await postReview('/validate/resourcebindings', review)).response.allowed).toBe(true);
    expect(reserved(await readQuota(namespace, 'team-a'), 'cpu').cmp(q('6'))).toBe(0);

    // The admin lowers the limit below what is held: scaling down still passes and releases nothing
    // until the reconciler (not running here) sees it persisted; scaling up past what is held does not.
    const lowered = await readQuota(namespace, 'team-a');
    await objects().replaceNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name: 'team-a',
      body: { ...lowered, spec: { hard: { cpu: '3' } } },
    });
    const scaledDown = await replaceBinding({
      ...(await readBinding(namespace, 'web')),
      spec: { ...scaledUp.spec, replicas: 1 },
    });
    expect(scaledDown.spec.replicas).toBe(1);
    expect(reserved(await readQuota(namespace, 'team-a'), 'cpu').cmp(q('6'))).toBe(0);
    const scaleUp = () => replaceBinding({ ...scaledDown, spec: { ...scaledDown.spec, replicas: 8 } });
    // An edited spec is trusted once its usage is counted again (here by hand: no reconciler runs).
    expect((await refusal(scaleUp())).message).toContain('status unknown for quota: team-a');
    await countNoUsage(client(fed.host), namespace, 'team-a');
    const refused = await refusal(scaleUp());
    expect(refused).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    // Charged beside the replicas-6 claim, not relying on it: that claim is another change's
    // (docs/concepts/accounting.md, "claimed"), so the scale-up asks 8 - 1 = 7.
    expect(refused.message).toMatch(
      /: exceeded quota: team-a, requested: cpu=7, used: cpu=6, limited: cpu=3$/,
    );
  });

  test("member caps: the scheduler's placement over a member's cap is refused naming the member; a split within every cap is admitted", async () => {
    const quota = karmadaQuota(namespace, 'team-a', { cpu: '10' });
    quota.spec.clusters = [{ name: 'member1', hard: { cpu: '4' } }];
    await createQuota(quota);
    const divided = { replicaScheduling: { replicaSchedulingType: 'Divided' } };
    // Karmada's detector creates it unplaced: only the global limit is checked.
    const created = await createBinding(binding(namespace, 'web', { replicas: 6, placement: divided }));
    const placed = (clusters: Record<string, number>) =>
      replaceBinding({
        ...created,
        spec: {
          ...created.spec,
          clusters: Object.entries(clusters).map(([name, n]) => ({ name, replicas: n })),
        },
      });
    const refused = await refusal(placed({ member1: 6 }));
    expect(refused).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    expect(refused.message).toMatch(
      /: exceeded quota: team-a on member cluster member1, requested: cpu=6, used: cpu=0, limited: cpu=4$/,
    );
    await placed({ member1: 4, member2: 2 });
    const after = await readQuota(namespace, 'team-a');
    expect(reserved(after, 'cpu').cmp(q('6'))).toBe(0);
    expect(reserved(after, 'cpu@member1').cmp(q('4'))).toBe(0);
    expect(reservationOf(after, 'web')?.charge).toMatchObject({ cpu: '6', 'cpu@member1': '4' });

    // The API server refuses a cap that names no member, and a member capped twice.
    const invalid = karmadaQuota(namespace, 'bad', { cpu: '10' });
    invalid.spec.clusters = [
      { name: 'member1', hard: { cpu: '1' } },
      { name: 'member1', hard: { cpu: '2' } },
    ];
    const duplicate = await refusal(
      objects().createNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, body: invalid }),
    );
    expect(duplicate.code).toBe(422);
    expect(duplicate.message).toContain('spec.clusters[1]');
  });

  test('dry-run creates are checked and leave the status untouched', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '2' }));
    const before = await readQuota(namespace, 'team-a');
    await createBinding(binding(namespace, 'fits', { replicas: 2 }), true);
    const refused = await refusal(createBinding(binding(namespace, 'too-big', { replicas: 3 }), true));
    expect(refused).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    const after = await readQuota(namespace, 'team-a');
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(after.status).toEqual(before.status);
  });

  test('a Duplicated placement is charged for every copy, a multi-component binding per component', async () => {
    await createQuota(
      karmadaQuota(namespace, 'team-a', { cpu: '100', pods: '100', 'count/deployments.apps': '10' }),
    );
    await createBinding(
      binding(namespace, 'dup', {
        replicas: 2,
        cpu: '500m',
        clusters: [
          { name: 'member1', replicas: 2 },
          { name: 'member2', replicas: 2 },
        ],
        placement: { replicaScheduling: { replicaSchedulingType: 'Duplicated' } },
      }),
    );
    await createBinding(
      binding(namespace, 'multi', {
        components: [
          { name: 'leader', replicas: 1, replicaRequirements: { resourceRequest: { cpu: '1' } } },
          { name: 'worker', replicas: 3, replicaRequirements: { resourceRequest: { cpu: '250m' } } },
        ],
        clusters: [{ name: 'member1', replicas: 4 }],
      }),
    );
    const status = await readQuota(namespace, 'team-a');
    expect(reservationOf(status, 'dup')?.reserved).toEqual({
      cpu: '2',
      pods: '4',
      'count/deployments.apps': '2',
    });
    expect(reservationOf(status, 'multi')?.reserved).toEqual({
      cpu: '1750m',
      pods: '4',
      'count/deployments.apps': '1',
    });
  });

  test('a binding matched by two quotas and denied by one leaves no reservation in the other', async () => {
    await createQuota(karmadaQuota(namespace, 'compute', { cpu: '100' }));
    await createQuota(karmadaQuota(namespace, 'pods', { pods: '1' }));
    await createBinding(binding(namespace, 'first'));
    const refused = await refusal(createBinding(binding(namespace, 'second')));
    expect(refused.message).toContain(
      'exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1',
    );
    const compute = await readQuota(namespace, 'compute');
    expect(compute.status?.reservations?.map((r) => r.reservedBy.name)).toEqual(['first']);
    expect(compute.status?.reserved).toEqual({ cpu: '1' });
  });

  test('a quota that tracks cpu denies a binding without a cpu request, saying so', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '10' }));
    const rb = binding(namespace, 'no-request');
    rb.spec.replicaRequirements = { resourceRequest: { memory: '1Gi' } };
    const refused = await refusal(createBinding(rb));
    expect(refused.code).toBe(403);
    expect(refused.message).toContain('requests.cpu');
  });

  test('only quotas whose PriorityClass scope matches the binding charge it', async () => {
    await createQuota(
      karmadaQuota(
        namespace,
        'high',
        { cpu: '1' },
        {
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
          },
        },
      ),
    );
    await createBinding(binding(namespace, 'default-priority', { replicas: 5 })); // not in scope
    const high = binding(namespace, 'high-priority', { replicas: 2 });
    high.spec.replicaRequirements!.priorityClassName = 'high';
    expect((await refusal(createBinding(high))).reason).toBe('QuotaExceeded');
  });

  test("with Karmada's default gates the class of the template's pods decides the scope; with the gate, the binding's", async () => {
    const scoped = (operator: 'In' | 'NotIn') => ({
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, values: ['high'] }] },
    });
    await createQuota(karmadaQuota(namespace, 'high', { cpu: '2' }, scoped('In')));
    await createQuota(karmadaQuota(namespace, 'others', { cpu: '2' }, scoped('NotIn')));
    // The template as the user applied it: Deployment `web`, pods of class `high`.
    await client(fed.host)
      .makeApiClient(k8s.AppsV1Api)
      .createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: 'web', namespace },
          spec: {
            replicas: 4,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: {
                priorityClassName: 'high',
                containers: [{ name: 'web', image: 'web', resources: { requests: { cpu: '1' } } }],
              },
            },
          },
        },
      });
    // Its binding as Karmada v1.18.2 writes it by default: no class, no replicaRequirements.namespace.
    const web = binding(namespace, 'web-deployment', { replicas: 4 });
    web.spec.resource.name = 'web';
    const status = await refusal(createBinding(web));
    expect(status).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    expect(status.message).toContain('exceeded quota: high, requested: cpu=4, used: cpu=0, limited: cpu=2');
    // With the ResourceQuotaEstimate gate the detector writes the class (none here) and the namespace:
    // the binding says it all, the template is not read.
    const gated = binding(namespace, 'web-deployment', { replicas: 4 });
    gated.spec.resource.name = 'web';
    gated.spec.replicaRequirements!.namespace = namespace;
    expect((await refusal(createBinding(gated))).message).toContain('exceeded quota: others');
  });

  test("a template's class changed alone: the binding's update is charged on the quota it enters, retried too", async () => {
    await createQuota(
      karmadaQuota(
        namespace,
        'high',
        { cpu: '2' },
        {
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
          },
        },
      ),
    );
    const apps = client(fed.host).makeApiClient(k8s.AppsV1Api);
    const template = await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web', namespace },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              priorityClassName: 'low',
              containers: [{ name: 'web', image: 'web', resources: { requests: { cpu: '1' } } }],
            },
          },
        },
      },
    });
    // Its binding as Karmada v1.18.2 writes it by default: no class, the template's uid and version.
    const web = binding(namespace, 'web-deployment', { replicas: 3 });
    web.spec.resource = {
      ...web.spec.resource,
      name: 'web',
      uid: template.metadata!.uid!,
      resourceVersion: template.metadata!.resourceVersion!,
    };
    const stored = await createBinding(web); // low: the high quota does not select it
    // The user changes only the pods' class; the detector updates the binding to name the new version.
    template.spec!.template.spec!.priorityClassName = 'high';
    const changed = await apps.replaceNamespacedDeployment({ namespace, name: 'web', body: template });
    const moved = structuredClone(stored);
    moved.spec.resource.resourceVersion = changed.metadata!.resourceVersion!;
    const status = await refusal(replaceBinding(moved));
    expect(status).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    expect(status.message).toContain('exceeded quota: high, requested: cpu=3, used: cpu=0, limited: cpu=2');
    // The detector retries the same update; the webhook has read the new version by now, and the old
    // object still names the old one, whose class (low) is remembered in Redis.
    expect((await refusal(replaceBinding(moved))).message).toContain(
      'exceeded quota: high, requested: cpu=3',
    );
  });

  test('a binding moved into a scoped quota by a priority change is charged in full there: denied', async () => {
    const highOnly = {
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
    };
    await createQuota(karmadaQuota(namespace, 'high', { cpu: '2' }, highOnly));
    const stored = await createBinding(binding(namespace, 'web', { replicas: 4 })); // low: not in scope
    const moved = structuredClone(stored);
    moved.spec.replicaRequirements!.priorityClassName = 'high';
    const status = await refusal(replaceBinding(moved));
    expect(status).toMatchObject({ code: 403, reason: 'QuotaExceeded' });
    expect(status.message).toContain('exceeded quota: high, requested: cpu=4, used: cpu=0, limited: cpu=2');
  });

  test('a new quota refuses increases until its usage is counted, then admits', async () => {
    await objects().createNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      body: karmadaQuota(namespace, 'fresh', { cpu: '10' }),
    });
    const status = await refusal(createBinding(binding(namespace, 'early')));
    expect(status.code).toBe(403);
    expect(status.message).toContain('status unknown for quota: fresh, resources: cpu');
    await countNoUsage(client(fed.host), namespace, 'fresh');
    await createBinding(binding(namespace, 'early'));
  });

  test("a quota's scope cannot change; after a limit edit, increases are refused as status unknown until counted again", async () => {
    const scope = (values: string[]) => ({
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values }] },
    });
    await createQuota(karmadaQuota(namespace, 'gold', { cpu: '10' }, scope(['high'])));
    const batch = binding(namespace, 'batch', { replicas: 8 });
    batch.spec.replicaRequirements!.priorityClassName = 'high';
    const stored = await createBinding(batch);
    const gold = await readQuota(namespace, 'gold');
    const widened = refusal(
      objects().replaceNamespacedCustomObject({
        ...KARMADA_QUOTA,
        namespace,
        name: 'gold',
        body: { ...gold, spec: { ...gold.spec, ...scope(['high', 'low']) } },
      }),
    );
    expect(await widened).toMatchObject({ code: 422 });
    expect((await widened).message).toContain('spec.scopeSelector: Invalid value: field is immutable');
    // A limit may change: the count of the old spec is not trusted until the new one is counted.
    await objects().replaceNamespacedCustomObject({
      ...KARMADA_QUOTA,
      namespace,
      name: 'gold',
      body: { ...gold, spec: { ...gold.spec, hard: { cpu: '12' } } },
    });
    const scaledUp = structuredClone(stored);
    scaledUp.spec.replicas = 12;
    // Until the webhook's quota watch delivers the edit, it may refuse from its copy of the old spec
    // (any copy is sound for a refusal); from then on, the count of the old spec is not trusted.
    const status = await eventually(
      () => refusal(replaceBinding(scaledUp)),
      (refused) => !refused.message.includes('limited: cpu=10'),
      10_000,
    );
    expect(status.code).toBe(403);
    expect(status.message).toContain('status unknown for quota: gold, resources: cpu');
    await countNoUsage(client(fed.host), namespace, 'gold'); // what a recount of the new spec writes
    await replaceBinding(scaledUp);
  });

  test('a reservation entry the webhook cannot read fails increases closed, naming it; a scale-down is still answered at once', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '10' }));
    const stored = await createBinding(binding(namespace, 'web', { replicas: 4 }));
    // A status the webhook cannot read (the API server leaves entries' fields to the services): every
    // increase now fails closed.
    const quota = await readQuota(namespace, 'team-a');
    await objects().replaceNamespacedCustomObjectStatus({
      ...KARMADA_QUOTA,
      namespace,
      name: 'team-a',
      body: {
        ...quota,
        status: {
          ...quota.status,
          reservations: [
            {
              reservedBy: { apiVersion: RESOURCE_BINDING.apiVersion, kind: RESOURCE_BINDING.kind, name: 'x' },
              reserved: { cpu: 'lots' },
            },
          ],
        },
      },
    });
    const up = structuredClone(stored);
    up.spec.replicas = 5;
    const failed = await refusal(replaceBinding(up));
    expect(failed.code).toBe(503);
    expect(failed.message).toContain(
      `a KarmadaQuota in ${namespace} cannot be read: team-a: status.reservations[0].reserved`,
    );
    const down = structuredClone(stored);
    down.spec.replicas = 1;
    const started = Date.now();
    await replaceBinding(down);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  test.each([
    [{ 'limits.cpu': '4' }, 'spec.hard[limits.cpu]', 'ResourceBinding carries only resource requests'],
    [{ gpus: '1' }, 'spec.hard[gpus]', 'gpus'],
    [{ cpu: '-1' }, 'spec.hard[cpu]', 'must be greater than or equal to 0'],
    [{ pods: '1.5' }, 'spec.hard[pods]', 'must be a whole number'],
    // Not a quantity at all: the CRD's schema already refuses it, before the webhook is asked.
    [{ memory: 'lots' }, 'spec.hard.memory', 'Invalid value: "lots"'],
  ])('a KarmadaQuota with hard %j is rejected at %s', async (hard, field, why) => {
    const status = await refusal(createQuota(karmadaQuota(namespace, 'bad', hard)));
    expect(status.code).toBe(422);
    expect(status.message).toContain(field);
    expect(status.message).toContain(why);
  });

  // The reconciler counts nothing for a finished Job, so its stored charge is not held (oldChargeHeld):
  // running it again, on a cluster it had not finished in, is charged in full; while it stays
  // finished it holds nothing, so a change in place, a scale-up included, asks nothing.
  test('a finished Job scheduled to a new cluster is charged in full; a finished one changed in place asks nothing', async () => {
    await createQuota(karmadaQuota(namespace, 'team-a', { cpu: '1' }));
    const job = (clusters: string[]): ResourceBinding => {
      const rb = binding(namespace, 'batch', {
        replicas: 2,
        clusters: clusters.map((name) => ({ name, replicas: 2 / clusters.length })),
      });
      rb.metadata!.uid = 'u-batch';
      rb.spec!.resource = { apiVersion: 'batch/v1', kind: 'Job', name: 'batch', namespace };
      (rb as { status?: unknown }).status = {
        aggregatedStatus: [
          { clusterName: 'member1', status: { conditions: [{ type: 'Complete', status: 'True' }] } },
        ],
      };
      return rb;
    };
    const update = (object: ResourceBinding, uid: string) =>
      postReview(
        '/validate/resourcebindings',
        bindingReview('UPDATE', object, { uid, oldObject: job(['member1']) }),
      );
    const rescheduled = await update(job(['member1', 'member2']), 'u4');
    expect(rescheduled.response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(rescheduled.response.status.message).toBe(
      'exceeded quota: team-a, requested: cpu=2, used: cpu=0, limited: cpu=1',
    );
    const relabelled = job(['member1']);
    relabelled.metadata!.labels = { edited: 'yes' };
    expect((await update(relabelled, 'u5')).response.allowed).toBe(true);
    const scaledUp = job(['member1']);
    scaledUp.spec!.replicas = 4;
    scaledUp.spec!.clusters = [{ name: 'member1', replicas: 4 }];
    expect((await update(scaledUp, 'u6')).response.allowed).toBe(true);
  });
});

describe('ClusterKarmadaQuotas, through the host API server', () => {
  // Each selects only namespaces with a label of its own (none), and none is stored: dry runs.
  const name = uniqueName('ckq');
  const create = (hard: Record<string, string>, spec: Partial<ClusterKarmadaQuota['spec']> = {}) =>
    objects().createClusterCustomObject({
      ...CLUSTER_KARMADA_QUOTA,
      body: {
        apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion,
        kind: CLUSTER_KARMADA_QUOTA.kind,
        metadata: { name },
        spec: { namespaceSelector: { matchLabels: { [`quota.example.com/${name}`]: 'yes' } }, hard, ...spec },
      },
      dryRun: 'All',
    });

  test("reach the webhook's validation (its rule is cluster-scoped), which refuses what KarmadaQuota's does", async () => {
    const status = await refusal(create({ 'limits.cpu': '4' }));
    expect(status.code).toBe(422);
    expect(status.message).toContain(
      `ClusterKarmadaQuota.quota.karmada.io "${name}" is invalid: spec.hard[limits.cpu]`,
    );
    const badSelector = await refusal(
      create({ cpu: '1' }, { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } }),
    );
    expect(badSelector.code).toBe(422);
    expect(badSelector.message).toContain(
      'spec.namespaceSelector.matchExpressions[0].values: Required value: In needs label values',
    );
    await create({ cpu: '1' });
  });

  test('need a namespaceSelector: the CRD requires it before the webhook is asked', async () => {
    const status = await refusal(create({ cpu: '1' }, { namespaceSelector: undefined }));
    expect(status.code).toBe(422);
    expect(status.message).toContain('spec.namespaceSelector: Required value');
    expect(status.message).not.toContain('the namespaces the quota spans'); // the webhook's message
  });
});

describe('the webhook metrics', () => {
  test('count admissions by result, time them, and size the batches', async () => {
    const res = (await call('GET', '/metrics')).body;
    for (const result of ['allowed', 'denied']) {
      expect(res).toMatch(
        new RegExp(
          `karmada_quota_admissions_total\\{[^}]*resource="resourcebindings",result="${result}"[^}]*\\} [1-9]`,
        ),
      );
    }
    expect(res).toMatch(/karmada_quota_admission_duration_seconds_bucket\{/);
    expect(res).toMatch(/karmada_quota_admission_batch_size_count\{[^}]*\} [1-9]/);
  });
});

describe('the webhook endpoint with bad input', () => {
  const review = (request: object) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request,
  });

  test.each([
    ['not JSON', '{"apiVersion":', 400],
    ['not an AdmissionReview', { apiVersion: 'v1', kind: 'Pod' }, 400],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 400],
  ])('%s gets a 400 with a message', async (_what, body, code) => {
    const res = await post(
      '/validate/resourcebindings',
      typeof body === 'string' ? body : JSON.stringify(body),
    );
    expect(res.status).toBe(code);
    expect(JSON.parse(res.body).message).toBeTruthy();
  });

  test('a body larger than any AdmissionReview can be is refused with 413 before it is read', async () => {
    const declared = 8 * 1024 * 1024;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${fed.webhookUrl}/validate/resourcebindings`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': declared },
          ...asApiServer(),
          rejectUnauthorized: false,
        },
        (res) => {
          let data = '';
          res.on('data', (d: Buffer) => (data += d.toString()));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: data });
            req.destroy();
          });
        },
      );
      req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
      req.write('{"apiVersion":'); // the rest never comes: the declared length alone is refused
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).message).toBe('Request body is too large');
  });

  test('an object of the wrong kind is denied with a message naming the kinds', async () => {
    const res = await postReview(
      '/validate/resourcebindings',
      review({
        uid: 'u1',
        operation: 'CREATE',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        namespace: 'x',
        object: {},
      }),
    );
    expect(res.response).toMatchObject({ uid: 'u1', allowed: false, status: { code: 400 } });
    expect(res.response.status.message).toContain('ResourceBinding.work.karmada.io, not Pod.core');
  });

  test.each([
    ['an oldObject without a uid', 'u-new', undefined, 'oldObject.metadata.uid: Required value'],
    ['a changed uid', 'u-new', 'u-stored', 'metadata.uid: Invalid value: "u-new": field is immutable'],
  ])(
    'an UPDATE with %s is denied: the API server never sends one',
    async (_what, uid, storedUid, message) => {
      const object = binding('x', 'web', { cpu: '1' });
      object.metadata!.uid = uid;
      const stored = binding('x', 'web', { cpu: '1' });
      if (storedUid) stored.metadata!.uid = storedUid;
      const res = await postReview(
        '/validate/resourcebindings',
        bindingReview('UPDATE', object, { uid: 'u3', oldObject: stored }),
      );
      expect(res.response).toMatchObject({ uid: 'u3', allowed: false, status: { code: 422 } });
      expect(res.response.status.message).toContain(message);
    },
  );

  test('an invalid quantity inside a binding is denied with a message naming the field', async () => {
    const rb = binding('x', 'bad', { cpu: 'lots' });
    const res = await postReview('/validate/resourcebindings', bindingReview('CREATE', rb, { uid: 'u2' }));
    expect(res.response).toMatchObject({ uid: 'u2', allowed: false, status: { code: 422 } });
    expect(res.response.status.message).toContain('resourceRequest[cpu]');
    expect(res.response.status.message).toContain('"lots"');
  });
});

const post = (path: string, body: string) => call('POST', path, body);

function call(
  method: 'GET' | 'POST',
  path: string,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${fed.webhookUrl}${path}`,
      {
        method,
        headers: { 'content-type': 'application/json' },
        ...asApiServer(),
        // The webhook's CA lives in the registration; this direct call does not verify it.
        rejectUnauthorized: false,
      },
      (res) => {
        let data = '';
        res.on('data', (d: Buffer) => (data += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function postReview(path: string, review: object) {
  const res = await post(path, JSON.stringify(review));
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as {
    response: { uid: string; allowed: boolean; status: { code: number; message: string } };
  };
}
