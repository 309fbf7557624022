import type { KarmadaQuota } from '#api';
import { ConflictError } from '#service-kit';
import { reconcileQuotas, type BindingList, type ReconcileInput } from './reconcile-loop.js';

const quota = (resourceVersion: string): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'team-a', namespace: 'team-a', generation: 1, resourceVersion },
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
