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
    mode: 'quick',
    startedAt: '2026-05-01T10:00:00.000Z',
    durationSeconds: 300,
    sizes: QUICK,
    hotQuota: {
      clients: 64,
      seconds: 8,
      bindings: 256,
      hard: { pods: '512' },
      batched: mode(2_500, 20),
      casPerAdmission: mode(500, 300, 40),
      speedup: 5,
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
    targets: [],
    failures: ['resync: the queue never drained'],
  };
  r.targets = targetChecks(r);
  return r;
}

describe('targetChecks', () => {
  test('checks each figure spec §11 targets, batched mode only for speed', () => {
    expect(targetChecks(report()).map((t) => [t.scenario, t.figure, t.value, t.met])).toEqual([
      ['hot-quota', 'batched admissions/s', 2_500, true],
      ['hot-quota', 'batched p99 latency (ms)', 20, true],
      ['hot-quota', 'batched errors (5xx)', 0, true],
      ['hot-quota', 'batched over-admitted keys', 0, true],
      ['hot-quota', 'cas-per-admission over-admitted keys', 0, true],
      ['convergence', 'p99 delay (ms)', 1500, false],
      ['aggregator-scale', 'events/s', 60_000, true],
      ['aggregator-scale', 'heap for 1M pods (bytes)', 130 * 2 ** 20, true],
    ]);
  });
});

describe('reportRows and renderTable', () => {
  test('list the figures with their targets, and a failed scenario by its first line', () => {
    const rows = reportRows(report());
    expect(rows).toContainEqual({
      scenario: 'hot-quota',
      figure: 'batched: admissions/s',
      value: '2,500',
      target: '>= 2,000',
      verdict: 'met',
    });
    expect(rows).toContainEqual({
      scenario: 'convergence',
      figure: 'delay to status.used (1,400 changes)',
      value: '200.0 / 900.0 / 1500.0 ms (p50 / p95 / p99)',
      target: '<= 1 s',
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
        scenario: 'aggregator-scale',
        figure: 'heap for 1M pods',
        value: '130.0 MiB',
      }),
    );
    expect(rows.at(-1)).toEqual({
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
      'scenario    figure            value   target (spec §11)',
      '----------  ----------------  ------  -----------------  ---',
      'a           long figure name  1',
      'scenario b  f                 12,345  >= 2               met',
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
