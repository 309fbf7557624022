import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import {
  controllerOf,
  controllerRefOf,
  groupOf,
  OwnerIndex,
  POD,
  realPodLink,
  topLevelWorkload,
  type ControllerRef,
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
    [
      'mirror pod owned by its Node: no controller of pods, the pod itself',
      [owner('v1', 'Node', 'node-1')],
      { kind: 'Pod', name: 'pod-1' },
    ],
    [
      'a Deployment claimed directly (written by hand: no controller makes such pods)',
      [owner('apps/v1', 'Deployment', 'web')],
      { kind: 'Pod', name: 'pod-1' },
    ],
    ['a CronJob claimed directly', [owner('batch/v1', 'CronJob', 'nightly')], { kind: 'Pod', name: 'pod-1' }],
    ['a Service claimed as controller', [owner('v1', 'Service', 'web')], { kind: 'Pod', name: 'pod-1' }],
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

  const cases: [string, V1OwnerReference[] | undefined, ControllerRef | undefined][] = [
    ['no owners', undefined, undefined],
    ['a non-controller owner', [owner('apps/v1', 'Deployment', 'web', false)], undefined],
    [
      'a controller, with the uid it names',
      [owner('apps/v1', 'Deployment', 'web')],
      { group: 'apps', kind: 'Deployment', name: 'web', uid: 'Deployment-web' },
    ],
    [
      'a core controller',
      [owner('v1', 'Node', 'n1')],
      { group: '', kind: 'Node', name: 'n1', uid: 'Node-n1' },
    ],
    [
      'a controller naming no uid (never stored by an API server): unchecked',
      [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: '', controller: true }],
      { group: 'apps', kind: 'Deployment', name: 'web' },
    ],
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

/** A reference to `object` naming `uid`. */
const named = (object: ObjectRef, uid: string): ControllerRef => ({ ...object, uid });
const sts = (name: string) => ref('apps', 'StatefulSet', name);
const ds = (name: string) => ref('apps', 'DaemonSet', name);
const rc = (name: string) => ref('', 'ReplicationController', name);
const job = (name: string) => ref('batch', 'Job', name);
const cron = (name: string) => ref('batch', 'CronJob', name);
const cloneSet = (name: string) => ref('apps.kruise.io', 'CloneSet', name);

/** A pod in team-a whose controller is `controller` (apiVersion from its group). */
const podOf = (controller: ControllerRef): V1Pod =>
  pod([
    {
      apiVersion: controller.group === '' ? 'v1' : `${controller.group}/v1`,
      kind: controller.kind,
      name: controller.name,
      uid: controller.uid ?? '',
      controller: true,
    },
  ]);

describe('incarnations and real pod chains', () => {
  /**
   * [what, the member's current objects as [object, its uid, its controller], the pod's controller
   * reference, the workload the pod is attributed to]. `terminating`: a previous incarnation's,
   * counted but never a binding's.
   */
  const cases: [string, [ObjectRef, string, ControllerRef | undefined][], ControllerRef, WorkloadRef][] = [
    [
      "the current Deployment's pods are its",
      [
        [deploy('web'), 'd2', undefined],
        [rs('web-1'), 'r1', named(deploy('web'), 'd2')],
      ],
      named(rs('web-1'), 'r1'),
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'a ReplicaSet of a Deployment deleted and re-created under its name: a previous incarnation',
      [
        [deploy('web'), 'd2', undefined],
        [rs('web-1'), 'r1', named(deploy('web'), 'd1')],
      ],
      named(rs('web-1'), 'r1'),
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'a pod of a ReplicaSet re-created under its name (same template): a previous incarnation',
      [
        [deploy('web'), 'd2', undefined],
        [rs('web-1'), 'r2', named(deploy('web'), 'd2')],
      ],
      named(rs('web-1'), 'r1'),
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'a Deployment deleted and not re-created yet: attributed by name (nothing to tell them apart)',
      [[rs('web-1'), 'r1', named(deploy('web'), 'd1')]],
      named(rs('web-1'), 'r1'),
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'a Job re-created under its name',
      [[job('etl'), 'j2', undefined]],
      named(job('etl'), 'j1'),
      { kind: 'Job', name: 'etl', terminating: true },
    ],
    [
      'the current Job',
      [[job('etl'), 'j2', undefined]],
      named(job('etl'), 'j2'),
      { kind: 'Job', name: 'etl' },
    ],
    [
      "a CronJob's Job, the CronJob re-created",
      [
        [cron('nightly'), 'c2', undefined],
        [job('nightly-1'), 'j1', named(cron('nightly'), 'c1')],
      ],
      named(job('nightly-1'), 'j1'),
      { kind: 'CronJob', name: 'nightly', terminating: true },
    ],
    [
      "the current CronJob's Job",
      [
        [cron('nightly'), 'c2', undefined],
        [job('nightly-1'), 'j1', named(cron('nightly'), 'c2')],
      ],
      named(job('nightly-1'), 'j1'),
      { kind: 'CronJob', name: 'nightly' },
    ],
    [
      'a StatefulSet re-created',
      [[sts('db'), 's2', undefined]],
      named(sts('db'), 's1'),
      { kind: 'StatefulSet', name: 'db', terminating: true },
    ],
    [
      'the current StatefulSet',
      [[sts('db'), 's2', undefined]],
      named(sts('db'), 's2'),
      { kind: 'StatefulSet', name: 'db' },
    ],
    [
      'a DaemonSet re-created',
      [[ds('agent'), 'a2', undefined]],
      named(ds('agent'), 'a1'),
      { kind: 'DaemonSet', name: 'agent', terminating: true },
    ],
    [
      'a ReplicationController re-created',
      [[rc('old'), 'o2', undefined]],
      named(rc('old'), 'o1'),
      { kind: 'ReplicationController', name: 'old', terminating: true },
    ],
    [
      "an operator re-created: its Deployment is a previous FlinkDeployment's",
      [
        [flink('job'), 'f2', undefined],
        [deploy('job'), 'd1', named(flink('job'), 'f1')],
        [rs('job-1'), 'r1', named(deploy('job'), 'd1')],
      ],
      named(rs('job-1'), 'r1'),
      { kind: 'FlinkDeployment', name: 'job', terminating: true },
    ],
    [
      "the current operator's Deployment",
      [
        [flink('job'), 'f1', undefined],
        [deploy('job'), 'd1', named(flink('job'), 'f1')],
        [rs('job-1'), 'r1', named(deploy('job'), 'd1')],
      ],
      named(rs('job-1'), 'r1'),
      { kind: 'FlinkDeployment', name: 'job' },
    ],
    [
      'a forged controller reference to a Deployment, its real uid: the pod is its own',
      [[deploy('web'), 'd2', undefined]],
      named(deploy('web'), 'd2'),
      { kind: 'Pod', name: 'pod-1' },
    ],
    [
      'a forged controller reference to a CronJob: the pod is its own',
      [[cron('nightly'), 'c2', undefined]],
      named(cron('nightly'), 'c2'),
      { kind: 'Pod', name: 'pod-1' },
    ],
    [
      'a ReplicaSet claiming a StatefulSet: its pods stop at the ReplicaSet',
      [
        [sts('db'), 's1', undefined],
        [rs('fake'), 'r9', named(sts('db'), 's1')],
      ],
      named(rs('fake'), 'r9'),
      { kind: 'ReplicaSet', name: 'fake' },
    ],
    [
      'a Job claiming a Deployment: its pods stop at the Job',
      [
        [deploy('web'), 'd2', undefined],
        [job('fake'), 'j9', named(deploy('web'), 'd2')],
      ],
      named(job('fake'), 'j9'),
      { kind: 'Job', name: 'fake' },
    ],
    [
      "an Argo Rollout's ReplicaSet: custom links are taken as they are",
      [[rs('canary-1'), 'r1', named(rollout('canary'), 'ro1')]],
      named(rs('canary-1'), 'r1'),
      { kind: 'Rollout', name: 'canary' },
    ],
    [
      'pods a custom controller makes itself (a Kruise CloneSet)',
      [[cloneSet('web'), 'k1', undefined]],
      named(cloneSet('web'), 'k1'),
      { kind: 'CloneSet', name: 'web' },
    ],
    [
      'a custom controller re-created',
      [[cloneSet('web'), 'k2', undefined]],
      named(cloneSet('web'), 'k1'),
      { kind: 'CloneSet', name: 'web', terminating: true },
    ],
    [
      'a reference naming no uid is not checked',
      [[job('etl'), 'j2', undefined]],
      job('etl'),
      { kind: 'Job', name: 'etl' },
    ],
  ];
  it.each(cases)('%s', (_what, known, controller, expected) => {
    const owners = new OwnerIndex();
    for (const [object, uid, ctrl] of known) owners.setObject('team-a', object, uid, ctrl);
    expect(topLevelWorkload(podOf(controller), owners)).toEqual(expected);
  });

  /** [child, owner, whether a pod is attributed through the link] */
  const links: [ObjectRef, ObjectRef, boolean][] = [
    [POD, rs('x'), true],
    [POD, ref('extensions', 'ReplicaSet', 'x'), true],
    [POD, sts('x'), true],
    [POD, ds('x'), true],
    [POD, job('x'), true],
    [POD, rc('x'), true],
    [POD, deploy('x'), false],
    [POD, cron('x'), false],
    [POD, ref('', 'Node', 'x'), false],
    [POD, ref('', 'Pod', 'x'), false],
    [POD, ref('networking.k8s.io', 'Ingress', 'x'), false],
    [POD, cloneSet('x'), true],
    [rs('x'), deploy('x'), true],
    [rs('x'), sts('x'), false],
    [rs('x'), rollout('x'), true],
    [job('x'), cron('x'), true],
    [job('x'), deploy('x'), false],
    [deploy('x'), flink('x'), true],
    [deploy('x'), deploy('y'), false],
    [sts('x'), ref('', 'ConfigMap', 'x'), false],
  ];
  it.each(links)('realPodLink(%j <- %j) is %s', (child, owner, real) => {
    expect(realPodLink(child, owner)).toBe(real);
  });

  /** [what, first, then, whether what is attributed through the object may have changed] */
  const updates: [
    string,
    [string | undefined, ControllerRef | undefined],
    [string | undefined, ControllerRef | undefined],
    boolean,
  ][] = [
    [
      'a status update: same uid, same controller',
      ['r1', named(deploy('web'), 'd1')],
      ['r1', named(deploy('web'), 'd1')],
      false,
    ],
    [
      're-created under its name',
      ['r1', named(deploy('web'), 'd1')],
      ['r2', named(deploy('web'), 'd1')],
      true,
    ],
    [
      'its controller re-created',
      ['r1', named(deploy('web'), 'd1')],
      ['r1', named(deploy('web'), 'd2')],
      true,
    ],
    ['a top-level object seen again', ['d1', undefined], ['d1', undefined], false],
    ['a top-level object re-created', ['d1', undefined], ['d2', undefined], true],
  ];
  it.each(updates)('setObject reports %s', (_what, [uid1, ctrl1], [uid2, ctrl2], changed) => {
    const owners = new OwnerIndex();
    expect(owners.setObject('team-a', rs('web-1'), uid1, ctrl1)).toBe(true);
    expect(owners.setObject('team-a', rs('web-1'), uid2, ctrl2)).toBe(changed);
    expect(owners.size).toBe(1);
  });

  it("a Deployment's pods turn into a previous incarnation's once another Deployment takes its name", () => {
    const owners = new OwnerIndex();
    owners.setObject('team-a', deploy('web'), 'd1', undefined);
    owners.setObject('team-a', rs('web-1'), 'r1', named(deploy('web'), 'd1'));
    const old = podOf(named(rs('web-1'), 'r1'));
    expect(topLevelWorkload(old, owners)).toEqual({ kind: 'Deployment', name: 'web' });
    owners.forget('team-a', deploy('web'));
    owners.setObject('team-a', deploy('web'), 'd2', undefined);
    expect(topLevelWorkload(old, owners)).toEqual({ kind: 'Deployment', name: 'web', terminating: true });
  });
});

describe('owners deleted', () => {
  const T = 1_000_000;
  /** Deployment web (d1) with ReplicaSet web-1 (r1), its pod referencing r1. */
  const member = () => {
    const owners = new OwnerIndex();
    owners.setObject('team-a', deploy('web'), 'd1', undefined);
    owners.setObject('team-a', rs('web-1'), 'r1', named(deploy('web'), 'd1'));
    return owners;
  };
  const oldPod = podOf(named(rs('web-1'), 'r1'));

  /** [what, what happens to the member, the old pod's workload] */
  const cases: [string, (owners: OwnerIndex) => void, WorkloadRef][] = [
    ['nothing: the current Deployment', () => undefined, { kind: 'Deployment', name: 'web' }],
    [
      'the Deployment deleted, not re-created yet: its pods are on their way out',
      (owners) => owners.forget('team-a', deploy('web'), T),
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'the ReplicaSet deleted',
      (owners) => owners.forget('team-a', rs('web-1'), T),
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'the Deployment deleted and re-created',
      (owners) => {
        owners.forget('team-a', deploy('web'), T);
        owners.setObject('team-a', deploy('web'), 'd2', undefined);
      },
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
    [
      'the deletion forgotten after sweep: taken by name again',
      (owners) => {
        owners.forget('team-a', deploy('web'), T);
        expect(owners.sweep(T + 1)).toBe(1);
      },
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'a sweep keeps what was deleted since',
      (owners) => {
        owners.forget('team-a', deploy('web'), T);
        expect(owners.sweep(T)).toBe(0);
      },
      { kind: 'Deployment', name: 'web', terminating: true },
    ],
  ];
  it.each(cases)('%s', (_what, change, expected) => {
    const owners = member();
    change(owners);
    expect(topLevelWorkload(oldPod, owners)).toEqual(expected);
  });

  it("a re-created Deployment's own pods are its", () => {
    const owners = member();
    owners.forget('team-a', deploy('web'), T);
    owners.setObject('team-a', deploy('web'), 'd2', undefined);
    owners.setObject('team-a', rs('web-2'), 'r2', named(deploy('web'), 'd2'));
    expect(topLevelWorkload(podOf(named(rs('web-2'), 'r2')), owners)).toEqual({
      kind: 'Deployment',
      name: 'web',
    });
  });

  it('forget reports whether attribution through the object changed', () => {
    const owners = member();
    expect(owners.forget('team-a', deploy('web'), T)).toBe(true);
    expect(owners.forget('team-a', deploy('web'), T)).toBe(false);
    expect(owners.forget('team-a', deploy('never-seen'), T)).toBe(false);
    // a deletion of another incarnation than the recorded one, seen late, changes nothing
    owners.setObject('team-a', deploy('api'), 'a2', undefined);
    expect(owners.forget('team-a', deploy('api'), T, 'a1')).toBe(false);
    expect(topLevelWorkload(podOf(named(job('x'), 'x1')), owners)).toEqual({ kind: 'Job', name: 'x' });
    expect(owners.forget('team-a', deploy('api'), T, 'a2')).toBe(true);
    expect(owners.size).toBe(3);
    // known without a uid: nothing to remember it by
    owners.setController('team-a', rs('x'), deploy('web'));
    expect(owners.forget('team-a', rs('x'), T)).toBe(true);
    expect(owners.size).toBe(3);
  });
});
