import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docsMentions, headingAnchors, isExternal, linkTargets } from './markdown-links.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The front page stays a front page: the rest belongs in docs/. */
const README_MAX_BYTES = 10_240; // a front page: what it is, how it compares and performs, where the docs are
/** Where code comments may point at docs/ pages. */
const CODE_DIRS = ['apps', 'libs', 'tools', 'test', 'charts'];
const CODE_EXTENSIONS = new Set(['.ts', '.mjs', '.js', '.yaml', '.yml', '.tpl']);
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

const repoPath = (file: string): string => relative(ROOT, file);
const anchorsOf = (file: string): Set<string> => headingAnchors(readFileSync(file, 'utf8'));

/** What is wrong with a link to `path` (absolute) and `anchor`, or undefined when it resolves. */
function brokenTarget(path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(path)) return `${repoPath(path)} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(path).isDirectory() || extname(path) !== '.md')
    return `#${anchor} cannot point into ${repoPath(path)}, which is not a Markdown file`;
  if (!anchorsOf(path).has(anchor.toLowerCase()))
    return `${repoPath(path)} has no heading with anchor #${anchor}`;
  return undefined;
}

const markdownFiles = [join(ROOT, 'README.md'), ...filesUnder(join(ROOT, 'docs'), (f) => f.endsWith('.md'))];

describe('documentation', () => {
  it('README.md and docs/ exist', () => {
    expect(markdownFiles.map(repoPath)).toEqual(expect.arrayContaining(['README.md', 'docs/README.md']));
  });

  it.each(markdownFiles.map((file) => [repoPath(file), file]))(
    'every relative link and anchor in %s resolves',
    (_name, file) => {
      const problems = linkTargets(readFileSync(file, 'utf8'))
        .filter(({ target }) => !isExternal(target))
        .flatMap(({ line, target }) => {
          const [path = '', anchor] = target.split('#', 2);
          const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
          const broken = brokenTarget(resolved, anchor);
          return broken ? [`${repoPath(file)}:${line}: link (${target}): ${broken}`] : [];
        });
      expect(problems).toEqual([]);
    },
  );

  it('every docs/ page named in a code comment exists, with its anchor', () => {
    const sources = CODE_DIRS.flatMap((dir) =>
      filesUnder(join(ROOT, dir), (f) => CODE_EXTENSIONS.has(extname(f))),
    );
    const problems = sources.flatMap((file) =>
      docsMentions(readFileSync(file, 'utf8')).flatMap(({ line, path, anchor }) => {
        const broken = brokenTarget(join(ROOT, path), anchor);
        const named = anchor === undefined ? path : `${path}#${anchor}`;
        return broken ? [`${repoPath(file)}:${line}: comment names ${named}: ${broken}`] : [];
      }),
    );
    expect(problems).toEqual([]);
  });

  it(`README.md stays under ${README_MAX_BYTES} bytes`, () => {
    const size = statSync(join(ROOT, 'README.md')).size;
    expect({ file: 'README.md', bytes: size, underLimit: size < README_MAX_BYTES }).toEqual({
      file: 'README.md',
      bytes: size,
      underLimit: true,
    });
  });
});
