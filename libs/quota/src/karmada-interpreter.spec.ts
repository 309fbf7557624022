import type { ResourceBinding } from '#api';
import {
  interpretTemplate,
  isNativeReplicaKind,
  memberReplicas,
  reviseReplicas,
  templatePriorityClass,
} from './karmada-interpreter.js';
import { hasPriorityClassScope, templateClassNeeded, withTemplateClass } from './scopes.js';
import type { KarmadaQuota } from '#api';

const pod = (priorityClassName?: string) => ({
  containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }],
  ...(priorityClassName !== undefined ? { priorityClassName } : {}),
});
const template = (apiVersion: string, kind: string, spec: Record<string, unknown>) => ({
  apiVersion,
  kind,
  metadata: { name: 'web', namespace: 'team-a' },
  spec,
});
const withPod = (spec: Record<string, unknown>, priorityClassName?: string) => ({
  ...spec,
  template: { spec: pod(priorityClassName) },
});

describe("Karmada v1.18.2's default replica interpreter (its replica_test.go cases first)", () => {
  it.each<[string, unknown, number | undefined]>([
    ['deployReplica: spec.replicas 2', template('apps/v1', 'Deployment', withPod({ replicas: 2 })), 2],
    ['statefulSetReplica: spec.replicas 2', template('apps/v1', 'StatefulSet', withPod({ replicas: 2 })), 2],
    ['replicaSetReplica: spec.replicas 3', template('apps/v1', 'ReplicaSet', withPod({ replicas: 3 })), 3],
    [
      'jobReplica: parallelism 3, completions 2 -> 2',
      template('batch/v1', 'Job', withPod({ parallelism: 3, completions: 2 })),
      2,
    ],
    ['podReplica: always 1', template('v1', 'Pod', pod()), 1],
    ['a Deployment without spec.replicas: 0', template('apps/v1', 'Deployment', withPod({})), 0],
    [
      'a Job without completions: its parallelism',
      template('batch/v1', 'Job', withPod({ parallelism: 5 })),
      5,
    ],
    ['a Job without parallelism: 0', template('batch/v1', 'Job', withPod({ completions: 4 })), 0],
    ['a DaemonSet: not interpreted', template('apps/v1', 'DaemonSet', withPod({})), undefined],
    ['a CronJob: not interpreted', template('batch/v1', 'CronJob', {}), undefined],
    [
      'a Deployment of another group',
      template('example.com/v1', 'Deployment', withPod({ replicas: 1 })),
      undefined,
    ],
    ['not an object', 'Deployment', undefined],
  ])('%s', (_name, object, replicas) => {
    expect(interpretTemplate(object)?.replicas).toBe(replicas);
  });

  it.each<[string, unknown, string | undefined]>([
    [
      'a Deployment with a class',
      template('apps/v1', 'Deployment', withPod({ replicas: 1 }, 'high')),
      'high',
    ],
    ['a Deployment without one', template('apps/v1', 'Deployment', withPod({ replicas: 1 })), ''],
    ['a Pod with a class', template('v1', 'Pod', pod('low')), 'low'],
    ['a Job with a class', template('batch/v1', 'Job', withPod({ parallelism: 1 }, 'batch')), 'batch'],
    ['a kind Karmada does not interpret', template('apps/v1', 'DaemonSet', withPod({}, 'high')), undefined],
  ])('the pod template’s class: %s', (_name, object, priorityClassName) => {
    expect(templatePriorityClass(object)).toBe(priorityClassName);
  });

  it.each([
    ['apps/v1', 'Deployment', true],
    ['apps/v1beta2', 'StatefulSet', true],
    ['batch/v1', 'Job', true],
    ['v1', 'Pod', true],
    ['apps/v1', 'Pod', false],
    ['v1', 'Job', false],
    [undefined, 'Pod', false],
  ])('isNativeReplicaKind(%s, %s) = %s', (apiVersion, kind, expected) => {
    expect(isNativeReplicaKind(apiVersion, kind)).toBe(expected);
  });
});

describe("a cluster's copy: Karmada's ReviseReplica, then the member's defaults", () => {
  // [case, template, cluster replicas, revised spec fields, replicas the member runs]
  it.each<[string, Record<string, unknown>, number, Record<string, unknown>, number]>([
    [
      'a Deployment: spec.replicas',
      template('apps/v1', 'Deployment', { replicas: 6 }),
      2,
      { replicas: 2 },
      2,
    ],
    ['a StatefulSet', template('apps/v1', 'StatefulSet', { replicas: 6 }), 3, { replicas: 3 }, 3],
    ['a ReplicaSet', template('apps/v1', 'ReplicaSet', {}), 1, { replicas: 1 }, 1],
    [
      'a Job: spec.parallelism, completions kept',
      template('batch/v1', 'Job', { parallelism: 4, completions: 8 }),
      2,
      { parallelism: 2, completions: 8 },
      2,
    ],
    ['a Pod: unchanged', template('v1', 'Pod', { containers: [] }), 3, { containers: [] }, 1],
  ])('%s', (_name, workload, replicas, fields, runs) => {
    const revised = reviseReplicas(workload, replicas)!;
    expect(revised['spec']).toMatchObject(fields);
    expect(memberReplicas(revised)).toBe(runs);
    expect(workload['spec']).not.toBe(revised['spec']);
  });

  it.each<[string, Record<string, unknown>, number]>([
    ['replicas removed: the member defaults them to 1', template('apps/v1', 'Deployment', {}), 1],
    ['replicas null: 1', template('apps/v1', 'Deployment', { replicas: null }), 1],
    ['a Job without parallelism: 1', template('batch/v1', 'Job', { completions: 5 }), 1],
    [
      'a Job whose completions are fewer: completions',
      template('batch/v1', 'Job', { parallelism: 3, completions: 1 }),
      1,
    ],
  ])('%s', (_name, workload, runs) => {
    expect(memberReplicas(workload)).toBe(runs);
  });

  it('reads nothing of kinds Karmada does not interpret', () => {
    const daemonSet = template('apps/v1', 'DaemonSet', {});
    expect(reviseReplicas(daemonSet, 2)).toBeUndefined();
    expect(memberReplicas(daemonSet)).toBeUndefined();
  });
});

describe('a binding written without the ResourceQuotaEstimate gate takes its template’s class', () => {
  const rb = (
    replicaRequirements: Record<string, unknown> | undefined,
    extra: Record<string, unknown> = {},
  ) =>
    ({
      metadata: { name: 'web-deployment', namespace: 'team-a' },
      spec: {
        resource: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'team-a',
          name: 'web',
          uid: 'u1',
          resourceVersion: '7',
        },
        replicas: 2,
        ...(replicaRequirements ? { replicaRequirements } : {}),
        ...extra,
      },
    }) as unknown as ResourceBinding;
  const ref = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'team-a',
    name: 'web',
    uid: 'u1',
    resourceVersion: '7',
  };

  it.each<[string, ResourceBinding, typeof ref | undefined]>([
    ['default gates: requests, no class, no namespace', rb({ resourceRequest: { cpu: '1' } }), ref],
    ['default gates, a template requesting nothing: no replicaRequirements', rb(undefined), ref],
    [
      'the gate on: the namespace written, no class (the template has none)',
      rb({ resourceRequest: { cpu: '1' }, namespace: 'team-a' }),
      undefined,
    ],
    [
      'the gate on: the class written',
      rb({ resourceRequest: { cpu: '1' }, namespace: 'team-a', priorityClassName: 'high' }),
      undefined,
    ],
    [
      'a class written by someone else: the binding is taken at its word',
      rb({ priorityClassName: 'high' }),
      undefined,
    ],
    ['several pod templates: their own classes', rb(undefined, { components: [{ name: 'a' }] }), undefined],
    [
      'a kind Karmada does not interpret',
      {
        ...rb(undefined),
        spec: { ...rb(undefined).spec, resource: { ...ref, apiVersion: 'example.com/v1', kind: 'Flink' } },
      } as ResourceBinding,
      undefined,
    ],
  ])('%s', (_name, binding, expected) => {
    expect(templateClassNeeded(binding)).toEqual(expected);
  });

  it('sets the class beside what the binding requires, and leaves a binding as it is for none', () => {
    const binding = rb({ resourceRequest: { cpu: '1' } });
    expect(withTemplateClass(binding, 'high').spec.replicaRequirements).toEqual({
      resourceRequest: { cpu: '1' },
      priorityClassName: 'high',
    });
    expect(withTemplateClass(binding, '')).toBe(binding);
    expect(withTemplateClass(rb(undefined), 'high').spec.replicaRequirements).toEqual({
      priorityClassName: 'high',
    });
  });

  it.each<[string, unknown, boolean]>([
    ['no selector', undefined, false],
    [
      'a PriorityClass expression',
      { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists' }] },
      true,
    ],
    ['another scope only', { matchExpressions: [{ scopeName: 'BestEffort', operator: 'Exists' }] }, false],
    ['malformed', 'high', false],
  ])('hasPriorityClassScope: %s', (_name, scopeSelector, expected) => {
    const quota = { metadata: { name: 'q' }, spec: { hard: {}, scopeSelector } } as unknown as KarmadaQuota;
    expect(hasPriorityClassScope(quota)).toBe(expected);
  });
});
