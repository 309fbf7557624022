// What an AppliedClusterKarmadaQuota holds for one namespace (docs/concepts/cluster-quotas.md).
import type { Condition, KarmadaQuota, KarmadaQuotaStatus } from '#api';
import {
  APPLIED_SELECTOR,
  appliedClusterQuota,
  appliedNamespaces,
  appliedStatus,
} from './applied-cluster-quota.js';

const AT = '2026-11-29T10:00:00Z';

const condition = (
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: AT,
  observedGeneration: 2,
});

const ready = condition('Ready', 'True', 'Reconciled', 'usage and reservations are reconciled');
const synced = condition('ClustersSynced', 'True', 'AllClustersReady', 'member cluster member1 is Ready');
const overQuota = condition(
  'OverQuota',
  'False',
  'WithinQuota',
  'used+reserved is within hard for every resource',
);
const withinCharge = condition('RunningBeyondCharge', 'False', 'WithinCharge', 'every workload runs within');

/** A ClusterKarmadaQuota's status over namespaces a and b, as the reconciler computes it. */
const status = (o: Partial<KarmadaQuotaStatus> = {}): KarmadaQuotaStatus => ({
  hard: { cpu: '10' },
  used: { cpu: '3' },
  reserved: { cpu: '2' },
  reservations: [
    {
      reservedBy: {
        apiVersion: 'work.karmada.io/v1alpha2',
        kind: 'ResourceBinding',
        namespace: 'b',
        name: 'x',
      },
      reserved: { cpu: '1' },
      charge: { cpu: '1' },
      expirationTime: AT,
    },
  ],
  clusters: [{ name: 'member1', used: { cpu: '3' }, lastSyncTime: AT, state: 'Ready' }],
  observedBindingsVersion: '420',
  namespaces: [
    { namespace: 'a', used: { cpu: '1' }, reserved: { cpu: '0' } },
    { namespace: 'b', used: { cpu: '2' }, reserved: { cpu: '2' } },
  ],
  waiting: [
    { binding: 'a/web', requested: { cpu: '9' }, free: { cpu: '5' }, since: AT },
    { binding: 'b/batch', requested: { cpu: '8' }, free: { cpu: '5' }, since: AT },
  ],
  wouldBeDenied: [{ binding: 'b/batch', enforcement: 'Warn', message: 'exceeded quota', at: AT }],
  conditions: [ready, synced, overQuota, withinCharge],
  observedGeneration: 2,
  ...o,
});

const quota = (uid: string | null = 'uid-1'): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'ClusterKarmadaQuota',
  metadata: { name: 'team', generation: 2, resourceVersion: '7', ...(uid ? { uid } : {}) },
  spec: { hard: { cpu: '10' }, namespaceSelector: { matchLabels: { team: 'a' } } } as KarmadaQuota['spec'],
  status: status(),
});

describe('appliedNamespaces', () => {
  it.each<[string, KarmadaQuotaStatus | undefined, string[]]>([
    ['each namespace counted', status(), ['a', 'b']],
    ['none before the first count', undefined, []],
    ['none when none is selected', status({ namespaces: [] }), []],
    [
      'each once, leaving out entries without a namespace',
      status({
        namespaces: [{ namespace: 'a', used: {} }, { namespace: 'a', used: {} }, { used: {} } as never],
      }),
      ['a'],
    ],
  ])('%s', (_, given, expected) => {
    expect(appliedNamespaces(given)).toEqual(expected);
  });
});

describe('appliedStatus', () => {
  it("keeps the totals, members and conditions, and only the namespace's own lines; no claims", () => {
    expect(appliedStatus('team', status(), 'a')).toEqual({
      hard: { cpu: '10' },
      used: { cpu: '3' },
      reserved: { cpu: '2' },
      clusters: [{ name: 'member1', used: { cpu: '3' }, lastSyncTime: AT, state: 'Ready' }],
      namespaces: [{ namespace: 'a', used: { cpu: '1' }, reserved: { cpu: '0' } }],
      waiting: [{ binding: 'a/web', requested: { cpu: '9' }, free: { cpu: '5' }, since: AT }],
      conditions: [ready, synced, overQuota, withinCharge],
      observedGeneration: 2,
    });
  });

  it.each<[string, Partial<KarmadaQuotaStatus>, string, Partial<KarmadaQuotaStatus>]>([
    [
      "another namespace's waiting and would-be-denied entries",
      {},
      'b',
      {
        waiting: [{ binding: 'b/batch', requested: { cpu: '8' }, free: { cpu: '5' }, since: AT }],
        wouldBeDenied: [{ binding: 'b/batch', enforcement: 'Warn', message: 'exceeded quota', at: AT }],
      },
    ],
    ['no lists where the namespace has no entry', {}, 'c', { namespaces: [] }],
    [
      'a namespace whose name prefixes another one',
      { waiting: [{ binding: 'ab/web', requested: {}, free: {}, since: AT }] },
      'a',
      { namespaces: [{ namespace: 'a', used: { cpu: '1' }, reserved: { cpu: '0' } }] },
    ],
    [
      'capsResolvedFor, as the quota has it',
      { capsResolvedFor: ['member1'], waiting: [], wouldBeDenied: [] },
      'a',
      { capsResolvedFor: ['member1'] },
    ],
  ])('%s', (_, given, namespace, expected) => {
    const got = appliedStatus('team', status(given), namespace);
    expect({
      namespaces: got.namespaces,
      waiting: got.waiting,
      wouldBeDenied: got.wouldBeDenied,
      capsResolvedFor: got.capsResolvedFor,
    }).toEqual({
      namespaces: status().namespaces!.filter((n) => n.namespace === namespace),
      waiting: undefined,
      wouldBeDenied: undefined,
      capsResolvedFor: undefined,
      ...expected,
    });
    expect(got).not.toHaveProperty('reservations');
    expect(got).not.toHaveProperty('observedBindingsVersion');
  });

  const beyond = (message: string) => condition('RunningBeyondCharge', 'True', 'UsageExceedsCharge', message);
  const BEYOND =
    'a/web runs cpu=3 against a charge of cpu=2; b/batch runs cpu=5 against a charge of cpu=1; ' +
    'b/cron runs cpu=1 against a charge of cpu=0: no admission saw this usage (an OverridePolicy, ...)';
  it.each<[string, Condition, string, string]>([
    ['keeps a message naming no binding', overQuota, 'a', overQuota.message],
    [
      "names only the namespace's own bindings running beyond their charge",
      beyond(BEYOND),
      'a',
      'a/web runs beyond what its binding was charged (see docs/concepts/binding-cost.md); ' +
        'workloads of other namespaces may too',
    ],
    [
      'several of them',
      beyond(BEYOND),
      'b',
      'b/batch, b/cron run beyond what their bindings were charged (see docs/concepts/binding-cost.md); ' +
        'workloads of other namespaces may too',
    ],
    [
      'none of them',
      beyond(BEYOND),
      'c',
      'workloads of other namespaces run beyond what their bindings were charged',
    ],
    [
      "replaces the problems of a Ready False, which may be other namespaces'",
      condition(
        'Ready',
        'False',
        'InvalidData',
        '1 problem(s): namespace b: bindings[0].metadata.name: required',
      ),
      'a',
      "the quota's status has problems, not all of them in this namespace: ClusterKarmadaQuota " +
        "team's Ready condition names them (ask its administrators)",
    ],
  ])('a condition: %s', (_, given, namespace, message) => {
    const [got] = appliedStatus('team', status({ conditions: [given] }), namespace).conditions!;
    expect(got).toEqual({ ...given, message });
  });
});

describe('appliedClusterQuota', () => {
  it('is named as the quota in the namespace, labelled, owned by the quota, with its spec', () => {
    const applied = appliedClusterQuota(quota(), status(), 'a');
    expect(applied).toEqual({
      apiVersion: 'quota.karmada.io/v1alpha1',
      kind: 'AppliedClusterKarmadaQuota',
      metadata: {
        name: 'team',
        namespace: 'a',
        labels: { 'app.kubernetes.io/managed-by': 'karmada-quota' },
        ownerReferences: [
          {
            apiVersion: 'quota.karmada.io/v1alpha1',
            kind: 'ClusterKarmadaQuota',
            name: 'team',
            uid: 'uid-1',
          },
        ],
      },
      spec: quota().spec,
      status: appliedStatus('team', status(), 'a'),
    });
    expect(APPLIED_SELECTOR).toBe('app.kubernetes.io/managed-by=karmada-quota');
  });

  it('takes the status given (as just computed), not the one the quota was read with', () => {
    const computed = status({ used: { cpu: '4' } });
    expect(appliedClusterQuota(quota(), computed, 'b').status?.used).toEqual({ cpu: '4' });
  });

  it('is owned by nothing when the quota has no uid', () => {
    expect(appliedClusterQuota(quota(null), status(), 'a').metadata).not.toHaveProperty('ownerReferences');
  });
});
