import type { KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { auditHotQuota, auditPassed, mergeAudits, type BindingRecord } from './hot-quota-audit.js';

const perReplica = { cpu: Quantity.parse('250m'), pods: Quantity.parse('1') };

/** A claim still listed (in flight). */
const claim = (name: string, cpu: string, pods: string) => ({
  reservedBy: { apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding', name },
  reserved: { cpu, pods },
  charge: { cpu, pods },
  expirationTime: '2026-01-01T00:00:10Z',
});

function quota(
  reserved: Record<string, string>,
  used: Record<string, string> = {},
  reservations: ReturnType<typeof claim>[] = [],
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

const stored = (replicas: Record<string, number | undefined>) =>
  new Map(Object.entries(replicas).map(([name, n]) => [name, n ?? 0]));

describe('auditHotQuota', () => {
  test('passes when the stored bindings are what was admitted, reserved is their charges and within hard', () => {
    const audit = auditHotQuota(
      quota({ cpu: '750m', pods: '3' }),
      [record('a', 2), record('b', 1), record('never-admitted', 0)],
      perReplica,
      stored({ a: 2, b: 1, 'never-admitted': 0 }),
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
      what: 'used + the stored charges over hard',
      q: quota({ cpu: '750m', pods: '3' }, { pods: '2' }),
      records: [record('a', 3)],
      replicas: { a: 3 },
      expected: { overAdmittedKeys: ['pods'] },
    },
    {
      what: 'status.reserved not the stored charges',
      q: quota({ cpu: '500m', pods: '2' }),
      records: [record('a', 1)],
      replicas: { a: 1 },
      expected: { reservedSumMismatch: true },
    },
    {
      what: 'an admitted scale-up that was lost',
      q: quota({ cpu: '250m', pods: '1' }),
      records: [record('a', 2)],
      replicas: { a: 1 },
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a denied create that was stored',
      q: quota({ cpu: '250m', pods: '1' }),
      records: [record('a', 0)],
      replicas: { a: 1 },
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a claim above the stored charge that its client never saw admitted',
      q: quota({ cpu: '500m', pods: '2' }, {}, [claim('a', '500m', '2')]),
      records: [record('a', 1)],
      replicas: { a: 1 },
      expected: { mismatchedBindings: ['a'] },
    },
    {
      what: 'a binding nobody drove',
      q: quota({ cpu: '250m', pods: '1' }),
      records: [],
      replicas: { ghost: 1 },
      expected: { unknownReservations: ['ghost'] },
    },
  ])('fails on $what', ({ q, records, replicas, expected }) => {
    const audit = auditHotQuota(q, records, perReplica, stored(replicas));
    expect(audit).toMatchObject(expected);
    expect(auditPassed(audit)).toBe(false);
  });

  test('counts a claim still listed as what its binding holds (nothing stored yet)', () => {
    const q = quota({ cpu: '500m', pods: '2' }, {}, [claim('a', '500m', '2')]);
    expect(auditPassed(auditHotQuota(q, [record('a', 2)], perReplica, stored({})))).toBe(true);
  });

  test('accepts either outcome of a request whose answer was lost', () => {
    for (const replicas of [1, 3]) {
      const reserved = { cpu: `${250 * replicas}m`, pods: String(replicas) };
      const audit = auditHotQuota(quota(reserved), [record('a', 1, 3)], perReplica, stored({ a: replicas }));
      expect(auditPassed(audit)).toBe(true);
      expect(audit.uncertainBindings).toBe(1);
    }
  });

  test('reports a quantity it cannot read instead of passing', () => {
    const audit = auditHotQuota(
      quota({ cpu: 'lots', pods: '1' }),
      [record('a', 1)],
      perReplica,
      stored({ a: 1 }),
    );
    expect(audit.problems[0]).toContain('status.reserved[cpu]');
    expect(auditPassed(audit)).toBe(false);
  });
});

describe('mergeAudits', () => {
  const passing = auditHotQuota(
    quota({ cpu: '250m', pods: '1' }),
    [record('a', 1)],
    perReplica,
    stored({ a: 1 }),
  );
  const overAdmitted = auditHotQuota(
    quota({ cpu: '750m', pods: '3' }, { pods: '2' }),
    [record('b', 3), record('c', 1, 2)],
    perReplica,
    stored({ b: 3, c: 0 }),
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
