import { Quantity } from '#quantity';
import { UsageLedger, type PodUsage, type WorkloadRef } from './index.js';

const usage = (workload: WorkloadRef, requests: Record<string, string>): PodUsage => ({
  workload,
  requests: Object.fromEntries(
    Object.entries({ pods: '1', ...requests }).map(([k, v]) => [k, Quantity.parse(v)]),
  ),
});

const web: WorkloadRef = { kind: 'Deployment', name: 'web' };
const webRs: WorkloadRef = { kind: 'ReplicaSet', name: 'web-7d9f' };
const db: WorkloadRef = { kind: 'StatefulSet', name: 'db' };
/** The used list without memory and the `requests.` names, to keep tables short. */
const withoutRequests = (used: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(used).filter(([k]) => k !== 'memory' && !k.startsWith('requests.')));
const small = { cpu: '100m', 'requests.cpu': '100m', memory: '128Mi', 'requests.memory': '128Mi' };
const large = { cpu: '1', 'requests.cpu': '1', memory: '1Gi', 'requests.memory': '1Gi' };

describe('UsageLedger', () => {
  it('is empty at first', () => {
    const ledger = new UsageLedger();
    expect(ledger.namespaces()).toEqual([]);
    expect(ledger.dirtyNamespaces()).toEqual([]);
    expect(ledger.trackedPods()).toBe(0);
    expect(ledger.snapshot('nope')).toEqual({ used: {}, workloads: [] });
  });

  it('adds pods per namespace and per workload', () => {
    const ledger = new UsageLedger();
    expect(ledger.upsertPod('a', 'u1', usage(web, small))).toBe(true);
    expect(ledger.upsertPod('a', 'u2', usage(web, small))).toBe(true);
    expect(ledger.upsertPod('a', 'u3', usage(db, large))).toBe(true);
    expect(ledger.upsertPod('b', 'u4', usage(web, small))).toBe(true);
    expect(ledger.trackedPods()).toBe(4);
    expect(ledger.namespaces()).toEqual(['a', 'b']);
    expect(ledger.snapshot('a')).toEqual({
      used: {
        cpu: '1200m',
        memory: '1280Mi',
        pods: '3',
        'requests.cpu': '1200m',
        'requests.memory': '1280Mi',
      },
      workloads: [
        {
          kind: 'Deployment',
          name: 'web',
          used: {
            cpu: '200m',
            memory: '256Mi',
            pods: '2',
            'requests.cpu': '200m',
            'requests.memory': '256Mi',
          },
        },
        {
          kind: 'StatefulSet',
          name: 'db',
          used: { cpu: '1', memory: '1Gi', pods: '1', 'requests.cpu': '1', 'requests.memory': '1Gi' },
        },
      ],
    });
    expect(ledger.snapshot('b').used.pods).toBe('1');
    // two distinct vectors (small, large) shared by four pods; workloads interned per namespace
    expect(ledger.stats()).toEqual({ pods: 4, namespaces: 2, workloads: 3, vectors: 2 });
  });

  const updates: [string, PodUsage, PodUsage, boolean, Record<string, string>][] = [
    [
      'the same usage again is a no-op',
      usage(web, small),
      usage(web, small),
      false,
      { cpu: '100m', pods: '1' },
    ],
    [
      'equal values in another spelling are a no-op',
      usage(web, { cpu: '1' }),
      usage(web, { cpu: '1000m' }),
      false,
      { cpu: '1', pods: '1' },
    ],
    [
      'new requests replace the old ones',
      usage(web, small),
      usage(web, large),
      true,
      { cpu: '1', pods: '1' },
    ],
    ['requests can disappear', usage(web, { cpu: '1', memory: '1Gi' }), usage(web, {}), true, { pods: '1' }],
  ];
  it.each(updates)('upsert: %s', (_name, first, second, changed, expected) => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', first);
    ledger.clearDirty();
    expect(ledger.upsertPod('a', 'u1', second)).toBe(changed);
    expect(ledger.dirtyNamespaces()).toEqual(changed ? ['a'] : []);
    expect(ledger.trackedPods()).toBe(1);
    const used = ledger.snapshot('a').used;
    for (const [k, v] of Object.entries(expected)) expect(used[k]).toBe(v);
  });

  it('moves a pod to another workload (owner resolved later)', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', usage(webRs, small));
    ledger.upsertPod('a', 'u2', usage(webRs, small));
    ledger.clearDirty();
    expect(ledger.upsertPod('a', 'u1', usage(web, small))).toBe(true);
    const snap = ledger.snapshot('a');
    expect(snap.used.pods).toBe('2');
    expect(snap.workloads.map((w) => [w.kind, w.name, w.used.pods])).toEqual([
      ['Deployment', 'web', '1'],
      ['ReplicaSet', 'web-7d9f', '1'],
    ]);
    // totals net to the same, yet the namespace is dirty (documented)
    expect(ledger.dirtyNamespaces()).toEqual(['a']);
    ledger.upsertPod('a', 'u2', usage(web, small));
    expect(ledger.snapshot('a').workloads.map((w) => w.name)).toEqual(['web']);
    expect(ledger.stats().workloads).toBe(1);
  });

  it("keeps a workload's terminating pods apart, and moves a pod there when its deletion begins", () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', usage(web, large));
    ledger.upsertPod('a', 'u2', usage(web, large));
    ledger.clearDirty();
    expect(ledger.upsertPod('a', 'u1', usage({ ...web, terminating: true }, large))).toBe(true);
    const snap = ledger.snapshot('a');
    expect(snap.used.cpu).toBe('2');
    expect(snap.workloads.map((w) => [w.kind, w.name, w.terminating, w.used.cpu])).toEqual([
      ['Deployment', 'web', undefined, '1'],
      ['Deployment', 'web', true, '1'],
    ]);
    expect(ledger.dirtyNamespaces()).toEqual(['a']);
    // A reattribution of the workload's own name leaves its terminating pods where they are.
    ledger.upsertPod('a', 'u3', usage(webRs, large));
    ledger.reattribute('a', webRs, web);
    expect(ledger.snapshot('a').workloads.map((w) => [w.name, w.terminating, w.used.cpu])).toEqual([
      ['web', undefined, '2'],
      ['web', true, '1'],
    ]);
  });

  it('moves one pod to another workload, keeping its requests (setPodWorkload)', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', usage(web, small));
    ledger.upsertPod('a', 'u2', usage(web, large));
    ledger.clearDirty();
    const previous: WorkloadRef = { ...web, terminating: true };
    expect(ledger.setPodWorkload('a', 'u2', previous)).toBe(true);
    expect(ledger.dirtyNamespaces()).toEqual(['a']);
    expect(ledger.setPodWorkload('a', 'u2', previous)).toBe(false);
    expect(ledger.setPodWorkload('a', 'nope', previous)).toBe(false);
    expect(ledger.setPodWorkload('b', 'u1', previous)).toBe(false);
    const snap = ledger.snapshot('a');
    expect(withoutRequests(snap.used)).toEqual({ cpu: '1100m', pods: '2' });
    expect(snap.workloads.map((w) => [w.kind, w.name, w.terminating, withoutRequests(w.used)])).toEqual([
      ['Deployment', 'web', undefined, { cpu: '100m', pods: '1' }],
      ['Deployment', 'web', true, { cpu: '1', pods: '1' }],
    ]);
    // back, and the emptied workload goes
    expect(ledger.setPodWorkload('a', 'u2', web)).toBe(true);
    expect(ledger.snapshot('a').workloads.map((w) => [w.kind, w.name, w.terminating])).toEqual([
      ['Deployment', 'web', undefined],
    ]);
    expect(ledger.trackedPods()).toBe(2);
  });

  it('moves a pod to another workload and vector at once', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', usage(webRs, small));
    ledger.upsertPod('a', 'u1', usage(db, large));
    expect(ledger.snapshot('a')).toEqual({
      used: { cpu: '1', memory: '1Gi', pods: '1', 'requests.cpu': '1', 'requests.memory': '1Gi' },
      workloads: [
        {
          kind: 'StatefulSet',
          name: 'db',
          used: { cpu: '1', memory: '1Gi', pods: '1', 'requests.cpu': '1', 'requests.memory': '1Gi' },
        },
      ],
    });
    expect(ledger.stats()).toEqual({ pods: 1, namespaces: 1, workloads: 1, vectors: 1 });
  });

  it('deletes idempotently, and upsert(undefined) deletes', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'u1', usage(web, small));
    ledger.upsertPod('a', 'u2', usage(web, small));
    ledger.clearDirty();
    expect(ledger.deletePod('a', 'u1')).toBe(true);
    expect(ledger.deletePod('a', 'u1')).toBe(false);
    expect(ledger.deletePod('b', 'u2')).toBe(false);
    expect(ledger.deletePod('a', 'nope')).toBe(false);
    expect(ledger.snapshot('a').used.pods).toBe('1');
    expect(ledger.upsertPod('a', 'u2', undefined)).toBe(true);
    expect(ledger.upsertPod('a', 'u2', undefined)).toBe(false);
    expect(ledger.trackedPods()).toBe(0);
    expect(ledger.namespaces()).toEqual([]);
    // the emptied namespace is dirty so its empty snapshot gets published
    expect(ledger.dirtyNamespaces()).toEqual(['a']);
    expect(ledger.snapshot('a')).toEqual({ used: {}, workloads: [] });
    expect(ledger.stats()).toEqual({ pods: 0, namespaces: 0, workloads: 0, vectors: 0 });
  });

  it('keys pods by namespace and uid', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod('a', 'same', usage(web, small));
    ledger.upsertPod('b', 'same', usage(web, large));
    expect(ledger.trackedPods()).toBe(2);
    ledger.deletePod('a', 'same');
    expect(ledger.snapshot('b').used.cpu).toBe('1');
  });

  it('reuses freed slots, workloads and vectors', () => {
    const ledger = new UsageLedger();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3000; i++)
        ledger.upsertPod('a', `u${i}`, usage({ kind: 'Job', name: `j${i % 7}` }, { cpu: `${(i % 5) + 1}` }));
      expect(ledger.snapshot('a').used).toEqual({ cpu: '9k', pods: '3k' });
      for (let i = 0; i < 3000; i++) ledger.deletePod('a', `u${i}`);
      expect(ledger.stats()).toEqual({ pods: 0, namespaces: 0, workloads: 0, vectors: 0 });
    }
  });

  it('omits zero totals and prints byte resources in their shortest canonical form', () => {
    const ledger = new UsageLedger();
    ledger.upsertPod(
      'a',
      'u1',
      usage(web, { cpu: '0', memory: '1Gi', 'ephemeral-storage': '1G', 'hugepages-2Mi': '2Mi' }),
    );
    ledger.upsertPod(
      'a',
      'u2',
      usage(web, { memory: '1Gi', 'ephemeral-storage': '500M', 'requests.memory': '1000M' }),
    );
    ledger.upsertPod('a', 'u3', usage(db, { 'nvidia.com/gpu': '1024' }));
    expect(ledger.snapshot('a').used).toEqual({
      'ephemeral-storage': '1500M',
      'hugepages-2Mi': '2Mi',
      memory: '2Gi',
      'nvidia.com/gpu': '1024',
      pods: '3',
      'requests.memory': '1G',
    });
  });

  it('keeps totals exact far beyond 64 bits', () => {
    const ledger = new UsageLedger();
    for (let i = 0; i < 100; i++) ledger.upsertPod('a', `u${i}`, usage(web, { memory: '4Ei', cpu: '1n' }));
    expect(ledger.snapshot('a').used).toEqual({ cpu: '100n', memory: '400Ei', pods: '100' });
  });

  describe('reattribute', () => {
    const svc: WorkloadRef = { kind: 'Service', name: 'web' };
    const rollout: WorkloadRef = { kind: 'Rollout', name: 'canary' };
    const flink: WorkloadRef = { kind: 'FlinkDeployment', name: 'job' };
    const jobDeployment: WorkloadRef = { kind: 'Deployment', name: 'job' };

    /**
     * [what arrived late, pods as [uid, workload, requests], objects as [resource, uid, workload],
     *  reattributions as [from, to], expected workloads as `kind/name used`]
     */
    const cases: [
      string,
      [string, WorkloadRef, Record<string, string>][],
      [string, string, WorkloadRef][],
      [WorkloadRef, WorkloadRef][],
      string[],
    ][] = [
      [
        "a ReplicaSet: its pods move to its Deployment, the Deployment's own count stays",
        [
          ['u1', webRs, small],
          ['u2', webRs, large],
          ['u3', web, small], // already known as the Deployment's
          ['u4', db, small],
        ],
        [['count/deployments.apps', 'd1', web]],
        [[webRs, web]],
        [
          'Deployment/web {"count/deployments.apps":"1","cpu":"1200m","pods":"3"}',
          'StatefulSet/db {"cpu":"100m","pods":"1"}',
        ],
      ],
      [
        'a ReplicaSet owned by an Argo Rollout',
        [['u1', { kind: 'ReplicaSet', name: 'canary-1' }, small]],
        [['count/replicasets.apps', 'r1', { kind: 'ReplicaSet', name: 'canary-1' }]],
        [[{ kind: 'ReplicaSet', name: 'canary-1' }, rollout]],
        ['Rollout/canary {"count/replicasets.apps":"1","cpu":"100m","pods":"1"}'],
      ],
      [
        "an operator's Deployment after its ReplicaSet: everything moves up twice",
        [['u1', { kind: 'ReplicaSet', name: 'job-1' }, small]],
        [
          ['count/deployments.apps', 'd1', jobDeployment],
          ['services', 's1', flink],
        ],
        [
          [{ kind: 'ReplicaSet', name: 'job-1' }, jobDeployment],
          [jobDeployment, flink],
        ],
        ['FlinkDeployment/job {"count/deployments.apps":"1","cpu":"100m","pods":"1","services":"1"}'],
      ],
      [
        'objects only, among others of the same resource',
        [],
        [
          ['services', 's1', svc],
          ['services', 's2', { kind: 'Service', name: 'other' }],
          ['configmaps', 'c1', svc],
        ],
        [[svc, flink]],
        ['FlinkDeployment/job {"configmaps":"1","services":"1"}', 'Service/other {"services":"1"}'],
      ],
    ];
    it.each(cases)('%s', (_what, pods, objects, moves, expected) => {
      const ledger = new UsageLedger();
      for (const [uid, workload, requests] of pods) ledger.upsertPod('a', uid, usage(workload, requests));
      for (const [resource, uid, workload] of objects) ledger.upsertObject('a', resource, uid, workload);
      const before = ledger.snapshot('a').used;
      ledger.clearDirty();

      for (const [from, to] of moves) expect(ledger.reattribute('a', from, to)).toBe(true);
      expect(ledger.dirtyNamespaces()).toEqual(['a']);
      const after = ledger.snapshot('a');
      expect(after.used).toEqual(before);
      expect(
        after.workloads.map((w) => `${w.kind}/${w.name} ${JSON.stringify(withoutRequests(w.used))}`),
      ).toEqual(expected);
      expect(ledger.stats().workloads).toBe(expected.length);
    });

    it('keeps counting what moved: deletes and updates after a move', () => {
      const ledger = new UsageLedger();
      ledger.upsertPod('a', 'u1', usage(webRs, small));
      ledger.upsertPod('a', 'u2', usage(webRs, small));
      ledger.upsertObject('a', 'count/replicasets.apps', 'r1', webRs);
      ledger.reattribute('a', webRs, web);
      expect(ledger.upsertObject('a', 'count/replicasets.apps', 'r1', web)).toBe(false);
      expect(ledger.deletePod('a', 'u2')).toBe(true);
      expect(ledger.deleteObject('a', 'count/replicasets.apps', 'r1')).toBe(true);
      expect(ledger.snapshot('a').workloads).toEqual([
        {
          kind: 'Deployment',
          name: 'web',
          used: {
            cpu: '100m',
            memory: '128Mi',
            pods: '1',
            'requests.cpu': '100m',
            'requests.memory': '128Mi',
          },
        },
      ]);
    });

    it.each([
      ['nothing counted under that workload', 'a', { kind: 'ReplicaSet', name: 'other' }],
      ['an unknown namespace', 'b', webRs],
      ['the same workload', 'a', web],
    ])('changes nothing for %s', (_, namespace, from) => {
      const ledger = new UsageLedger();
      ledger.upsertPod('a', 'u1', usage(web, small));
      ledger.upsertObject('a', 'services', 's1', web);
      ledger.clearDirty();
      expect(ledger.reattribute(namespace, from, web)).toBe(false);
      expect(ledger.dirtyNamespaces()).toEqual([]);
      expect(ledger.stats()).toMatchObject({ pods: 1, workloads: 1 });
    });
  });

  describe('object counts', () => {
    const svcA: WorkloadRef = { kind: 'Service', name: 'a' };
    const svcB: WorkloadRef = { kind: 'Service', name: 'b' };

    it('counts objects per resource name and per workload, idempotently', () => {
      const ledger = new UsageLedger();
      expect(ledger.upsertObject('a', 'services', 's1', svcA)).toBe(true);
      expect(ledger.upsertObject('a', 'services', 's1', svcA)).toBe(false);
      expect(ledger.upsertObject('a', 'services', 's2', svcB)).toBe(true);
      expect(ledger.upsertObject('a', 'count/deployments.apps', 'd1', web)).toBe(true);
      ledger.upsertPod('a', 'u1', usage(web, { cpu: '1' }));
      expect(ledger.snapshot('a')).toEqual({
        used: { 'count/deployments.apps': '1', cpu: '1', pods: '1', services: '2' },
        workloads: [
          { kind: 'Deployment', name: 'web', used: { 'count/deployments.apps': '1', cpu: '1', pods: '1' } },
          { kind: 'Service', name: 'a', used: { services: '1' } },
          { kind: 'Service', name: 'b', used: { services: '1' } },
        ],
      });
      ledger.clearDirty();
      expect(ledger.deleteObject('a', 'services', 's1')).toBe(true);
      expect(ledger.deleteObject('a', 'services', 's1')).toBe(false);
      expect(ledger.deleteObject('a', 'configmaps', 'c1')).toBe(false);
      expect(ledger.deleteObject('zz', 'configmaps', 'c1')).toBe(false);
      expect(ledger.dirtyNamespaces()).toEqual(['a']);
      expect(ledger.snapshot('a').used.services).toBe('1');
      expect(ledger.snapshot('a').workloads.map((w) => `${w.kind}/${w.name}`)).toEqual([
        'Deployment/web',
        'Service/b',
      ]);
    });

    /** [what, workload before, workload after, changed] */
    const moves: [string, WorkloadRef, WorkloadRef, boolean][] = [
      ['the same workload', svcA, svcA, false],
      ['an owner now known', svcA, web, true],
    ];
    it.each(moves)('an upsert under %s', (_what, before, after, changed) => {
      const ledger = new UsageLedger();
      ledger.upsertObject('a', 'services', 's1', before);
      ledger.clearDirty();
      expect(ledger.upsertObject('a', 'services', 's1', after)).toBe(changed);
      expect(ledger.dirtyNamespaces()).toEqual(changed ? ['a'] : []);
      expect(ledger.snapshot('a').workloads).toEqual([{ ...after, used: { services: '1' } }]);
      expect(ledger.stats().workloads).toBe(1);
    });

    it('counts one object under several keys (services and count/services)', () => {
      const ledger = new UsageLedger();
      ledger.upsertObject('a', 'services', 's1', svcA);
      ledger.upsertObject('a', 'count/services', 's1', svcA);
      expect(ledger.snapshot('a').workloads).toEqual([
        { kind: 'Service', name: 'a', used: { 'count/services': '1', services: '1' } },
      ]);
      ledger.deleteObject('a', 'services', 's1');
      expect(ledger.snapshot('a').workloads).toEqual([
        { kind: 'Service', name: 'a', used: { 'count/services': '1' } },
      ]);
    });

    it('keeps a namespace with only objects, and drops it and its workloads when they go', () => {
      const ledger = new UsageLedger();
      ledger.upsertObject('a', 'secrets', 's1', { kind: 'Secret', name: 's' });
      expect(ledger.namespaces()).toEqual(['a']);
      expect(ledger.snapshot('a')).toEqual({
        used: { secrets: '1' },
        workloads: [{ kind: 'Secret', name: 's', used: { secrets: '1' } }],
      });
      ledger.deleteObject('a', 'secrets', 's1');
      expect(ledger.namespaces()).toEqual([]);
      expect(ledger.stats().workloads).toBe(0);
    });

    it('keeps a workload while a pod or an object is left in it', () => {
      const ledger = new UsageLedger();
      ledger.upsertPod('a', 'u1', usage(web, small));
      ledger.upsertObject('a', 'count/deployments.apps', 'd1', web);
      ledger.deletePod('a', 'u1');
      expect(ledger.snapshot('a').workloads).toEqual([
        { kind: 'Deployment', name: 'web', used: { 'count/deployments.apps': '1' } },
      ]);
      ledger.upsertPod('a', 'u2', usage(web, small));
      ledger.deleteObject('a', 'count/deployments.apps', 'd1');
      expect(ledger.snapshot('a').workloads.map((w) => w.used.pods)).toEqual(['1']);
      ledger.deletePod('a', 'u2');
      expect(ledger.stats()).toEqual({ pods: 0, namespaces: 0, workloads: 0, vectors: 0 });
    });

    it('prints large counts as Kubernetes does', () => {
      const ledger = new UsageLedger();
      const cm: WorkloadRef = { kind: 'ConfigMap', name: 'c' };
      for (let i = 0; i < 1500; i++) ledger.upsertObject('a', 'configmaps', `c${i}`, cm);
      expect(ledger.snapshot('a').used).toEqual({ configmaps: '1500' });
      for (let i = 1500; i < 2000; i++) ledger.upsertObject('a', 'configmaps', `c${i}`, cm);
      expect(ledger.snapshot('a').used).toEqual({ configmaps: '2k' });
      expect(ledger.snapshot('a').workloads).toEqual([{ ...cm, used: { configmaps: '2k' } }]);
    });

    it('refuses pods, which come from upsertPod', () => {
      expect(() => new UsageLedger().upsertObject('a', 'pods', 'p', web)).toThrow(RangeError);
    });
  });

  describe('dirty tracking', () => {
    const steps: [string, (l: UsageLedger) => void, string[]][] = [
      ['an added pod', (l) => l.upsertPod('c', 'new', usage(web, small)), ['c']],
      ['a changed pod', (l) => l.upsertPod('a', 'u1', usage(web, large)), ['a']],
      ['a moved pod', (l) => l.upsertPod('a', 'u1', usage(db, small)), ['a']],
      ['an unchanged pod', (l) => l.upsertPod('a', 'u1', usage(web, small)), []],
      ['a deleted pod', (l) => l.deletePod('b', 'u2'), ['b']],
      ['an unknown pod deleted', (l) => l.deletePod('b', 'nope'), []],
      ['an added object', (l) => l.upsertObject('b', 'services', 's', web), ['b']],
      [
        'a moved object',
        (l) => (
          l.upsertObject('b', 'services', 's', web),
          l.clearDirty(),
          l.upsertObject('b', 'services', 's', db)
        ),
        ['b'],
      ],
      [
        'an unchanged object',
        (l) => (
          l.upsertObject('b', 'services', 's', web),
          l.clearDirty(),
          l.upsertObject('b', 'services', 's', web)
        ),
        [],
      ],
      ['an unknown object deleted', (l) => l.deleteObject('b', 'services', 'nope'), []],
      [
        'several namespaces',
        (l) => (l.upsertPod('b', 'x', usage(web, small)), l.upsertPod('a', 'x', usage(web, small))),
        ['a', 'b'],
      ],
    ];
    it.each(steps)('%s', (_name, step, dirty) => {
      const ledger = new UsageLedger();
      ledger.upsertPod('a', 'u1', usage(web, small));
      ledger.upsertPod('b', 'u2', usage(web, small));
      expect(ledger.dirtyNamespaces()).toEqual(['a', 'b']);
      ledger.clearDirty();
      step(ledger);
      expect(ledger.dirtyNamespaces()).toEqual(dirty);
    });
  });

  describe('relist', () => {
    it('removes the pods not seen between begin and end', () => {
      const ledger = new UsageLedger();
      for (let i = 0; i < 10; i++) ledger.upsertPod(i < 5 ? 'a' : 'b', `u${i}`, usage(web, small));
      ledger.clearDirty();
      ledger.beginRelist();
      ledger.upsertPod('a', 'u0', usage(web, small)); // unchanged
      ledger.upsertPod('a', 'u1', usage(web, large)); // changed
      ledger.upsertPod('a', 'new', usage(db, small)); // added during the relist
      ledger.deletePod('b', 'u5'); // deleted during the relist
      ledger.upsertPod('b', 'u6', undefined); // now terminal
      expect(ledger.trackedPods()).toBe(9);
      expect(ledger.endRelist()).toBe(6); // u2, u3, u4, u7, u8, u9
      expect(ledger.trackedPods()).toBe(3);
      expect(ledger.namespaces()).toEqual(['a']);
      expect(ledger.snapshot('a').used.pods).toBe('3');
      expect(ledger.dirtyNamespaces()).toEqual(['a', 'b']);
      expect(ledger.endRelist()).toBe(0);
    });

    it('keeps everything when everything is listed again, and restarts on a second begin', () => {
      const ledger = new UsageLedger();
      for (let i = 0; i < 3; i++) ledger.upsertPod('a', `u${i}`, usage(web, small));
      ledger.beginRelist();
      ledger.upsertPod('a', 'u0', usage(web, small));
      ledger.beginRelist(); // restart: u0's mark is cleared
      for (let i = 1; i < 3; i++) ledger.upsertPod('a', `u${i}`, usage(web, small));
      expect(ledger.endRelist()).toBe(1);
      ledger.beginRelist();
      for (let i = 1; i < 3; i++) ledger.upsertPod('a', `u${i}`, usage(web, small));
      expect(ledger.endRelist()).toBe(0);
      expect(ledger.trackedPods()).toBe(2);
    });

    it('relists object counts per resource name, leaving pods and other objects alone', () => {
      const ledger = new UsageLedger();
      ledger.upsertPod('a', 'p', usage(web, small));
      const svc: WorkloadRef = { kind: 'Service', name: 's' };
      ledger.upsertObject('a', 'services', 's1', svc);
      ledger.upsertObject('a', 'services', 's2', svc);
      ledger.upsertObject('b', 'services', 's3', svc);
      ledger.upsertObject('a', 'secrets', 'x', svc);
      ledger.beginRelist('services');
      ledger.upsertObject('a', 'services', 's1', svc);
      ledger.upsertObject('a', 'services', 's4', svc);
      expect(ledger.endRelist('services')).toBe(2); // s2, s3
      expect(ledger.endRelist('services')).toBe(0);
      expect(ledger.snapshot('a').used).toMatchObject({ pods: '1', secrets: '1', services: '2' });
      expect(ledger.namespaces()).toEqual(['a']);
      expect(ledger.endRelist()).toBe(0); // no pod relist in progress
    });
  });

  it('tracks 200,000 pods over 50 namespaces and 2,000 workloads exactly', () => {
    const NAMESPACES = 50;
    const WORKLOADS = 2000;
    const PODS = 200_000;
    const ledger = new UsageLedger();
    // workload w lives in namespace w % 50 and requests (w % 7 + 1) * 100m cpu, (w % 5 + 1) * 64Mi memory
    const usages: PodUsage[] = [];
    const cpuNanos: bigint[] = [];
    const memNanos: bigint[] = [];
    for (let w = 0; w < WORKLOADS; w++) {
      const cpu = BigInt((w % 7) + 1) * 100_000_000n;
      const mem = BigInt((w % 5) + 1) * 64n * 1024n * 1024n * 1_000_000_000n;
      cpuNanos.push(cpu);
      memNanos.push(mem);
      const requests = {
        pods: Quantity.fromInt(1n),
        'requests.cpu': Quantity.fromNano(cpu),
        'requests.memory': Quantity.fromNano(mem, 'BinarySI'),
      };
      usages.push({
        workload: { kind: w % 3 === 0 ? 'StatefulSet' : 'Deployment', name: `w${w}` },
        requests,
      });
    }
    const expectNs = (present: (p: number) => boolean): void => {
      const cpu = new Array<bigint>(NAMESPACES).fill(0n);
      const mem = new Array<bigint>(NAMESPACES).fill(0n);
      const pods = new Array<number>(NAMESPACES).fill(0);
      const workloadPods = new Array<number>(WORKLOADS).fill(0);
      for (let p = 0; p < PODS; p++) {
        if (!present(p)) continue;
        const w = p % WORKLOADS;
        const ns = w % NAMESPACES;
        cpu[ns] = (cpu[ns] as bigint) + (cpuNanos[w] as bigint);
        mem[ns] = (mem[ns] as bigint) + (memNanos[w] as bigint);
        pods[ns] = (pods[ns] as number) + 1;
        workloadPods[w] = (workloadPods[w] as number) + 1;
      }
      for (let ns = 0; ns < NAMESPACES; ns++) {
        const snap = ledger.snapshot(`ns-${ns}`);
        expect(Quantity.parse(snap.used['requests.cpu'] as string).nanoValue()).toBe(cpu[ns]);
        expect(Quantity.parse(snap.used['requests.memory'] as string).nanoValue()).toBe(mem[ns]);
        expect(snap.used.pods).toBe(Quantity.fromInt(BigInt(pods[ns] as number)).toCanonicalString());
        expect(snap.workloads).toHaveLength(WORKLOADS / NAMESPACES);
        for (const wl of snap.workloads) {
          const w = Number(wl.name.slice(1));
          expect(Quantity.parse(wl.used['requests.cpu'] as string).nanoValue()).toBe(
            (cpuNanos[w] as bigint) * BigInt(workloadPods[w] as number),
          );
          expect(Quantity.parse(wl.used.pods as string).value()).toBe(BigInt(workloadPods[w] as number));
        }
      }
    };

    for (let p = 0; p < PODS; p++) {
      const w = p % WORKLOADS;
      ledger.upsertPod(`ns-${w % NAMESPACES}`, `uid-${p}`, usages[w]);
    }
    expect(ledger.trackedPods()).toBe(PODS);
    expect(ledger.stats()).toEqual({ pods: PODS, namespaces: NAMESPACES, workloads: WORKLOADS, vectors: 35 });
    expect(ledger.dirtyNamespaces()).toHaveLength(NAMESPACES);
    expectNs(() => true);

    // delete every third pod, re-upsert the rest unchanged (status-only updates)
    ledger.clearDirty();
    for (let p = 0; p < PODS; p++) {
      const w = p % WORKLOADS;
      if (p % 3 === 0) ledger.deletePod(`ns-${w % NAMESPACES}`, `uid-${p}`);
      else ledger.upsertPod(`ns-${w % NAMESPACES}`, `uid-${p}`, usages[w]);
    }
    expect(ledger.trackedPods()).toBe(PODS - Math.ceil(PODS / 3));
    expectNs((p) => p % 3 !== 0);
  });
});
