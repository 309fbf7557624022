import type { FederatedResourceQuota, KarmadaQuota } from '#api';
import {
  FRQ_ENFORCEMENT_ANNOTATION,
  frqLimitChange,
  frqLimitChangeNeeds,
  frqStatus,
  frqStatusEquals,
  servesAsWanted,
  servesFrq,
  servingQuota,
} from './federated-resource-quota.js';

const frq = (
  overall: Record<string, string>,
  extra: {
    annotation?: string;
    staticAssignments?: FederatedResourceQuota['spec']['staticAssignments'];
  } = {},
): FederatedResourceQuota => ({
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'FederatedResourceQuota',
  metadata: {
    name: 'team',
    namespace: 'ns',
    uid: 'frq-uid',
    ...(extra.annotation !== undefined
      ? { annotations: { [FRQ_ENFORCEMENT_ANNOTATION]: extra.annotation } }
      : {}),
  },
  spec: { overall, ...(extra.staticAssignments ? { staticAssignments: extra.staticAssignments } : {}) },
});

describe('servingQuota', () => {
  it('enforces each static assignment as the cap of its member, leaving out what it cannot enforce', () => {
    const served = servingQuota(
      frq(
        { cpu: '8' },
        {
          staticAssignments: [
            { clusterName: 'member1', hard: { cpu: '3', 'limits.cpu': '4' } },
            { clusterName: 'member2', hard: { cpu: '6' } },
            { clusterName: 'member2', hard: { cpu: '1' } },
          ],
        },
      ),
    );
    expect(served.quota.spec.clusters).toEqual([
      { name: 'member1', hard: { cpu: '3' } },
      { name: 'member2', hard: { cpu: '6' } },
    ]);
    expect(served.problems).toEqual([
      expect.stringMatching(/^spec.staticAssignments\[0\].hard\[limits.cpu\]: .*; it is not enforced$/),
      'spec.staticAssignments[2].clusterName: empty or assigned twice; this assignment is not enforced',
    ]);
  });

  it('is a KarmadaQuota frq-NAME with spec.overall as hard, labelled and owned by the FRQ', () => {
    expect(servingQuota(frq({ cpu: '8', memory: '16Gi', 'nvidia.com/gpu': '2' }))).toEqual({
      quota: {
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'KarmadaQuota',
        metadata: {
          name: 'frq-team',
          namespace: 'ns',
          labels: { 'quota.karmada.io/federated-resource-quota': 'team' },
          ownerReferences: [
            {
              apiVersion: 'policy.karmada.io/v1alpha1',
              kind: 'FederatedResourceQuota',
              name: 'team',
              uid: 'frq-uid',
              controller: true,
            },
          ],
        },
        spec: { hard: { cpu: '8', memory: '16Gi', 'nvidia.com/gpu': '2' } },
      },
      problems: [],
    });
  });

  it.each<[string | undefined, string | undefined, number]>([
    [undefined, undefined, 0],
    ['Deny', undefined, 0],
    ['Warn', 'Warn', 0],
    ['DryRun', 'DryRun', 0],
    ['dryrun', undefined, 1],
  ])('the annotation %p makes enforcement %p (%d problems)', (annotation, enforcement, problems) => {
    const served = servingQuota(frq({ cpu: '1' }, { annotation }));
    expect(served.quota.spec.enforcement).toBe(enforcement);
    expect(served.problems).toHaveLength(problems);
  });

  it('leaves out keys karmada-quota cannot enforce, naming each and why', () => {
    const served = servingQuota(frq({ cpu: '1', 'limits.cpu': '2', memory: 'lots' }));
    expect(served.quota.spec.hard).toEqual({ cpu: '1' });
    expect(served.problems).toEqual([
      expect.stringMatching(/^spec\.overall.*memory.*it is not enforced$/),
      expect.stringMatching(/^spec\.overall\[limits\.cpu\]: .*; it is not enforced$/),
    ]);
  });
});

describe('servesAsWanted and servesFrq', () => {
  const wanted = servingQuota(frq({ cpu: '1' }, { annotation: 'Warn' })).quota;
  it.each<[string, KarmadaQuota, boolean]>([
    ['the same', wanted, true],
    [
      'the same hard spelled otherwise',
      { ...wanted, spec: { ...wanted.spec, hard: { cpu: '1000m' } } },
      true,
    ],
    ['another hard', { ...wanted, spec: { ...wanted.spec, hard: { cpu: '2' } } }, false],
    ['another enforcement', { ...wanted, spec: { hard: { cpu: '1' } } }, false],
    [
      'a member cap it does not want',
      { ...wanted, spec: { ...wanted.spec, clusters: [{ name: 'member1', hard: { cpu: '1' } }] } },
      false,
    ],
  ])('%s', (_what, current, same) => expect(servesAsWanted(current, wanted)).toBe(same));

  it('compares the member caps by value', () => {
    const capped = servingQuota(
      frq({ cpu: '2' }, { staticAssignments: [{ clusterName: 'member1', hard: { cpu: '1' } }] }),
    ).quota;
    const spelled = {
      ...capped,
      spec: { ...capped.spec, clusters: [{ name: 'member1', hard: { cpu: '1000m' } }] },
    };
    expect(servesAsWanted(spelled, capped)).toBe(true);
    expect(servesAsWanted({ ...capped, spec: { hard: capped.spec.hard } }, capped)).toBe(false);
  });

  it('a quota serves the FRQ its label names', () => {
    expect(servesFrq(wanted, 'team')).toBe(true);
    expect(servesFrq(wanted, 'other')).toBe(false);
    expect(servesFrq({ ...wanted, metadata: { name: 'frq-team' } }, 'team')).toBe(false);
  });
});

describe('frqStatus', () => {
  const quota = (status: KarmadaQuota['status'], generation = 2): KarmadaQuota => ({
    metadata: { name: 'frq-team', namespace: 'ns', generation },
    spec: { hard: { cpu: '8', memory: '16Gi' } },
    status: { observedGeneration: 2, ...status },
  });
  const counted = quota({
    used: { cpu: '1500m', memory: '1Gi', pods: '3' },
    reserved: { cpu: '500m' },
    clusters: [
      { name: 'member2', used: { cpu: '1', memory: '0', pods: '2' }, lastSyncTime: 't', state: 'Ready' },
      { name: 'member1', used: { cpu: '500m', memory: '1Gi', pods: '1' }, lastSyncTime: 't', state: 'Ready' },
    ],
  });
  const served = frq(
    { cpu: '8', memory: '16Gi' },
    { staticAssignments: [{ clusterName: 'member3', hard: { cpu: '2' } }] },
  );

  it('writes overall, used + reserved on its keys, and each cluster in Karmada’s shape', () => {
    expect(frqStatus(served, counted)).toEqual({
      overall: { cpu: '8', memory: '16Gi' },
      overallUsed: { cpu: '2', memory: '1Gi' },
      aggregatedStatus: [
        { clusterName: 'member1', used: { cpu: '500m', memory: '1Gi' } },
        { clusterName: 'member2', used: { cpu: '1', memory: '0' } },
        { clusterName: 'member3', hard: { cpu: '2' }, used: {} },
      ],
    });
  });

  it('only overall before the quota is counted for its spec, or when there is none', () => {
    expect(frqStatus(served, undefined)).toEqual({ overall: { cpu: '8', memory: '16Gi' } });
    expect(frqStatus(served, quota({ used: { cpu: '1' } }, 3))).toEqual({
      overall: { cpu: '8', memory: '16Gi' },
    });
  });

  it('frqStatusEquals compares quantities by value and sees every difference', () => {
    const status = frqStatus(served, counted);
    expect(frqStatusEquals(status, status)).toBe(true);
    expect(frqStatusEquals({ ...status, overall: { cpu: '8000m', memory: '16Gi' } }, status)).toBe(true);
    expect(frqStatusEquals(undefined, status)).toBe(false);
    expect(frqStatusEquals({ ...status, overallUsed: { cpu: '3', memory: '1Gi' } }, status)).toBe(false);
    expect(frqStatusEquals({ ...status, aggregatedStatus: status.aggregatedStatus!.slice(1) }, status)).toBe(
      false,
    );
    expect(frqStatusEquals({ overall: status.overall }, status)).toBe(false);
  });
});

describe('frqLimitChange: which writes of an FRQ need the quota-admin right', () => {
  const withMeta = (
    base: FederatedResourceQuota,
    metadata: Partial<NonNullable<FederatedResourceQuota['metadata']>>,
  ): FederatedResourceQuota => ({ ...base, metadata: { ...base.metadata, ...metadata } });
  const assigned = [{ clusterName: 'member1', hard: { cpu: '1' } }];

  it.each<[string, FederatedResourceQuota, FederatedResourceQuota | undefined, unknown]>([
    ['a create with an overall sets it', frq({ cpu: '2' }), undefined, { overall: 'setting' }],
    ['a create with an empty overall sets nothing', frq({}), undefined, undefined],
    [
      'a create with the annotation adds it',
      frq({}, { annotation: 'DryRun' }),
      undefined,
      { enforcement: { from: undefined, to: 'DryRun' } },
    ],
    ['raising overall changes it', frq({ cpu: '3' }), frq({ cpu: '2' }), { overall: 'changing' }],
    ['lowering overall changes it', frq({ cpu: '1' }), frq({ cpu: '2' }), { overall: 'changing' }],
    ['a key added to overall', frq({ cpu: '2', pods: '5' }), frq({ cpu: '2' }), { overall: 'changing' }],
    ['a key dropped from overall', frq({ cpu: '2' }), frq({ cpu: '2', pods: '5' }), { overall: 'changing' }],
    [
      'the same overall written otherwise ("1" is "1000m")',
      frq({ cpu: '1000m' }),
      frq({ cpu: '1' }),
      undefined,
    ],
    ['an unreadable overall left as it was', frq({ cpu: 'lots' }), frq({ cpu: 'lots' }), undefined],
    [
      'removing the annotation',
      frq({ cpu: '2' }),
      frq({ cpu: '2' }, { annotation: 'DryRun' }),
      { enforcement: { from: 'DryRun', to: undefined } },
    ],
    [
      'adding the annotation',
      frq({ cpu: '2' }, { annotation: 'DryRun' }),
      frq({ cpu: '2' }),
      { enforcement: { from: undefined, to: 'DryRun' } },
    ],
    [
      'changing the annotation (even to a value read as Deny)',
      frq({ cpu: '2' }, { annotation: 'Deny' }),
      frq({ cpu: '2' }, { annotation: 'Warn' }),
      { enforcement: { from: 'Warn', to: 'Deny' } },
    ],
    [
      'both',
      frq({ cpu: '9' }),
      frq({ cpu: '2' }, { annotation: 'DryRun' }),
      { overall: 'changing', enforcement: { from: 'DryRun', to: undefined } },
    ],
    // They are the members' caps (docs/concepts/member-caps.md): part of the team's limit.
    [
      'staticAssignments changed',
      frq({ cpu: '2' }, { staticAssignments: assigned }),
      frq({ cpu: '2' }),
      { staticAssignments: 'changing' },
    ],
    [
      'staticAssignments the same spelled otherwise',
      frq({ cpu: '2' }, { staticAssignments: [{ clusterName: 'member1', hard: { cpu: '1000m' } }] }),
      frq({ cpu: '2' }, { staticAssignments: assigned }),
      undefined,
    ],
    [
      'a label and another annotation added, the enforcement annotation kept',
      withMeta(frq({ cpu: '2' }, { annotation: 'DryRun' }), {
        labels: { team: 'a' },
        annotations: { [FRQ_ENFORCEMENT_ANNOTATION]: 'DryRun', owner: 'alice' },
      }),
      frq({ cpu: '2' }, { annotation: 'DryRun' }),
      undefined,
    ],
    [
      'a status written through the main resource',
      { ...frq({ cpu: '2' }), status: { overallUsed: { cpu: '1' } } },
      frq({ cpu: '2' }),
      undefined,
    ],
  ])('%s', (_case, object, old, expected) => {
    expect(frqLimitChange(object, old)).toEqual(expected);
  });

  it('an FRQ without spec or metadata is read as empty, never a crash', () => {
    const bare = {} as FederatedResourceQuota;
    expect(frqLimitChange(bare, bare)).toBeUndefined();
    expect(frqLimitChange(frq({ cpu: '1' }), bare)).toEqual({ overall: 'changing' });
  });
});

describe('frqLimitChangeNeeds', () => {
  it.each<[Parameters<typeof frqLimitChangeNeeds>[2], string]>([
    [
      { overall: 'changing' },
      "changing spec.overall of FederatedResourceQuota team-a/team sets the team's limit",
    ],
    [
      { overall: 'setting' },
      "setting spec.overall of FederatedResourceQuota team-a/team sets the team's limit",
    ],
    [
      { enforcement: { from: 'DryRun' } },
      'removing annotation quota.karmada.io/enforcement (DryRun) of FederatedResourceQuota team-a/team ' +
        "sets how the team's limit is enforced",
    ],
    [
      { enforcement: { to: 'DryRun' } },
      'adding annotation quota.karmada.io/enforcement=DryRun of FederatedResourceQuota team-a/team ' +
        "sets how the team's limit is enforced",
    ],
    [
      { overall: 'changing', enforcement: { from: 'Warn', to: 'DryRun' } },
      'changing spec.overall and changing annotation quota.karmada.io/enforcement from Warn to DryRun of ' +
        "FederatedResourceQuota team-a/team sets the team's limit and how it is enforced",
    ],
  ])('names the change, what it decides and the right it needs: %j', (change, start) => {
    expect(frqLimitChangeNeeds('team-a', 'team', change)).toBe(
      `${start}: it needs the right to update karmadaquotas.quota.karmada.io in team-a ` +
        "(karmada-quota's quota-admin role)",
    );
  });
});
