import { formatList, Quantity, type ResourceList } from '#quantity';
import type { KarmadaQuota } from '#api';
import {
  isExpired,
  isLaterVersion,
  isResourceVersion,
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type QuotaState,
  type ReservationEntry,
} from './state.js';

const list = (raw: Record<string, string>): ResourceList =>
  Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Quantity.parse(v)]));

const rbRef = (name: string, uid?: string) => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  name,
  ...(uid ? { uid } : {}),
});

const quota: KarmadaQuota = {
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'team-a', namespace: 'ns-a' },
  spec: { hard: { cpu: '100', pods: 10 as unknown as string } },
  status: {
    hard: { cpu: '50' },
    used: { cpu: '20' },
    reservations: [
      {
        reservedBy: rbRef('web', 'u1'),
        reserved: { cpu: '2', pods: '2' },
        charge: { cpu: '4', pods: '4' },
        expirationTime: '2030-01-01T00:00:00.000Z',
        operation: 'Update',
      },
      { reservedBy: rbRef('legacy'), reserved: { cpu: '1', pods: '0' } },
    ],
  },
};

describe('parseQuotaState', () => {
  it.each<[string, number | undefined, number | undefined, boolean]>([
    ['counted for the current spec', 3, 3, true],
    ['counted for an older spec (edited since)', 3, 2, false],
    ['never counted (a new quota)', 1, undefined, false],
    ['counted for a newer generation than read (a stale read of the spec): not trusted', 2, 3, false],
    ['neither set (an object not from an API server): as counted', undefined, undefined, true],
  ])('status.used is known only when %s', (_name, generation, observedGeneration, known) => {
    const { state } = parseQuotaState({
      ...quota,
      metadata: { ...quota.metadata, ...(generation === undefined ? {} : { generation }) },
      status: { ...quota.status, ...(observedGeneration === undefined ? {} : { observedGeneration }) },
    });
    expect(formatList(state.used)).toEqual(known ? { cpu: '20' } : {});
    expect(state.reservations).toHaveLength(2);
  });

  it('decodes hard (from spec), used and reservations', () => {
    const { state, errors } = parseQuotaState(quota);
    expect(errors).toEqual([]);
    expect(state.name).toBe('team-a');
    expect(formatList(state.hard)).toEqual({ cpu: '100', pods: '10' });
    expect(formatList(state.used)).toEqual({ cpu: '20' });
    expect(state.reservations).toHaveLength(2);
    const [web, legacy] = state.reservations as [ReservationEntry, ReservationEntry];
    expect(web.binding).toEqual({ namespace: 'ns-a', name: 'web', uid: 'u1' });
    expect(formatList(web.reserved)).toEqual({ cpu: '2', pods: '2' });
    expect(formatList(web.charge)).toEqual({ cpu: '4', pods: '4' });
    expect(web.expirationTime).toBe('2030-01-01T00:00:00.000Z');
    expect(web.operation).toBe('Update');
    // No charge on the wire (older writer): charge = reserved; zero entries dropped.
    expect(legacy.binding).toEqual({ namespace: 'ns-a', name: 'legacy' });
    expect(formatList(legacy.reserved)).toEqual({ cpu: '1' });
    expect(formatList(legacy.charge)).toEqual({ cpu: '1' });
    expect(legacy.expirationTime).toBeUndefined();
  });

  it('decodes spec.enforcement (Deny when absent or unknown) and status.wouldBeDenied', () => {
    expect(parseQuotaState(quota).state.enforcement).toBeUndefined();
    const noted = {
      binding: 'web',
      enforcement: 'Warn' as const,
      message: 'exceeded',
      at: '2026-11-27T12:00:00Z',
    };
    const { state, errors } = parseQuotaState({
      ...quota,
      spec: { ...quota.spec, enforcement: 'DryRun' },
      status: { ...quota.status, wouldBeDenied: [noted, { binding: 'bad' } as never] },
    });
    expect(errors).toEqual([]);
    expect(state.enforcement).toBe('DryRun');
    expect(state.wouldBeDenied).toEqual([noted]);
    const odd = { ...quota, spec: { ...quota.spec, enforcement: 'Off' as never } };
    expect(parseQuotaState(odd).state.enforcement).toBeUndefined();
  });

  it('round-trips through the wire form', () => {
    const { state } = parseQuotaState(quota);
    expect(toWireReservations(state.reservations, 'ns-a')).toEqual([
      {
        reservedBy: rbRef('web', 'u1'),
        reserved: { cpu: '2', pods: '2' },
        charge: { cpu: '4', pods: '4' },
        expirationTime: '2030-01-01T00:00:00.000Z',
        operation: 'Update',
      },
      { reservedBy: rbRef('legacy'), reserved: { cpu: '1' }, charge: { cpu: '1' } },
    ]);
    const again = parseQuotaState({
      ...quota,
      status: { reservations: toWireReservations(state.reservations, 'ns-a') },
    }).state.reservations;
    expect(toWireReservations(again, 'ns-a')).toEqual(toWireReservations(state.reservations, 'ns-a'));
  });

  // Read as absent, the claim is held as a create's would be while its binding is missing.
  it.each<[string, Record<string, unknown>]>([
    ['another operation', { reservedBy: rbRef('a', 'u1'), reserved: {}, operation: 'Create' }],
    ['an update of no known uid', { reservedBy: rbRef('a'), reserved: {}, operation: 'Update' }],
  ])('reads %s as no operation', (_name, reservation) => {
    const { state, errors } = parseQuotaState({
      ...quota,
      status: { reservations: [reservation] },
    } as unknown as KarmadaQuota);
    expect(errors).toEqual([]);
    expect(state.reservations[0]?.operation).toBeUndefined();
  });

  it.each<[string, unknown[], string[]]>([
    ['an entry without reservedBy', [{ reserved: {} }], ['status.reservations[0].reservedBy']],
    [
      'an entry reserved by another kind',
      [{ reservedBy: { kind: 'Pod', name: 'p' }, reserved: {} }],
      ['status.reservations[0].reservedBy'],
    ],
    [
      'a bad quantity',
      [{ reservedBy: rbRef('a'), reserved: { cpu: 'x' }, charge: { cpu: 'y' } }],
      ['status.reservations[0].reserved[cpu]', 'status.reservations[0].charge[cpu]'],
    ],
    [
      'a bad expirationTime',
      [{ reservedBy: rbRef('a'), reserved: {}, expirationTime: 'soon' }],
      ['status.reservations[0].expirationTime'],
    ],
  ])('reports %s', (_name, reservations, fields) => {
    const { errors } = parseQuotaState({ ...quota, status: { reservations } } as KarmadaQuota);
    expect(errors.map((e) => e.field)).toEqual(fields);
  });

  it('reports bad spec.hard and status.used entries and never throws', () => {
    const { state, errors } = parseQuotaState({
      metadata: { name: 'q' },
      spec: { hard: { cpu: 'many', memory: '1Gi' } },
      status: { used: { memory: '1 Gi' }, reservations: 'none' as unknown as [] },
    });
    expect(errors.map((e) => e.field)).toEqual([
      'spec.hard[cpu]',
      'status.used[memory]',
      'status.reservations',
    ]);
    expect(formatList(state.hard)).toEqual({ memory: '1Gi' });
    expect(() => parseQuotaState({} as KarmadaQuota)).not.toThrow();
  });
});

describe('isExpired and sumReserved', () => {
  const entry = (name: string, cpu: string, expirationTime?: string): ReservationEntry => ({
    binding: { namespace: 'ns', name },
    reserved: list({ cpu }),
    charge: list({ cpu }),
    ...(expirationTime ? { expirationTime } : {}),
  });
  const state: QuotaState = {
    name: 'q',
    hard: list({ cpu: '10' }),
    used: {},
    reserved: list({ cpu: '15' }),
    reservations: [
      entry('persisted', '1'),
      entry('past', '2', '2026-01-01T00:00:00Z'),
      entry('now', '3', '2026-01-01T00:01:00Z'),
      entry('future', '4', '2026-01-01T00:01:01Z'),
      entry('garbage', '5', 'not a time'),
    ],
  };

  it('reads an unreadable expirationTime as expired', () => {
    const at = new Date('2026-01-01T00:01:00Z');
    expect(state.reservations.map((e) => isExpired(e, at))).toEqual([false, true, true, false, true]);
  });

  it('sums reserved', () => {
    expect(formatList(sumReserved(state.reservations))).toEqual({ cpu: '15' });
    expect(sumReserved([])).toEqual({});
  });
});

describe('resourceVersions', () => {
  it.each<[unknown, boolean]>([
    ['1', true],
    ['42', true],
    ['123456789012345678901234567890', true],
    ['0', false],
    ['042', false],
    ['', false],
    ['1a', false],
    [42, false],
    [undefined, false],
  ])('%p reads as a revision: %p', (value, expected) => {
    expect(isResourceVersion(value)).toBe(expected);
  });

  it.each<[string | undefined, string | undefined, boolean]>([
    ['43', '42', true],
    ['42', '42', false],
    ['41', '42', false],
    ['100', '99', true],
    ['99', '100', false],
    ['43', undefined, false],
    [undefined, '42', false],
    ['abc', '42', false],
  ])('%p is later than %p: %p', (later, earlier, expected) => {
    expect(isLaterVersion(later, earlier)).toBe(expected);
  });
});

describe('parseQuotaState: reserved and claim versions', () => {
  const quota = (status: Record<string, unknown>): KarmadaQuota =>
    ({
      metadata: { name: 'q', namespace: 'ns', generation: 1 },
      spec: { hard: { cpu: '10' } },
      status,
    }) as KarmadaQuota;
  const claim = (extra: Record<string, unknown>) => ({
    reservedBy: { apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding', name: 'web', uid: 'u1' },
    reserved: { cpu: '2' },
    charge: { cpu: '2' },
    expirationTime: '2026-01-01T00:00:00Z',
    ...extra,
  });

  it('reads status.reserved, never below the claims it lists', () => {
    expect(formatList(parseQuotaState(quota({ reserved: { cpu: '5' } })).state.reserved)).toEqual({
      cpu: '5',
    });
    const short = parseQuotaState(quota({ reserved: { cpu: '1' }, reservations: [claim({})] }));
    expect(formatList(short.state.reserved)).toEqual({ cpu: '2' });
    expect(parseQuotaState(quota({})).state.reserved).toEqual({});
  });

  it('reports an unreadable reserved', () => {
    expect(parseQuotaState(quota({ reserved: { cpu: 'x' } })).errors.map((e) => e.field)).toEqual([
      'status.reserved[cpu]',
    ]);
  });

  it.each<[string, Record<string, unknown>, string | undefined]>([
    ["an update's claim", { operation: 'Update', resourceVersion: '42' }, '42'],
    [
      "an update's claim, a version that is no revision",
      { operation: 'Update', resourceVersion: 'x' },
      undefined,
    ],
    ["a create's claim (no version is read)", { resourceVersion: '42' }, undefined],
  ])('%s: version %p', (_what, extra, version) => {
    const [entry] = parseQuotaState(quota({ reservations: [claim(extra)] })).state.reservations;
    expect(entry?.resourceVersion).toBe(version);
    expect(toWireReservations([entry!], 'ns')[0]?.resourceVersion).toBe(version);
  });
});
