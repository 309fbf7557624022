// A ClusterKarmadaQuota through the pure rules: its state as a namespace's batch reads it, and its
// status summed over the namespaces it selects (docs/concepts/cluster-quotas.md).
import type { KarmadaQuota, Reservation, ResourceBinding } from '#api';
import { formatList } from '#quantity';
import type { ObservedCluster } from './cluster-usage.js';
import {
  countedNamespaces,
  limitsNamespace,
  namespacesWaitingOn,
  parseQuotaState,
  quotaName,
  toWireReservations,
  type SelectedNamespace,
} from './state.js';
import { computeQuotaStatus, type NamespaceInput } from './status.js';

const NOW = new Date('2026-11-29T10:00:00.250Z');
const UNEXPIRED = '2026-11-29T10:02:00.000Z';
const SYNC = '2026-11-29T09:59:58Z';

const claim = (namespace: string | undefined, name: string, cpu: string): Reservation => ({
  reservedBy: {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    ...(namespace ? { namespace } : {}),
    name,
    uid: `${namespace}-${name}`,
  },
  reserved: { cpu },
  charge: { cpu },
  expirationTime: UNEXPIRED,
});

const ckq = (
  status: KarmadaQuota['status'] = {},
  spec: Partial<KarmadaQuota['spec']> = {},
): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'ClusterKarmadaQuota',
  metadata: { name: 'team-a', generation: 2 },
  spec: {
    hard: { cpu: '10' },
    namespaceSelector: { matchLabels: { team: 'a' } },
    ...spec,
  } as KarmadaQuota['spec'],
  status,
});

const rb = (namespace: string, name: string, cpu: string, replicas = 1): ResourceBinding => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  metadata: { namespace, name, uid: `${namespace}-${name}`, resourceVersion: '5' },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas,
    clusters: [{ name: 'member1', replicas }],
    replicaRequirements: { resourceRequest: { cpu } },
  },
});

const usage = (used: string, workloads: Record<string, string>, o: Partial<ObservedCluster> = {}) =>
  ({
    name: 'member1',
    state: 'Ready',
    lastSyncTime: SYNC,
    used: { cpu: used },
    workloads: Object.entries(workloads).map(([name, cpu]) => ({ kind: 'Deployment', name, used: { cpu } })),
    ...o,
  }) as ObservedCluster;

describe('a ClusterKarmadaQuota read for admission', () => {
  it('is named with its kind, so a namespace batch tells it from a KarmadaQuota of the same name', () => {
    expect(quotaName(ckq())).toBe('ClusterKarmadaQuota/team-a');
    expect(quotaName({ ...ckq(), kind: 'KarmadaQuota', metadata: { name: 'team-a', namespace: 'x' } })).toBe(
      'team-a',
    );
  });

  it('reads each claim in the namespace it names, and writes it back naming it', () => {
    const quota = ckq({ reservations: [claim('ns-a', 'web', '2'), claim('ns-b', 'web', '3')] });
    const { state, errors } = parseQuotaState(quota);
    expect(errors).toEqual([]);
    expect(state.reservations.map((r) => r.binding)).toEqual([
      { namespace: 'ns-a', name: 'web', uid: 'ns-a-web' },
      { namespace: 'ns-b', name: 'web', uid: 'ns-b-web' },
    ]);
    expect(formatList(state.reserved)).toEqual({ cpu: '5' });
    expect(toWireReservations(state.reservations, '').map((r) => r.reservedBy.namespace)).toEqual([
      'ns-a',
      'ns-b',
    ]);
  });

  it('refuses to read a claim that names no namespace (the batch then fails closed)', () => {
    const { state, errors } = parseQuotaState(ckq({ reservations: [claim(undefined, 'web', '2')] }));
    expect(state.reservations).toEqual([]);
    expect(errors.map((e) => e.field)).toEqual(['status.reservations[0].reservedBy.namespace']);
  });

  // A namespace as named in a row: its name, and a resourceVersion (counted, or labelled at) after '@'.
  const versioned = (entry: string) => {
    const [name, version] = entry.split('@') as [string, string | undefined];
    return { name, version };
  };
  const selection = (entries: string[]): SelectedNamespace[] =>
    entries
      .map(versioned)
      .map(({ name, version }) => ({ name, ...(version ? { labelledAt: version } : {}) }));

  it.each<
    [string, string[], number, { namespace: string; selected?: string[] } | undefined, Record<string, string>]
  >([
    [
      'a batch whose namespace and selection are counted for this spec',
      ['ns-a', 'ns-b'],
      2,
      { namespace: 'ns-a', selected: ['ns-a', 'ns-b'] },
      { cpu: '4' },
    ],
    [
      'a batch whose own namespace is not counted yet',
      ['ns-b'],
      2,
      { namespace: 'ns-a', selected: ['ns-a', 'ns-b'] },
      {},
    ],
    // A namespace entering brings usage the total does not hold yet: no batch may count on it.
    [
      'a batch while another selected namespace is not counted yet',
      ['ns-a'],
      2,
      { namespace: 'ns-a', selected: ['ns-a', 'ns-b'] },
      {},
    ],
    ['a batch whose store cannot tell the selection', ['ns-a'], 2, { namespace: 'ns-a' }, {}],
    [
      'a namespace counted but no longer selected (conservative)',
      ['ns-a', 'ns-b'],
      2,
      { namespace: 'ns-a', selected: ['ns-a'] },
      { cpu: '4' },
    ],
    ['an older spec', ['ns-a'], 1, { namespace: 'ns-a', selected: ['ns-a'] }, {}],
    ['no batch (the reconciler)', [], 2, undefined, { cpu: '4' }],
    // The view's last label change of a namespace against the namespace's version counted.
    [
      'counts made at the label change seen',
      ['ns-a@7'],
      2,
      { namespace: 'ns-a', selected: ['ns-a@7'] },
      { cpu: '4' },
    ],
    [
      'a count newer than the label change (as numbers)',
      ['ns-a@12'],
      2,
      { namespace: 'ns-a', selected: ['ns-a@9'] },
      { cpu: '4' },
    ],
    // It may have left and come back since: what was admitted there meanwhile is not in it.
    [
      'a count from before the label change seen',
      ['ns-a@7'],
      2,
      { namespace: 'ns-a', selected: ['ns-a@8'] },
      {},
    ],
    [
      'another namespace counted before its label change',
      ['ns-a@5', 'ns-b@3'],
      2,
      { namespace: 'ns-a', selected: ['ns-a@5', 'ns-b@4'] },
      {},
    ],
    [
      'a count naming no version (an older writer) after a label change seen',
      ['ns-a'],
      2,
      { namespace: 'ns-a', selected: ['ns-a@8'] },
      {},
    ],
  ])('knows its usage for %s', (_, counted, observed, batch, used) => {
    const quota = ckq({
      observedGeneration: observed,
      used: { cpu: '4' },
      namespaces: counted.map(versioned).map(({ name, version }) => ({
        namespace: name,
        ...(version ? { resourceVersion: version } : {}),
        used: { cpu: '4' },
      })),
    });
    expect(countedNamespaces(quota)).toEqual(
      new Map(counted.map(versioned).map(({ name, version }) => [name, version])),
    );
    const decodedFor = batch && {
      namespace: batch.namespace,
      selected: batch.selected && selection(batch.selected),
    };
    expect(formatList(parseQuotaState(quota, undefined, decodedFor).state.used)).toEqual(used);
  });
});

describe('a ClusterKarmadaQuota status', () => {
  const namespaces = (parts: Partial<NamespaceInput>[]): NamespaceInput[] =>
    parts.map((p, i) => ({ namespace: `ns-${'ab'[i]}`, bindings: [], clusters: [], ...p }));

  it("is changed when only a namespace's resourceVersion counted moved (a webhook waits on it)", () => {
    const at = (resourceVersion: string) =>
      computeQuotaStatus({ quota: ckq(), now: NOW, namespaces: namespaces([{ resourceVersion }]) }).status;
    const counted = { ...ckq(), status: at('41') };
    const recount = (resourceVersion: string) =>
      computeQuotaStatus({ quota: counted, now: NOW, namespaces: namespaces([{ resourceVersion }]) }).changed;
    expect(recount('41')).toBe(false);
    expect(recount('45')).toBe(true);
  });

  it.each<[string, (string | undefined)[], string | undefined, string | undefined]>([
    ["the oldest of the namespaces' lists", ['30', '12'], undefined, '12'],
    ['the oldest, never below the stamp before', ['30', '12'], '20', '20'],
    ["one namespace's list of unknown version keeps the stamp", ['30', undefined], '20', '20'],
    ['no namespace counted keeps the stamp', [], '20', '20'],
  ])("stamps %s as the count's version", (_, listed, previous, expected) => {
    const status = computeQuotaStatus({
      quota: ckq(previous === undefined ? {} : { observedBindingsVersion: previous }),
      now: NOW,
      namespaces: namespaces(listed.map((v) => (v === undefined ? {} : { bindingsVersion: v }))),
    }).status;
    expect(status.observedBindingsVersion).toBe(expected);
  });

  it.each<[string, string[], boolean]>([
    ['the oldest list later than the stamp: changed', ['30', '25'], true],
    ['one list later, the oldest at the stamp: not changed', ['30', '20'], false],
  ])('on a count on request (restamp), %s', (_, listed, changed) => {
    const count = (quota: KarmadaQuota, versions: string[], restamp: boolean) =>
      computeQuotaStatus({
        quota,
        now: NOW,
        namespaces: namespaces(versions.map((bindingsVersion) => ({ bindingsVersion }))),
        restamp,
      });
    const counted = { ...ckq(), status: count(ckq(), ['20', '20'], false).status };
    expect(count(counted, listed, true).changed).toBe(changed);
    expect(count(counted, listed, false).changed).toBe(false);
  });

  it('sums the namespaces it selects, member by member, and lists each', () => {
    const result = computeQuotaStatus({
      quota: ckq(),
      now: NOW,
      namespaces: namespaces([
        { bindings: [rb('ns-a', 'web', '2')], clusters: [usage('2', { web: '2' })], resourceVersion: '41' },
        {
          bindings: [rb('ns-b', 'web', '3', 2)],
          clusters: [usage('3', { web: '3' }, { lastSyncTime: '2026-11-29T09:59:50Z' })],
        },
      ]),
    });
    expect(result.errors).toEqual([]);
    expect(result.status.used).toEqual({ cpu: '5' });
    // ns-b's web is charged 6 (2 x 3) and runs 3: it reserves the rest.
    expect(result.status.reserved).toEqual({ cpu: '3' });
    expect(result.status.namespaces).toEqual([
      // The namespace's resourceVersion counted, when the reconciler's watch told it.
      { namespace: 'ns-a', resourceVersion: '41', used: { cpu: '2' }, reserved: { cpu: '0' } },
      { namespace: 'ns-b', used: { cpu: '3' }, reserved: { cpu: '3' } },
    ]);
    expect(result.status.clusters).toEqual([
      { name: 'member1', used: { cpu: '5' }, lastSyncTime: '2026-11-29T09:59:50Z', state: 'Ready' },
    ]);
  });

  it('settles each claim against the bindings of its own namespace', () => {
    const quota = ckq({ reservations: [claim('ns-a', 'web', '2'), claim('ns-b', 'web', '3')] });
    const result = computeQuotaStatus({
      quota,
      now: NOW,
      // ns-a's web is stored (its create landed: the claim retires); ns-b's is not yet.
      namespaces: namespaces([{ bindings: [rb('ns-a', 'web', '2')] }, {}]),
    });
    expect(result.status.reservations).toEqual([claim('ns-b', 'web', '3')]);
    // ns-a's stored web reserves its charge (nothing runs); ns-b's claim its own.
    expect(result.status.reserved).toEqual({ cpu: '5' });
    expect(result.changed).toBe(true);
  });

  it('keeps a pending claim of a namespace it no longer counts until it lapses, whole', () => {
    // The change may still land there, and the namespace be counted again before it does.
    const lapsed = { ...claim('ns-gone', 'old', '7'), expirationTime: '2026-11-29T09:59:00.000Z' };
    const quota = ckq({ reservations: [claim('ns-gone', 'api', '4'), lapsed] });
    const result = computeQuotaStatus({ quota, now: NOW, namespaces: namespaces([{}]) });
    expect(result.status.reservations).toEqual([claim('ns-gone', 'api', '4')]);
    expect(result.status.reserved).toEqual({ cpu: '4' });
    expect(result.status.namespaces?.map((n) => n.namespace)).toEqual(['ns-a']);
  });

  it('names the namespace of a binding running beyond its charge', () => {
    const result = computeQuotaStatus({
      quota: ckq(),
      now: NOW,
      namespaces: namespaces([
        {},
        { bindings: [rb('ns-b', 'web', '1')], clusters: [usage('3', { web: '3' })] },
      ]),
    });
    const beyond = result.status.conditions?.find((c) => c.type === 'RunningBeyondCharge');
    expect(beyond?.status).toBe('True');
    expect(beyond?.message).toMatch(/^ns-b\/web runs cpu=3 against a charge of cpu=1/);
  });

  it('names the namespace of a problem found in one', () => {
    const result = computeQuotaStatus({
      quota: ckq(),
      now: NOW,
      namespaces: namespaces([{}, { clusters: [usage('x', {})] }]),
    });
    expect(result.errors).toEqual([expect.stringMatching(/^namespace ns-b: clusters\[member1\]\.used/)]);
  });
});

describe('limitsNamespace', () => {
  const counting = ckq({ namespaces: [{ namespace: 'ns-a', used: { cpu: '1' } }] });
  it.each<[string, KarmadaQuota, string, Record<string, string>, boolean]>([
    ['a namespace its selector matches', ckq(), 'ns-b', { team: 'a' }, true],
    ['a namespace it neither selects nor counts', counting, 'ns-b', { team: 'b' }, false],
    // Leaving: limited until the reconciler counts it out, so no count a lagging view trusts misses it.
    ['a namespace that left its selector but its status still counts', counting, 'ns-a', {}, true],
    ['a namespace it selects and counts', counting, 'ns-a', { team: 'a' }, true],
  ])('%s', (_, quota, namespace, labels, limits) => {
    expect(limitsNamespace(quota, namespace, labels)).toBe(limits);
  });
});

describe('namespacesWaitingOn', () => {
  it('names each namespace of the waiting changes once', () => {
    const waiting = ['ns-a/web', 'ns-b/api', 'ns-a/batch'].map((binding) => ({
      binding,
      requested: {},
      free: {},
      since: SYNC,
    }));
    expect(namespacesWaitingOn(ckq({ waiting }))).toEqual(['ns-a', 'ns-b']);
    expect(namespacesWaitingOn(ckq())).toEqual([]);
  });
});
