import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../federation/src/paths.js';
import { describeCode } from './machine.js';
import type { CpuShare } from './cpu-profile.js';
import {
  count,
  figuresOf,
  ms,
  renderMarkdown,
  renderReadmeSummary,
  reportRows,
  type BenchReport,
} from './report.js';

/**
 * `npm run bench:publish -- RUN PROFILED`: makes a full run's figures (`npm run bench -- --json RUN`)
 * and a profile of the same code (`npm run bench -- --profile --json PROFILED`, any scenarios) the
 * ones the docs show. It copies them to docs/development/bench-latest.json and
 * bench-profile-latest.json and rewrites, from them, the generated parts of README's Performance
 * section and of bench.md's latest figures; publish.spec checks on every `npm test` that these still
 * agree. Publishing is a deliberate step: a code change does not fail `npm test` until the bench is
 * run again; README names the commit its figures measured.
 */

export const ROOT = repoRoot();
export const LATEST_RUN = 'docs/development/bench-latest.json';
export const LATEST_PROFILE = 'docs/development/bench-profile-latest.json';
/** Each file's generated part lies between these two lines. */
export const GENERATED_START = '<!-- written by npm run bench:publish -->';
export const GENERATED_END = '<!-- end of bench:publish -->';
/** The profile README quotes: the webhook alone, its own process under the admission load. */
export const WEBHOOK_ALONE_PROFILE = 'webhook-alone/webhook-alone';
/** The owner-mode webhook of the same scenario: README's for a run with --admission-mode owner. */
const OWNER_ALONE_PROFILE = 'webhook-alone-owner/webhook-alone-owner';

type Published = Pick<BenchReport, 'mode' | 'commit' | 'code' | 'failures'>;

/** Why a run's figures cannot be published; shared by the figures and the profile. */
function committedAndPassing(report: Published): string[] {
  const refusals: string[] = [];
  if (report.failures.length > 0)
    refusals.push(`it failed ${report.failures.length} correctness audit(s): ${report.failures.join('; ')}`);
  if (!report.commit || report.commit === 'unknown' || !report.code || report.code === 'unknown')
    refusals.push('it does not say which commit and code it measured (run the bench from a git clone)');
  else if (report.commit.endsWith('-dirty'))
    refusals.push(`it measured uncommitted changes (${report.commit}): commit them and run the bench again`);
  return refusals;
}

/** Why `report` cannot be published as the latest run: only a full, unprofiled, passing run of committed code can. */
export function publishRefusals(report: Published & Pick<BenchReport, 'only' | 'profile'>): string[] {
  const refusals: string[] = [];
  if (report.mode !== 'full') refusals.push(`it is a ${report.mode} run: publish a full one (npm run bench)`);
  if (report.only) refusals.push(`it ran only ${report.only.join(', ')}: publish a run of every scenario`);
  if (report.profile)
    refusals.push('it was profiled, which slows what it measures: publish a run without --profile');
  return [...refusals, ...committedAndPassing(report)];
}

/** Why `profiled` cannot be published as the profile of `run`: it must profile the same code, the webhook alone included. */
export function profileRefusals(
  profiled: Published & Pick<BenchReport, 'profile' | 'admissionMode'>,
  run: Pick<BenchReport, 'code' | 'admissionMode'>,
): string[] {
  const refusals = committedAndPassing(profiled);
  if (!profiled.profile) refusals.push('it is not a --profile run');
  else if (!profiled.profile.services[WEBHOOK_ALONE_PROFILE])
    refusals.push(`it has no profile ${WEBHOOK_ALONE_PROFILE}: include webhook-alone in its --only`);
  if (profiled.code !== run.code)
    refusals.push(
      `it measured other code (${profiled.commit}, digest ${profiled.code}) than the run (digest ${run.code}): profile the same commit`,
    );
  const modeOf = (report: Pick<BenchReport, 'admissionMode'>) => report.admissionMode ?? 'batched';
  if (modeOf(profiled) !== modeOf(run))
    refusals.push(
      `it ran --admission-mode ${modeOf(profiled)}, the run ${modeOf(run)}: profile the mode the figures measured`,
    );
  return refusals;
}

/** A profiled function's name without where it is (`name path:line`). */
const functionName = (share: CpuShare): string => share.name.replace(/ \S+:\d+$/, '');
const percent = (n: number): string => `${n.toFixed(1)} %`;
const seconds = (milliseconds: number): string => `${(milliseconds / 1000).toFixed(1)} s`;

/** README's sentence on where the CPU went: the host's cost per create and per claim, the webhook's top functions. */
export function readmeProfile(run: BenchReport, profiled: BenchReport): string {
  const parts: string[] = [];
  const e2e = figuresOf(run.endToEnd, 'withWebhook');
  if (e2e)
    parts.push(
      `a binding create cost the Karmada API server ${ms(e2e.withWebhook.apiServerCpuMsPerCreate)} of CPU with us, ` +
        `${ms(e2e.withoutWebhook.apiServerCpuMsPerCreate)} without`,
    );
  const writes = figuresOf(run.statusWrites, 'runs')?.runs ?? [];
  // In owner mode no claim is written: the owner decides from memory.
  if (writes.length > 0 && run.admissionMode !== 'owner')
    parts.push(
      `each claim is a status write (${writes.map((w) => `${ms(w.apiServerCpuMsPerWrite)} with ${w.entries} entries`).join(', ')})`,
    );
  const owner = run.admissionMode === 'owner';
  const webhook = profiled.profile?.services[owner ? OWNER_ALONE_PROFILE : WEBHOOK_ALONE_PROFILE];
  if (webhook)
    parts.push(
      `the ${owner ? 'owner ' : ''}webhook alone was busy ${seconds(webhook.busyMs)} of ${seconds(webhook.durationMs)}, most in ` +
        webhook.topFunctions
          // V8's pseudo-frames ((program), (garbage collector)) name no code to look at.
          .filter((f) => !f.name.startsWith('('))
          .slice(0, 3)
          .map((f) => `\`${functionName(f)}\` ${percent(f.percent)}`)
          .join(', '),
    );
  return `Where the CPU went ([profiles](docs/development/bench.md#what-the-profile-said)): ${parts.join('; ')}.`;
}

/**
 * README's words on the creates refused closed (the webhook's safe answer when the Karmada API server is
 * late): a target of 0, not an audit, so a published run may have some.
 */
export function failedClosedWords(run: BenchReport): string {
  const closed =
    (figuresOf(run.endToEnd, 'withWebhook')?.withWebhook.failedClosed ?? 0) +
    ((run.admissionMode === 'owner'
      ? figuresOf(run.hotQuota, 'batched')?.owner
      : figuresOf(run.hotQuota, 'batched')?.batched
    )?.errors ?? 0);
  return closed === 0
    ? 'no create failed'
    : `${closed} ${closed === 1 ? 'create' : 'creates'} failed closed, the Karmada API server late`;
}

/** README's generated part: which run, its headline figures against Karmada's and the targets, where the CPU went. */
export function readmePart(run: BenchReport, profiled: BenchReport): string {
  return [
    `The latest full \`npm run bench${run.admissionMode === 'owner' ? ' -- --admission-mode owner' : ''}\` (${run.startedAt.slice(0, 10)}, ${run.commit}, ${run.machine.cpus} CPUs; ` +
      '[all figures](docs/development/bench.md#latest-figures)): every correctness audit passed ' +
      `(nothing over-admitted, every status exact, ${failedClosedWords(run)}).`,
    '',
    renderReadmeSummary(run),
    '',
    readmeProfile(run, profiled),
  ].join('\n');
}

/** How many functions of each profile bench.md lists. */
const PROFILE_TOP = 8;

/** bench.md's account of the profile: each process's busy time and top functions and packages. */
export function renderProfile(profiled: BenchReport): string {
  const profile = profiled.profile;
  if (!profile) return '';
  const table = (rows: string[][]) => [
    '| share | self time | function |',
    '| --- | --- | --- |',
    ...rows.map((cells) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`),
  ];
  const services = Object.entries(profile.services).flatMap(([name, summary]) => [
    '',
    `#### ${name}: busy ${seconds(summary.busyMs)} of ${seconds(summary.durationMs)}`,
    '',
    `By package: ${summary.topPackages
      .slice(0, 5)
      .map((p) => `${p.name} ${percent(p.percent)}`)
      .join(', ')}.`,
    '',
    ...table(
      summary.topFunctions
        .slice(0, PROFILE_TOP)
        .map((f) => [percent(f.percent), `${count(f.selfMs)} ms`, `\`${f.name}\``]),
    ),
  ]);
  const apiServer = Object.entries(profile.apiServer).flatMap(([name, summary]) => [
    '',
    `#### ${name} (Go): ${summary.cpuSeconds.toFixed(1)} s of CPU in ${summary.durationSeconds.toFixed(1)} s`,
    '',
    ...table(
      summary.topFunctions
        .slice(0, PROFILE_TOP)
        .map((f) => [
          percent(f.percent),
          `${count((f.percent / 100) * summary.cpuSeconds * 1000)} ms`,
          `\`${f.name}\``,
        ]),
    ),
  ]);
  return [
    '### What the profile said',
    '',
    `\`npm run bench -- --profile${profiled.only ? ` --only ${profiled.only.join(',')}` : ''}${profiled.admissionMode === 'owner' ? ' --admission-mode owner' : ''}\` ` +
      `(${profiled.startedAt.slice(0, 10)}, ${profiled.commit}, the same code as the figures above): each ` +
      "service's V8 profile (busy: its sampled CPU time, of its life) and the Karmada API server's Go " +
      'profile over the first 15 s of each end-to-end half; the top functions by self time.',
    ...services,
    ...apiServer,
  ].join('\n');
}

/** bench.md's generated part: the machine, every figure of the run, then what the profile said. */
export const benchPart = (run: BenchReport, profiled: BenchReport): string =>
  `${renderMarkdown(run, reportRows(run))}\n\n${renderProfile(profiled)}`;

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

/** Why the checkout cannot publish `run`: its code has changed since (publish only what you measured). */
export function checkoutRefusals(run: Pick<BenchReport, 'commit' | 'code'>, checkoutCode: string): string[] {
  return run.code === checkoutCode
    ? []
    : [
        `the code in this checkout (digest ${checkoutCode}) is not the code ${run.commit} measured (digest ${run.code}): ` +
          `run the bench and its profile again (git diff --stat ${run.commit.replace(/-dirty$/, '')} -- apps libs tools ` +
          'package.json shows what changed)',
      ];
}

const USAGE =
  'usage: npm run bench:publish -- RUN PROFILED\n' +
  '  RUN:      the --json of a full `npm run bench`\n' +
  '  PROFILED: the --json of `npm run bench -- --profile` on the same code (e.g. --only webhook-alone,hot-quota,end-to-end)';

function main(argv: string[]): number {
  const [runFile, profiledFile] = argv;
  if (!runFile || !profiledFile || argv.length > 2) {
    console.error(USAGE);
    return 2;
  }
  const read = (file: string) => JSON.parse(readFileSync(resolve(file), 'utf8')) as BenchReport;
  const run = read(runFile);
  const profiled = read(profiledFile);
  const refused = [
    ...publishRefusals(run).map((r) => `${runFile}: ${r}`),
    ...profileRefusals(profiled, run).map((r) => `${profiledFile}: ${r}`),
    ...checkoutRefusals(run, describeCode(ROOT)),
  ];
  if (refused.length > 0) {
    console.error(`bench:publish: nothing published:\n  ${refused.join('\n  ')}`);
    return 1;
  }
  writeFileSync(join(ROOT, LATEST_RUN), readFileSync(resolve(runFile)));
  writeFileSync(join(ROOT, LATEST_PROFILE), readFileSync(resolve(profiledFile)));
  for (const [path, part] of [
    [PUBLISHED.readme, readmePart(run, profiled)],
    [PUBLISHED.bench, benchPart(run, profiled)],
  ] as const) {
    const absolute = join(ROOT, path);
    writeFileSync(absolute, replaceGenerated(readFileSync(absolute, 'utf8'), part, path));
  }
  const files = [LATEST_RUN, LATEST_PROFILE, PUBLISHED.readme, PUBLISHED.bench];
  const prettier = spawnSync(join(ROOT, 'node_modules/.bin/prettier'), ['--write', ...files], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (prettier.status !== 0) {
    console.error('bench:publish: prettier could not format the published files');
    return 1;
  }
  console.log(
    `bench:publish: ${run.commit}'s run of ${run.startedAt} and its profile are now the latest (${files.join(', ')}); ` +
      'review the prose around them in README and bench.md, then commit',
  );
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
