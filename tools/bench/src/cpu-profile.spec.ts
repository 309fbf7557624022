import {
  parseGoPprofTop,
  renderCpuProfileSummary,
  renderGoProfileSummary,
  summarizeCpuProfile,
  type CpuProfile,
} from './cpu-profile.js';

const frame = (id: number, functionName: string, url: string, hitCount: number, lineNumber = 9) => ({
  id,
  callFrame: { functionName, url, lineNumber },
  hitCount,
});

/** 1,000 ms profiled over 100 samples: 10 ms each. */
const profile = (...nodes: CpuProfile['nodes']): CpuProfile => ({ nodes, startTime: 0, endTime: 1_000_000 });

describe('summarizeCpuProfile', () => {
  test.each([
    {
      case: 'self time per function, idle excluded from busy time and from the shares',
      nodes: [
        frame(1, '(root)', '', 0),
        frame(2, '(idle)', '', 50),
        frame(3, 'admit', 'file:///repo/dist/apps/webhook/src/admission.controller.js', 30),
        frame(4, 'parse', 'node:internal/deps/undici', 20),
      ],
      busyMs: 500,
      functions: [
        ['admit apps/webhook/src/admission.controller.js:10', 300, 60],
        ['parse node:internal/deps/undici:10', 200, 40],
      ],
      packages: [
        ['apps/webhook', 300, 60],
        ['node:internal', 200, 40],
      ],
    },
    {
      case: 'one function at two nodes (two call paths) adds up; packages by their node_modules name',
      nodes: [
        frame(1, 'serialize', 'file:///repo/node_modules/@kubernetes/client-node/dist/gen/x.js', 10),
        frame(2, 'serialize', 'file:///repo/node_modules/@kubernetes/client-node/dist/gen/x.js', 30),
        frame(3, '', 'file:///repo/node_modules/ioredis/built/Redis.js', 40, 0),
        frame(4, '(garbage collector)', '', 20),
      ],
      busyMs: 1_000,
      functions: [
        ['(anonymous) node_modules/ioredis/built/Redis.js:1', 400, 40],
        ['serialize node_modules/@kubernetes/client-node/dist/gen/x.js:10', 400, 40],
        ['(garbage collector)', 200, 20],
      ],
      packages: [
        ['@kubernetes/client-node', 400, 40],
        ['ioredis', 400, 40],
        ['(garbage collector)', 200, 20],
      ],
    },
    {
      case: 'a profile without samples',
      nodes: [frame(1, '(root)', '', 0)],
      busyMs: 0,
      functions: [],
      packages: [],
    },
  ])('$case', ({ nodes, busyMs, functions, packages }) => {
    const summary = summarizeCpuProfile(profile(...nodes));
    expect(summary.durationMs).toBe(1_000);
    expect(summary.busyMs).toBe(busyMs);
    const shares = (list: { name: string; selfMs: number; percent: number }[]) =>
      list.map((s) => [s.name, s.selfMs, s.percent]);
    expect(shares(summary.topFunctions)).toEqual(expect.arrayContaining(functions));
    expect(summary.topFunctions).toHaveLength(functions.length);
    expect(shares(summary.topPackages)).toEqual(packages.length ? expect.arrayContaining(packages) : []);
    expect(summary.topFunctions.map((s) => s.selfMs)).toEqual(
      [...summary.topFunctions.map((s) => s.selfMs)].sort((a, b) => b - a),
    );
  });

  test('keeps only the top N', () => {
    const nodes = Array.from({ length: 30 }, (_, i) => frame(i + 1, `f${i}`, 'file:///x.js', i + 1));
    const summary = summarizeCpuProfile(profile(...nodes), 5);
    expect(summary.topFunctions.map((s) => s.name.split(' ')[0])).toEqual([
      'f29',
      'f28',
      'f27',
      'f26',
      'f25',
    ]);
  });
});

test('renderCpuProfileSummary prints busy time, then packages and functions with their shares', () => {
  const text = renderCpuProfileSummary(
    'webhook',
    summarizeCpuProfile(profile(frame(1, 'admit', 'file:///r/apps/webhook/src/a.js', 100))),
  );
  expect(text.split('\n')).toEqual([
    'webhook: busy 1000 ms of 1000 ms profiled',
    ' by package:',
    '  100.0%     1000 ms  apps/webhook',
    ' by function (self time):',
    '  100.0%     1000 ms  admit apps/webhook/src/a.js:10',
  ]);
});

/** `go tool pprof -top` of a kube-apiserver CPU profile, as Go 1.26 prints it. */
const PPROF_TOP = `File: kube-apiserver
Build ID: 5b0e
Type: cpu
Time: 2026-11-26 20:10:03 UTC
Duration: 15.01s, Total samples = 16.80s (111.93%)
Showing nodes accounting for 9.42s, 56.07% of 16.80s total
Dropped 1024 nodes (cum <= 0.08s)
Showing top 25 nodes out of 412
      flat  flat%   sum%        cum   cum%
     1.23s  7.32%  7.32%      2.80s 16.67%  runtime.mallocgc
     950ms  5.65% 12.98%      950ms  5.65%  runtime.memmove
     0.40s  2.38% 15.36%      1.10s  6.55%  encoding/json.(*decodeState).object
`;

describe('parseGoPprofTop', () => {
  it('reads the profiled duration, the CPU its samples add up to, and the flat shares', () => {
    expect(parseGoPprofTop(PPROF_TOP)).toEqual({
      durationSeconds: 15.01,
      cpuSeconds: 16.8,
      topFunctions: [
        { name: 'runtime.mallocgc', percent: 7.32 },
        { name: 'runtime.memmove', percent: 5.65 },
        { name: 'encoding/json.(*decodeState).object', percent: 2.38 },
      ],
    });
  });

  it.each([
    ['980ms', 0.98],
    ['1.50mins', 90],
    ['2hrs', 7200],
  ])('reads pprof durations like %s', (total, seconds) => {
    expect(parseGoPprofTop(PPROF_TOP.replace('16.80s (', `${total} (`)).cpuSeconds).toBeCloseTo(seconds);
  });

  it('keeps only the top functions asked for', () => {
    expect(parseGoPprofTop(PPROF_TOP, 1).topFunctions).toHaveLength(1);
  });

  it.each([
    [
      'no Duration line',
      PPROF_TOP.replace(/^Duration.*$/m, ''),
      /no "Duration: \.\.\., Total samples = \.\.\." line/,
    ],
    [
      'an unreadable duration',
      PPROF_TOP.replace('15.01s', '15.01sec'),
      /cannot read the duration "15.01sec"/,
    ],
  ])('says what it could not read: %s', (_what, text, message) => {
    expect(() => parseGoPprofTop(text)).toThrow(message);
  });

  it("renders like the services' summaries", () => {
    expect(
      renderGoProfileSummary('end-to-end/host-apiserver-with-webhook', parseGoPprofTop(PPROF_TOP, 1)),
    ).toBe(
      'end-to-end/host-apiserver-with-webhook (Go): 16.80 s of CPU in 15.0 s profiled\n' +
        ' by function (self time):\n' +
        '    7.3%  runtime.mallocgc',
    );
  });
});
