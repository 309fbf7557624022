import type { KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { auditHotQuota, auditPassed, mergeAudits, type BindingRecord } from './hot-quota-audit.js';

const perReplica = { cpu: Quantity.parse('250m'), pods: Quantity.parse('1') };

const reservation = (name: string, cpu: string, pods: string, charge = { cpu, pods }) => ({
  reservedBy: { apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding', name },
  reserved: { cpu, pods },
  charge,
});

function quota(
  reservations: ReturnType<typeof reservation>[],
  reserved: Record<string, string>,
  used: Record<string, string> = {},
): KarmadaQuota {
  return {
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'hot', namespace: 'hot' },
    spec: { hard: { cpu: '1', pods: '4' } },
    status: { used, reserved, reservations },
  };
}

const record = (name: string, ...possible: number[]): BindingRecord => ({
  name,
  possibleReplicas: new Set(possible),
});

describe('auditHotQuota', () => {
  test('passes when every admitted charge is reserved once and the total is within hard', () => {
    const audit = auditHotQuota(
      quota([reservation('a', '500m', '2'), reservation('b', '250m', '1')], { cpu: '750m', pods: '3' }),
      [record('a', 2), record('b', 1), record('never-admitted', 0)],
      perReplica,
    );
    expect(audit).toMatchObject({
      overAdmittedKeys: [],
      reservedSumMismatch: false,
      mismatchedBindings: [],
      unknownReservations: [],
      uncertainBindings: 0,
      usedPlusReserved: { cpu: '750m', pods: '3' },
    });
    expect(auditPassed(audit)).toBe(true);
  });

  test.each([
    {
      what: 'used + reserved over hard',
      q: quota([reservation('a', '750m', '3')], { cpu: '750m', pods: '3' }, { pods: '2' }),
      records: [record('a', 3)],
      expected: { overAdmittedKeys: ['pods'] },
    },
    {
      what: 'status.reserved not the sum of the reservations',
      q: quota([reservation('a', '250m', '1')], { cpu: '500m', pods: '2' }),
      records: [record('a', 1)],
      expected: { reservedSumMismatch: true },
    },
    {
      what: 'an admitted scale-up that was lost',
      q: quota([reservation('a', '250m', '1')], { cpu: '250m', pods: '1' }),
      records: [record('a', 2)],
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'an admitted create with no reservation',
      q: quota([], {}),
      records: [record('a', 1)],
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a denied create that holds a reservation',
      q: quota([reservation('a', '250m', '1')], { cpu: '250m', pods: '1' }),
      records: [record('a', 0)],
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a charge recorded but not reserved in full',
      q: quota([reservation('a', '250m', '1', { cpu: '500m', pods: '2' })], { cpu: '250m', pods: '1' }),
      records: [record('a', 2)],
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a reservation nobody asked for',
      q: quota([reservation('ghost', '250m', '1')], { cpu: '250m', pods: '1' }),
      records: [],
      expected: { unknownReservations: ['ghost'] },
    },
  ])('fails on $what', ({ q, records, expected }) => {
    const audit = auditHotQuota(q, records, perReplica);
    expect(audit).toMatchObject(expected);
    expect(auditPassed(audit)).toBe(false);
  });

  test('accepts either outcome of a request whose answer was lost', () => {
    for (const reservations of [[reservation('a', '250m', '1')], [reservation('a', '750m', '3')]]) {
      const reserved = reservations[0]!.reserved;
      const audit = auditHotQuota(quota(reservations, reserved), [record('a', 1, 3)], perReplica);
      expect(auditPassed(audit)).toBe(true);
      expect(audit.uncertainBindings).toBe(1);
    }
  });

  test('reports a quantity it cannot read instead of passing', () => {
    const q = quota([reservation('a', 'lots', '1')], { cpu: '250m', pods: '1' });
    const audit = auditHotQuota(q, [record('a', 1)], perReplica);
    expect(audit.problems[0]).toContain('status.reservations[0].reserved[cpu]');
    expect(auditPassed(audit)).toBe(false);
  });
});

describe('mergeAudits', () => {
  const passing = auditHotQuota(
    quota([reservation('a', '250m', '1')], { cpu: '250m', pods: '1' }),
    [record('a', 1)],
    perReplica,
  );
  const overAdmitted = auditHotQuota(
    quota([reservation('b', '750m', '3')], { cpu: '750m', pods: '3' }, { pods: '2' }),
    [record('b', 3), record('c', 1, 2)],
    perReplica,
  );

  test('one quota: its audit as it is', () => {
    expect(mergeAudits([{ namespace: 'n1', audit: overAdmitted }])).toBe(overAdmitted);
  });

  test("several quotas: every quota's findings, keys named by namespace, the over-admitting quota's totals", () => {
    const merged = mergeAudits([
      { namespace: 'n1', audit: passing },
      { namespace: 'n2', audit: overAdmitted },
    ]);
    expect(merged).toMatchObject({
      overAdmittedKeys: ['n2: pods'],
      reservedSumMismatch: false,
      mismatchedBindings: ['c'],
      uncertainBindings: 1,
      hard: { cpu: '1', pods: '4' },
      usedPlusReserved: { cpu: '750m', pods: '5' },
    });
    expect(auditPassed(merged)).toBe(false);
    expect(
      auditPassed(
        mergeAudits([
          { namespace: 'n1', audit: passing },
          { namespace: 'n3', audit: passing },
        ]),
      ),
    ).toBe(true);
  });
});
