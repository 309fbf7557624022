import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import {
  controllerOf,
  controllerRefOf,
  groupOf,
  OwnerIndex,
  topLevelWorkload,
  type ObjectRef,
  type OwnerLookup,
  type WorkloadRef,
} from './index.js';

const owner = (apiVersion: string, kind: string, name: string, controller = true): V1OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `${kind}-${name}`,
  controller,
});

const pod = (ownerReferences?: V1OwnerReference[], name = 'pod-1'): V1Pod => ({
  metadata: { name, namespace: 'team-a', ...(ownerReferences ? { ownerReferences } : {}) },
});

const rsLookup: OwnerLookup = (name) => ({ 'web-7d9f': 'web' })[name];

describe('topLevelWorkload', () => {
  const cases: [string, V1OwnerReference[] | undefined, { kind: string; name: string }][] = [
    ['no owners: the pod itself', undefined, { kind: 'Pod', name: 'pod-1' }],
    ['empty owner list', [], { kind: 'Pod', name: 'pod-1' }],
    [
      'owners but no controller',
      [owner('apps/v1', 'ReplicaSet', 'web-7d9f', false)],
      { kind: 'Pod', name: 'pod-1' },
    ],
    [
      'controller flag absent',
      [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f', uid: 'u' }],
      { kind: 'Pod', name: 'pod-1' },
    ],
    [
      'ReplicaSet whose Deployment is known',
      [owner('apps/v1', 'ReplicaSet', 'web-7d9f')],
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'ReplicaSet with no known Deployment',
      [owner('apps/v1', 'ReplicaSet', 'bare-rs')],
      { kind: 'ReplicaSet', name: 'bare-rs' },
    ],
    [
      'legacy extensions ReplicaSet',
      [owner('extensions/v1beta1', 'ReplicaSet', 'web-7d9f')],
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'a ReplicaSet kind of another group is not walked',
      [owner('example.com/v1', 'ReplicaSet', 'web-7d9f')],
      { kind: 'ReplicaSet', name: 'web-7d9f' },
    ],
    ['StatefulSet', [owner('apps/v1', 'StatefulSet', 'db')], { kind: 'StatefulSet', name: 'db' }],
    ['DaemonSet', [owner('apps/v1', 'DaemonSet', 'agent')], { kind: 'DaemonSet', name: 'agent' }],
    ['Job', [owner('batch/v1', 'Job', 'migrate')], { kind: 'Job', name: 'migrate' }],
    [
      'ReplicationController',
      [owner('v1', 'ReplicationController', 'old')],
      { kind: 'ReplicationController', name: 'old' },
    ],
    ['mirror pod owned by its Node', [owner('v1', 'Node', 'node-1')], { kind: 'Node', name: 'node-1' }],
    [
      'a custom controller',
      [owner('argoproj.io/v1alpha1', 'Rollout', 'canary')],
      { kind: 'Rollout', name: 'canary' },
    ],
    [
      'the controller among other owners',
      [
        owner('v1', 'ConfigMap', 'cfg', false),
        owner('apps/v1', 'StatefulSet', 'db'),
        owner('v1', 'Secret', 's', false),
      ],
      { kind: 'StatefulSet', name: 'db' },
    ],
    [
      'a controller without a name falls back to the pod',
      [owner('apps/v1', 'StatefulSet', '')],
      { kind: 'Pod', name: 'pod-1' },
    ],
  ];

  it.each(cases)('%s', (_name, refs, expected) => {
    expect(topLevelWorkload(pod(refs), rsLookup)).toEqual(expected);
  });

  it('keeps the ReplicaSet without a lookup', () => {
    expect(topLevelWorkload(pod([owner('apps/v1', 'ReplicaSet', 'web-7d9f')]))).toEqual({
      kind: 'ReplicaSet',
      name: 'web-7d9f',
    });
  });

  it('treats an empty lookup answer as unknown', () => {
    expect(topLevelWorkload(pod([owner('apps/v1', 'ReplicaSet', 'rs')]), () => '')).toEqual({
      kind: 'ReplicaSet',
      name: 'rs',
    });
  });

  it('passes the owner name and the pod namespace to the lookup', () => {
    const calls: string[][] = [];
    topLevelWorkload(pod([owner('apps/v1', 'ReplicaSet', 'web-7d9f')]), (...args) => {
      calls.push(args);
      return undefined;
    });
    expect(calls).toEqual([['web-7d9f', 'team-a']]);
  });

  it('never throws on malformed metadata', () => {
    expect(topLevelWorkload({} as V1Pod)).toEqual({ kind: 'Pod', name: '' });
    expect(topLevelWorkload({ metadata: { name: 'x', ownerReferences: 'no' } } as unknown as V1Pod)).toEqual({
      kind: 'Pod',
      name: 'x',
    });
    expect(
      topLevelWorkload({ metadata: { name: 'x', ownerReferences: [null, 3] } } as unknown as V1Pod),
    ).toEqual({ kind: 'Pod', name: 'x' });
  });
});

describe('owner helpers', () => {
  it('controllerOf finds the controller reference', () => {
    expect(controllerOf(undefined)).toBeUndefined();
    expect(controllerOf([owner('v1', 'A', 'a', false)])).toBeUndefined();
    expect(controllerOf([owner('v1', 'A', 'a', false), owner('v1', 'B', 'b')])?.name).toBe('b');
  });

  it.each([
    ['apps/v1', 'apps'],
    ['v1', ''],
    ['argoproj.io/v1alpha1', 'argoproj.io'],
    [undefined, ''],
  ])('groupOf(%s) is %j', (apiVersion, group) => {
    expect(groupOf(apiVersion)).toBe(group);
  });

  const cases: [string, V1OwnerReference[] | undefined, ObjectRef | undefined][] = [
    ['no owners', undefined, undefined],
    ['a non-controller owner', [owner('apps/v1', 'Deployment', 'web', false)], undefined],
    [
      'a controller',
      [owner('apps/v1', 'Deployment', 'web')],
      { group: 'apps', kind: 'Deployment', name: 'web' },
    ],
    ['a core controller', [owner('v1', 'Node', 'n1')], { group: '', kind: 'Node', name: 'n1' }],
    ['a controller without a name', [owner('apps/v1', 'Deployment', '')], undefined],
  ];
  it.each(cases)('controllerRefOf: %s', (_name, refs, expected) => {
    expect(controllerRefOf({ name: 'x', ...(refs ? { ownerReferences: refs } : {}) })).toEqual(expected);
    expect(controllerRefOf(undefined)).toBeUndefined();
  });
});

const ref = (group: string, kind: string, name: string): ObjectRef => ({ group, kind, name });
const rs = (name: string) => ref('apps', 'ReplicaSet', name);
const deploy = (name: string) => ref('apps', 'Deployment', name);
const rollout = (name: string) => ref('argoproj.io', 'Rollout', name);
const flink = (name: string) => ref('flink.apache.org', 'FlinkDeployment', name);

describe('OwnerIndex', () => {
  /** [what, controllers known as [object, controller], object walked from, expected workload] */
  const walks: [string, [ObjectRef, ObjectRef | undefined][], ObjectRef, WorkloadRef][] = [
    ['an unknown object is its own workload', [], rs('web-1'), { kind: 'ReplicaSet', name: 'web-1' }],
    [
      'a top-level object is its own workload',
      [[deploy('web'), undefined]],
      deploy('web'),
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'a Deployment ReplicaSet',
      [[rs('web-1'), deploy('web')]],
      rs('web-1'),
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'an Argo Rollout ReplicaSet: the unwatched Rollout is the workload',
      [[rs('canary-1'), rollout('canary')]],
      rs('canary-1'),
      { kind: 'Rollout', name: 'canary' },
    ],
    [
      'an operator-made Deployment, through every known level',
      [
        [rs('job-1'), deploy('job')],
        [deploy('job'), flink('job')],
      ],
      rs('job-1'),
      { kind: 'FlinkDeployment', name: 'job' },
    ],
    [
      'a chain known only in part stops at the first unknown owner',
      [[deploy('job'), flink('job')]],
      rs('job-1'),
      { kind: 'ReplicaSet', name: 'job-1' },
    ],
    [
      'an operator-made Service',
      [[ref('', 'Service', 'job-rest'), flink('job')]],
      ref('', 'Service', 'job-rest'),
      { kind: 'FlinkDeployment', name: 'job' },
    ],
    [
      'groups are told apart: a core Service is not walked as a Knative Service',
      [[ref('', 'Service', 'hello'), ref('serving.knative.dev', 'Route', 'hello')]],
      ref('serving.knative.dev', 'Service', 'hello'),
      { kind: 'Service', name: 'hello' },
    ],
    [
      'a cycle (never valid) ends after a bounded walk',
      [
        [deploy('a'), deploy('b')],
        [deploy('b'), deploy('a')],
      ],
      deploy('a'),
      { kind: 'Deployment', name: 'a' },
    ],
  ];
  it.each(walks)('%s', (_what, known, from, expected) => {
    const owners = new OwnerIndex();
    for (const [object, controller] of known) owners.setController('team-a', object, controller);
    expect(owners.workloadOf('team-a', from)).toEqual(expected);
    // namespaces are apart
    expect(owners.workloadOf('team-b', from)).toEqual({ kind: from.kind, name: from.name });
  });

  /** [what, controller before, controller after, whether attribution changed] */
  const changes: [string, ObjectRef | undefined, ObjectRef | undefined, boolean][] = [
    ['a first controller', undefined, deploy('web'), true],
    ['the same controller again', deploy('web'), deploy('web'), false],
    ['another controller (adopted)', deploy('web'), deploy('other'), true],
    ['the controller dropped (orphaned)', deploy('web'), undefined, true],
    ['still none', undefined, undefined, false],
  ];
  it.each(changes)('setController reports %s', (_what, before, after, changed) => {
    const owners = new OwnerIndex();
    owners.setController('team-a', rs('web-1'), before);
    expect(owners.setController('team-a', rs('web-1'), after)).toBe(changed);
    expect(owners.size).toBe(after === undefined ? 0 : 1);
  });

  it('forgets a deleted object', () => {
    const owners = new OwnerIndex();
    owners.setController('team-a', rs('web-1'), deploy('web'));
    owners.forget('team-a', rs('web-1'));
    expect(owners.size).toBe(0);
    expect(owners.workloadOf('team-a', rs('web-1'))).toEqual({ kind: 'ReplicaSet', name: 'web-1' });
  });

  it('walks a pod through the index', () => {
    const owners = new OwnerIndex();
    owners.setController('team-a', rs('web-7d9f'), deploy('web'));
    owners.setController('team-a', deploy('web'), flink('web'));
    expect(topLevelWorkload(pod([owner('apps/v1', 'ReplicaSet', 'web-7d9f')]), owners)).toEqual({
      kind: 'FlinkDeployment',
      name: 'web',
    });
    expect(topLevelWorkload(pod(), owners)).toEqual({ kind: 'Pod', name: 'pod-1' });
  });
});
