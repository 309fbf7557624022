import { QUICK } from './context.js';
import { renderMarkdown, renderTable, reportRows, targetChecks, type BenchReport } from './report.js';
import type { HotQuotaModeFigures } from './hot-quota.js';

const mode = (admissionsPerSec: number, p99Ms: number, errors = 0): HotQuotaModeFigures => ({
  requests: admissionsPerSec * 10,
  admissionsPerSec,
  allowed: 100,
  denied: 50,
  errors,
  errorSamples: [],
  offendingBindings: [],
  p50Ms: 2,
  p95Ms: 5,
  p99Ms,
  maxMs: 40,
  overAdmitted: 0,
  accountingErrors: 0,
  meanBatchSize: 12.5,
  statusConflicts: 0,
  refusedOnArrival: 0,
  webhookMeanMs: 5,
  audit: {
    overAdmittedKeys: [],
    reservedSumMismatch: false,
    mismatchedBindings: [],
    unknownReservations: [],
    uncertainBindings: 0,
    hard: {},
    usedPlusReserved: {},
    problems: [],
  },
});

const latency = (p99Ms: number) => ({ samples: 10, p50Ms: p99Ms / 2, p95Ms: p99Ms, p99Ms, maxMs: p99Ms });
const userRun = (deployments: number, noQuota: number, ours: number, karmadaFrq: number) => ({
  deployments,
  noQuota: latency(noQuota),
  ours: latency(ours),
  karmadaFrq: latency(karmadaFrq),
  p99RatioOurs: ours / noQuota,
  p99RatioKarmadaFrq: karmadaFrq / noQuota,
});

const creates = (meanMs: number, p99Ms: number, apiServerCpuMsPerCreate: number, failedClosed = 0) => ({
  creates: 1000,
  createsPerSec: 250,
  failedClosed,
  errors: 0,
  errorSamples: [],
  meanMs,
  p50Ms: meanMs,
  p95Ms: p99Ms,
  p99Ms,
  apiServerCpuMsPerCreate,
});

function report(): BenchReport {
  const r: BenchReport = {
    machine: {
      cpus: 2,
      cpuModel: 'Test CPU',
      memoryGiB: 7.8,
      node: 'v24.0.0',
      kubernetes: 'v1.34.4',
      etcd: 'v3.6.16',
      platform: 'linux/x64',
      loadAverage: 1.5,
    },
    commit: 'abc1234',
    code: '0123456789abcdef',
    mode: 'quick',
    startedAt: '2026-05-01T10:00:00.000Z',
    durationSeconds: 300,
    sizes: QUICK,
    statusWrites: {
      writers: 4,
      runs: [
        { entries: 100, writes: 100, writesPerSec: 75.4, apiServerCpuMsPerWrite: 16.62, bodyBytes: 30_720 },
      ],
    },
    hotQuota: {
      clients: 64,
      seconds: 8,
      bindings: 256,
      hard: { pods: '512' },
      batched: mode(2_500, 20),
      casPerAdmission: mode(500, 300, 40),
      clusterQuota: mode(2_000, 30),
      speedup: 5,
      karmadaFrq: {
        karmadaVersion: 'v1.18.2',
        requests: 4000,
        admissionsPerSec: 400,
        allowed: 3000,
        denied: 900,
        errors: 100,
        errorSamples: [],
        p50Ms: 10,
        p95Ms: 40,
        p99Ms: 90,
        maxMs: 200,
        overAdmitted: 1,
        overAdmittedKeys: ['pods'],
        statusDrift: ['cpu', 'pods'],
      },
      sideBySide: {
        ours: { admissionsPerSec: 2_500, p50Ms: 2, p99Ms: 20, failedClosed: 0, overAdmitted: 0 },
        karmadaFrq: { admissionsPerSec: 400, p50Ms: 10, p99Ms: 90, failedClosed: 100, overAdmitted: 1 },
      },
    },
    webhookAlone: {
      clients: 64,
      seconds: 8,
      admissionsPerSec: 1_800,
      p50Ms: 12,
      p99Ms: 24,
      oneQuota: { ...mode(1_500, 30), quotas: 1, bindings: 128, meanBatchSize: 20 },
      manyQuotas: {
        ...mode(2_100, 18),
        quotas: 50,
        bindings: 128,
        meanBatchSize: 2.5,
        cpuUsPerReview: 1_250,
      },
    },
    replicas: {
      clients: 64,
      seconds: 5,
      namespaces: 50,
      hotQuota: { one: mode(600, 300), two: { ...mode(450, 420), statusConflicts: 900 } },
      manyQuotas: { one: mode(800, 200), two: mode(1_000, 150) },
    },
    endToEnd: {
      concurrency: 32,
      withWebhook: creates(120, 400, 16.2, 3),
      withoutWebhook: creates(40, 100, 4.1),
      p99Ratio: 4,
      p50Ratio: 3,
      inWebhook: { calls: 1000, meanMs: 60, shareOfCreate: 0.5 },
      quotaStatusWrites: { perCreate: 1.234, conflictsPerCreate: 0.2 },
    },
    convergence: {
      pods: 1000,
      members: 2,
      waves: 1,
      samples: 1400,
      p50Ms: 200,
      p95Ms: 900,
      p99Ms: 1500,
      maxMs: 2000,
    },
    aggregatorScale: {
      pods: 200_000,
      eventsPerSec: 60_000,
      addEventsPerSec: 40_000,
      updateEventsPerSec: 80_000,
      deleteEventsPerSec: 500_000,
      eventsPerSecWithParse: 30_000,
      heapBytesPer100kPods: 13 * 2 ** 20,
      heapBytesFor1MPods: 130 * 2 ** 20,
      problems: [],
    },
    resync: { error: 'resync: the queue | never drained\nsecond line' },
    userLatency: {
      ...userRun(10, 1000, 1050, 1400),
      karmadaVersion: 'v1.18.2',
      replicasPerDeployment: 2,
      burst: userRun(100, 4000, 5000, 4500),
    },
    targets: [],
    failures: ['resync: the queue never drained'],
  };
  r.targets = targetChecks(r);
  return r;
}

describe('targetChecks', () => {
  test('checks each figure against its target, batched mode only for speed', () => {
    expect(targetChecks(report()).map((t) => [t.scenario, t.figure, t.value, t.met])).toEqual([
      ['hot-quota', 'batched admissions/s over Karmada FRQ', 6.25, false],
      ['hot-quota', 'batched p99 latency (ms)', 20, true],
      ['hot-quota', 'batched failed closed (5xx)', 0, true],
      ['hot-quota', 'batched over-admitted keys', 0, true],
      ['hot-quota', 'cas-per-admission over-admitted keys', 0, true],
      ['hot-quota', 'one ClusterKarmadaQuota over 2 namespaces (batched) over-admitted keys', 0, true],
      ['webhook-alone', 'admissions/s', 1_800, false],
      ['webhook-alone', 'p99 latency (ms)', 24, true],
      ['replicas', 'one quota: admissions/s 2 / 1 replicas', 0.75, false],
      ['replicas', '50 quotas: admissions/s 2 / 1 replicas', 1.25, true],
      ['end-to-end', 'p99 ratio', 4, false],
      ['end-to-end', 'failed closed (5xx)', 3, false],
      ['convergence', 'p99 delay (ms)', 1500, false],
      ['aggregator-scale', 'events/s', 60_000, true],
      ['aggregator-scale', 'heap for 1M pods (bytes)', 130 * 2 ** 20, true],
      ['user-latency', 'one at a time: p99 ratio ours / no quota', 1.05, true],
      ['user-latency', 'one at a time: p99 ours (ms)', 1050, true],
      ['user-latency', 'burst: p99 ratio ours / no quota', 1.25, false],
      ['user-latency', 'burst: p99 ours (ms)', 5000, false],
    ]);
  });
});

describe('reportRows and renderTable', () => {
  test('list the figures with their targets, and a failed scenario by its first line', () => {
    const rows = reportRows(report());
    expect(rows).toContainEqual({
      scenario: 'hot-quota',
      figure: 'batched: latency',
      value: '2.0 / 5.0 / 20.0 ms (p50 / p95 / p99)',
      target: "below Karmada's FRQ",
      verdict: 'met',
    });
    expect(rows).toContainEqual({
      scenario: 'hot-quota',
      figure: 'ours (batched) / Karmada FRQ admissions/s',
      value: '6.25x',
      target: ">= 10x Karmada's FRQ",
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual({
      scenario: 'end-to-end',
      figure: 'p99 ratio (with / without)',
      value: '4.00x',
      target: '<= 1.5x',
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual({
      scenario: 'end-to-end',
      figure: 'failed closed with the webhook (Karmada API server late)',
      value: '3',
      target: '0',
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual({
      scenario: 'convergence',
      figure: 'delay to status.used (1,400 changes)',
      value: '200.0 / 900.0 / 1500.0 ms (p50 / p95 / p99)',
      target: '<= 500 ms',
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'hot-quota',
        figure: 'speedup (batched / cas-per-admission)',
        value: '5.00x',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'hot-quota',
        figure: 'Karmada FRQ (v1.18.2): over-admitted keys',
        value: '1 (pods)',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'status-writes',
        figure: 'status with 100 reservation entries (30.0 KiB): API server CPU per write',
        value: '16.6 ms',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'aggregator-scale',
        figure: 'heap for 1M pods',
        value: '130.0 MiB',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'end-to-end',
        figure: 'time in the webhook per create (API server metrics)',
        value: '60.0 ms of 120.0 ms mean (50 %)',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'end-to-end',
        figure: 'Karmada API server CPU per create (with / without)',
        value: '16.2 ms / 4.1 ms',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'end-to-end',
        figure: 'KarmadaQuota status writes per create (conflicts)',
        value: '1.23 (0.20)',
      }),
    );
    expect(rows).toContainEqual({
      scenario: 'user-latency',
      figure: 'burst: ours',
      value: '2500.0 / 5000.0 / 5000.0 ms (p50 / p95 / p99)',
      target: "below Karmada's FRQ",
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'user-latency',
        figure: 'one at a time (10 Deployments x 2 pods): no quota',
        value: '500.0 / 1000.0 / 1000.0 ms (p50 / p95 / p99)',
      }),
    );
    expect(rows).toContainEqual({
      scenario: 'webhook-alone',
      figure: '64 clients, no stores or reconciler: admissions/s',
      value: '1,800',
      target: '>= 2,000',
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual({
      scenario: 'webhook-alone',
      figure: '64 clients, no stores or reconciler: latency',
      value: '12.0 / 24.0 ms (p50 / p99)',
      target: '<= 25 ms',
      verdict: 'met',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'webhook-alone',
        figure: '50 quotas: admissions per status write',
        value: '2.5',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'webhook-alone',
        figure: '50 quotas: webhook CPU per review',
        value: '1,250 µs',
      }),
    );
    // A run from before it was measured has no such row.
    expect(rows).not.toContainEqual(
      expect.objectContaining({ scenario: 'webhook-alone', figure: 'one quota: webhook CPU per review' }),
    );
    expect(rows).toContainEqual({
      scenario: 'replicas',
      figure: 'one quota: admissions/s, 1 / 2 replicas',
      value: '600 / 450 (0.75x)',
      target: '>= 1.00x',
      verdict: 'MISSED',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'replicas',
        figure: 'one quota: p50 / p99, 1; 2 replicas',
        value: '2.0 / 300.0 ms; 2.0 / 420.0 ms',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'replicas',
        figure: 'one quota: status conflicts per 100 admissions, 1 / 2 replicas',
        value: '0.0 / 20.0',
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scenario: 'replicas',
        figure: 'one quota: allowed / denied / errors, 1; 2 replicas',
        value: '100 / 50 / 0; 100 / 50 / 0',
      }),
    );
    expect(rows).toContainEqual({
      scenario: 'replicas',
      figure: '50 quotas: admissions/s, 1 / 2 replicas',
      value: '800 / 1,000 (1.25x)',
      target: '>= 1.00x',
      verdict: 'met',
    });
    expect(rows).toContainEqual({
      scenario: 'resync',
      figure: 'FAILED',
      value: 'resync: the queue | never drained',
      target: '',
      verdict: '',
    });
  });

  test('renderTable aligns every column under its title', () => {
    const table = renderTable([
      { scenario: 'a', figure: 'long figure name', value: '1', target: '', verdict: '' },
      { scenario: 'scenario b', figure: 'f', value: '12,345', target: '>= 2', verdict: 'met' },
    ]).split('\n');
    expect(table).toEqual([
      'scenario    figure            value   target',
      '----------  ----------------  ------  ------  ---',
      'a           long figure name  1',
      'scenario b  f                 12,345  >= 2    met',
    ]);
  });
});

test('renderMarkdown names the machine and escapes pipes', () => {
  const r = report();
  const markdown = renderMarkdown(r, reportRows(r)).split('\n');
  expect(markdown[0]).toBe(
    'Measured 2026-05-01 with `npm run bench -- --quick` on 2 CPUs (Test CPU), 7.8 GiB, Node v24.0.0, ' +
      'Kubernetes v1.34.4, etcd v3.6.16; load average 1.5 at the start.',
  );
  expect(markdown).toContain('| resync | FAILED | resync: the queue \\| never drained |  |  |');
});

test('renderMarkdown names the admission mode of a run in owner mode', () => {
  const r: BenchReport = { ...report(), mode: 'full', admissionMode: 'owner' };
  expect(renderMarkdown(r, reportRows(r))).toMatch(
    /^Measured 2026-05-01 with `npm run bench -- --admission-mode owner` on/,
  );
});
