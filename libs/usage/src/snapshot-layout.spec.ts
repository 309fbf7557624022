import {
  CLUSTERS_KEY,
  clusterNamespacesKey,
  clusterRemovedKey,
  clusterRepublishKey,
  clusterStateKey,
  clusterUsageVerdict,
  decodeHealth,
  decodeReconcileJob,
  decodeSnapshot,
  encodeHealth,
  encodeSnapshot,
  nextGeneration,
  parseUsageKey,
  RECONCILE_QUEUE,
  RECONCILE_QUEUE_MARKER_KEY,
  RECONCILE_QUEUE_PREFIX,
  reconcileJobId,
  clusterQuotaJobOptions,
  reconcileJobOptions,
  requestCount,
  restampJobOptions,
  usageIndexKey,
  usageKey,
  type ClusterHealth,
  type ClusterNamespaceSnapshot,
  type ClusterRead,
  type ReconcileJob,
  type ReconcileJobOptions,
  deletedBindingsKey,
  templateClassField,
  templateClassKey,
  waitingAdmittedKey,
  waitingKey,
} from './index.js';

const snapshot: ClusterNamespaceSnapshot = {
  cluster: 'member-1',
  namespace: 'team-a',
  used: { cpu: '1200m', memory: '1280Mi', pods: '3', 'requests.nvidia.com/gpu': '2' },
  workloads: [
    { kind: 'Deployment', name: 'web', used: { cpu: '200m', pods: '2' } },
    { kind: 'Pod', name: 'debug', used: { pods: '1' } },
  ],
  observedAt: '2025-06-01T12:00:00.123Z',
  generation: 1748779200123,
  epoch: 1748779000000,
};

const health: ClusterHealth = {
  cluster: 'member-1',
  state: 'Stale',
  lastSyncTime: '2025-06-01T11:59:00Z',
  message: 'watch of pods failed: connection refused',
  epoch: 1748779000000,
};

describe('keys', () => {
  it('builds the documented keys', () => {
    expect(usageKey('team-a', 'member-1')).toBe('kq:usage:{team-a}:member-1');
    expect(usageIndexKey('team-a')).toBe('kq:usage-index:{team-a}');
    expect(clusterStateKey('member-1')).toBe('kq:cluster:{member-1}');
    expect(clusterNamespacesKey('member-1')).toBe('kq:cluster-namespaces:{member-1}');
    expect(clusterRepublishKey('member-1')).toBe('kq:cluster-republish:{member-1}');
    expect(clusterRemovedKey('member-1')).toBe('kq:cluster-removed:{member-1}');
    expect(CLUSTERS_KEY).toBe('kq:clusters');
    expect(RECONCILE_QUEUE_PREFIX).toBe('kq:{reconcile}');
    expect(RECONCILE_QUEUE_MARKER_KEY).toBe('kq:{reconcile}:queue-marker');
  });

  // Redis Cluster: what one script or MULTI touches must hash to one slot, so share one hash tag.
  const tag = (key: string): string | undefined => /\{([^}]*)\}/.exec(key)?.[1];
  it.each<[string, string[], string]>([
    [
      "a namespace's keys",
      [
        usageKey('team-a', 'm1'),
        usageKey('team-a', 'm2'),
        usageIndexKey('team-a'),
        deletedBindingsKey('team-a'),
        waitingKey('team-a'),
        waitingAdmittedKey('team-a', 'web'),
        templateClassKey('team-a'),
      ],
      'team-a',
    ],
    [
      "a cluster's keys",
      [clusterStateKey('m1'), clusterNamespacesKey('m1'), clusterRepublishKey('m1'), clusterRemovedKey('m1')],
      'm1',
    ],
    [
      'the queue and its marker',
      [`${RECONCILE_QUEUE_PREFIX}:${RECONCILE_QUEUE}:wait`, RECONCILE_QUEUE_MARKER_KEY],
      'reconcile',
    ],
  ])('puts %s in one slot', (_name, keys, expected) => {
    expect(keys.map(tag)).toEqual(keys.map(() => expected));
  });

  it.each([
    ['apps/v1', 'Deployment', 'apps/Deployment/web'],
    ['batch/v1', 'Job', 'batch/Job/web'],
    ['v1', 'Pod', '/Pod/web'],
  ])("names a %s %s template's memo field", (apiVersion, kind, expected) => {
    expect(templateClassField({ apiVersion, kind, name: 'web' })).toBe(expected);
  });

  const bad = ['', 'Team', 'a:b', 'a{b', 'a}b', '-a', 'a-', 'a b', 'a/b', 'x'.repeat(254)];
  it.each(bad)('rejects the name %p', (name) => {
    expect(() => usageKey(name, 'm')).toThrow(RangeError);
    expect(() => usageKey('ns', name)).toThrow(RangeError);
    expect(() => usageIndexKey(name)).toThrow(RangeError);
    expect(() => clusterStateKey(name)).toThrow(RangeError);
    expect(() => reconcileJobId(name)).toThrow(RangeError);
  });

  it('parses usage keys back', () => {
    expect(parseUsageKey(usageKey('team-a', 'member.eu-1'))).toEqual({
      namespace: 'team-a',
      cluster: 'member.eu-1',
    });
    for (const other of [
      'kq:usage-index:{a}',
      'kq:cluster:m',
      'kq:usage:{a}',
      'kq:usage:a:m',
      'kq:usage:{A}:m',
      'x',
    ]) {
      expect(parseUsageKey(other)).toBeUndefined();
    }
  });
});

describe('snapshots', () => {
  it('round-trip', () => {
    const text = encodeSnapshot(snapshot);
    expect(decodeSnapshot(text)).toEqual({ ok: true, value: snapshot });
    expect(decodeSnapshot(Buffer.from(text))).toEqual({ ok: true, value: snapshot });
    expect(decodeSnapshot(text, { cluster: 'member-1', namespace: 'team-a' })).toEqual({
      ok: true,
      value: snapshot,
    });
  });

  it("round-trips a workload's terminating pods, and refuses a terminating that is not true", () => {
    const leaving = {
      ...snapshot,
      workloads: [{ kind: 'Job', name: 'etl', terminating: true as const, used: { cpu: '1' } }],
    };
    expect(decodeSnapshot(encodeSnapshot(leaving))).toEqual({ ok: true, value: leaving });
    const text = encodeSnapshot(leaving).replace('"terminating":true', '"terminating":"yes"');
    expect(decodeSnapshot(text)).toEqual({
      ok: false,
      error: expect.stringContaining('workloads[0].terminating: must be true when present'),
    });
  });

  it('round-trips an empty snapshot', () => {
    const empty = { ...snapshot, used: {}, workloads: [], generation: 0 };
    expect(decodeSnapshot(encodeSnapshot(empty))).toEqual({ ok: true, value: empty });
  });

  it('encodes only the known fields, in a fixed order', () => {
    const extra = { ...snapshot, secret: 'x' } as ClusterNamespaceSnapshot;
    expect(Object.keys(JSON.parse(encodeSnapshot(extra)))).toEqual([
      'cluster',
      'namespace',
      'used',
      'workloads',
      'observedAt',
      'generation',
      'epoch',
    ]);
  });

  const json = (patch: Record<string, unknown>): string => JSON.stringify({ ...snapshot, ...patch });
  const malformed: [string, unknown, string][] = [
    ['null (missing key)', null, 'expected a JSON string, got null'],
    ['a number', 42, 'expected a JSON string, got number 42'],
    ['not JSON', '{"cluster":', 'not JSON'],
    ['a JSON list', '[]', 'must be a JSON object, got a list'],
    ['a JSON string', '"x"', 'must be a JSON object'],
    ['no cluster', json({ cluster: undefined }), 'cluster: must be a non-empty string, got nothing'],
    ['an empty namespace', json({ namespace: '' }), 'namespace: must be a non-empty string'],
    [
      'used not an object',
      json({ used: ['1'] }),
      'used: must be an object mapping resource names to quantities, got a list',
    ],
    ['a bad quantity', json({ used: { cpu: '1x' } }), 'used[cpu]: invalid quantity "1x"'],
    ['a number quantity', json({ used: { cpu: 1 } }), 'used[cpu]: must be a quantity string, got number 1'],
    ['workloads not a list', json({ workloads: {} }), 'workloads: must be a list, got an object'],
    ['a workload not an object', json({ workloads: [3] }), 'workloads[0]: must be an object, got number 3'],
    [
      'a workload without kind',
      json({ workloads: [{ name: 'w', used: {} }] }),
      'workloads[0].kind: must be a non-empty string',
    ],
    [
      'a bad workload quantity',
      json({ workloads: [{ kind: 'Pod', name: 'p', used: { pods: 'many' } }] }),
      'workloads[0].used[pods]: invalid quantity',
    ],
    [
      'observedAt not RFC 3339',
      json({ observedAt: '2025-06-01 12:00:00' }),
      'observedAt: must be an RFC 3339 time',
    ],
    [
      'observedAt impossible',
      json({ observedAt: '2025-13-45T99:00:00Z' }),
      'observedAt: must be an RFC 3339 time',
    ],
    [
      'generation negative',
      json({ generation: -1 }),
      'generation: must be a whole number of 0 or more, got number -1',
    ],
    ['generation fractional', json({ generation: 1.5 }), 'generation: must be a whole number'],
    [
      'generation a string',
      json({ generation: '7' }),
      'generation: must be a whole number of 0 or more, got string "7"',
    ],
  ];
  it.each(malformed)('reports %s', (_name, raw, message) => {
    const decoded = decodeSnapshot(raw);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) {
      expect(decoded.error).toMatch(/^invalid usage snapshot: /);
      expect(decoded.error).toContain(message);
    }
  });

  it('reports every problem at once', () => {
    const decoded = decodeSnapshot(JSON.stringify({ used: {}, workloads: [] }));
    expect(decoded).toEqual({
      ok: false,
      error:
        'invalid usage snapshot: cluster: must be a non-empty string, got nothing; namespace: must be a non-empty string, got nothing; observedAt: must be an RFC 3339 time, got nothing; generation: must be a whole number of 0 or more, got nothing; epoch: must be a whole number of 0 or more, got nothing',
    });
  });

  it('checks the cluster and namespace the key names', () => {
    const decoded = decodeSnapshot(encodeSnapshot(snapshot), { cluster: 'member-2', namespace: 'team-b' });
    expect(decoded).toEqual({
      ok: false,
      error:
        'invalid usage snapshot: cluster: expected "member-2", got "member-1"; namespace: expected "team-b", got "team-a"',
    });
  });

  it('keeps a resource named __proto__ as data', () => {
    const decoded = decodeSnapshot(
      '{"cluster":"c","namespace":"n","used":{"__proto__":"1"},"workloads":[],"observedAt":"2025-01-01T00:00:00Z","generation":1,"epoch":1}',
    );
    expect(decoded.ok && Object.keys(decoded.value.used)).toEqual(['__proto__']);
  });
});

describe('cluster health', () => {
  it('round-trips with and without a message', () => {
    expect(decodeHealth(encodeHealth(health))).toEqual({ ok: true, value: health });
    const ready: ClusterHealth = {
      cluster: 'm',
      state: 'Ready',
      lastSyncTime: '2025-06-01T12:00:00+02:00',
      epoch: 7,
    };
    expect(encodeHealth(ready)).toBe(
      '{"cluster":"m","state":"Ready","lastSyncTime":"2025-06-01T12:00:00+02:00","epoch":7}',
    );
    expect(decodeHealth(encodeHealth(ready), { cluster: 'm' })).toEqual({ ok: true, value: ready });
  });

  const json = (patch: Record<string, unknown>): string => JSON.stringify({ ...health, ...patch });
  const malformed: [string, unknown, string][] = [
    ['undefined', undefined, 'expected a JSON string, got nothing'],
    ['garbage', 'nope', 'not JSON'],
    [
      'an unknown state',
      json({ state: 'Gone' }),
      'state: must be one of Ready, Stale, Unreachable, got string "Gone"',
    ],
    [
      'no lastSyncTime',
      json({ lastSyncTime: undefined }),
      'lastSyncTime: must be an RFC 3339 time, got nothing',
    ],
    ['a message not a string', json({ message: 3 }), 'message: must be a string, got number 3'],
    ['no epoch', json({ epoch: undefined }), 'epoch: must be a whole number of 0 or more, got nothing'],
    ['another cluster', json({ cluster: 'other' }), 'cluster: expected "member-1", got "other"'],
  ];
  it.each(malformed)('reports %s', (_name, raw, message) => {
    const decoded = decodeHealth(raw, { cluster: 'member-1' });
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) {
      expect(decoded.error).toMatch(/^invalid cluster health: /);
      expect(decoded.error).toContain(message);
    }
  });
});

describe('reconcile queue', () => {
  it('names the queue and one deduplication id per namespace', () => {
    expect(RECONCILE_QUEUE).toBe('kq-reconcile');
    expect(reconcileJobId('team-a')).toBe('reconcile-team-a');
    expect(reconcileJobId('team-a')).not.toContain(':');
    expect(reconcileJobOptions('team-a')).toEqual({
      deduplication: { id: 'reconcile-team-a', keepLastIfActive: true },
      attempts: 8,
      backoff: { type: 'exponential', delay: 200 },
      removeOnComplete: true,
      removeOnFail: 1000,
    });
  });

  it.each<[string, Parameters<typeof restampJobOptions>[0], string]>([
    ["a namespace's", { namespace: 'team-a' }, 'restamp-team-a'],
    ["a ClusterKarmadaQuota's", { clusterQuota: 'org' }, 'restamp-cluster-quota.org'],
  ])("a count on request has an id of its own: %s never waits behind a plain job's", (_, target, id) => {
    const plain =
      'namespace' in target
        ? reconcileJobOptions(target.namespace)
        : clusterQuotaJobOptions(target.clusterQuota);
    expect(restampJobOptions(target)).toEqual({ ...plain, deduplication: { id, keepLastIfActive: true } });
    expect(plain.deduplication.id).not.toBe(id);
  });

  it('a count on request of a bad name throws', () => {
    expect(() => restampJobOptions({ namespace: 'Team A' })).toThrow('namespace must be a DNS-1123 name');
  });

  it('requestCount adds one restamp job under its own id', async () => {
    const added: [string, ReconcileJob, ReconcileJobOptions][] = [];
    const queue = { add: async (...call: [string, ReconcileJob, ReconcileJobOptions]) => added.push(call) };
    await requestCount(queue, { clusterQuota: 'org' }, 'owner takeover');
    expect(added).toEqual([
      [
        'reconcile',
        { clusterQuota: 'org', reason: 'owner takeover', restamp: true },
        restampJobOptions({ clusterQuota: 'org' }),
      ],
    ]);
  });

  const jobs: [string, unknown, string | undefined][] = [
    ['a valid job', { namespace: 'team-a', reason: 'usage member-1' }, undefined],
    ['an empty reason', { namespace: 'team-a', reason: '' }, undefined],
    ['a count on request', { namespace: 'team-a', reason: 'owner', restamp: true }, undefined],
    [
      "a ClusterKarmadaQuota's count on request",
      { clusterQuota: 'org', reason: 'x', restamp: true },
      undefined,
    ],
    [
      'restamp false',
      { namespace: 'a', reason: 'x', restamp: false },
      'invalid reconcile job: restamp: must be true when present (a count on request), got boolean false',
    ],
    [
      'restamp as a string',
      { namespace: 'a', reason: 'x', restamp: 'true' },
      'invalid reconcile job: restamp: must be true when present (a count on request), got string "true"',
    ],
    ['not an object', 'team-a', 'invalid reconcile job: must be an object, got string "team-a"'],
    [
      'no namespace',
      { reason: 'x' },
      'invalid reconcile job: namespace: must be a non-empty string, got nothing',
    ],
    [
      'a bad namespace',
      { namespace: 'Team A', reason: 'x' },
      'invalid reconcile job: namespace: must be a DNS-1123 name, got "Team A"',
    ],
    ['no reason', { namespace: 'a' }, 'invalid reconcile job: reason: must be a string, got nothing'],
  ];
  it.each(jobs)('decodes %s', (_name, data, error) => {
    const decoded = decodeReconcileJob(data);
    if (error === undefined) expect(decoded).toEqual({ ok: true, value: data });
    else expect(decoded).toEqual({ ok: false, error });
  });
});

describe('nextGeneration', () => {
  const cases: [number | undefined, number, number][] = [
    [undefined, 1_700_000_000_000, 1_700_000_000_000],
    [1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001],
    [5, 1_700_000_000_000, 1_700_000_000_000],
    [1_800_000_000_000, 1_700_000_000_000, 1_800_000_000_001],
    [undefined, 0, 1],
    [undefined, 12.7, 12],
  ];
  it.each(cases)('after %p at %p -> %p', (previous, now, expected) => {
    expect(nextGeneration(previous, now)).toBe(expected);
  });
});

describe('clusterUsageVerdict', () => {
  const E = health.epoch;
  const state = (epoch = E) => encodeHealth({ ...health, epoch });
  const snap = (epoch = E) => encodeSnapshot({ ...snapshot, epoch });
  const read = (patch: Partial<ClusterRead>): ClusterRead => ({
    state: null,
    listed: false,
    removed: false,
    snapshot: null,
    ...patch,
  });
  it.each<[string, ClusterRead, boolean, 'usage' | 'none' | 'unknown', number | undefined]>([
    [
      'a snapshot of the epoch: its usage',
      read({ state: state(), listed: true, snapshot: snap() }),
      true,
      'usage',
      undefined,
    ],
    [
      'a snapshot of a later epoch (a republish under way)',
      read({ state: state(), snapshot: snap(E + 5) }),
      true,
      'usage',
      undefined,
    ],
    [
      'a leftover of an earlier epoch, not listed: nothing here',
      read({ state: state(), snapshot: snap(E - 1) }),
      true,
      'none',
      undefined,
    ],
    ['no snapshot, not listed: nothing here', read({ state: state() }), true, 'none', undefined],
    [
      'listed but its slot lost it, counted: unknown, republish',
      read({ state: state(), listed: true }),
      true,
      'unknown',
      E,
    ],
    [
      'listed but its slot lost it, not counted: nothing yet, republish',
      read({ state: state(), listed: true }),
      false,
      'none',
      E,
    ],
    [
      'listed, only a leftover: lost, republish',
      read({ state: state(), listed: true, snapshot: snap(E - 1) }),
      true,
      'unknown',
      E,
    ],
    ['no state key, counted: Redis lost it', read({ snapshot: snap() }), true, 'unknown', undefined],
    ['no state key, not counted: not published yet', read({ snapshot: snap() }), false, 'none', undefined],
    ['no state key, removed: withdrawn', read({ removed: true }), true, 'none', undefined],
  ])('%s', (_name, input, counted, verdict, republish) => {
    const found = clusterUsageVerdict('team-a', 'member-1', input, counted);
    expect(found.verdict).toBe(verdict);
    expect(found.republish).toBe(republish);
    expect(found.errors).toEqual([]);
    if (verdict === 'usage') expect(found.snapshot?.used).toEqual(snapshot.used);
  });

  it('reports malformed entries: a bad snapshot counts nothing, a bad state key keeps the snapshot', () => {
    const badSnapshot = clusterUsageVerdict(
      'team-a',
      'member-1',
      read({ state: state(), snapshot: '{' }),
      true,
    );
    expect(badSnapshot.verdict).toBe('none');
    expect(badSnapshot.errors).toEqual([
      expect.stringMatching(/^usage of member-1: invalid usage snapshot: not JSON/),
    ]);
    const badState = clusterUsageVerdict('team-a', 'member-1', read({ state: '[]', snapshot: snap() }), true);
    expect(badState.verdict).toBe('usage');
    expect(badState.health).toBeUndefined();
    expect(badState.errors).toEqual([expect.stringMatching(/^health of member-1: invalid cluster health/)]);
  });

  it('checks that the snapshot is of the namespace and cluster read', () => {
    const other = clusterUsageVerdict('team-b', 'member-1', read({ state: state(), snapshot: snap() }), true);
    expect(other.verdict).toBe('none');
    expect(other.errors[0]).toContain('namespace: expected "team-b", got "team-a"');
  });
});
