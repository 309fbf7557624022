import { renderCpuProfileSummary, summarizeCpuProfile, type CpuProfile } from './cpu-profile.js';

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
