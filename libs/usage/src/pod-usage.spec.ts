import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ResourceList } from '#quantity';
import { isChargeable, OwnerIndex, podRequests, podUsage, podWorkload, quotaRequests } from './index.js';

type Requests = Record<string, unknown>;

interface PodSpecInput {
  containers?: Requests[];
  initContainers?: (Requests & { '@sidecar'?: true })[];
  overhead?: Requests;
  podLevel?: Requests;
}

function container(requests: Requests, i: number, prefix: string): V1Container {
  const { '@sidecar': sidecar, ...rest } = requests;
  return {
    name: `${prefix}${i}`,
    resources: { requests: rest as Record<string, string> },
    ...(sidecar === true ? { restartPolicy: 'Always' } : {}),
  };
}

function makePod(input: PodSpecInput, extra: Partial<V1Pod> = {}): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', ...extra.metadata },
    spec: {
      containers: (input.containers ?? []).map((r, i) => container(r, i, 'c')),
      ...(input.initContainers
        ? { initContainers: input.initContainers.map((r, i) => container(r, i, 'i')) }
        : {}),
      ...(input.overhead ? { overhead: input.overhead as Record<string, string> } : {}),
      ...(input.podLevel ? { resources: { requests: input.podLevel as Record<string, string> } } : {}),
    },
    status: extra.status ?? { phase: 'Running' },
  };
}

const canon = (list: ResourceList): Record<string, string> =>
  Object.fromEntries(Object.entries(list).map(([k, q]) => [k, q.toCanonicalString()]));

describe('podRequests (resource.PodRequests)', () => {
  const cases: [string, PodSpecInput, Record<string, string>][] = [
    ['no containers', {}, {}],
    ['a container without requests', { containers: [{}] }, {}],
    ['one container', { containers: [{ cpu: '100m', memory: '128Mi' }] }, { cpu: '100m', memory: '128Mi' }],
    [
      'containers are summed',
      { containers: [{ cpu: '100m', memory: '1Gi' }, { cpu: '250m', memory: '512Mi' }, { cpu: '1' }] },
      { cpu: '1350m', memory: '1536Mi' },
    ],
    [
      'an init container larger than the sum wins',
      { containers: [{ cpu: '100m' }], initContainers: [{ cpu: '1' }] },
      { cpu: '1' },
    ],
    [
      'an init container smaller than the sum loses',
      { containers: [{ cpu: '2' }], initContainers: [{ cpu: '500m' }] },
      { cpu: '2' },
    ],
    [
      'the max is taken per resource',
      { containers: [{ cpu: '1', memory: '1Gi' }], initContainers: [{ cpu: '2', memory: '512Mi' }] },
      { cpu: '2', memory: '1Gi' },
    ],
    [
      'init containers are maxed, not summed',
      { containers: [{ cpu: '100m' }], initContainers: [{ cpu: '1' }, { cpu: '3' }, { cpu: '2' }] },
      { cpu: '3' },
    ],
    [
      'a resource only an init container requests',
      { containers: [{ cpu: '1' }], initContainers: [{ 'ephemeral-storage': '1Gi' }] },
      { cpu: '1', 'ephemeral-storage': '1Gi' },
    ],
    [
      'a sidecar adds to the sum',
      { containers: [{ cpu: '1' }], initContainers: [{ cpu: '500m', '@sidecar': true }] },
      { cpu: '1500m' },
    ],
    [
      'an init container after a sidecar runs alongside it',
      { containers: [{ cpu: '1' }], initContainers: [{ cpu: '500m', '@sidecar': true }, { cpu: '2' }] },
      { cpu: '2500m' },
    ],
    [
      'an init container before a sidecar does not add it',
      { containers: [{ cpu: '1' }], initContainers: [{ cpu: '2' }, { cpu: '500m', '@sidecar': true }] },
      { cpu: '2' },
    ],
    [
      'sidecars accumulate (KEP-753 example)',
      {
        containers: [{ cpu: '1', memory: '1Gi' }],
        initContainers: [
          { cpu: '200m', memory: '200Mi', '@sidecar': true },
          { cpu: '2', memory: '100Mi' },
          { cpu: '300m', memory: '300Mi', '@sidecar': true },
          { cpu: '1', memory: '2Gi' },
        ],
      },
      // sum = 1 + 0.2 + 0.3 cpu, 1Gi + 500Mi; init 2: 2.2 cpu, 300Mi; init 4: 1.5 cpu, 2Gi + 500Mi
      { cpu: '2200m', memory: '2548Mi' },
    ],
    ['a lone sidecar', { initContainers: [{ cpu: '100m', '@sidecar': true }] }, { cpu: '100m' }],
    [
      'overhead is added',
      { containers: [{ cpu: '1' }], overhead: { cpu: '250m', memory: '120Mi' } },
      { cpu: '1250m', memory: '120Mi' },
    ],
    [
      'overhead is added after the init max',
      { containers: [{ cpu: '1' }], initContainers: [{ cpu: '2' }], overhead: { cpu: '100m' } },
      { cpu: '2100m' },
    ],
    [
      'pod-level requests replace cpu, memory and hugepages',
      {
        containers: [{ cpu: '1', memory: '1Gi', 'ephemeral-storage': '1Gi', 'hugepages-2Mi': '2Mi' }],
        podLevel: { cpu: '3', memory: '2Gi', 'ephemeral-storage': '5Gi', 'hugepages-2Mi': '4Mi' },
        overhead: { cpu: '100m' },
      },
      { cpu: '3100m', 'ephemeral-storage': '1Gi', 'hugepages-2Mi': '4Mi', memory: '2Gi' },
    ],
    [
      'hugepages and extended resources are summed like the rest',
      {
        containers: [
          { 'hugepages-2Mi': '4Mi', 'nvidia.com/gpu': '1' },
          { 'hugepages-2Mi': '2Mi', 'nvidia.com/gpu': '2' },
        ],
      },
      { 'hugepages-2Mi': '6Mi', 'nvidia.com/gpu': '3' },
    ],
    [
      'invalid and negative entries are skipped, the rest counts',
      {
        containers: [
          { cpu: 'abc', memory: '1Gi' },
          { cpu: '500m', memory: '-1Gi' },
          { cpu: '', memory: null },
          { cpu: { a: 1 }, memory: '1.5.0' },
        ],
        initContainers: [{ cpu: 'lots' }],
        overhead: { cpu: 'x' },
      },
      { cpu: '500m', memory: '1Gi' },
    ],
    [
      'numbers (raw JSON) and surrounding spaces are read like Go',
      { containers: [{ cpu: 2, memory: ' 1Gi ' }] },
      { cpu: '2', memory: '1Gi' },
    ],
    ['zero requests are kept', { containers: [{ cpu: '0' }] }, { cpu: '0' }],
  ];

  it.each(cases)('%s', (_name, input, expected) => {
    expect(canon(podRequests(makePod(input)))).toEqual(expected);
  });

  it('never throws on a malformed spec', () => {
    const malformed = [
      { spec: { containers: 'nope' } },
      { spec: { containers: [null, { resources: null }, { resources: { requests: [] } }] } },
      { spec: { initContainers: {}, overhead: 'x', resources: { requests: 1 } } },
      {},
    ] as unknown as V1Pod[];
    for (const pod of malformed) expect(canon(podRequests(pod))).toEqual({});
  });
});

describe('quotaRequests', () => {
  const cases: [string, Record<string, string>, Record<string, string>][] = [
    ['nothing requested still counts the pod', {}, { pods: '1' }],
    [
      'compute resources under both names',
      { cpu: '100m', memory: '1Gi', 'ephemeral-storage': '2Gi' },
      {
        cpu: '100m',
        'ephemeral-storage': '2Gi',
        memory: '1Gi',
        pods: '1',
        'requests.cpu': '100m',
        'requests.ephemeral-storage': '2Gi',
        'requests.memory': '1Gi',
      },
    ],
    [
      'hugepages under both names',
      { 'hugepages-1Gi': '2Gi' },
      { 'hugepages-1Gi': '2Gi', pods: '1', 'requests.hugepages-1Gi': '2Gi' },
    ],
    [
      'extended resources under both names',
      { 'nvidia.com/gpu': '2' },
      { 'nvidia.com/gpu': '2', pods: '1', 'requests.nvidia.com/gpu': '2' },
    ],
    [
      'names quota cannot track are dropped',
      {
        storage: '1Gi',
        'example.kubernetes.io/foo': '1',
        'kubernetes.io/bar': '1',
        pods: '5',
        'requests.cpu': '1',
      },
      { pods: '1' },
    ],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const pod = makePod({ containers: [input] });
    expect(canon(quotaRequests(podRequests(pod)))).toEqual(expected);
    expect(Object.keys(quotaRequests(podRequests(pod)))).toEqual(Object.keys(expected).sort());
  });
});

describe('isChargeable (QuotaV1Pod)', () => {
  const now = new Date('2025-06-01T12:00:00Z');
  const at = (offsetSeconds: number): Date => new Date(now.getTime() + offsetSeconds * 1000);
  const cases: [string, Partial<V1Pod>, boolean][] = [
    ['Pending', { status: { phase: 'Pending' } }, true],
    ['Running', { status: { phase: 'Running' } }, true],
    ['Unknown', { status: { phase: 'Unknown' } }, true],
    ['no status', { status: {} }, true],
    ['Succeeded', { status: { phase: 'Succeeded' } }, false],
    ['Failed', { status: { phase: 'Failed' } }, false],
    [
      'terminating within its grace period',
      { metadata: { deletionTimestamp: at(-10), deletionGracePeriodSeconds: 30 } },
      true,
    ],
    [
      'terminating past its grace period',
      { metadata: { deletionTimestamp: at(-31), deletionGracePeriodSeconds: 30 } },
      false,
    ],
    [
      'grace period ending exactly now',
      { metadata: { deletionTimestamp: at(-30), deletionGracePeriodSeconds: 30 } },
      true,
    ],
    [
      'grace period ended 1 ms ago',
      { metadata: { deletionTimestamp: new Date(now.getTime() - 30_001), deletionGracePeriodSeconds: 30 } },
      false,
    ],
    [
      'deletion timestamp in the future',
      { metadata: { deletionTimestamp: at(20), deletionGracePeriodSeconds: 0 } },
      true,
    ],
    [
      'zero grace, deleted before now',
      { metadata: { deletionTimestamp: at(-1), deletionGracePeriodSeconds: 0 } },
      false,
    ],
    ['deletion timestamp without grace period', { metadata: { deletionTimestamp: at(-3600) } }, true],
    [
      'deletion timestamp as an RFC 3339 string (raw JSON)',
      {
        metadata: {
          deletionTimestamp: '2025-06-01T11:00:00Z' as unknown as Date,
          deletionGracePeriodSeconds: 30,
        },
      },
      false,
    ],
    [
      'an unparsable deletion timestamp is ignored',
      { metadata: { deletionTimestamp: 'soon' as unknown as Date, deletionGracePeriodSeconds: 30 } },
      true,
    ],
    [
      'terminal wins over a running grace period',
      {
        status: { phase: 'Succeeded' },
        metadata: { deletionTimestamp: at(0), deletionGracePeriodSeconds: 30 },
      },
      false,
    ],
  ];
  it.each(cases)('%s -> %s', (_name, extra, expected) => {
    const pod = makePod({ containers: [{ cpu: '1' }] }, extra);
    expect(isChargeable(pod, now)).toBe(expected);
    expect(podUsage(pod, now) !== undefined).toBe(expected);
  });
});

describe('podUsage', () => {
  const now = new Date('2025-06-01T12:00:00Z');

  it.each<[string, Partial<V1Pod>['metadata'], { kind: string; name: string; terminating?: true }]>([
    ['not being deleted: its workload', {}, { kind: 'Job', name: 'etl' }],
    [
      "being deleted: its workload, terminating (counted, never its binding's room)",
      { deletionTimestamp: new Date('2025-06-01T11:59:50Z'), deletionGracePeriodSeconds: 30 },
      { kind: 'Job', name: 'etl', terminating: true },
    ],
    [
      'being deleted, as raw JSON',
      { deletionTimestamp: '2025-06-01T11:59:50Z' as unknown as Date, deletionGracePeriodSeconds: 30 },
      { kind: 'Job', name: 'etl', terminating: true },
    ],
  ])('%s', (_name, metadata, expected) => {
    const pod = makePod(
      { containers: [{ cpu: '1' }] },
      {
        metadata: {
          name: 'etl-x',
          namespace: 'team-a',
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'etl', uid: 'u', controller: true }],
          ...metadata,
        },
      },
    );
    expect(podUsage(pod, now)?.workload).toEqual(expected);
  });

  it('gives quota-named requests and the workload', () => {
    const pod = makePod(
      { containers: [{ cpu: '250m', memory: '64Mi', 'nvidia.com/gpu': '1' }], overhead: { memory: '64Mi' } },
      {
        metadata: {
          name: 'web-abc-xyz',
          namespace: 'team-a',
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'u', controller: true },
          ],
        },
      },
    );
    const seen: [string, string][] = [];
    const usage = podUsage(pod, now, (name, namespace) => {
      seen.push([name, namespace]);
      return 'web';
    });
    expect(usage?.workload).toEqual({ kind: 'Deployment', name: 'web' });
    expect(seen).toEqual([['web-abc', 'team-a']]);
    expect(canon(usage?.requests ?? {})).toEqual({
      cpu: '250m',
      memory: '128Mi',
      'nvidia.com/gpu': '1',
      pods: '1',
      'requests.cpu': '250m',
      'requests.memory': '128Mi',
      'requests.nvidia.com/gpu': '1',
    });
  });

  it('attributes an ownerless pod to itself and walks the owner index', () => {
    expect(podUsage(makePod({}), now)?.workload).toEqual({ kind: 'Pod', name: 'p' });
    const job = makePod(
      {},
      {
        metadata: {
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j-1', uid: 'u', controller: true }],
        },
      },
    );
    const owners = new OwnerIndex();
    owners.setController(
      'ns',
      { group: 'batch', kind: 'Job', name: 'j-1' },
      { group: 'batch', kind: 'CronJob', name: 'nightly' },
    );
    expect(podUsage(job, now, owners)?.workload).toEqual({ kind: 'CronJob', name: 'nightly' });
  });
});

describe('podWorkload', () => {
  const now = new Date('2025-06-01T12:00:00Z');
  const deleting = { deletionTimestamp: new Date('2025-06-01T11:59:50Z'), deletionGracePeriodSeconds: 30 };
  const owners = new OwnerIndex();
  // The member's current objects: Deployment web (uid d2, re-created: its first was d1), its
  // ReplicaSet web-2, and the first Deployment's ReplicaSet web-1 the garbage collector has not
  // deleted yet.
  owners.setObject('team-a', { group: 'apps', kind: 'Deployment', name: 'web' }, 'd2', undefined);
  for (const [name, uid, deploymentUid] of [
    ['web-2', 'r2', 'd2'],
    ['web-1', 'r1', 'd1'],
  ] as const) {
    owners.setObject('team-a', { group: 'apps', kind: 'ReplicaSet', name }, uid, {
      group: 'apps',
      kind: 'Deployment',
      name: 'web',
      uid: deploymentUid,
    });
  }
  const controlled = (apiVersion: string, kind: string, name: string, uid: string) => [
    { apiVersion, kind, name, uid, controller: true },
  ];

  /** [what, the pod's metadata beyond its name and namespace, the workload] */
  it.each<[string, Partial<V1Pod>['metadata'], { kind: string; name: string; terminating?: true }]>([
    [
      "the current Deployment's pod",
      { ownerReferences: controlled('apps/v1', 'ReplicaSet', 'web-2', 'r2') },
      { kind: 'Deployment', name: 'web' },
    ],
    [
      "the previous Deployment's pod, not being deleted yet: counted, never the workload's",
      { ownerReferences: controlled('apps/v1', 'ReplicaSet', 'web-1', 'r1') },
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      "the previous Deployment's pod being deleted",
      { ownerReferences: controlled('apps/v1', 'ReplicaSet', 'web-1', 'r1'), ...deleting },
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'a pod naming a ReplicaSet uid that is not the current one',
      { ownerReferences: controlled('apps/v1', 'ReplicaSet', 'web-2', 'r0') },
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'a bare pod claiming the Deployment with its real uid: its own',
      { ownerReferences: controlled('apps/v1', 'Deployment', 'web', 'd2') },
      { kind: 'Pod', name: 'forged' },
    ],
    [
      'a bare pod claiming the Deployment, being deleted: its own, terminating',
      { ownerReferences: controlled('apps/v1', 'Deployment', 'web', 'd2'), ...deleting },
      { kind: 'Pod', name: 'forged', terminating: true },
    ],
  ])('%s', (_what, metadata, expected) => {
    const pod = makePod(
      { containers: [{ cpu: '1' }] },
      { metadata: { name: 'forged', namespace: 'team-a', ...metadata } },
    );
    expect(podWorkload(pod, owners)).toEqual(expected);
    expect(podUsage(pod, now, owners)?.workload).toEqual(expected);
    // from the metadata alone: what the aggregator keeps of a pod once it is counted
    expect(podWorkload({ metadata: pod.metadata }, owners)).toEqual(expected);
  });
});
