import type * as k8s from '@kubernetes/client-node';
import {
  ADMISSION_ANNOTATION,
  admissionLeaseObjectFor,
  admissionLeaseStateOf,
  admissionRecordOf,
  type AdmissionLeaseState,
  type AdmissionRecord,
} from './admission-lease-api.js';

const HANDED_OVER: AdmissionRecord = {
  ghosts: { 'team-a/quota': { cpu: '1500m', 'requests.memory': '1Gi' } },
  unknownInFlight: false,
  counted: { 'team-a/quota': '4711' },
};
const HELD: AdmissionRecord = { ...HANDED_OVER, address: '10.0.0.7:9443' };
const CAUTIOUS: AdmissionRecord = { ghosts: {}, unknownInFlight: true, counted: {} };
const NOTHING: AdmissionRecord = { ghosts: {}, unknownInFlight: false, counted: {} };

describe('admissionRecordOf', () => {
  test.each<[string, string | undefined, boolean, AdmissionRecord]>([
    ['a record a holder wrote', JSON.stringify(HELD), true, HELD],
    ['a record handed over on release', JSON.stringify(HANDED_OVER), false, HANDED_OVER],
    ['no annotation on a free Lease (never held by an owner)', undefined, false, NOTHING],
    ['no annotation on a held Lease', undefined, true, CAUTIOUS],
    ['not JSON, held', '{"ghosts":', true, CAUTIOUS],
    ['not JSON, free (the handed-over ghosts are lost)', 'ghosts', false, CAUTIOUS],
    ['empty', '', true, CAUTIOUS],
    ['JSON null', 'null', true, CAUTIOUS],
    ['a field missing', JSON.stringify({ ghosts: {}, counted: {} }), true, CAUTIOUS],
    ['unknownInFlight not a boolean', JSON.stringify({ ...HELD, unknownInFlight: 'false' }), true, CAUTIOUS],
    [
      'a ghost that is no quantity',
      JSON.stringify({ ...HELD, ghosts: { q: { cpu: 'lots' } } }),
      true,
      CAUTIOUS,
    ],
    ['a ghost given as a number', JSON.stringify({ ...HELD, ghosts: { q: { cpu: 2 } } }), true, CAUTIOUS],
    [
      'a count that is no resourceVersion',
      JSON.stringify({ ...HELD, counted: { q: 'latest' } }),
      false,
      CAUTIOUS,
    ],
  ])('%s', (_what, annotation, held, expected) => {
    expect(admissionRecordOf(annotation, held)).toEqual(expected);
  });
});

describe('admissionLeaseStateOf', () => {
  const lease = (spec: k8s.V1LeaseSpec, annotations?: Record<string, string>): k8s.V1Lease => ({
    metadata: { name: 'karmada-quota-admission', resourceVersion: '812', annotations },
    spec,
  });
  test.each<[string, k8s.V1Lease, AdmissionLeaseState]>([
    [
      'a held Lease',
      lease(
        { holderIdentity: 'a.1', leaseDurationSeconds: 15, leaseTransitions: 3 },
        { [ADMISSION_ANNOTATION]: JSON.stringify(HELD), other: 'kept' },
      ),
      { holder: 'a.1', durationSeconds: 15, transitions: 3, record: HELD, resourceVersion: '812' },
    ],
    [
      'released: an empty holder',
      lease(
        { holderIdentity: '', leaseDurationSeconds: 15, leaseTransitions: 3 },
        { [ADMISSION_ANNOTATION]: JSON.stringify(HANDED_OVER) },
      ),
      { holder: '', durationSeconds: 15, transitions: 3, record: HANDED_OVER, resourceVersion: '812' },
    ],
    [
      'made by hand: no holder, duration, transitions or record',
      lease({}),
      { holder: '', durationSeconds: 0, transitions: 0, record: NOTHING, resourceVersion: '812' },
    ],
    [
      'held, its record garbled',
      lease({ holderIdentity: 'b.1', leaseDurationSeconds: 15 }, { [ADMISSION_ANNOTATION]: '{' }),
      { holder: 'b.1', durationSeconds: 15, transitions: 0, record: CAUTIOUS, resourceVersion: '812' },
    ],
  ])('%s', (_what, object, expected) => {
    expect(admissionLeaseStateOf(object)).toEqual(expected);
  });
});

describe('admissionLeaseObjectFor', () => {
  const now = new Date('2026-11-30T10:00:05.123Z');
  // As client-node hands a MicroTime back: the API server's string, typed as a Date.
  const earlier = '2026-11-30T09:00:00.456000Z' as unknown as Date;
  const next = (holder: string, record = HELD) => ({ holder, durationSeconds: 15, transitions: 2, record });
  const stored = (holder: string): k8s.V1Lease => ({
    metadata: {
      name: 'karmada-quota-admission',
      resourceVersion: '812',
      labels: { team: 'quota' },
      annotations: { [ADMISSION_ANNOTATION]: '{}', note: 'kept' },
    },
    spec: { holderIdentity: holder, acquireTime: earlier, renewTime: earlier, leaseDurationSeconds: 10 },
  });

  test.each<[string, string, k8s.V1Lease | undefined, string | undefined]>([
    ['a create: acquired now', 'a.1', undefined, '2026-11-30T10:00:05.123000Z'],
    ['a renew keeps the acquireTime', 'a.1', stored('a.1'), '2026-11-30T09:00:00.456000Z'],
    ['a takeover: acquired now', 'b.1', stored('a.1'), '2026-11-30T10:00:05.123000Z'],
    ['taking a released Lease: acquired now', 'b.1', stored(''), '2026-11-30T10:00:05.123000Z'],
    ['a release: no acquireTime while free', '', stored('a.1'), undefined],
  ])('%s', (_what, holder, previous, acquireTime) => {
    const object = admissionLeaseObjectFor(next(holder), now, previous);
    expect(object.spec).toEqual({
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      leaseTransitions: 2,
      acquireTime,
      renewTime: '2026-11-30T10:00:05.123000Z',
    });
    expect(object.metadata?.annotations?.[ADMISSION_ANNOTATION]).toBe(JSON.stringify(HELD));
  });

  test("keeps others' labels and annotations", () => {
    const object = admissionLeaseObjectFor(next('a.1'), now, stored('a.1'));
    expect(object.metadata?.labels).toEqual({ team: 'quota' });
    expect(object.metadata?.annotations?.note).toBe('kept');
  });

  test.each<[string, AdmissionRecord, boolean]>([
    ['a held record', HELD, true],
    ['a handed-over record', HANDED_OVER, false],
    ['ghosts with unknownInFlight', { ...HANDED_OVER, unknownInFlight: true }, true],
  ])('%s reads back as written', (_what, record, held) => {
    const object = admissionLeaseObjectFor(next(held ? 'a.1' : '', record), now);
    expect(
      admissionLeaseStateOf({ ...object, metadata: { ...object.metadata, resourceVersion: '9' } }),
    ).toEqual({
      ...next(held ? 'a.1' : '', record),
      resourceVersion: '9',
    });
  });
});
