/**
 * The controller's own wiring, with its collaborators stubbed (the admission itself is tested
 * against the real API server in test/webhook.test.ts): a CREATE's read of whether its name is
 * stored is a Karmada API server call of the review, given the review's deadline and answered
 * fail-closed when it outlasts it (review 3: moving the read out of the deadline, or dropping the
 * deadline, failed no test).
 */
import type { ResourceBinding } from '#api';
import { bindingCharge, clusterOverridesOf, withClusterOverrides } from '#quota';
import { AdmissionController } from './admission.controller.js';
import type { AdmissionStrategy } from '#accounting';
import type { WebhookConfig } from './config.js';
import type { UserInfo } from './admission-review.js';
import type { QuotaAdminRight } from './quota-admin-right.js';

const DEADLINE_MS = 200;

function controller(
  exists: (namespace: string, name: string, options: { deadline?: number }) => Promise<boolean>,
  options: {
    outcome?: Awaited<ReturnType<AdmissionStrategy['admit']>>;
    overrides?: { mayChange: () => boolean; apply: (b: ResourceBinding[]) => Promise<ResourceBinding[]> };
    refused?: (namespace: string, rb: ResourceBinding) => void;
    quotaAdmin?: Pick<QuotaAdminRight, 'heldBy'>;
    /** Sees each answer counted (WebhookMetrics.admitted). */
    counted?: (resource: string, result: string) => void;
  } = {},
) {
  const admitted: unknown[] = [];
  const strategy: AdmissionStrategy = {
    admit: async (change) => {
      admitted.push(change);
      return options.outcome ?? { allowed: true };
    },
  } as AdmissionStrategy;
  const noop = () => undefined;
  const c = new AdmissionController(
    strategy,
    { ADMISSION_DEADLINE_MS: DEADLINE_MS } as WebhookConfig,
    { admitted: options.counted ?? noop, notEnforced: noop } as never,
    { record: noop } as never,
    { admitted: noop, refused: options.refused ?? noop } as never,
    { exists } as never,
    {} as never,
    { classify: async (bindings: ResourceBinding[]) => bindings } as never,
    (options.overrides ?? {
      mayChange: () => false,
      apply: async (bindings: ResourceBinding[]) => bindings,
    }) as never,
    { watchedIn: () => [], list: async () => [] } as never,
    (options.quotaAdmin ?? {}) as QuotaAdminRight,
  );
  return { controller: c, admitted };
}

const review = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'r1',
    operation: 'CREATE',
    kind: { group: 'work.karmada.io', version: 'v1alpha2', kind: 'ResourceBinding' },
    namespace: 'team-a',
    name: 'web-deployment',
    object: {
      apiVersion: 'work.karmada.io/v1alpha2',
      kind: 'ResourceBinding',
      metadata: { name: 'web-deployment', namespace: 'team-a' },
      spec: {
        resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-a', name: 'web' },
        replicas: 2,
        replicaRequirements: { resourceRequest: { cpu: '1' } },
      },
    },
  },
};

describe('AdmissionController: the stored-name read of a CREATE', () => {
  it('is given the review’s deadline, and a read that outlasts it is answered fail-closed in time', async () => {
    const deadlines: (number | undefined)[] = [];
    const { controller: c, admitted } = controller(
      (_namespace, _name, options) =>
        new Promise<boolean>(() => {
          deadlines.push(options.deadline); // never answers: the Karmada API server hangs
        }),
    );
    const startedAt = Date.now();
    const answer = await c.resourceBinding(review);
    expect(answer.response).toMatchObject({ allowed: false, status: { code: 503 } });
    expect(answer.response.status?.message).toContain(`did not answer within ${DEADLINE_MS} ms`);
    expect(Date.now() - startedAt).toBeLessThan(DEADLINE_MS * 5);
    expect(deadlines).toHaveLength(1);
    expect(deadlines[0]).toBeGreaterThanOrEqual(startedAt + DEADLINE_MS);
    expect(deadlines[0]).toBeLessThanOrEqual(Date.now());
    expect(admitted).toEqual([]);
  });

  it('a name already stored is refused 409 before any admission; a new one is admitted', async () => {
    const stored = controller(async () => true);
    expect((await stored.controller.resourceBinding(review)).response).toMatchObject({
      allowed: false,
      status: { code: 409, reason: 'AlreadyExists' },
    });
    expect(stored.admitted).toEqual([]);
    const fresh = controller(async () => false);
    expect((await fresh.controller.resourceBinding(review)).response.allowed).toBe(true);
    expect(fresh.admitted).toHaveLength(1);
  });
});

describe('AdmissionController: a binding judged for its template', () => {
  it('a scale-down judging left as it came is answered at once, without an admission', async () => {
    // No replicaRequirements.namespace: its template's class is looked for (none applies here).
    const { controller: c, admitted } = controller(async () => false);
    const old = { ...review.request.object, metadata: { ...review.request.object.metadata, uid: 'u1' } };
    const down = structuredClone(review);
    Object.assign(down.request, { operation: 'UPDATE', oldObject: old });
    down.request.object.spec.replicas = 1;
    expect((await c.resourceBinding(down)).response.allowed).toBe(true);
    expect(admitted).toEqual([]);
  });
});

describe('AdmissionController: a binding an OverridePolicy changes', () => {
  it('is charged, and its refusal recorded, as judged with the override (not as the wire object)', async () => {
    const overridden = (rb: ResourceBinding | undefined) =>
      rb &&
      withClusterOverrides(rb, [{ cluster: 'member1', replicas: 5, policies: ['OverridePolicy team-a/p'] }]);
    const recorded: ResourceBinding[] = [];
    const { controller: c, admitted } = controller(async () => false, {
      outcome: { allowed: false, quota: 'team-a', exceeded: ['cpu'], message: 'exceeded quota: team-a' },
      overrides: {
        mayChange: () => true,
        apply: async (bindings) => bindings.map(overridden) as ResourceBinding[],
      },
      refused: (_namespace, rb) => recorded.push(rb),
    });
    const scheduled = structuredClone(review);
    (scheduled.request.object.spec as Record<string, unknown>)['clusters'] = [
      { name: 'member1', replicas: 2 },
    ];
    const answer = await c.resourceBinding(scheduled);
    expect(answer.response.allowed).toBe(false);
    // 5 replicas on member1, not the binding's 2.
    expect(admitted).toHaveLength(1);
    const [change] = admitted as { item: { charge: Record<string, { toString(): string }> } }[];
    expect(change!.item.charge['cpu']?.toString()).toBe('5');
    expect(bindingCharge(recorded[0]!).charge['cpu']?.toString()).toBe('5');
    expect(clusterOverridesOf(recorded[0]!)).toHaveLength(1);
  });
});

describe('AdmissionController: a FederatedResourceQuota write', () => {
  const alice = { username: 'alice', uid: 'u-1', groups: ['team-a', 'system:authenticated'], extra: {} };
  const frq = (overall: Record<string, string>, annotations?: Record<string, string>) => ({
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'FederatedResourceQuota',
    metadata: { name: 'team', namespace: 'team-a', ...(annotations ? { annotations } : {}) },
    spec: { overall },
  });
  const frqReview = (object: object, oldObject?: object, version = 'v1alpha1') => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'f1',
      operation: oldObject ? 'UPDATE' : 'CREATE',
      kind: { group: 'policy.karmada.io', version, kind: 'FederatedResourceQuota' },
      namespace: 'team-a',
      name: 'team',
      userInfo: alice,
      object,
      ...(oldObject ? { oldObject } : {}),
    },
  });
  /** The controller, with the API server's answer to "may the user update KarmadaQuotas here?". */
  const guarded = (answer: () => Promise<boolean>) => {
    const asked: [UserInfo, string][] = [];
    const { controller: c } = controller(async () => false, {
      quotaAdmin: {
        heldBy: (user, namespace) => {
          asked.push([user, namespace]);
          return answer();
        },
      },
    });
    return { c, asked };
  };
  const needs =
    "changing spec.overall of FederatedResourceQuota team-a/team sets the team's limit: it needs the " +
    "right to update karmadaquotas.quota.karmada.io in team-a (karmada-quota's quota-admin role)";

  it('a change of spec.overall: admitted if the writer may update KarmadaQuotas there, else refused naming the right', async () => {
    const raise = frqReview(frq({ cpu: '9' }), frq({ cpu: '2' }));
    const held = guarded(async () => true);
    expect((await held.c.federatedResourceQuota(raise)).response).toEqual({ uid: 'f1', allowed: true });
    expect(held.asked).toEqual([[alice, 'team-a']]);
    const lacking = guarded(async () => false);
    expect((await lacking.c.federatedResourceQuota(raise)).response).toEqual({
      uid: 'f1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: `${needs}, which user "alice" lacks` },
    });
  });

  it('another change passes without asking', async () => {
    const { c, asked } = guarded(async () => false);
    const labelled = { ...frq({ cpu: '2' }), metadata: { ...frq({}).metadata, labels: { a: 'b' } } };
    expect(
      (await c.federatedResourceQuota(frqReview(labelled, frq({ cpu: '2000m' })))).response.allowed,
    ).toBe(true);
    expect(asked).toEqual([]);
  });

  it('fails closed, saying the right could not be checked, when the API server does not answer', async () => {
    const { c } = guarded(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    const answer = await c.federatedResourceQuota(frqReview(frq({ cpu: '9' }), frq({ cpu: '2' })));
    expect(answer.response).toMatchObject({
      allowed: false,
      status: { code: 503, reason: 'ServiceUnavailable' },
    });
    expect(answer.response.status?.message).toBe(
      `${needs}, and whether user "alice" holds it could not be checked (SubjectAccessReview: connect ` +
        'ECONNREFUSED), so the write is not admitted (fail closed). Retry; if it persists, check that the ' +
        'webhook may create subjectaccessreviews.authorization.k8s.io, and its logs',
    );
  });

  it('refuses another version, and an UPDATE without its old object, with 400', async () => {
    const { c, asked } = guarded(async () => true);
    const other = await c.federatedResourceQuota(frqReview(frq({ cpu: '1' }), undefined, 'v1beta1'));
    expect(other.response.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    const noOld = frqReview(frq({ cpu: '1' }));
    noOld.request.operation = 'UPDATE';
    expect((await c.federatedResourceQuota(noOld)).response.status).toMatchObject({ code: 400 });
    expect(asked).toEqual([]);
  });
});

describe('AdmissionController: a quota write, each kind at its own endpoint', () => {
  const results: [string, string][] = [];
  const { controller: c } = controller(async () => false, {
    counted: (resource, result) => results.push([resource, result]),
  });
  beforeEach(() => results.splice(0));

  const team = { matchLabels: { 'quota.example.com/group': 'analytics' } };
  const ckq = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'ClusterKarmadaQuota',
    metadata: { name: 'analytics', ...metadata },
    spec,
  });
  const kq = (spec: Record<string, unknown>) => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'team', namespace: 'team-a' },
    spec,
  });
  const quotaReview = (
    kind: string,
    object: { metadata: { name: string; namespace?: string } },
    options: { operation?: string; oldObject?: object; version?: string } = {},
  ) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'q1',
      operation: options.operation ?? (options.oldObject ? 'UPDATE' : 'CREATE'),
      kind: { group: 'quota.karmada.io', version: options.version ?? 'v1alpha1', kind },
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      name: object.metadata.name,
      userInfo: { username: 'admin' },
      object,
      ...(options.oldObject ? { oldObject: options.oldObject } : {}),
    },
  });
  const scoped = {
    matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
  };

  it.each<[string, ReturnType<typeof quotaReview>, object, [string, string]]>([
    [
      'a valid ClusterKarmadaQuota is admitted',
      quotaReview('ClusterKarmadaQuota', ckq({ hard: { cpu: '100' }, namespaceSelector: team })),
      { uid: 'q1', allowed: true },
      ['clusterkarmadaquotas', 'allowed'],
    ],
    [
      'one without namespaceSelector is refused, naming its kind and the field',
      quotaReview('ClusterKarmadaQuota', ckq({ hard: { cpu: '100' } })),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message:
            'ClusterKarmadaQuota.quota.karmada.io "analytics" is invalid: spec.namespaceSelector: Required ' +
            'value: the namespaces the quota spans, by their labels, e.g. {matchLabels: {team: a}}; {} ' +
            'selects every namespace',
        },
      },
      ['clusterkarmadaquotas', 'invalid'],
    ],
    [
      "one with KarmadaQuota's errors is refused with them",
      quotaReview('ClusterKarmadaQuota', ckq({ hard: { 'limits.cpu': '1' }, namespaceSelector: team })),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message: expect.stringMatching(
            /^ClusterKarmadaQuota.quota.karmada.io "analytics" is invalid: spec.hard\[limits.cpu\]: limits.cpu is not supported/,
          ),
        },
      },
      ['clusterkarmadaquotas', 'invalid'],
    ],
    [
      'an update is judged against the stored object (the scope is immutable)',
      quotaReview(
        'ClusterKarmadaQuota',
        ckq({ hard: { cpu: '100' }, namespaceSelector: team, scopeSelector: scoped }),
        { oldObject: ckq({ hard: { cpu: '100' }, namespaceSelector: team }) },
      ),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message: expect.stringContaining('spec.scopeSelector: Invalid value: field is immutable'),
        },
      },
      ['clusterkarmadaquotas', 'invalid'],
    ],
    [
      'a DELETE is admitted unread',
      quotaReview('ClusterKarmadaQuota', ckq({}), { operation: 'DELETE' }),
      { uid: 'q1', allowed: true },
      ['clusterkarmadaquotas', 'allowed'],
    ],
    [
      'a KarmadaQuota sent to it is refused with 400, naming the kind it admits',
      quotaReview('KarmadaQuota', kq({ hard: { cpu: '1' } })),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 400,
          reason: 'BadRequest',
          message: expect.stringContaining(
            'this endpoint admits ClusterKarmadaQuota.quota.karmada.io, not KarmadaQuota.quota.karmada.io',
          ),
        },
      },
      ['clusterkarmadaquotas', 'invalid'],
    ],
    [
      'another version is refused with 400',
      quotaReview('ClusterKarmadaQuota', ckq({ hard: {}, namespaceSelector: {} }), { version: 'v1beta1' }),
      {
        uid: 'q1',
        allowed: false,
        status: { code: 400, reason: 'BadRequest', message: expect.stringContaining('v1alpha1 only') },
      },
      ['clusterkarmadaquotas', 'invalid'],
    ],
  ])('/validate/clusterkarmadaquotas: %s', async (_name, body, response, counted) => {
    expect((await c.clusterKarmadaQuota(body)).response).toEqual(response);
    expect(results).toEqual([counted]);
  });

  it.each<[string, ReturnType<typeof quotaReview>, object, [string, string]]>([
    [
      'a valid KarmadaQuota is admitted',
      quotaReview('KarmadaQuota', kq({ hard: { cpu: '1' } })),
      { uid: 'q1', allowed: true },
      ['karmadaquotas', 'allowed'],
    ],
    [
      'an invalid one is refused, naming its kind',
      quotaReview('KarmadaQuota', kq({ hard: { cpu: 'lots' } })),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message: expect.stringMatching(
            /^KarmadaQuota.quota.karmada.io "team" is invalid: spec.hard\[cpu\]: invalid quantity "lots"/,
          ),
        },
      },
      ['karmadaquotas', 'invalid'],
    ],
    [
      'a ClusterKarmadaQuota sent to it is refused with 400',
      quotaReview('ClusterKarmadaQuota', ckq({ hard: {}, namespaceSelector: {} })),
      {
        uid: 'q1',
        allowed: false,
        status: {
          code: 400,
          reason: 'BadRequest',
          message: expect.stringContaining(
            'this endpoint admits KarmadaQuota.quota.karmada.io, not ClusterKarmadaQuota.quota.karmada.io',
          ),
        },
      },
      ['karmadaquotas', 'invalid'],
    ],
  ])('/validate/karmadaquotas: %s', async (_name, body, response, counted) => {
    expect((await c.karmadaQuota(body)).response).toEqual(response);
    expect(results).toEqual([counted]);
  });
});
