import { Quantity } from '#quantity';
import type { ResourceBinding } from '#api';
import { withClusterOverrides, withTemplateClass, type ObservedCluster } from '#quota';
import {
  judgmentsOf,
  readUsageRecord,
  recordedObservations,
  USAGE_RECORD_MAX_BYTES,
  usageFingerprint,
  usageRecord,
} from './usage-record.js';

const cluster = (name: string, workloads: Record<string, string>, lastSyncTime = '2026-11-28T07:00:00Z') =>
  ({
    name,
    state: 'Ready',
    lastSyncTime,
    used: { cpu: Quantity.parse('3') },
    workloads: Object.entries(workloads).map(([workload, cpu]) => ({
      kind: 'Deployment',
      name: workload,
      used: { cpu: Quantity.parse(cpu) },
    })),
  }) as ObservedCluster;

const now = new Date('2026-11-28T07:00:05.250Z');
/** As the API server answers it: JSON. */
const stored = (record: unknown) => JSON.parse(JSON.stringify(record)) as unknown;

describe('usage record', () => {
  it('is a WorkloadUsage named usage that reads back what it recorded, quantities as strings', () => {
    const record = usageRecord('team-a', [cluster('m1', { web: '1500m', api: '1.5' })], [], now);
    expect(record).toMatchObject({
      apiVersion: 'quota.karmada.io/v1alpha1',
      kind: 'WorkloadUsage',
      metadata: { name: 'usage', namespace: 'team-a' },
    });
    expect(readUsageRecord(stored(record))).toEqual({
      usage: {
        observedAt: '2026-11-28T07:00:05.250Z',
        clusters: [
          {
            name: 'm1',
            state: 'Ready',
            lastSyncTime: '2026-11-28T07:00:00Z',
            used: { cpu: '3' },
            workloads: [
              { kind: 'Deployment', name: 'web', used: { cpu: '1500m' } },
              { kind: 'Deployment', name: 'api', used: { cpu: '1500m' } },
            ],
          },
        ],
        judged: [],
      },
    });
  });

  it('records how the reconciler judged each binding beyond its own word, and reads it back', () => {
    const rb = (name: string, priorityClassName?: string): ResourceBinding => ({
      metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
      spec: {
        resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        replicaRequirements: priorityClassName ? { priorityClassName } : {},
      },
    });
    const judged = judgmentsOf([
      withTemplateClass(rb('web'), 'high'),
      withClusterOverrides(rb('api'), [
        { cluster: 'm1', replicas: 3, policies: ['OverridePolicy team-a/api'] },
      ]),
      rb('plain'),
    ]);
    expect(judged).toEqual([
      { name: 'web', uid: 'uid-web', priorityClassName: 'high' },
      {
        name: 'api',
        uid: 'uid-api',
        overrides: [{ cluster: 'm1', replicas: 3, policies: ['OverridePolicy team-a/api'] }],
      },
    ]);
    const record = stored(usageRecord('team-a', [cluster('m1', { web: '1' })], judged, now));
    expect(readUsageRecord(record)).toMatchObject({ usage: { judged } });
    const clusters = [cluster('m1', { web: '1' })];
    expect(usageFingerprint(clusters, judged)).not.toBe(usageFingerprint(clusters, []));
  });

  it('gives workloadUsage the recorded usage with the time to settle claims at, or why there is none', () => {
    const record = stored(usageRecord('team-a', [cluster('m1', { web: '1' })], [], now));
    const later = new Date('2026-11-28T07:01:00Z');
    expect(recordedObservations(record, later)).toMatchObject({
      observedAt: '2026-11-28T07:00:05.250Z',
      now: later,
      clusters: [{ name: 'm1' }],
    });
    expect(recordedObservations(undefined, later)).toEqual({
      problem: expect.stringContaining('no WorkloadUsage usage in the namespace yet'),
    });
  });

  it('fingerprints the usage, not the sync times that move at every publish', () => {
    const before = usageFingerprint([cluster('m1', { web: '1' })], []);
    expect(usageFingerprint([cluster('m1', { web: '1' }, '2026-11-28T07:09:00Z')], [])).toBe(before);
    expect(usageFingerprint([cluster('m1', { web: '2' })], [])).not.toBe(before);
    expect(usageFingerprint([{ ...cluster('m1', { web: '1' }), state: 'Stale' }], [])).not.toBe(before);
  });

  it('records only the workload count when the record would not fit in one object', () => {
    const count = USAGE_RECORD_MAX_BYTES / 40;
    const many = Object.fromEntries(Array.from({ length: count }, (_, i) => [`workload-${i}`, '1']));
    const record = usageRecord('team-a', [cluster('m1', many)], [], now);
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThan(300);
    expect(readUsageRecord(stored(record))).toEqual({
      problem: `the namespace runs ${count} workloads in its member clusters, more than WorkloadUsage usage holds`,
    });
  });

  const valid = stored(usageRecord('team-a', [cluster('m1', { web: '1' })], [], now)) as {
    observedAt: string;
    clusters: Record<string, unknown>[];
  };
  const withCluster = (change: Record<string, unknown>) => ({
    ...valid,
    clusters: [{ ...valid.clusters[0], ...change }],
  });
  it.each([
    { name: 'an array', record: [], problem: 'WorkloadUsage usage has no observedAt time' },
    { name: 'no time', record: { ...valid, observedAt: 'yesterday' }, problem: 'no observedAt' },
    { name: 'no clusters', record: { observedAt: valid.observedAt }, problem: 'malformed clusters' },
    {
      name: 'a cluster state unknown',
      record: withCluster({ state: 'Fine' }),
      problem: 'malformed clusters',
    },
    {
      name: 'a number for a quantity',
      record: withCluster({ used: { cpu: 3 } }),
      problem: 'malformed clusters',
    },
    {
      name: 'a judged binding without a uid',
      record: { ...valid, bindings: [{ name: 'web', priorityClassName: 'high' }] },
      problem: 'malformed bindings',
    },
    {
      name: 'an override with replicas as text',
      record: {
        ...valid,
        bindings: [{ name: 'web', uid: 'u', overrides: [{ cluster: 'm1', replicas: '3', policies: [] }] }],
      },
      problem: 'malformed bindings',
    },
    {
      name: 'a workload without a kind',
      record: withCluster({ workloads: [{ name: 'w', used: {} }] }),
      problem: 'malformed clusters',
    },
  ])('a record with $name is not used, and says why', ({ record, problem }) => {
    const read = readUsageRecord(record);
    expect('problem' in read && read.problem).toContain(problem);
  });
});
