import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport } from './report.js';
import {
  benchPart,
  GENERATED_END,
  GENERATED_START,
  generatedPart,
  LATEST_RUN,
  PUBLISHED,
  publishRefusals,
  readmePart,
  replaceGenerated,
  ROOT,
  unaligned,
} from './publish.js';

const latest = JSON.parse(readFileSync(join(ROOT, LATEST_RUN), 'utf8')) as BenchReport;

describe('the published run', () => {
  it(`${LATEST_RUN} is a full run of committed code that passed every correctness audit`, () => {
    expect({ commit: latest.commit, refusals: publishRefusals(latest) }).toEqual({
      commit: latest.commit,
      refusals: [],
    });
  });

  it.each([
    ['README.md shows its headline figures and targets', PUBLISHED.readme, readmePart],
    ['bench.md shows every figure of it', PUBLISHED.bench, benchPart],
  ])('%s (npm run bench:publish rewrites them)', (_what, path, render) => {
    const shown = generatedPart(readFileSync(join(ROOT, path), 'utf8'));
    expect(shown && unaligned(shown)).toBe(unaligned(render(latest)));
  });

  it('the README row of a scenario that did not run says so', () => {
    expect(readmePart({ ...latest, userLatency: undefined })).toMatch(
      /\| Deployment to pods, one at a time: p99 vs no quota \| not measured \|/,
    );
  });
});

describe('publishRefusals', () => {
  const passing: Pick<BenchReport, 'mode' | 'commit' | 'failures'> = {
    mode: 'full',
    commit: 'abc1234',
    failures: [],
  };
  it.each<[string, Pick<BenchReport, 'mode' | 'commit' | 'failures'>, RegExp | undefined]>([
    ['a full passing run of a commit', passing, undefined],
    ['a quick run', { ...passing, mode: 'quick' }, /quick run: publish a full one/],
    [
      'a failed audit',
      { ...passing, failures: ['hot-quota: over-admitted'] },
      /failed 1 correctness audit.*over-admitted/,
    ],
    ['uncommitted changes', { ...passing, commit: 'abc1234-dirty' }, /uncommitted changes \(abc1234-dirty\)/],
    ['no commit', { ...passing, commit: 'unknown' }, /does not say which commit/],
  ])('%s', (_what, report, refusal) => {
    const refusals = publishRefusals(report);
    if (refusal) expect(refusals.join('\n')).toMatch(refusal);
    else expect(refusals).toEqual([]);
  });
});

describe('replaceGenerated', () => {
  const file = `# Title\n\nprose\n\n${GENERATED_START}\n\nold table\n\n${GENERATED_END}\n\nafter\n`;

  it('replaces only what lies between the markers, keeping them', () => {
    const replaced = replaceGenerated(file, 'new table', 'X.md');
    expect(replaced).toBe(
      `# Title\n\nprose\n\n${GENERATED_START}\n\nnew table\n\n${GENERATED_END}\n\nafter\n`,
    );
    expect(generatedPart(replaced)).toBe('new table');
  });

  it.each([
    ['no markers', '# Title\n'],
    ['the end before the start', `${GENERATED_END}\n${GENERATED_START}\n`],
  ])('names the file and the lines to add when it has %s', (_what, text) => {
    expect(() => replaceGenerated(text, 'x', 'README.md')).toThrow(
      /README.md has no generated part: add the lines/,
    );
    expect(generatedPart(text)).toBeUndefined();
  });
});

describe('unaligned', () => {
  it.each([
    ['| a   | bb |\n| --- | -- |\n| ccc | d  |', '| a | bb |\n| --- | -- |\n| ccc | d |'],
    ['| a | b |\n| ------ | ------- |', '| a | b |\n| --- | --- |'],
    ['| a \\| b | c |', '| a \\| b | c |'],
    ['  prose  ', 'prose'],
  ])('%j reads as %j', (markdown, expected) => {
    expect(unaligned(markdown)).toBe(expected);
  });
});
