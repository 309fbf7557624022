import type { AppliedClusterKarmadaQuota, KarmadaQuota, KarmadaQuotaStatus } from '#api';
import { appliedClusterQuota } from '#quota';
import { AppliedClusterQuotaWriter, REFRESH_MS, type AppliedAccess } from './applied-cluster-quotas.js';

const quota: KarmadaQuota = {
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'ClusterKarmadaQuota',
  metadata: { name: 'team', uid: 'uid-1' },
  spec: { hard: { cpu: '10' }, namespaceSelector: { matchLabels: { team: 'a' } } } as KarmadaQuota['spec'],
};

const status = (namespaces: string[], cpu = '1'): KarmadaQuotaStatus => ({
  hard: { cpu: '10' },
  used: { cpu },
  namespaces: namespaces.map((namespace) => ({ namespace, used: { cpu } })),
});

/** An API server holding projections, recording each call; `failing` namespaces refuse writes. */
function fakeServer(stored: AppliedClusterKarmadaQuota[] = []) {
  const objects = new Map(stored.map((a) => [a.metadata!.namespace!, a]));
  const calls: string[] = [];
  const failing = new Set<string>();
  let listFails = false;
  const access: AppliedAccess = {
    list: async (name) => {
      calls.push(`list ${name}`);
      if (listFails) throw new Error('forbidden');
      return [...objects.values()].filter((a) => a.metadata?.name === name);
    },
    apply: async (applied) => {
      const namespace = applied.metadata!.namespace!;
      calls.push(`apply ${namespace}`);
      if (failing.has(namespace)) throw new Error(`namespace ${namespace} is being terminated`);
      objects.set(namespace, structuredClone(applied));
    },
    delete: async (namespace) => {
      calls.push(`delete ${namespace}`);
      if (failing.has(namespace)) throw new Error('unavailable');
      objects.delete(namespace);
    },
  };
  return {
    access,
    objects,
    failing,
    failList: (fails: boolean) => (listFails = fails),
    /** The calls since the last take. */
    take: () => calls.splice(0).sort(),
  };
}

function setup(stored?: AppliedClusterKarmadaQuota[]) {
  const server = fakeServer(stored);
  const warnings: Record<string, unknown>[] = [];
  let now = 1_000_000;
  const writer = new AppliedClusterQuotaWriter(
    server.access,
    (fields) => warnings.push(fields),
    () => now,
  );
  return { server, warnings, writer, advance: (ms: number) => (now += ms) };
}

describe('AppliedClusterQuotaWriter', () => {
  it('writes a projection in each namespace counted, then only what changed', async () => {
    const { server, writer, warnings } = setup();
    await writer.sync('team', quota, status(['a', 'b']));
    expect(server.take()).toEqual(['apply a', 'apply b', 'list team']);
    expect(server.objects.get('a')).toEqual(appliedClusterQuota(quota, status(['a', 'b']), 'a'));

    await writer.sync('team', quota, status(['a', 'b']));
    expect(server.take()).toEqual([]);

    await writer.sync('team', quota, status(['a', 'b'], '2'));
    expect(server.take()).toEqual(['apply a', 'apply b']);
    expect(warnings).toEqual([]);
  });

  it('deletes the projection of a namespace no longer counted', async () => {
    const { server, writer } = setup();
    await writer.sync('team', quota, status(['a', 'b']));
    server.take();
    await writer.sync('team', quota, status(['a']));
    // a's line is unchanged: only b's projection goes.
    expect(server.take()).toEqual(['delete b']);
    expect([...server.objects.keys()]).toEqual(['a']);
  });

  it('deletes every projection once the quota is gone, and then forgets it', async () => {
    const { server, writer } = setup();
    await writer.sync('team', quota, status(['a', 'b']));
    server.take();
    await writer.sync('team', undefined, undefined);
    expect(server.take()).toEqual(['delete a', 'delete b']);
    expect(server.objects.size).toBe(0);
    await writer.sync('team', undefined, undefined);
    expect(server.take()).toEqual(['list team']);
  });

  it('after a restart, lists what is stored: rewrites nothing current, deletes what is left over', async () => {
    const stored = [
      appliedClusterQuota(quota, status(['a', 'b']), 'a'),
      appliedClusterQuota(quota, status(['a', 'b']), 'b'),
    ];
    // As the API server returns them: in its own key order.
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const { server, writer } = setup(stored.map((a) => reversed(a) as AppliedClusterKarmadaQuota));
    await writer.sync('team', quota, status(['a']));
    // a's line and the totals are as stored: only b's projection goes.
    expect(server.take()).toEqual(['delete b', 'list team']);
  });

  it('a write that fails is warned about and retried at the next sync; the others are written', async () => {
    const { server, writer, warnings } = setup();
    server.failing.add('b');
    await expect(writer.sync('team', quota, status(['a', 'b']))).resolves.toBeUndefined();
    expect(server.take()).toEqual(['apply a', 'apply b', 'list team']);
    expect(warnings).toEqual([
      expect.objectContaining({ clusterQuota: 'team', failed: 1, namespaces: 'b (write)' }),
    ]);
    server.failing.clear();
    await writer.sync('team', quota, status(['a', 'b']));
    expect(server.take()).toEqual(['apply b']);
    expect(server.objects.has('b')).toBe(true);
  });

  it('a delete that fails is retried at the next sync', async () => {
    const { server, writer, warnings } = setup();
    await writer.sync('team', quota, status(['a', 'b']));
    server.failing.add('b');
    server.take();
    await writer.sync('team', quota, status(['a']));
    expect(warnings).toEqual([expect.objectContaining({ namespaces: 'b (delete)' })]);
    server.failing.clear();
    await writer.sync('team', quota, status(['a']));
    expect(server.take()).toEqual(['delete b', 'delete b']);
  });

  it('a list that fails writes nothing, is warned about, and is retried at the next sync', async () => {
    const { server, writer, warnings } = setup();
    server.failList(true);
    await writer.sync('team', quota, status(['a']));
    expect(server.take()).toEqual(['list team']);
    expect(warnings).toEqual([expect.objectContaining({ clusterQuota: 'team', error: 'forbidden' })]);
    server.failList(false);
    await writer.sync('team', quota, status(['a']));
    expect(server.take()).toEqual(['apply a', 'list team']);
  });

  it('lists again after REFRESH_MS: a projection deleted meanwhile is written again', async () => {
    const { server, writer, advance } = setup();
    await writer.sync('team', quota, status(['a']));
    server.objects.delete('a'); // by someone else
    server.take();
    await writer.sync('team', quota, status(['a']));
    expect(server.take()).toEqual([]);
    advance(REFRESH_MS);
    await writer.sync('team', quota, status(['a']));
    expect(server.take()).toEqual(['apply a', 'list team']);
  });

  it('writes again when the quota was re-created (a new owner)', async () => {
    const { server, writer } = setup();
    await writer.sync('team', quota, status(['a']));
    server.take();
    const again = { ...quota, metadata: { ...quota.metadata, uid: 'uid-2' } };
    await writer.sync('team', again, status(['a']));
    expect(server.take()).toEqual(['apply a']);
    expect(server.objects.get('a')?.metadata?.ownerReferences?.[0]?.uid).toBe('uid-2');
  });
});
