// `npm test`'s runner: one jest for the integration project, whose files share one federation and
// so run one at a time, and beside it one for the unit and chaos projects (each chaos file starts a
// federation of its own; unit specs need none). Integration files mostly wait on API servers, so the
// two share two cores well (docs/development/tests.md#how-npm-test-runs). Arguments go to both;
// `--json --outputFile=F` writes one report merging both, as one jest would.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = [
  { name: 'integration', projects: ['integration'] },
  { name: 'unit+chaos', projects: ['unit', 'chaos'] },
];

const { outputFile, rest } = withoutOutputFile(process.argv.slice(2));
// A run the caller narrowed to some projects is one jest, as asked.
if (rest.includes('--selectProjects')) process.exit(await jest(process.argv.slice(2), undefined));

const reports = mkdtempSync(join(tmpdir(), 'karmada-quota-jest-'));
// Test paths that match only one run's files leave the other with none: only both finding none fails.
const narrowed = rest.some((arg) => !arg.startsWith('-'));
const codes = await Promise.all(
  RUNS.map((run) =>
    jest(
      [
        ...rest.filter((arg) => arg !== '--json'),
        ...(narrowed ? ['--passWithNoTests'] : []),
        '--json',
        `--outputFile=${join(reports, `${run.name}.json`)}`,
        // Last: it takes every word after it as a project's name.
        '--selectProjects',
        ...run.projects,
      ],
      run.name,
    ),
  ),
);
const merged = merge(RUNS.map((run) => readReport(join(reports, `${run.name}.json`))));
rmSync(reports, { recursive: true, force: true });
if (outputFile) writeFileSync(outputFile, JSON.stringify(merged));
else if (rest.includes('--json')) process.stdout.write(`${JSON.stringify(merged)}\n`);
let code = Math.max(...codes);
if (code === 0 && merged.numTotalTests === 0) {
  process.stderr.write('No tests found in either run: check the test paths given\n');
  code = 1;
}
process.exit(code);

/** Runs jest with `args`, its output lines prefixed with `label`; resolves to its exit code. */
function jest(args, label) {
  const child = spawn(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
      join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
      ...args,
    ],
    { cwd: root, stdio: label ? ['ignore', 'pipe', 'pipe'] : 'inherit' },
  );
  if (label)
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ])
      createInterface({ input: from }).on('line', (line) => to.write(`[${label}] ${line}\n`));
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('close', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
}

/** The arguments without `--outputFile` (both its forms), and the file it named. */
function withoutOutputFile(args) {
  const rest = [];
  let outputFile;
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith('--outputFile=')) outputFile = args[i].slice('--outputFile='.length);
    else if (args[i] === '--outputFile') outputFile = args[++i];
    else rest.push(args[i]);
  }
  return { outputFile, rest };
}

/** A run's JSON report; a jest that died before writing one counts as a failed suite. */
function readReport(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { success: false, numFailedTestSuites: 1, numTotalTestSuites: 1, testResults: [] };
  }
}

/** One report of both runs: counts summed, results concatenated, success only if both succeeded. */
function merge(parts) {
  const merged = { ...parts[0], testResults: [], success: parts.every((part) => part.success === true) };
  for (const key of Object.keys(merged)) if (key.startsWith('num')) merged[key] = 0;
  for (const part of parts) {
    for (const [key, value] of Object.entries(part))
      if (key.startsWith('num') && typeof value === 'number') merged[key] = (merged[key] ?? 0) + value;
    merged.testResults.push(...(part.testResults ?? []));
  }
  merged.startTime = Math.min(...parts.map((part) => part.startTime ?? Infinity));
  merged.wasInterrupted = parts.some((part) => part.wasInterrupted === true);
  return merged;
}
