import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import { controllerOf, cronJobOf, deploymentOf, topLevelWorkload, type OwnerLookup } from './index.js';

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
const jobLookup: OwnerLookup = (name) => ({ 'nightly-2900': 'nightly' })[name];

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
      'Job of a known CronJob',
      [owner('batch/v1', 'Job', 'nightly-2900')],
      { kind: 'CronJob', name: 'nightly' },
    ],
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
    expect(topLevelWorkload(pod(refs), rsLookup, jobLookup)).toEqual(expected);
  });

  it('keeps ReplicaSet and Job without lookups', () => {
    expect(topLevelWorkload(pod([owner('apps/v1', 'ReplicaSet', 'web-7d9f')]))).toEqual({
      kind: 'ReplicaSet',
      name: 'web-7d9f',
    });
    expect(topLevelWorkload(pod([owner('batch/v1', 'Job', 'nightly-2900')]))).toEqual({
      kind: 'Job',
      name: 'nightly-2900',
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

  const cases: [string, V1OwnerReference[] | undefined, string | undefined, string | undefined][] = [
    ['no owners', undefined, undefined, undefined],
    ['a Deployment controller', [owner('apps/v1', 'Deployment', 'web')], 'web', undefined],
    ['a CronJob controller', [owner('batch/v1', 'CronJob', 'nightly')], undefined, 'nightly'],
    [
      'a non-controller Deployment owner',
      [owner('apps/v1', 'Deployment', 'web', false)],
      undefined,
      undefined,
    ],
    [
      'a Deployment kind of another group',
      [owner('example.com/v1', 'Deployment', 'web')],
      undefined,
      undefined,
    ],
    ['some other controller', [owner('example.com/v1', 'Thing', 't')], undefined, undefined],
  ];
  it.each(cases)('deploymentOf / cronJobOf: %s', (_name, refs, deployment, cronJob) => {
    const obj = { metadata: { name: 'x', ...(refs ? { ownerReferences: refs } : {}) } };
    expect(deploymentOf(obj)).toBe(deployment);
    expect(cronJobOf(obj)).toBe(cronJob);
  });

  it('accept undefined', () => {
    expect(deploymentOf(undefined)).toBeUndefined();
    expect(cronJobOf(undefined)).toBeUndefined();
  });
});
