import type { CoreV1Event } from '@kubernetes/client-node';
import type { Cluster, KarmadaQuota, ResourceBinding } from '#api';
import { describeQuotas, eventRows, quotaName, quotaRows, quotaTable } from './format.js';

const now = new Date('2026-11-22T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

const reservedBy = (name: string) => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  name,
  uid: `uid-${name}`,
});

const team: KarmadaQuota = {
  metadata: { namespace: 'team-a', name: 'team', creationTimestamp: ago(3 * 3600) as unknown as Date },
  spec: { hard: { cpu: '2.5', memory: '1Gi', pods: '20' } },
  status: {
    hard: { cpu: '2.5', memory: '1Gi', pods: '20' },
    used: { cpu: '0.5', pods: '3' },
    reserved: { cpu: '200m', memory: '512Mi', pods: '1' },
    clusters: [
      { name: 'member1', state: 'Ready', lastSyncTime: ago(5), used: { cpu: '400m', pods: '2' } },
      { name: 'member2', state: 'Stale', lastSyncTime: ago(200), used: { cpu: '100m', pods: 1 as never } },
    ],
    reservations: [
      { reservedBy: reservedBy('web'), reserved: { cpu: '200m', pods: '1' } },
      {
        reservedBy: reservedBy('batch'),
        reserved: { memory: '0.5Gi' },
        expirationTime: '2026-11-22T12:01:30Z',
      },
      { reservedBy: reservedBy('old'), reserved: {}, expirationTime: '2026-11-22T11:59:50Z' },
    ],
    waiting: [
      { binding: 'scale-up', requested: { cpu: '1.5' }, free: { cpu: '0' }, since: ago(95) },
      {
        binding: 'spread',
        requested: { cpu: '1', pods: '2' },
        free: { cpu: '0.5', pods: '16' },
        since: ago(3),
      },
    ],
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: ago(60) },
      {
        type: 'ClustersSynced',
        status: 'False',
        reason: 'ClusterStale',
        message: 'member2 is Stale since 2026-11-22T11:56:40Z',
        lastTransitionTime: ago(60),
      },
    ],
  },
};

const cluster = (name: string, ready: string): Cluster => ({
  metadata: { name },
  spec: { syncMode: 'Push' },
  status: {
    conditions: [
      { type: 'Ready', status: ready as never, reason: '', message: '', lastTransitionTime: ago(600) },
    ],
  },
});

/** A Deployment's binding: `replicas` pods of 200m cpu, spread as `clusters` says. */
const rb = (
  name: string,
  replicas: number,
  clusters: { name: string; replicas: number }[],
): ResourceBinding => ({
  metadata: { namespace: 'team-a', name },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas,
    replicaRequirements: { resourceRequest: { cpu: '200m' } },
    placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
    clusters,
  },
});

const event = (
  type: string,
  reason: string,
  message: string,
  first: number,
  last: number,
  count: number,
): CoreV1Event => ({
  metadata: { name: `team.${reason}` },
  involvedObject: { kind: 'KarmadaQuota', name: 'team', namespace: 'team-a' },
  type,
  reason,
  message,
  count,
  firstTimestamp: new Date(ago(first)),
  lastTimestamp: new Date(ago(last)),
  source: { component: 'karmada-quota-webhook' },
});

describe('describeQuotas', () => {
  it('prints the kubectl describe quota layout with every cluster, the workloads, reservations, waiting changes, conditions and Events, canonically', () => {
    const details = {
      quota: team,
      clusters: [cluster('member1', 'True'), cluster('member2', 'False'), cluster('member3', 'True')],
      bindings: [
        rb('web', 3, [
          { name: 'member1', replicas: 2 },
          { name: 'member2', replicas: 1 },
        ]),
      ],
      events: [
        event('Warning', 'AdmissionDenied', 'exceeded quota: team, requested: cpu=3', 300, 30, 4),
        event('Normal', 'Reconciled', 'first status', 3600, 3600, 1),
      ],
      // web runs 2 of its pods on member1; member2 (Stale) last showed none of them, but a pod of its own.
      usage: {
        clusters: [
          {
            name: 'member1',
            state: 'Ready' as const,
            lastSyncTime: ago(5),
            used: { cpu: '400m', pods: '2' },
            workloads: [{ kind: 'Deployment', name: 'web', used: { cpu: '400m', pods: '2' } }],
          },
          {
            name: 'member2',
            state: 'Stale' as const,
            lastSyncTime: ago(200),
            used: { cpu: '100m', pods: '1' },
            workloads: [{ kind: 'Pod', name: 'debug', used: { cpu: '100m', pods: '1' } }],
          },
        ],
        now,
        observedAt: ago(4),
      },
    };
    expect(describeQuotas([details], now)).toEqual({
      text: [
        'Name:       team',
        'Namespace:  team-a',
        'Scopes:     <none> (every ResourceBinding of the namespace)',
        'Resource    Used  Reserved  Hard',
        '--------    ----  --------  ----',
        'cpu         500m  200m      2500m',
        'memory      0     512Mi     1Gi',
        'pods        3     1         20',
        'Clusters:',
        '  Cluster  Ready  Sync    Last Sync  cpu   memory  pods',
        '  -------  -----  ----    ---------  ---   ------  ----',
        '  member1  True   Ready   5s         400m  0       2',
        '  member2  False  Stale   3m20s      100m  0       1',
        '  member3  True   <none>  <none>     0     0       0',
        'Workloads:',
        '  Binding               Charged          In Flight     Observed         Reserved         Clusters',
        '  -------               -------          ---------     --------         --------         --------',
        '  batch                 memory=512Mi     memory=512Mi  <none>           memory=512Mi     <none>',
        '  web                   cpu=600m,pods=3  <none>        cpu=400m,pods=2  cpu=200m,pods=1  member1=2,member2=1',
        '  <not from a binding>  <none>           <none>        cpu=100m,pods=1  <none>           <none>',
        '  Observed and reserved as the members ran at 2026-11-22T11:59:56.000Z (4s ago).',
        'Reservations:',
        '  Binding  Reserved         Expires',
        '  -------  --------         -------',
        '  web      cpu=200m,pods=1  <none>',
        '  batch    memory=512Mi     2026-11-22T12:01:30Z (in 90s)',
        '  old      <none>           2026-11-22T11:59:50Z (10s ago)',
        'Waiting:',
        '  Binding   Requested     Free              Since',
        '  -------   ---------     ----              -----',
        '  scale-up  cpu=1500m     cpu=0             2026-11-22T11:58:25.000Z (95s ago)',
        '  spread    cpu=1,pods=2  cpu=500m,pods=16  2026-11-22T11:59:57.000Z (3s ago)',
        'Conditions:',
        '  Type            Status  Reason        Message',
        '  ----            ------  ------        -------',
        '  Ready           True    Reconciled    ',
        '  ClustersSynced  False   ClusterStale  member2 is Stale since 2026-11-22T11:56:40Z',
        'Events:',
        '  Type     Reason           Age               From                   Message',
        '  ----     ------           ---               ----                   -------',
        '  Normal   Reconciled       60m               karmada-quota-webhook  first status',
        '  Warning  AdmissionDenied  30s (x4 over 5m)  karmada-quota-webhook  exceeded quota: team, requested: cpu=3',
        '',
      ].join('\n'),
      warnings: [],
    });
  });
});

const fresh: KarmadaQuota = {
  metadata: { namespace: 'team-b', name: 'fresh', creationTimestamp: ago(45) as unknown as Date },
  spec: { hard: { pods: '10' } },
};

describe('describeQuotas', () => {
  it('says why the workloads are not split into observed and reserved', () => {
    const details = { quota: team, bindings: [rb('web', 1, [])], usage: { problem: 'no record yet' } };
    const { text } = describeQuotas([details], now);
    expect(text).toContain('  Binding  Charged          In Flight     Clusters\n');
    expect(text).toContain('  Not split into observed and reserved: no record yet.\n');
  });

  it('shows <none> for empty sections and spec.hard before the first reconcile', () => {
    expect(describeQuotas([{ quota: fresh, clusters: [], bindings: [], events: [] }], now).text).toBe(
      [
        'Name:          fresh',
        'Namespace:     team-b',
        'Scopes:        <none> (every ResourceBinding of the namespace)',
        'Resource       Used  Reserved  Hard',
        '--------       ----  --------  ----',
        'pods           0     0         10',
        'Clusters:      <none>',
        'Workloads:     <none>',
        'Reservations:  <none>',
        'Waiting:       <none>',
        'Conditions:    <none>',
        'Events:        <none>',
        '',
      ].join('\n'),
    );
  });

  it('names a Warn or DryRun enforcement and lists what it would have denied', () => {
    const trying: KarmadaQuota = {
      ...fresh,
      spec: { ...fresh.spec, enforcement: 'Warn' },
      status: {
        wouldBeDenied: [
          {
            binding: 'big',
            enforcement: 'Warn',
            message: 'exceeded quota: fresh, requested: pods=12, used: pods=0, limited: pods=10',
            at: ago(120),
          },
        ],
      },
    };
    const lines = describeQuotas([{ quota: trying, clusters: [], bindings: [], events: [] }], now).text.split(
      '\n',
    );
    expect(lines[3]).toBe('Enforcement:   Warn (refusals are not enforced: see Would be denied)');
    const at = lines.indexOf('Would be denied (not enforced):');
    expect(lines.slice(at + 1, at + 4).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ['Binding', 'Enforcement', 'Admitted', 'Refusal'],
      ['-------', '-----------', '--------', '-------'],
      ['big', 'Warn', '2m ago', 'exceeded quota: fresh, requested: pods=12, used: pods=0, limited: pods=10'],
    ]);
    const none = describeQuotas([{ quota: { ...trying, status: {} } }], now).text;
    expect(none).toMatch(/Would be denied \(not enforced\):\s+<none>/);
  });

  it('lists member caps apart from the global limits, under their plain resource names', () => {
    const capped: KarmadaQuota = {
      ...fresh,
      spec: { hard: { cpu: '10' }, clusters: [{ name: 'member1', hard: { cpu: '4' } }] },
      status: {
        hard: { cpu: '10', 'cpu@member1': '4' },
        used: { cpu: '3', 'cpu@member1': '1' },
        reserved: { cpu: '2', 'cpu@member1': '2' },
        clusters: [
          { name: 'member1', state: 'Ready', lastSyncTime: ago(5), used: { cpu: '1' }, hard: { cpu: '4' } },
        ],
      },
    };
    const lines = describeQuotas([{ quota: capped }], now).text.split('\n');
    const rows = (title: string, n: number) => {
      const at = lines.findIndex((l) => l.startsWith(title));
      return lines.slice(at, at + n).map((l) => l.trim().split(/\s{2,}/));
    };
    expect(rows('Resource', 3)).toEqual([
      ['Resource', 'Used', 'Reserved', 'Hard'],
      ['--------', '----', '--------', '----'],
      ['cpu', '3', '2', '10'],
    ]);
    expect(rows('Member caps:', 4)).toEqual([
      ['Member caps:'],
      ['Member', 'Resource', 'Used', 'Reserved', 'Cap'],
      ['------', '--------', '----', '--------', '---'],
      ['member1', 'cpu', '1', '2', '4'],
    ]);
    expect(rows('Clusters:', 4)[3]).toEqual(['member1', '<unknown>', 'Ready', '5s', '1']);
  });

  it('separates several quotas with two blank lines, as kubectl describe does', () => {
    const text = describeQuotas([{ quota: fresh }, { quota: fresh }], now).text;
    expect(text.split('\n\n\nName:')).toHaveLength(2);
  });

  it('warns about a status field it cannot read and still prints the rest', () => {
    const broken: KarmadaQuota = {
      ...fresh,
      status: { hard: { pods: '10', cpu: 'lots' }, used: { pods: '2' } },
    };
    const printed = describeQuotas([{ quota: broken }], now);
    expect(printed.text).toContain('pods           2     0         10');
    expect(printed.warnings).toEqual([
      expect.stringMatching(/^Warning: KarmadaQuota team-b\/fresh: status\.hard\[cpu\]: .*lots/),
    ]);
  });
});

describe('quotaTable', () => {
  it('lists name, how full the fullest resource is, used+reserved/hard per resource, and age', () => {
    expect(quotaTable([team, fresh], now, { allNamespaces: false, wide: false })).toEqual({
      text: [
        'NAME    USED   USED+RESERVED/HARD                                        AGE',
        'team    50%    cpu: 500m+200m/2500m, memory: 0+512Mi/1Gi, pods: 3+1/20   3h',
        'fresh   0%     pods: 0+0/10                                              45s',
        '',
      ].join('\n'),
      warnings: [],
    });
  });

  it('puts NAMESPACE first with -A', () => {
    expect(quotaTable([fresh], now, { allNamespaces: true, wide: false }).text).toBe(
      [
        'NAMESPACE   NAME    USED   USED+RESERVED/HARD   AGE',
        'team-b      fresh   0%     pods: 0+0/10         45s',
        '',
      ].join('\n'),
    );
  });

  it('shows <none> for a quota without limits and <unknown> for a missing creation time', () => {
    const empty: KarmadaQuota = { metadata: { namespace: 'x', name: 'empty' }, spec: { hard: {} } };
    expect(quotaTable([empty], now, { allNamespaces: false, wide: false }).text).toBe(
      ['NAME    USED   USED+RESERVED/HARD   AGE', 'empty   0%     <none>               <unknown>', ''].join(
        '\n',
      ),
    );
  });
});

describe('describeQuotas of what could not be read or is scoped', () => {
  it('says which lists are unknown and shows the clusters of the status alone', () => {
    const text = describeQuotas([{ quota: team }], now).text.split('\n');
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}member1 +<unknown> +Ready +5s +400m +0 +2$/),
        expect.stringMatching(/^Workloads: +<unknown> \(the ResourceBindings could not be listed\)$/),
        expect.stringMatching(/^Events: +<unknown> \(the Events could not be listed\)$/),
      ]),
    );
  });

  it('names a cluster of the status that Karmada no longer lists NotFound', () => {
    const text = describeQuotas([{ quota: team, clusters: [cluster('member1', 'True')] }], now).text;
    expect(text).toMatch(/^ {2}member2 +NotFound +Stale +3m20s +100m +0 +1$/m);
  });

  it.each([
    [
      [{ scopeName: 'PriorityClass', operator: 'In', values: ['high', 'low'] }],
      'PriorityClass In (high, low)',
    ],
    [
      [
        { scopeName: 'PriorityClass', operator: 'Exists' },
        { scopeName: 'PriorityClass', operator: 'NotIn', values: ['low'] },
      ],
      'PriorityClass Exists; PriorityClass NotIn (low)',
    ],
  ])('prints the scope selector %j as %s', (matchExpressions, line) => {
    const scoped = { ...fresh, spec: { ...fresh.spec, scopeSelector: { matchExpressions } } } as KarmadaQuota;
    expect(describeQuotas([{ quota: scoped }], now).text).toContain(`Scopes:        ${line}\n`);
  });
});

describe('eventRows', () => {
  it.each([
    { name: 'one occurrence: its age', count: 1, first: 90, last: 90, age: '90s' },
    {
      name: 'repeated: last seen, count and span',
      count: 3,
      first: 7200,
      last: 10,
      age: '10s (x3 over 120m)',
    },
  ])('$name', ({ count, first, last, age }) => {
    expect(eventRows([event('Normal', 'R', ' m ', first, last, count)], now)).toEqual([
      ['Normal', 'R', age, 'karmada-quota-webhook', 'm'],
    ]);
  });

  it('takes a series and eventTime (events.k8s.io writers) and reportingComponent without a source', () => {
    const series: CoreV1Event = {
      metadata: {},
      involvedObject: {},
      type: 'Warning',
      reason: 'OverQuota',
      message: 'over',
      eventTime: new Date(ago(600)),
      series: { count: 5, lastObservedTime: new Date(ago(20)) },
      reportingComponent: 'karmada-quota-reconciler',
    };
    expect(eventRows([series], now)).toEqual([
      ['Warning', 'OverQuota', '20s (x5 over 10m)', 'karmada-quota-reconciler', 'over'],
    ]);
  });
});

describe('quotaRows -o wide and -o name', () => {
  it('adds READY, ready/all clusters and the waiting count after AGE', () => {
    const { header, rows } = quotaRows([team, fresh], now, { allNamespaces: false, wide: true });
    expect(header).toEqual(['NAME', 'USED', 'USED+RESERVED/HARD', 'AGE', 'READY', 'CLUSTERS', 'WAITING']);
    expect(rows.map((row) => row.slice(4))).toEqual([
      ['True', '1/2', '2'],
      ['<none>', '0/0', '0'],
    ]);
  });

  it('names a quota as kubectl names a custom resource', () => {
    expect(quotaName(team)).toBe('karmadaquota.quota.karmada.io/team');
  });
});

describe('the ClusterKarmadaQuotas selecting the namespace (AppliedClusterKarmadaQuotas)', () => {
  const shared = {
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'AppliedClusterKarmadaQuota',
    metadata: { namespace: 'team-a', name: 'org', creationTimestamp: ago(60) as unknown as Date },
    spec: { hard: { cpu: '10' }, namespaceSelector: { matchLabels: { org: 'x' } } },
    status: {
      hard: { cpu: '10' },
      used: { cpu: '4' },
      reserved: { cpu: '1' },
      namespaces: [{ namespace: 'team-a', used: { cpu: '3' }, reserved: { cpu: 1 as never } }],
    },
  } as unknown as KarmadaQuota;

  it('lists one beside the KarmadaQuotas, named as the refusals name its quota', () => {
    const { rows } = quotaRows([team, shared], now, { allNamespaces: false, wide: false });
    expect(rows.map((r) => r[0])).toEqual(['team', 'ClusterKarmadaQuota/org']);
    expect(rows[1]!.slice(1, 3)).toEqual(['50%', 'cpu: 4+1/10']);
    expect(quotaName(shared)).toBe('appliedclusterkarmadaquota.quota.karmada.io/org');
  });

  it('describes one with its selector and this namespace’s part, without claims or Events', () => {
    const text = describeQuotas([{ quota: shared, clusters: [], bindings: [], events: [] }], now).text;
    const lines = text.split('\n').map((l) => l.trimEnd());
    expect(lines.slice(0, 4).map((l) => l.split(/\s{2,}/))).toEqual([
      ['Name:', 'ClusterKarmadaQuota/org'],
      ['Namespace:', 'team-a'],
      [
        'Selects:',
        'org=x (limits summed over every namespace selected; read-only, from AppliedClusterKarmadaQuota org)',
      ],
      ['This namespace:', 'used cpu=3, reserved cpu=1'],
    ]);
    expect(lines.some((l) => l.startsWith('Reservations:'))).toBe(false);
    expect(lines.some((l) => l.startsWith('Events:'))).toBe(false);
  });
});
