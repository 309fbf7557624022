import { formatList } from '#quantity';
import type { Component, KarmadaQuota, ResourceBinding, TargetCluster } from '#api';
import {
  bindingCharge,
  chargeByCluster,
  countResourceName,
  guessPlural,
  missingRequestErrors,
  unboundedPodsRefusals,
  withClusterOverrides,
  type ClusterOverride,
} from './charge.js';

interface Shape {
  kind?: string;
  apiVersion?: string;
  replicas?: number;
  request?: Record<string, unknown>;
  clusters?: TargetCluster[];
  components?: Component[];
  priorityClassName?: string;
  placement?: Record<string, unknown>;
}

function binding(shape: Shape = {}): ResourceBinding {
  const spec: Record<string, unknown> = {
    resource: {
      apiVersion: shape.apiVersion ?? 'apps/v1',
      kind: shape.kind ?? 'Deployment',
      namespace: 'team-a',
      name: 'web',
    },
  };
  if (shape.replicas !== undefined) spec['replicas'] = shape.replicas;
  if (shape.request !== undefined || shape.priorityClassName !== undefined) {
    spec['replicaRequirements'] = {
      resourceRequest: shape.request,
      priorityClassName: shape.priorityClassName,
    };
  }
  if (shape.clusters !== undefined) spec['clusters'] = shape.clusters;
  if (shape.components !== undefined) spec['components'] = shape.components;
  if (shape.placement !== undefined) spec['placement'] = shape.placement;
  return { metadata: { namespace: 'team-a', name: 'web-deployment' }, spec } as unknown as ResourceBinding;
}

const charge = (shape: Shape): Record<string, string> => {
  const result = bindingCharge(binding(shape));
  expect(result.errors).toEqual([]);
  return formatList(result.charge);
};

const divided = { replicaScheduling: { replicaSchedulingType: 'Divided' } };
const duplicated = { replicaScheduling: { replicaSchedulingType: 'Duplicated' } };
const onClusters = (...replicas: number[]): TargetCluster[] =>
  replicas.map((r, i) => ({ name: `m${i}`, replicas: r }));

describe('bindingCharge: replicas and compute', () => {
  const cpuMem = { cpu: '500m', memory: '1Gi' };
  it.each<[string, Shape, Record<string, string>]>([
    [
      'unscheduled: charged for spec.replicas',
      { replicas: 3, request: cpuMem },
      {
        'count/deployments.apps': '1',
        cpu: '1500m',
        memory: '3Gi',
        pods: '3',
        'requests.cpu': '1500m',
        'requests.memory': '3Gi',
      },
    ],
    [
      'Divided placement: the scheduled sum equals spec.replicas',
      {
        replicas: 4,
        request: { cpu: '1' },
        clusters: [
          { name: 'a', replicas: 1 },
          { name: 'b', replicas: 3 },
        ],
        placement: divided,
      },
      { 'count/deployments.apps': '2', cpu: '4', pods: '4', 'requests.cpu': '4' },
    ],
    [
      'Duplicated placement: every copy is charged (2 replicas on 2 clusters -> 4)',
      {
        replicas: 2,
        request: { cpu: '1' },
        clusters: [
          { name: 'a', replicas: 2 },
          { name: 'b', replicas: 2 },
        ],
        placement: duplicated,
      },
      { 'count/deployments.apps': '2', cpu: '4', pods: '4', 'requests.cpu': '4' },
    ],
    [
      'scaled down but not yet rescheduled: the larger scheduled figure holds',
      { replicas: 2, request: { cpu: '1' }, clusters: [{ name: 'a', replicas: 3 }] },
      { 'count/deployments.apps': '1', cpu: '3', pods: '3', 'requests.cpu': '3' },
    ],
    [
      'scaled up, not yet rescheduled: spec.replicas holds',
      { replicas: 5, request: { cpu: '1' }, clusters: [{ name: 'a', replicas: 3 }] },
      { 'count/deployments.apps': '1', cpu: '5', pods: '5', 'requests.cpu': '5' },
    ],
    [
      'spec.replicas absent, scheduled replicas only',
      { request: { cpu: '1' }, clusters: [{ name: 'a', replicas: 2 }] },
      { 'count/deployments.apps': '1', cpu: '2', pods: '2', 'requests.cpu': '2' },
    ],
    [
      'zero replicas: only the object count',
      { replicas: 0, request: { cpu: '1' } },
      { 'count/deployments.apps': '1' },
    ],
    [
      'ephemeral-storage under both names',
      { replicas: 2, request: { 'ephemeral-storage': '1Gi' } },
      {
        'count/deployments.apps': '1',
        'ephemeral-storage': '2Gi',
        pods: '2',
        'requests.ephemeral-storage': '2Gi',
      },
    ],
    [
      'hugepages under both names',
      { replicas: 2, request: { 'hugepages-2Mi': '4Mi' } },
      { 'count/deployments.apps': '1', 'hugepages-2Mi': '8Mi', pods: '2', 'requests.hugepages-2Mi': '8Mi' },
    ],
    [
      'extended resource under the bare name and requests.<name>',
      { replicas: 3, request: { 'nvidia.com/gpu': '1' } },
      { 'count/deployments.apps': '1', 'nvidia.com/gpu': '3', pods: '3', 'requests.nvidia.com/gpu': '3' },
    ],
    [
      'names quota cannot track are not charged (storage, kubernetes.io/*)',
      { replicas: 1, request: { storage: '1Gi', 'kubernetes.io/batch-cpu': '1', pods: '7' } },
      { 'count/deployments.apps': '1', pods: '1' },
    ],
    [
      'numeric quantities (int-or-string) are accepted',
      { replicas: 2, request: { cpu: 2, memory: 0.5 } },
      {
        'count/deployments.apps': '1',
        cpu: '4',
        memory: '1',
        pods: '2',
        'requests.cpu': '4',
        'requests.memory': '1',
      },
    ],
    [
      'replicas without requirements: pods only',
      { replicas: 2 },
      { 'count/deployments.apps': '1', pods: '2' },
    ],
    [
      'zero requests are dropped',
      { replicas: 2, request: { cpu: '0', memory: '1Mi' } },
      { 'count/deployments.apps': '1', memory: '2Mi', pods: '2', 'requests.memory': '2Mi' },
    ],
  ])('%s', (_name, shape, expected) => {
    expect(charge(shape)).toEqual(expected);
  });
});

describe('bindingCharge: placement (never less than what Karmada may apply to the members)', () => {
  // [case, spec.replicas, spec.clusters[].replicas, spec.placement, pods charged]
  it.each<[string, number, number[], Record<string, unknown> | undefined, number]>([
    ['Duplicated, unscheduled: spec.replicas once', 3, [], duplicated, 3],
    ['Duplicated on 3 clusters: spec.replicas on each', 3, [3, 3, 3], duplicated, 9],
    // Before Karmada 1.15 every member gets the template's 6 at once, before the scheduler runs.
    ['Duplicated on 3 clusters, scaled up 3 -> 6, clusters still at 3', 6, [3, 3, 3], duplicated, 18],
    ['Duplicated on 2 clusters, scaled up 3 -> 6, clusters still at 3', 6, [3, 3], duplicated, 12],
    ['Duplicated on 3 clusters, rescheduled after the scale-up', 6, [6, 6, 6], duplicated, 18],
    // From Karmada 1.15 members run spec.clusters[].replicas, which lags a scale-down.
    ['Duplicated on 3 clusters, scaled down 6 -> 3, clusters still at 6', 3, [6, 6, 6], duplicated, 18],
    ['Duplicated scaled to 0, clusters still at 2', 0, [2, 2], duplicated, 4],
    ['placement absent: Duplicated, as Karmada reads it', 2, [1, 1], undefined, 4],
    ['placement without replicaScheduling: Duplicated', 2, [1, 1], { clusterAffinity: {} }, 4],
    [
      'replicaScheduling without a type: Duplicated, the larger charge',
      2,
      [1, 1],
      { replicaScheduling: {} },
      4,
    ],
    ['Divided, unscheduled: spec.replicas', 3, [], divided, 3],
    ['Divided on 3 clusters: the scheduled sum', 6, [2, 2, 2], divided, 6],
    [
      'Divided on 3 clusters, scaled up 3 -> 6, clusters still [1, 1, 1]: spec.replicas',
      6,
      [1, 1, 1],
      divided,
      6,
    ],
    [
      'Divided on 3 clusters, scaled down 6 -> 3, clusters still [2, 2, 2]: the scheduled sum',
      3,
      [2, 2, 2],
      divided,
      6,
    ],
  ])('%s', (_name, replicas, scheduled, placement, pods) => {
    const clusters = scheduled.length > 0 ? onClusters(...scheduled) : undefined;
    expect(charge({ replicas, request: { cpu: '1' }, clusters, placement })).toEqual({
      'count/deployments.apps': String(Math.max(1, scheduled.length)),
      ...(pods > 0 ? { cpu: String(pods), pods: String(pods), 'requests.cpu': String(pods) } : {}),
    });
  });
});

describe('bindingCharge: a copy left behind by a graceful eviction (review 3, new 3)', () => {
  const evicting = (tasks: Record<string, unknown>[], shape: Shape): ResourceBinding => {
    const rb = binding(shape);
    (rb.spec as unknown as Record<string, unknown>)['gracefulEvictionTasks'] = tasks.map((t) => ({
      producer: 'TaintManager',
      reason: 'TaintUntolerated',
      ...t,
    }));
    return rb;
  };
  // [case, tasks, spec.replicas, spec.clusters[].replicas, placement, pods, deployments counted]
  it.each<[string, Record<string, unknown>[], number, number[], Record<string, unknown>, number, number]>([
    [
      'Divided 4 moved from m9 to m0: the old 4 on top',
      [{ fromCluster: 'm9', replicas: 4 }],
      4,
      [4],
      divided,
      8,
      2,
    ],
    [
      'Divided, a task without replicas: spec.replicas on top',
      [{ fromCluster: 'm9' }],
      4,
      [2, 2],
      divided,
      8,
      3,
    ],
    [
      'Duplicated 3 on two clusters, one leaving: its 3 on top',
      [{ fromCluster: 'm9', replicas: 3 }],
      3,
      [3, 3],
      duplicated,
      9,
      3,
    ],
    [
      'a task for a cluster still scheduled (the eviction undone) adds nothing',
      [{ fromCluster: 'm0', replicas: 4 }],
      4,
      [4],
      divided,
      4,
      1,
    ],
    [
      'two tasks of one cluster count it once',
      [
        { fromCluster: 'm9', replicas: 2 },
        { fromCluster: 'm9', replicas: 2 },
      ],
      4,
      [4],
      divided,
      6,
      2,
    ],
  ])('%s', (_name, tasks, replicas, scheduled, placement, pods, deployments) => {
    const rb = evicting(tasks, {
      replicas,
      request: { cpu: '1' },
      clusters: onClusters(...scheduled),
      placement,
    });
    const result = bindingCharge(rb);
    expect(result.errors).toEqual([]);
    expect(formatList(result.charge)).toEqual({
      'count/deployments.apps': String(deployments),
      cpu: String(pods),
      pods: String(pods),
      'requests.cpu': String(pods),
    });
  });
});

describe('bindingCharge: what OverridePolicies make a target cluster run (review 3, item 4)', () => {
  const override = (
    cluster: string,
    change: Omit<ClusterOverride, 'cluster' | 'policies'>,
  ): ClusterOverride => ({
    cluster,
    ...change,
    policies: ['OverridePolicy team-a/p'],
  });
  // [case, spec.replicas, spec.clusters[].replicas, placement, overrides, cpu, pods]
  it.each<[string, number, number[], Record<string, unknown>, ClusterOverride[], string, number]>([
    ['none: the binding itself', 4, [2, 2], divided, [], '4', 4],
    ['Divided 2 + 2, m0 overridden to 4: 6', 4, [2, 2], divided, [override('m0', { replicas: 4 })], '6', 6],
    ['Divided, m1 overridden down to 1: 3', 4, [2, 2], divided, [override('m1', { replicas: 1 })], '3', 3],
    [
      'Divided, m0 at 2 cpu a replica: 2 x 2 + 2',
      4,
      [2, 2],
      divided,
      [override('m0', { resourceRequest: { cpu: '2' } })],
      '6',
      4,
    ],
    [
      'Duplicated 3 on two, m1 overridden to 5 at 500m: 3 + 2.5',
      3,
      [3, 3],
      duplicated,
      [override('m1', { replicas: 5, resourceRequest: { cpu: '500m' } })],
      '5500m',
      8,
    ],
    [
      'Duplicated, a cluster still listed below spec.replicas keeps spec.replicas as its share',
      3,
      [3, 1],
      duplicated,
      [override('m1', { replicas: 4 })],
      '7',
      7,
    ],
    [
      'an override of a cluster not targeted charges nothing',
      4,
      [2, 2],
      divided,
      [override('m9', { replicas: 9 })],
      '4',
      4,
    ],
    [
      'Divided, not all scheduled yet: the unscheduled rest stays charged',
      6,
      [2, 2],
      divided,
      [override('m0', { replicas: 3 })],
      '7',
      7,
    ],
  ])('%s', (_name, replicas, scheduled, placement, overrides, cpu, pods) => {
    const rb = binding({ replicas, request: { cpu: '1' }, clusters: onClusters(...scheduled), placement });
    const result = bindingCharge(withClusterOverrides(rb, overrides));
    expect(result.errors).toEqual([]);
    expect(formatList(result.charge)).toMatchObject({ cpu, pods: String(pods), 'requests.cpu': cpu });
  });

  it('travels with copies of the binding, never on the wire', () => {
    const rb = withClusterOverrides(
      binding({ replicas: 2, request: { cpu: '1' }, clusters: onClusters(2), placement: divided }),
      [override('m0', { replicas: 5 })],
    );
    expect(formatList(bindingCharge({ ...rb }).charge)['cpu']).toBe('5');
    expect(formatList(bindingCharge(JSON.parse(JSON.stringify(rb))).charge)['cpu']).toBe('2');
  });
});

describe('chargeByCluster: the charge split by target cluster', () => {
  const cpuPods = (n: number) => ({
    'count/deployments.apps': '1',
    cpu: String(n),
    pods: String(n),
    'requests.cpu': String(n),
  });
  const split = (rb: ResourceBinding) => {
    const result = chargeByCluster(rb)!;
    return {
      clusters: Object.fromEntries([...result.clusters].map(([name, list]) => [name, formatList(list)])),
      rest: formatList(result.rest),
    };
  };
  it.each<[string, Shape, Record<string, Record<string, string>>, Record<string, string>]>([
    [
      'Divided 2 + 2',
      { replicas: 4, request: { cpu: '1' }, clusters: onClusters(2, 2), placement: divided },
      { m0: cpuPods(2), m1: cpuPods(2) },
      {},
    ],
    [
      'Divided, 2 of 6 not assigned yet: the rest',
      { replicas: 6, request: { cpu: '1' }, clusters: onClusters(2, 2), placement: divided },
      { m0: cpuPods(2), m1: cpuPods(2) },
      { cpu: '2', pods: '2', 'requests.cpu': '2' },
    ],
    [
      'unscheduled: all rest',
      { replicas: 3, request: { cpu: '1' }, placement: divided },
      {},
      { 'count/deployments.apps': '1', cpu: '3', pods: '3', 'requests.cpu': '3' },
    ],
    [
      'Duplicated 3 on two, one still listed at 1: spec.replicas each',
      { replicas: 3, request: { cpu: '1' }, clusters: onClusters(3, 1), placement: duplicated },
      { m0: cpuPods(3), m1: cpuPods(3) },
      {},
    ],
  ])('%s', (_name, shape, clusters, rest) => {
    expect(split(binding(shape))).toEqual({ clusters, rest });
  });

  it("an evicted copy is its cluster's share; an override, the overridden cluster's", () => {
    const rb = binding({
      replicas: 4,
      request: { cpu: '1' },
      clusters: onClusters(2, 2),
      placement: divided,
    });
    (rb.spec as unknown as Record<string, unknown>)['gracefulEvictionTasks'] = [
      { fromCluster: 'm9', replicas: 3 },
    ];
    const overridden = withClusterOverrides(rb, [
      { cluster: 'm0', replicas: 5, policies: ['OverridePolicy team-a/p'] },
    ]);
    expect(split(overridden)).toEqual({
      clusters: { m0: cpuPods(5), m1: cpuPods(2), m9: cpuPods(3) },
      rest: {},
    });
    const total = formatList(bindingCharge(overridden).charge);
    expect(total).toMatchObject({ cpu: '10', pods: '10', 'count/deployments.apps': '3' });
  });

  it('does not split a binding with components', () => {
    expect(
      chargeByCluster(
        binding({
          components: [{ name: 'jm', replicas: 1, replicaRequirements: { resourceRequest: { cpu: '1' } } }],
        }),
      ),
    ).toBeUndefined();
  });
});

describe('bindingCharge: object counts', () => {
  it.each<[string, string, number, Record<string, string>]>([
    ['v1', 'Service', 0, { 'count/services': '1', services: '1' }],
    ['v1', 'Service', 3, { 'count/services': '3', services: '3' }],
    ['v1', 'Secret', 2, { 'count/secrets': '2', secrets: '2' }],
    ['v1', 'ConfigMap', 1, { 'count/configmaps': '1', configmaps: '1' }],
    ['v1', 'PersistentVolumeClaim', 2, { 'count/persistentvolumeclaims': '2', persistentvolumeclaims: '2' }],
    ['v1', 'ResourceQuota', 0, { 'count/resourcequotas': '1', resourcequotas: '1' }],
    ['v1', 'ServiceAccount', 0, { 'count/serviceaccounts': '1' }],
    ['v1', 'Endpoints', 0, { 'count/endpoints': '1' }],
    ['apps/v1', 'StatefulSet', 2, { 'count/statefulsets.apps': '2' }],
    ['apps/v1', 'DaemonSet', 0, { 'count/daemonsets.apps': '1' }],
    ['apps/v1', 'ReplicaSet', 0, { 'count/replicasets.apps': '1' }],
    ['batch/v1', 'Job', 0, { 'count/jobs.batch': '1' }],
    ['batch/v1', 'CronJob', 2, { 'count/cronjobs.batch': '2' }],
    ['networking.k8s.io/v1', 'Ingress', 0, { 'count/ingresses.networking.k8s.io': '1' }],
    ['networking.k8s.io/v1', 'NetworkPolicy', 0, { 'count/networkpolicies.networking.k8s.io': '1' }],
    ['autoscaling/v2', 'HorizontalPodAutoscaler', 0, { 'count/horizontalpodautoscalers.autoscaling': '1' }],
    ['policy/v1', 'PodDisruptionBudget', 0, { 'count/poddisruptionbudgets.policy': '1' }],
    ['flink.apache.org/v1beta1', 'FlinkDeployment', 0, { 'count/flinkdeployments.flink.apache.org': '1' }],
    ['gateway.networking.k8s.io/v1', 'Gateway', 0, { 'count/gateways.gateway.networking.k8s.io': '1' }],
    // Legacy bare names are for the core group only.
    ['example.com/v1', 'Service', 0, { 'count/services.example.com': '1' }],
  ])('%s %s on %i clusters', (apiVersion, kind, clusterCount, expected) => {
    const clusters = Array.from({ length: clusterCount }, (_, i) => ({ name: `m${i}` }));
    expect(charge({ apiVersion, kind, clusters })).toEqual(expected);
  });

  it('ReplicationController: legacy name, count and its pods', () => {
    expect(
      charge({ apiVersion: 'v1', kind: 'ReplicationController', replicas: 2, request: { cpu: '1' } }),
    ).toEqual({
      'count/replicationcontrollers': '1',
      cpu: '2',
      pods: '2',
      replicationcontrollers: '1',
      'requests.cpu': '2',
    });
  });

  it.each<[string, Shape, Record<string, string>]>([
    [
      'bare Pod without replicas, unscheduled: one pod',
      { apiVersion: 'v1', kind: 'Pod', request: { cpu: '250m' } },
      { 'count/pods': '1', cpu: '250m', pods: '1', 'requests.cpu': '250m' },
    ],
    [
      'bare Pod without replicas on 2 clusters: one per cluster',
      { apiVersion: 'v1', kind: 'Pod', request: { cpu: '250m' }, clusters: [{ name: 'a' }, { name: 'b' }] },
      { 'count/pods': '2', cpu: '500m', pods: '2', 'requests.cpu': '500m' },
    ],
    [
      'bare Pod with replicas 1, Duplicated to 2 clusters',
      {
        apiVersion: 'v1',
        kind: 'Pod',
        replicas: 1,
        request: { cpu: '1' },
        clusters: [
          { name: 'a', replicas: 1 },
          { name: 'b', replicas: 1 },
        ],
      },
      { 'count/pods': '2', cpu: '2', pods: '2', 'requests.cpu': '2' },
    ],
  ])('%s', (_name, shape, expected) => {
    expect(charge(shape)).toEqual(expected);
  });
});

describe('bindingCharge: components', () => {
  const components: Component[] = [
    {
      name: 'jobmanager',
      replicas: 1,
      replicaRequirements: { resourceRequest: { cpu: '1', memory: '1Gi' } },
    },
    { name: 'taskmanager', replicas: 2, replicaRequirements: { resourceRequest: { cpu: '2' } } },
  ];
  const flink = { apiVersion: 'flink.apache.org/v1beta1', kind: 'FlinkDeployment' };

  it.each<[string, Shape, Record<string, string>]>([
    [
      'unscheduled: sum of the components once',
      { ...flink, components },
      {
        'count/flinkdeployments.flink.apache.org': '1',
        cpu: '5',
        memory: '1Gi',
        pods: '3',
        'requests.cpu': '5',
        'requests.memory': '1Gi',
      },
    ],
    [
      'scheduled to 2 clusters: times 2',
      { ...flink, components, clusters: [{ name: 'a' }, { name: 'b' }] },
      {
        'count/flinkdeployments.flink.apache.org': '2',
        cpu: '10',
        memory: '2Gi',
        pods: '6',
        'requests.cpu': '10',
        'requests.memory': '2Gi',
      },
    ],
    [
      'top-level replicas/replicaRequirements are ignored when components exist',
      { ...flink, components, replicas: 7, request: { cpu: '100' } },
      {
        'count/flinkdeployments.flink.apache.org': '1',
        cpu: '5',
        memory: '1Gi',
        pods: '3',
        'requests.cpu': '5',
        'requests.memory': '1Gi',
      },
    ],
    [
      'a per-cluster component assignment larger than replicas x clusters wins',
      {
        ...flink,
        components,
        clusters: [
          {
            name: 'a',
            components: [
              { name: 'taskmanager', replicas: 3 },
              { name: 'jobmanager', replicas: 1 },
            ],
          },
        ],
      },
      {
        'count/flinkdeployments.flink.apache.org': '1',
        cpu: '7',
        memory: '1Gi',
        pods: '4',
        'requests.cpu': '7',
        'requests.memory': '1Gi',
      },
    ],
    [
      'a component without requirements charges pods only',
      { ...flink, components: [{ name: 'sidecar', replicas: 2 }] },
      { 'count/flinkdeployments.flink.apache.org': '1', pods: '2' },
    ],
  ])('%s', (_name, shape, expected) => {
    expect(charge(shape)).toEqual(expected);
  });
});

describe('bindingCharge: errors', () => {
  it.each<[string, Shape, string[], Record<string, string>]>([
    [
      'invalid quantity: named field, other resources still charged',
      { replicas: 2, request: { cpu: 'lots', memory: '1Gi' } },
      ['spec.replicaRequirements.resourceRequest[cpu]: invalid quantity "lots"'],
      { 'count/deployments.apps': '1', memory: '2Gi', pods: '2', 'requests.memory': '2Gi' },
    ],
    [
      'negative request',
      { replicas: 1, request: { cpu: '-1' } },
      ['spec.replicaRequirements.resourceRequest[cpu]: must be greater than or equal to 0, got "-1"'],
      { 'count/deployments.apps': '1', pods: '1' },
    ],
    [
      'negative replicas',
      { replicas: -2, request: { cpu: '1' } },
      ['spec.replicas: must be a whole number of 0 or more, got -2'],
      { 'count/deployments.apps': '1' },
    ],
    [
      'fractional cluster replicas',
      { replicas: 1, request: { cpu: '1' }, clusters: [{ name: 'a', replicas: 1.5 }] },
      ['spec.clusters[0].replicas: must be a whole number of 0 or more, got 1.5'],
      { 'count/deployments.apps': '1', cpu: '1', pods: '1', 'requests.cpu': '1' },
    ],
    [
      'invalid component quantity',
      {
        components: [
          { name: 'tm', replicas: 1, replicaRequirements: { resourceRequest: { memory: '1 Gi' } } },
        ],
      },
      ['spec.components[0].replicaRequirements.resourceRequest[memory]: invalid quantity "1 Gi"'],
      { 'count/deployments.apps': '1', pods: '1' },
    ],
    [
      'request is not a map',
      { replicas: 1, request: 'cpu=1' as unknown as Record<string, unknown> },
      ['spec.replicaRequirements.resourceRequest: must be an object'],
      { 'count/deployments.apps': '1', pods: '1' },
    ],
    ['missing kind', { kind: '', replicas: 1 }, ['spec.resource.kind: required'], { pods: '1' }],
  ])('%s', (_name, shape, expectedPrefixes, expectedCharge) => {
    const result = bindingCharge(binding(shape));
    expect(result.errors).toHaveLength(expectedPrefixes.length);
    result.errors.forEach((error, i) => expect(error.startsWith(expectedPrefixes[i] as string)).toBe(true));
    expect(formatList(result.charge)).toEqual(expectedCharge);
  });

  it('never throws on garbage', () => {
    for (const garbage of [undefined, null, 42, 'x', {}, { spec: null }, { spec: { clusters: 'a' } }]) {
      expect(() => bindingCharge(garbage as unknown as ResourceBinding)).not.toThrow();
    }
    expect(bindingCharge({} as ResourceBinding).errors).toEqual([
      'spec: required: a ResourceBinding must have a spec',
    ]);
    expect(bindingCharge({ spec: { clusters: 'a' } } as unknown as ResourceBinding).errors).toContain(
      'spec.clusters: must be a list, got string',
    );
  });
});

describe('plurals', () => {
  it.each([
    ['Deployment', 'deployments'],
    ['Ingress', 'ingresses'],
    ['Status', 'statuses'],
    ['Policy', 'policies'],
    ['Gateway', 'gateways'],
    ['Endpoints', 'endpoints'],
    ['FlinkDeployment', 'flinkdeployments'],
    ['HTTPRoute', 'httproutes'],
    ['', ''],
  ])('guessPlural(%s) = %s', (kind, plural) => {
    expect(guessPlural(kind)).toBe(plural);
  });

  it.each([
    ['v1', 'Service', 'count/services'],
    ['apps/v1', 'Deployment', 'count/deployments.apps'],
    ['batch/v1', 'Job', 'count/jobs.batch'],
    ['networking.k8s.io/v1', 'Ingress', 'count/ingresses.networking.k8s.io'],
    ['extensions/v1beta1', 'Ingress', 'count/ingresses.extensions'],
    ['example.com/v1', 'Widget', 'count/widgets.example.com'],
  ])('countResourceName(%s, %s) = %s', (apiVersion, kind, name) => {
    expect(countResourceName(apiVersion, kind)).toBe(name);
  });
});

describe('missingRequestErrors', () => {
  it.each<[string, Shape, string[], string[]]>([
    ['cpu tracked, no cpu request', { replicas: 2, request: { memory: '1Gi' } }, ['cpu'], ['requests.cpu']],
    [
      'requests.cpu tracked, no cpu request',
      { replicas: 2, request: { memory: '1Gi' } },
      ['requests.cpu'],
      ['requests.cpu'],
    ],
    [
      'memory tracked, no memory request',
      { replicas: 1, request: { cpu: '1' } },
      ['requests.memory'],
      ['requests.memory'],
    ],
    [
      'both tracked, no requirements at all',
      { replicas: 1 },
      ['cpu', 'memory'],
      ['requests.cpu', 'requests.memory'],
    ],
    [
      'both tracked and declared',
      { replicas: 1, request: { cpu: '1', memory: '1Gi' } },
      ['cpu', 'memory'],
      [],
    ],
    ['a zero request counts as declared', { replicas: 1, request: { cpu: '0' } }, ['cpu'], []],
    ['quota tracks neither', { replicas: 3 }, ['pods', 'nvidia.com/gpu', 'ephemeral-storage'], []],
    ['no replicas: nothing to require', { replicas: 0 }, ['cpu'], []],
    ['a Service has no replicas', { apiVersion: 'v1', kind: 'Service' }, ['cpu', 'memory'], []],
    [
      'scheduled replicas count',
      { request: {}, clusters: [{ name: 'a', replicas: 1 }] },
      ['cpu'],
      ['requests.cpu'],
    ],
  ])('%s', (_name, shape, hard, expected) => {
    const messages = missingRequestErrors(binding(shape), hard, 'team-a');
    expect(messages.map((m) => /^must specify (\S+) /.exec(m)?.[1])).toEqual(expected);
  });

  it('names the workload, the binding, the quota and the resource', () => {
    expect(
      missingRequestErrors(binding({ replicas: 1, request: { memory: '1Gi' } }), ['cpu'], 'team-a'),
    ).toEqual([
      'must specify requests.cpu for Deployment web (ResourceBinding team-a/web-deployment): quota team-a tracks cpu, ' +
        'so every replica must declare a cpu request; set resources.requests.cpu on its containers ' +
        '(spec.replicaRequirements.resourceRequest has none)',
    ]);
    expect(missingRequestErrors(binding({ replicas: 1 }), ['memory'])[0]).toContain(
      'a KarmadaQuota of this namespace tracks memory',
    );
  });

  it('checks every component with replicas', () => {
    const messages = missingRequestErrors(
      binding({
        kind: 'FlinkDeployment',
        apiVersion: 'flink.apache.org/v1beta1',
        components: [
          { name: 'jobmanager', replicas: 1, replicaRequirements: { resourceRequest: { cpu: '1' } } },
          { name: 'taskmanager', replicas: 2, replicaRequirements: { resourceRequest: { memory: '1Gi' } } },
          { name: 'idle', replicas: 0 },
        ],
      }),
      ['cpu', 'requests.memory'],
      'team-a',
    );
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(
      /^must specify requests\.memory for component jobmanager of FlinkDeployment web \(ResourceBinding team-a\/web-deployment\)/,
    );
    expect(messages[0]).toContain('(spec.components[0].replicaRequirements.resourceRequest has none)');
    expect(messages[1]).toMatch(
      /^must specify requests\.cpu for component taskmanager of FlinkDeployment web/,
    );
  });
});

describe('unboundedPodsRefusals', () => {
  const daemonSet: Shape = { apiVersion: 'apps/v1', kind: 'DaemonSet' };
  const quota = (hard: string[], scoped = false, name = 'gold'): KarmadaQuota =>
    ({
      metadata: { namespace: 'team-a', name },
      spec: {
        hard: Object.fromEntries(hard.map((key) => [key, '10'])),
        ...(scoped
          ? {
              scopeSelector: {
                matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
              },
            }
          : {}),
      },
    }) as KarmadaQuota;

  // [case, new binding, stored binding of an UPDATE, quota's hard keys, scoped, refused]
  it.each<[string, Shape, Shape | undefined, string[], boolean, boolean]>([
    ['DaemonSet, cpu limited', daemonSet, undefined, ['cpu'], false, true],
    ['DaemonSet, pods limited', daemonSet, undefined, ['pods'], false, true],
    ['DaemonSet, requests.memory limited', daemonSet, undefined, ['requests.memory'], false, true],
    ['DaemonSet, a GPU limited', daemonSet, undefined, ['nvidia.com/gpu'], false, true],
    ['DaemonSet, hugepages limited', daemonSet, undefined, ['hugepages-2Mi'], false, true],
    ['DaemonSet, ephemeral-storage limited', daemonSet, undefined, ['ephemeral-storage'], false, true],
    ['DaemonSet, a limits.* key', daemonSet, undefined, ['limits.cpu'], false, true],
    [
      'DaemonSet, only object counts limited',
      daemonSet,
      undefined,
      ['count/daemonsets.apps', 'services'],
      false,
      false,
    ],
    ['DaemonSet, nothing limited', daemonSet, undefined, [], false, false],
    ['DaemonSet, a scoped cpu quota: its pods may be in scope', daemonSet, undefined, ['cpu'], true, true],
    ['DaemonSet, a scoped count-only quota', daemonSet, undefined, ['count/daemonsets.apps'], true, false],
    ['CronJob', { apiVersion: 'batch/v1', kind: 'CronJob' }, undefined, ['cpu'], false, true],
    [
      'CronJob batch/v1beta1',
      { apiVersion: 'batch/v1beta1', kind: 'CronJob' },
      undefined,
      ['cpu'],
      false,
      true,
    ],
    [
      'a ReplicaSet: Karmada v1.18.2 declares its replicas (0 here, omitted), bounded',
      { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
      undefined,
      ['pods'],
      false,
      false,
    ],
    [
      'a ReplicaSet of extensions/v1beta1: not interpreted',
      { apiVersion: 'extensions/v1beta1', kind: 'ReplicaSet' },
      undefined,
      ['pods'],
      false,
      true,
    ],
    [
      'ReplicationController',
      { apiVersion: 'v1', kind: 'ReplicationController' },
      undefined,
      ['pods'],
      false,
      true,
    ],
    [
      'DaemonSet of extensions/v1beta1',
      { apiVersion: 'extensions/v1beta1', kind: 'DaemonSet' },
      undefined,
      ['cpu'],
      false,
      true,
    ],
    [
      'a DaemonSet of another group is not known to run pods',
      { apiVersion: 'example.com/v1', kind: 'DaemonSet' },
      undefined,
      ['cpu'],
      false,
      false,
    ],
    [
      'an unknown custom kind is admitted (documented exception)',
      { apiVersion: 'example.com/v1', kind: 'Widget' },
      undefined,
      ['cpu'],
      false,
      false,
    ],
    ['a Deployment scaled to 0', { replicas: 0, request: { cpu: '1' } }, undefined, ['cpu'], false, false],
    ['a ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap' }, undefined, ['cpu', 'pods'], false, false],
    [
      'a DaemonSet an interpreter customization declares replicas for',
      { ...daemonSet, replicas: 3, request: { cpu: '1' } },
      undefined,
      ['cpu'],
      false,
      false,
    ],
    [
      'a ReplicaSet an interpreter declares, scaled to 0 (requirements present)',
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', request: { cpu: '1' } },
      undefined,
      ['cpu'],
      false,
      false,
    ],
    [
      'a DaemonSet scheduled to one more cluster',
      { ...daemonSet, clusters: onClusters(0, 0) },
      { ...daemonSet, clusters: onClusters(0) },
      ['cpu'],
      false,
      true,
    ],
    [
      'a DaemonSet update keeping its clusters',
      { ...daemonSet, clusters: onClusters(0, 0) },
      { ...daemonSet, clusters: onClusters(0, 0) },
      ['cpu'],
      false,
      false,
    ],
    [
      'an unscheduled DaemonSet scheduled to one cluster',
      { ...daemonSet, clusters: onClusters(0) },
      daemonSet,
      ['cpu'],
      false,
      false,
    ],
    [
      'a DaemonSet whose interpreter customization was removed',
      daemonSet,
      { ...daemonSet, replicas: 3, request: { cpu: '1' } },
      ['cpu'],
      false,
      true,
    ],
  ])('%s', (_name, shape, old, hard, scoped, refused) => {
    const refusals = unboundedPodsRefusals(binding(shape), old && binding(old), [quota(hard, scoped)]);
    expect(Object.keys(refusals).length > 0).toBe(refused);
  });

  it('names the workload, the binding, the quota, its keys and what to do', () => {
    expect(
      unboundedPodsRefusals(binding({ ...daemonSet, clusters: onClusters(0, 0) }), undefined, [
        quota(['pods', 'cpu']),
      ]),
    ).toEqual({
      gold:
        'cannot bound the pods of DaemonSet web (ResourceBinding team-a/web-deployment): Karmada declares no ' +
        'replicas for apps/v1 DaemonSet, so the binding carries neither how many pods it runs nor their ' +
        'requests, and quota gold limits cpu, pods. Run such workloads in a namespace whose KarmadaQuotas ' +
        'limit only object counts (e.g. count/daemonsets.apps), or declare their replicas and requests to ' +
        'Karmada with a ResourceInterpreterCustomization (replicaResource) for apps/v1 DaemonSet',
    });
    expect(unboundedPodsRefusals(binding(daemonSet), undefined, [quota(['cpu'], true)])['gold']).toContain(
      'quota gold limits cpu; its scopeSelector may select these pods, since the binding does not carry their priority class.',
    );
  });

  it('every quota limiting pods or compute refuses, in the given order', () => {
    const counts = quota(['count/daemonsets.apps'], false, 'counts');
    const compute = [quota(['memory'], true, 'high'), quota(['cpu'], false, 'all')];
    expect(Object.keys(unboundedPodsRefusals(binding(daemonSet), undefined, [counts, ...compute]))).toEqual([
      'high',
      'all',
    ]);
    expect(unboundedPodsRefusals(binding(daemonSet), undefined, [counts])).toEqual({});
    expect(unboundedPodsRefusals(binding(daemonSet), undefined, [])).toEqual({});
  });
});
