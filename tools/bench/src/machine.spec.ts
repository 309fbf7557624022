import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeCode } from './machine.js';

describe('describeCode', () => {
  let repo: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  };
  const git = (...args: string[]) => {
    const run = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  };

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'describe-code-'));
    git('init', '-q');
    write('apps/webhook/src/main.ts', 'admit();\n');
    write('apps/webhook/src/main.spec.ts', 'test();\n');
    write('libs/quota/src/index.ts', 'export {};\n');
    write('tools/bench/src/main.ts', 'run();\n');
    write('tools/simulation/src/simulation.ts', 'simulate();\n');
    write('docs/bench.md', '# figures\n');
    write('package.json', '{}\n');
    write('.gitignore', 'dist/\n');
    git('add', '-A');
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it.each<[string, () => void, boolean]>([
    ['nothing changed', () => {}, false],
    ['a test changed', () => write('apps/webhook/src/main.spec.ts', 'test(2);\n'), false],
    ['a doc changed', () => write('docs/bench.md', '# new figures\n'), false],
    ['a Markdown file beside the code changed', () => write('libs/quota/README.md', 'x\n'), false],
    ['a build output (ignored) appeared', () => write('dist/apps/webhook/src/main.js', 'x\n'), false],
    ['the code changed, uncommitted', () => write('apps/webhook/src/main.ts', 'admit(2);\n'), true],
    ['a new code file, untracked', () => write('libs/quota/src/charge.ts', 'export {};\n'), true],
    ['the bench changed', () => write('tools/bench/src/main.ts', 'run(2);\n'), true],
    [
      'the simulation (in no scenario) changed',
      () => write('tools/simulation/src/simulation.ts', 'x\n'),
      false,
    ],
    ['package.json changed', () => write('package.json', '{"dependencies":{}}\n'), true],
    ['a code file deleted', () => rmSync(join(repo, 'libs/quota/src/index.ts')), true],
  ])('%s: changed digest is %s', (_what, change, changed) => {
    const before = describeCode(repo);
    change();
    expect(before).toMatch(/^[0-9a-f]{16}$/);
    expect(describeCode(repo) !== before).toBe(changed);
  });

  it("is 'unknown' outside a git clone", () => {
    const plain = mkdtempSync(join(tmpdir(), 'describe-code-plain-'));
    try {
      expect(describeCode(plain)).toBe('unknown');
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});
