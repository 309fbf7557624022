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

// Settled: 'doubled' still has a claim listed; 'stranger' was driven by no client.
const quota: KarmadaQuota = {
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'hot', namespace: 'hot' },
  spec: { hard: { pods: '4' } },
  status: {
    used: {},
    reserved: { pods: '9' },
    reservations: [reservation('doubled', '3', { expirationTime: '2026-01-01T00:00:10Z' })],
  },
};

/** How the clients left their bindings: `uncertain` lost the answer to its scale from 1 to 2. */
const driven = [
  { name: 'right', possibleReplicas: new Set([2]) },
  { name: 'doubled', possibleReplicas: new Set([1]) },
  { name: 'uncertain', possibleReplicas: new Set([1, 2]) },
  { name: 'lost', possibleReplicas: new Set([1]) },
];
const stored = new Map(Object.entries({ right: 2, doubled: 1, uncertain: 2, lost: 0, stranger: 1 }));
const records: BindingRecord[] = driven;
const audit = auditHotQuota(quota, records, { pods: Quantity.parse('1') }, stored);

test('an audit failure names every offending binding with its claim, stored replicas and possible set', () => {
  const offenders = offendingBindings(quota, audit, driven, stored);
  expect(offenders.map((o) => o.name)).toEqual(['doubled', 'lost', 'stranger']);
  expect(describeAuditFailure(audit, offenders).split('\n')).toEqual([
    'the quota as stored does not match what was admitted: over-admitted on pods: used + reserved pods=8 > ' +
      'hard pods=4; status.reserved is not the sum of the reservations; 2 bindings hold none of the charges ' +
      'their client may have had admitted; 1 reservations of bindings no client drove',
    '  doubled: reserved {pods=3} charge {pods=3} expirationTime 2026-01-01T00:00:10Z uid uid-doubled; ' +
      'stored replicas 1; possible {1}',
    '  lost: no reservation; stored replicas 0; possible {1}',
    '  stranger: no reservation; stored replicas 1; possible {}',
  ]);
});
