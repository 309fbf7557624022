import type { Cluster, ResourceBinding } from '#api';
import { clusterOverrides, type OverridePolicies } from './cluster-overrides.js';

const deployment = (replicas: number, cpu = '1', labels: Record<string, string> = { app: 'web' }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team', labels },
  spec: {
    replicas,
    template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '1Gi' } } }] } },
  },
});
const binding = (clusters: [string, number][]): ResourceBinding =>
  ({
    metadata: { name: 'web-deployment', namespace: 'team' },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team', name: 'web' },
      replicas: clusters.reduce((sum, [, n]) => sum + n, 0),
      clusters: clusters.map(([name, replicas]) => ({ name, replicas })),
    },
  }) as unknown as ResourceBinding;
const cluster = (name: string, labels: Record<string, string> = {}, spec: object = {}): [string, Cluster] => [
  name,
  { metadata: { name, labels }, spec: { syncMode: 'Push', ...spec } } as Cluster,
];
const clusters = new Map([
  cluster('member1', { env: 'prod' }, { provider: 'aws', region: 'eu', zones: ['a'] }),
  cluster('member2', { env: 'test' }, { provider: 'gcp', region: 'us' }),
]);
const replicasTo = (value: unknown, operator = 'replace') => ({
  plaintext: [{ path: '/spec/replicas', operator, ...(value === undefined ? {} : { value }) }],
});
const cpuTo = (cpu: string) => ({
  plaintext: [
    { path: '/spec/template/spec/containers/0/resources/requests/cpu', operator: 'replace', value: cpu },
  ],
});
const policy = (name: string, spec: object, namespace = 'team') => ({
  metadata: { name, namespace },
  spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }], ...spec },
});
const rule = (targetCluster: object | undefined, overriders: object) => ({
  ...(targetCluster ? { targetCluster } : {}),
  overriders,
});
const only = (namespaced: unknown[], cluster: unknown[] = []): OverridePolicies => ({ namespaced, cluster });

describe('clusterOverrides', () => {
  const divided = binding([
    ['member1', 2],
    ['member2', 2],
  ]);
  it.each([
    ['no policy: nothing', only([]), []],
    [
      'replicas on member1 by name',
      only([policy('p', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(4))] })]),
      [{ cluster: 'member1', replicas: 4, policies: ['OverridePolicy team/p'] }],
    ],
    [
      'a rule without targetCluster applies to every cluster',
      only([policy('p', { overrideRules: [rule(undefined, replicasTo(3))] })]),
      [
        { cluster: 'member1', replicas: 3, policies: ['OverridePolicy team/p'] },
        { cluster: 'member2', replicas: 3, policies: ['OverridePolicy team/p'] },
      ],
    ],
    [
      'the deprecated targetCluster + overriders form',
      only([policy('p', { targetCluster: { clusterNames: ['member2'] }, overriders: replicasTo(5) })]),
      [{ cluster: 'member2', replicas: 5, policies: ['OverridePolicy team/p'] }],
    ],
    [
      'a cluster label selector',
      only([
        policy('p', {
          overrideRules: [rule({ labelSelector: { matchLabels: { env: 'test' } } }, cpuTo('3'))],
        }),
      ]),
      [
        {
          cluster: 'member2',
          resourceRequest: { cpu: '3', memory: '1Gi' },
          policies: ['OverridePolicy team/p'],
        },
      ],
    ],
    [
      'a field selector on provider, and exclude',
      only([
        policy('p', {
          overrideRules: [
            rule(
              { fieldSelector: { matchExpressions: [{ key: 'provider', operator: 'In', values: ['aws'] }] } },
              replicasTo(6),
            ),
            rule({ exclude: ['member1'] }, replicasTo(7)),
          ],
        }),
      ]),
      [
        { cluster: 'member1', replicas: 6, policies: ['OverridePolicy team/p'] },
        { cluster: 'member2', replicas: 7, policies: ['OverridePolicy team/p'] },
      ],
    ],
    [
      'zones: NotIn',
      only([
        policy('p', {
          overrideRules: [
            rule(
              { fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] } },
              replicasTo(9),
            ),
          ],
        }),
      ]),
      [{ cluster: 'member2', replicas: 9, policies: ['OverridePolicy team/p'] }],
    ],
    [
      'a ClusterOverridePolicy applies first, the OverridePolicy last wins',
      only(
        [policy('p', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(8))] })],
        [policy('c', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(5))] }, '')],
      ),
      [{ cluster: 'member1', replicas: 8, policies: ['ClusterOverridePolicy c', 'OverridePolicy team/p'] }],
    ],
    [
      'by name is applied after by label, whatever the names',
      only([
        policy('a-by-name', { overrideRules: [rule(undefined, replicasTo(4))] }),
        {
          metadata: { name: 'z-by-label', namespace: 'team' },
          spec: {
            resourceSelectors: [
              { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { app: 'web' } } },
            ],
            overrideRules: [rule(undefined, replicasTo(6))],
          },
        },
      ]),
      [
        {
          cluster: 'member1',
          replicas: 4,
          policies: ['OverridePolicy team/z-by-label', 'OverridePolicy team/a-by-name'],
        },
        {
          cluster: 'member2',
          replicas: 4,
          policies: ['OverridePolicy team/z-by-label', 'OverridePolicy team/a-by-name'],
        },
      ],
    ],
    [
      'a selector of another name or kind selects nothing',
      only([
        {
          metadata: { name: 'x', namespace: 'team' },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }],
            overrideRules: [rule(undefined, replicasTo(9))],
          },
        },
        {
          metadata: { name: 'y', namespace: 'team' },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'StatefulSet' }],
            overrideRules: [rule(undefined, replicasTo(9))],
          },
        },
        {
          metadata: { name: 'z', namespace: 'team' },
          spec: {
            resourceSelectors: [
              { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { app: 'db' } } },
            ],
            overrideRules: [rule(undefined, replicasTo(9))],
          },
        },
      ]),
      [],
    ],
    [
      'a policy without resource selectors selects everything',
      only([
        {
          metadata: { name: 'all', namespace: 'team' },
          spec: { overrideRules: [rule({ clusterNames: ['member2'] }, replicasTo(3))] },
        },
      ]),
      [{ cluster: 'member2', replicas: 3, policies: ['OverridePolicy team/all'] }],
    ],
    [
      'replicas replaced by 0: Karmada drops the zero value, the member defaults to 1',
      only([policy('p', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(0))] })]),
      [{ cluster: 'member1', replicas: 1, policies: ['OverridePolicy team/p'] }],
    ],
    [
      'replicas removed: the member defaults to 1',
      only([
        policy('p', {
          overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(undefined, 'remove'))],
        }),
      ]),
      [{ cluster: 'member1', replicas: 1, policies: ['OverridePolicy team/p'] }],
    ],
    [
      'an override to what the binding already gives changes nothing',
      only([policy('p', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(2))] })]),
      [],
    ],
    [
      'a patch that fails (a path not there) leaves the cluster as the binding has it',
      only([
        policy('p', {
          overrideRules: [
            rule(undefined, { plaintext: [{ path: '/spec/nothing/here', operator: 'replace', value: 1 }] }),
          ],
        }),
      ]),
      [],
    ],
    [
      'image and label overriders change nothing a quota counts',
      only([
        policy('p', {
          overrideRules: [
            rule(undefined, { imageOverrider: [{ component: 'Tag', operator: 'replace', value: 'v2' }] }),
          ],
        }),
      ]),
      [],
    ],
    [
      'an added container adds its requests',
      only([
        policy('p', {
          overrideRules: [
            rule(
              { clusterNames: ['member2'] },
              {
                plaintext: [
                  {
                    path: '/spec/template/spec/containers/-',
                    operator: 'add',
                    value: { name: 's', resources: { requests: { cpu: '500m' } } },
                  },
                ],
              },
            ),
          ],
        }),
      ]),
      [
        {
          cluster: 'member2',
          resourceRequest: { cpu: '1500m', memory: '1Gi' },
          policies: ['OverridePolicy team/p'],
        },
      ],
    ],
  ])('%s', (_name, policies, expected) => {
    expect(clusterOverrides({ binding: divided, template: deployment(4), policies, clusters })).toEqual(
      expected,
    );
  });

  it('revises a Job by its parallelism before the overrides, as Karmada does', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'web', namespace: 'team' },
      spec: { parallelism: 4, completions: 4, template: { spec: { containers: [{ name: 'c' }] } } },
    };
    const rb = binding([['member1', 2]]);
    (rb.spec.resource as unknown as Record<string, unknown>)['apiVersion'] = 'batch/v1';
    (rb.spec.resource as unknown as Record<string, unknown>)['kind'] = 'Job';
    const jobPolicy = {
      metadata: { name: 'p', namespace: 'team' },
      spec: {
        overrideRules: [
          rule(undefined, { plaintext: [{ path: '/spec/completions', operator: 'replace', value: 1 }] }),
        ],
      },
    };
    expect(clusterOverrides({ binding: rb, template: job, policies: only([jobPolicy]), clusters })).toEqual([
      { cluster: 'member1', replicas: 1, policies: ['OverridePolicy team/p'] },
    ]);
  });

  it('names a target cluster it has not seen when a rule could select it', () => {
    const rb = binding([['member3', 2]]);
    const policies = only([
      policy('p', { overrideRules: [rule({ clusterNames: ['member1'] }, replicasTo(4))] }),
    ]);
    expect(clusterOverrides({ binding: rb, template: deployment(2), policies, clusters })).toEqual({
      error: expect.stringContaining('member3'),
    });
  });

  it('reads nothing of a kind Karmada does not interpret natively', () => {
    const template = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'web', namespace: 'team' },
      spec: {},
    };
    const policies = only([
      {
        metadata: { name: 'p', namespace: 'team' },
        spec: { overrideRules: [rule(undefined, replicasTo(4))] },
      },
    ]);
    expect(clusterOverrides({ binding: divided, template, policies, clusters })).toEqual([]);
  });
});
