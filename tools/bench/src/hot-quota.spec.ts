import type { KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { auditHotQuota, type BindingRecord } from './hot-quota-audit.js';
import { describeAuditFailure, offendingBindings } from './hot-quota.js';

// The bench's per-replica request is 250m cpu, 512Mi memory, 1 pod; this quota limits pods only.
const reservation = (
  name: string,
  pods: string,
  extra: { charge?: string; expirationTime?: string } = {},
) => ({
  reservedBy: { apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding', name, uid: `uid-${name}` },
  reserved: { pods },
  charge: { pods: extra.charge ?? pods },
  ...(extra.expirationTime && { expirationTime: extra.expirationTime }),
});

const quota: KarmadaQuota = {
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'hot', namespace: 'hot' },
  spec: { hard: { pods: '4' } },
  status: {
    used: {},
    reserved: { pods: '6' },
    reservations: [
      reservation('right', '2'),
      reservation('doubled', '3', { expirationTime: '2026-01-01T00:00:10Z' }),
      reservation('uncertain', '1'),
      reservation('stranger', '0', { charge: '1' }),
    ],
  },
};

/** How the clients left their bindings: `uncertain` lost the answer to its scale from 1 to 2. */
const driven = [
  { name: 'right', replicas: 2, possibleReplicas: new Set([2]) },
  { name: 'doubled', replicas: 1, possibleReplicas: new Set([1]) },
  { name: 'uncertain', replicas: 2, possibleReplicas: new Set([1, 2]) },
  { name: 'lost', replicas: 1, possibleReplicas: new Set([1]) },
];
const records: BindingRecord[] = driven;
const audit = auditHotQuota(quota, records, { pods: Quantity.parse('1') });

test('an audit failure names every offending binding with its reservation, stored replicas and possible set', () => {
  const offenders = offendingBindings(quota, audit, driven);
  expect(offenders.map((o) => o.name)).toEqual(['doubled', 'lost', 'stranger', 'uncertain']);
  expect(describeAuditFailure(audit, offenders).split('\n')).toEqual([
    'the quota as stored does not match what was admitted: over-admitted on pods: used + reserved pods=6 > ' +
      'hard pods=4; 2 bindings hold none of the charges their client may have had admitted; 1 reservations of ' +
      'bindings no client drove',
    '  doubled: reserved {pods=3} charge {pods=3} expirationTime 2026-01-01T00:00:10Z uid uid-doubled; ' +
      'stored replicas 1; possible {1}',
    '  lost: no reservation; stored replicas 1; possible {1}',
    '  stranger: reserved {pods=0} charge {pods=1} expirationTime none uid uid-stranger; driven by no client; possible {}',
    '  uncertain: reserved {pods=1} charge {pods=1} expirationTime none uid uid-uncertain; stored replicas 2; ' +
      'possible {1, 2}',
  ]);
});
