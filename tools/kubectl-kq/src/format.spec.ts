import type { KarmadaQuota } from '#api';
import { describeQuotas, quotaTable } from './format.js';

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

describe('describeQuotas', () => {
  it('prints the kubectl describe quota layout with clusters, reservations and conditions, canonically', () => {
    expect(describeQuotas([team], now)).toEqual({
      text: [
        'Name:       team',
        'Namespace:  team-a',
        'Resource    Used  Reserved  Hard',
        '--------    ----  --------  ----',
        'cpu         500m  200m      2500m',
        'memory      0     512Mi     1Gi',
        'pods        3     1         20',
        'Clusters:',
        '  Cluster  State  Last Sync  cpu   memory  pods',
        '  -------  -----  ---------  ---   ------  ----',
        '  member1  Ready  5s         400m  0       2',
        '  member2  Stale  3m20s      100m  0       1',
        'Reservations:',
        '  Binding  Reserved         Expires',
        '  -------  --------         -------',
        '  web      cpu=200m,pods=1  <none>',
        '  batch    memory=512Mi     2026-11-22T12:01:30Z (in 90s)',
        '  old      <none>           2026-11-22T11:59:50Z (10s ago)',
        'Conditions:',
        '  Type            Status  Reason        Message',
        '  ----            ------  ------        -------',
        '  Ready           True    Reconciled    ',
        '  ClustersSynced  False   ClusterStale  member2 is Stale since 2026-11-22T11:56:40Z',
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
  it('shows <none> for empty sections and spec.hard before the first reconcile', () => {
    expect(describeQuotas([fresh], now).text).toBe(
      [
        'Name:          fresh',
        'Namespace:     team-b',
        'Resource       Used  Reserved  Hard',
        '--------       ----  --------  ----',
        'pods           0     0         10',
        'Clusters:      <none>',
        'Reservations:  <none>',
        'Conditions:    <none>',
        '',
      ].join('\n'),
    );
  });

  it('separates several quotas with two blank lines, as kubectl describe does', () => {
    const text = describeQuotas([fresh, fresh], now).text;
    expect(text.split('\n\n\nName:')).toHaveLength(2);
  });

  it('warns about a status field it cannot read and still prints the rest', () => {
    const broken: KarmadaQuota = {
      ...fresh,
      status: { hard: { pods: '10', cpu: 'lots' }, used: { pods: '2' } },
    };
    const printed = describeQuotas([broken], now);
    expect(printed.text).toContain('pods           2     0         10');
    expect(printed.warnings).toEqual([
      expect.stringMatching(/^Warning: KarmadaQuota team-b\/fresh: status\.hard\[cpu\]: .*lots/),
    ]);
  });
});

describe('quotaTable', () => {
  it('lists name, how full the fullest resource is, used+reserved/hard per resource, and age', () => {
    expect(quotaTable([team, fresh], now, false)).toEqual({
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
    expect(quotaTable([fresh], now, true).text).toBe(
      [
        'NAMESPACE   NAME    USED   USED+RESERVED/HARD   AGE',
        'team-b      fresh   0%     pods: 0+0/10         45s',
        '',
      ].join('\n'),
    );
  });

  it('shows <none> for a quota without limits and <unknown> for a missing creation time', () => {
    const empty: KarmadaQuota = { metadata: { namespace: 'x', name: 'empty' }, spec: { hard: {} } };
    expect(quotaTable([empty], now, false).text).toBe(
      ['NAME    USED   USED+RESERVED/HARD   AGE', 'empty   0%     <none>               <unknown>', ''].join(
        '\n',
      ),
    );
  });
});
