import type { KarmadaQuota } from '#api';
import { ConflictError } from '#service-kit';
import {
  reconcileClusterQuota,
  reconcileQuotas,
  statusesCurrentIn,
  type BindingList,
  type ReconcileInput,
} from './reconcile-loop.js';

const quota = (resourceVersion: string): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'team-a', namespace: 'team-a', generation: 1, resourceVersion },
  spec: { hard: { cpu: '10' } },
});

const clusterQuota = (): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'ClusterKarmadaQuota',
  metadata: { name: 'org', generation: 1, resourceVersion: '100' },
  spec: { hard: { cpu: '10' } },
});

const input: ReconcileInput = {
  clusters: [],
  deletedBindingUids: new Set(),
  timing: { ttlSeconds: 120, landingWindowSeconds: 60 },
  maxConflictRetries: 3,
  waiting: [],
};

/** Runs one reconcile whose first `conflicts` writes meet 409; each list answers the next version. */
async function stamps(listVersions: (string | undefined)[], conflicts: number) {
  const lists = [...listVersions];
  const written: KarmadaQuota[] = [];
  let refused = 0;
  await reconcileQuotas(
    {
      getQuota: async () => quota(String(100 + refused)),
      listBindings: async (): Promise<BindingList> => ({ items: [], resourceVersion: lists.shift() }),
      writeStatus: async (q) => {
        if (refused++ < conflicts) throw new ConflictError('changed meanwhile');
        written.push(q);
        return q;
      },
      clock: () => Date.parse('2026-11-29T10:00:00Z'),
    },
    'team-a',
    [quota('100')],
    input,
    async () => {},
    () => {},
  );
  return written.map((q) => q.status?.observedBindingsVersion);
}

describe("reconcileQuotas: the count's version", () => {
  it.each<[string, (string | undefined)[], number, (string | undefined)[]]>([
    ['a write names the list counted', ['10'], 0, ['10']],
    ['after a conflict, the list made after the quota was read again', ['10', '15'], 1, ['15']],
    ['after two conflicts, the last list', ['10', '15', '21'], 2, ['21']],
    ['a list of unknown version stamps nothing', [undefined], 0, [undefined]],
  ])('%s', async (_, lists, conflicts, expected) => {
    expect(await stamps(lists, conflicts)).toEqual(expected);
  });
});

/** One reconcile of `start` against a list of version `listed`: the quotas it wrote. */
async function reconcileOnce(start: KarmadaQuota, listed: string, with_: Partial<ReconcileInput> = {}) {
  const written: KarmadaQuota[] = [];
  await reconcileQuotas(
    {
      getQuota: async () => start,
      listBindings: async (): Promise<BindingList> => ({ items: [], resourceVersion: listed }),
      writeStatus: async (q) => (written.push(q), q),
      clock: () => Date.parse('2026-11-29T10:00:00Z'),
    },
    'team-a',
    [start],
    { ...input, ...with_ },
    async () => {},
    () => {},
  );
  return written;
}

/** A ClusterKarmadaQuota over two namespaces listed at these versions: whether it was written. */
async function reconcileClusterOnce(start: KarmadaQuota, listed: [string, string], restamp = false) {
  const lists = new Map([
    ['ns-a', listed[0]],
    ['ns-b', listed[1]],
  ]);
  const written: KarmadaQuota[] = [];
  await reconcileClusterQuota(
    {
      getQuota: async () => start,
      selectedNamespaces: () => [{ name: 'ns-a' }, { name: 'ns-b' }],
      readNamespace: async (ns) => ({ bindings: { items: [], resourceVersion: lists.get(ns) }, input }),
      writeStatus: async (q) => (written.push(q), q),
      clock: () => Date.parse('2026-11-29T10:00:00Z'),
    },
    3,
    async () => {},
    () => {},
    { restamp },
  );
  return written;
}

describe('a count on request (restamp)', () => {
  const counted = async () => (await reconcileOnce(quota('100'), '20'))[0]!;

  it.each<[string, string, boolean | undefined, (string | undefined)[]]>([
    ['a later list is written for its stamp alone', '30', true, ['30']],
    ['the list already stamped writes nothing', '20', true, []],
    ["without restamp a later list writes nothing (today's rule)", '30', undefined, []],
  ])('%s', async (_, listed, restamp, expected) => {
    const written = await reconcileOnce(await counted(), listed, restamp === undefined ? {} : { restamp });
    expect(written.map((q) => q.status?.observedBindingsVersion)).toEqual(expected);
  });

  it.each<[string, boolean | undefined, boolean]>([
    ['a plain reconcile is done from the cache', undefined, true],
    ['a restamp is never done from the cache: it needs a list made after it', true, false],
  ])('statusesCurrentIn: %s', async (_, restamp, current) => {
    const view = { quotas: [await counted()], bindings: [] };
    const now = Date.parse('2026-11-29T10:00:00Z');
    expect(statusesCurrentIn(view, { ...input, ...(restamp === undefined ? {} : { restamp }) }, now)).toBe(
      current,
    );
  });

  it.each<[string, [string, string], boolean, (string | undefined)[]]>([
    ['the oldest list later than the stamp is written', ['30', '25'], true, ['25']],
    ['the oldest list at the stamp writes nothing', ['30', '20'], true, []],
    ['without restamp a later list writes nothing', ['30', '25'], false, []],
  ])('a ClusterKarmadaQuota: %s', async (_, listed, restamp, expected) => {
    const [first] = await reconcileClusterOnce(clusterQuota(), ['20', '20']);
    const written = await reconcileClusterOnce(first!, listed, restamp);
    expect(written.map((q) => q.status?.observedBindingsVersion)).toEqual(expected);
  });
});
