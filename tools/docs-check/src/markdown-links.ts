/**
 * What the docs check reads in Markdown and code: links, heading anchors and `docs/...` mentions.
 * Pure: text in, findings out; docs.spec.ts does the file reading.
 */

/** A Markdown link's target, with the line it is on. */
export interface LinkTarget {
  line: number;
  target: string;
}

const FENCE = /^\s*(```|~~~)/;

/** The lines of Markdown outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (FENCE.test(text)) fenced = !fenced;
    else if (!fenced) lines.push({ line: index + 1, text });
  });
  return lines;
}

const withoutInlineCode = (text: string): string => text.replace(/`[^`]*`/g, '');

/** Inline link and image targets (`[text](target)`, `![alt](target "title")`), outside code. */
export function linkTargets(markdown: string): LinkTarget[] {
  const targets: LinkTarget[] = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const match of withoutInlineCode(text).matchAll(
      /\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g,
    ))
      targets.push({ line, target: (match[1] ?? match[2])! });
  }
  return targets;
}

/** Links to other sites and mail addresses: not checked here. */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/**
 * The anchor GitHub gives a heading: lowercase, punctuation dropped (letters, digits, '_', '-' and
 * spaces stay), each space a '-'. Inline code marks and link syntax are dropped first.
 */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file's headings define; repeated headings get `-1`, `-2`, ... as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(text);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** A `docs/...` path named in a code comment, with its anchor if any. */
export interface DocsMention {
  line: number;
  path: string;
  anchor?: string;
}

// A path starting at `docs/` (not inside another path such as `karmada.io/docs/`), then an anchor.
const DOCS_PATH = /(?<![\w./-])(docs\/[\w./-]*[\w/])(?:#([\w-]+))?/g;
// What starts a comment before the mention on its line: //, /*, a leading * (block comment), # (YAML, shell).
const COMMENT_START = /(\/\/|\/\*|^\s*\*|#)/;

/** The `docs/...` paths mentioned in the comments of a source file (TypeScript, JavaScript, YAML, Helm templates). */
export function docsMentions(source: string): DocsMention[] {
  const mentions: DocsMention[] = [];
  source.split('\n').forEach((text, index) => {
    for (const match of text.matchAll(DOCS_PATH)) {
      if (!COMMENT_START.test(text.slice(0, match.index))) continue;
      const mention: DocsMention = { line: index + 1, path: match[1]! };
      if (match[2] !== undefined) mention.anchor = match[2];
      mentions.push(mention);
    }
  });
  return mentions;
}
