import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../federation/src/paths.js';
import { renderMarkdown, renderReadmeSummary, reportRows, type BenchReport } from './report.js';

/**
 * `npm run bench:publish -- FILE`: makes a full run's figures (`npm run bench -- --json FILE`) the
 * ones the docs show. It copies FILE to docs/development/bench-latest.json and rewrites, from it, the
 * generated parts of README's Performance section and of bench.md's latest figures; publish.spec
 * checks on every `npm test` that the three still agree.
 */

export const ROOT = repoRoot();
export const LATEST_RUN = 'docs/development/bench-latest.json';
/** Each file's generated part lies between these two lines. */
export const GENERATED_START = '<!-- written by npm run bench:publish -->';
export const GENERATED_END = '<!-- end of bench:publish -->';

/** Why `report` cannot be published as the latest run: only a full, passing run of committed code can. */
export function publishRefusals(report: Pick<BenchReport, 'mode' | 'commit' | 'failures'>): string[] {
  const refusals: string[] = [];
  if (report.mode !== 'full') refusals.push(`it is a ${report.mode} run: publish a full one (npm run bench)`);
  if (report.failures.length > 0)
    refusals.push(`it failed ${report.failures.length} correctness audit(s): ${report.failures.join('; ')}`);
  if (!report.commit || report.commit === 'unknown')
    refusals.push('it does not say which commit it measured (run the bench from a git clone)');
  else if (report.commit.endsWith('-dirty'))
    refusals.push(`it measured uncommitted changes (${report.commit}): commit them and run the bench again`);
  return refusals;
}

/** README's generated part: which run, then its headline figures against Karmada's and the targets. */
export function readmePart(report: BenchReport): string {
  return [
    `The latest full \`npm run bench\` (${report.startedAt.slice(0, 10)}, ${report.commit}, ${report.machine.cpus} CPUs; ` +
      '[all figures](docs/development/bench.md#latest-figures)): every correctness audit passed ' +
      '(nothing over-admitted, every status exact, no create failed).',
    '',
    renderReadmeSummary(report),
  ].join('\n');
}

/** bench.md's generated part: the machine and every figure of the run. */
export const benchPart = (report: BenchReport): string => renderMarkdown(report, reportRows(report));

/** Where `text`'s generated part lies: from the end of its start line to its end line; undefined without both. */
function generatedSpan(text: string): { from: number; to: number } | undefined {
  const start = text.indexOf(GENERATED_START);
  const end = text.indexOf(GENERATED_END);
  return start < 0 || end < start ? undefined : { from: start + GENERATED_START.length, to: end };
}

/** `text` with its generated part replaced by `part`; throws when `file` lacks the marker lines. */
export function replaceGenerated(text: string, part: string, file: string): string {
  const span = generatedSpan(text);
  if (!span)
    throw new Error(`${file} has no generated part: add the lines ${GENERATED_START} and ${GENERATED_END}`);
  return `${text.slice(0, span.from)}\n\n${part}\n\n${text.slice(span.to)}`;
}

/** The generated part of `text`, or undefined when it has none. */
export function generatedPart(text: string): string | undefined {
  const span = generatedSpan(text);
  return span && text.slice(span.from, span.to).trim();
}

/**
 * Markdown as it reads, whatever Prettier's alignment: table cells trimmed, separator rows reduced to
 * `---`, so a part compares equal to what it was rendered from after `npm run format`.
 */
export function unaligned(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) =>
      line.startsWith('|')
        ? line
            .split(/(?<!\\)\|/)
            .map((cell) => cell.trim().replace(/^-{3,}$/, '---'))
            .join(' | ')
            .trim()
        : line.trim(),
    )
    .join('\n');
}

/** The files publish writes, as paths inside the repository. */
export const PUBLISHED = { readme: 'README.md', bench: 'docs/development/bench.md' } as const;

function main(argv: string[]): number {
  const [file] = argv;
  if (!file || argv.length > 1) {
    console.error('usage: npm run bench:publish -- FILE   (FILE: the --json of a full `npm run bench`)');
    return 2;
  }
  const report = JSON.parse(readFileSync(resolve(file), 'utf8')) as BenchReport;
  const refusals = publishRefusals(report);
  if (refusals.length > 0) {
    console.error(`bench:publish: ${file} is not published:\n  ${refusals.join('\n  ')}`);
    return 1;
  }
  writeFileSync(join(ROOT, LATEST_RUN), readFileSync(resolve(file)));
  for (const [path, part] of [
    [PUBLISHED.readme, readmePart(report)],
    [PUBLISHED.bench, benchPart(report)],
  ] as const) {
    const absolute = join(ROOT, path);
    writeFileSync(absolute, replaceGenerated(readFileSync(absolute, 'utf8'), part, path));
  }
  const files = [LATEST_RUN, PUBLISHED.readme, PUBLISHED.bench];
  const prettier = spawnSync(join(ROOT, 'node_modules/.bin/prettier'), ['--write', ...files], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (prettier.status !== 0) {
    console.error('bench:publish: prettier could not format the published files');
    return 1;
  }
  console.log(
    `bench:publish: ${report.commit}'s run of ${report.startedAt} is now the latest (${files.join(', ')}); ` +
      "review README's prose about it, then commit",
  );
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
