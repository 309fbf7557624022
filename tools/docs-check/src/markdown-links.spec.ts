import { docsMentions, headingAnchors, headingSlug, isExternal, linkTargets } from './markdown-links.js';

describe('headingSlug (GitHub anchors)', () => {
  it.each([
    ['Install with Helm', 'install-with-helm'],
    ["Against Karmada's own FederatedResourceQuota", 'against-karmadas-own-federatedresourcequota'],
    [
      'As users feel it: Deployments through real Karmada',
      'as-users-feel-it-deployments-through-real-karmada',
    ],
    ['The `kubectl kq` plugin', 'the-kubectl-kq-plugin'],
    ['Waiting changes and requeue', 'waiting-changes-and-requeue'],
    ['snake_case and a-dash', 'snake_case-and-a-dash'],
    ['Settings (webhook, reconciler)', 'settings-webhook-reconciler'],
    ['See [the bench](bench.md)', 'see-the-bench'],
  ])('%s -> #%s', (heading, slug) => {
    expect(headingSlug(heading)).toBe(slug);
  });
});

describe('headingAnchors', () => {
  it('numbers repeated headings and ignores headings in code blocks', () => {
    const markdown = [
      '# Title',
      '## Usage',
      '```sh',
      '# not a heading',
      '```',
      '## Usage',
      '### Usage ##',
    ].join('\n');
    expect([...headingAnchors(markdown)]).toEqual(['title', 'usage', 'usage-1', 'usage-2']);
  });
});

describe('linkTargets', () => {
  it('finds inline links and images outside code, with their lines', () => {
    const markdown = [
      'See [a](docs/a.md) and ![img](img.png "title").',
      '`[not](a-link.md)` but [b](#anchor)',
      '```',
      '[in](code.md)',
      '```',
      '[c](<docs/c d.md>)',
    ].join('\n');
    expect(linkTargets(markdown)).toEqual([
      { line: 1, target: 'docs/a.md' },
      { line: 1, target: 'img.png' },
      { line: 2, target: '#anchor' },
      { line: 6, target: 'docs/c d.md' },
    ]);
  });

  it.each([
    ['https://karmada.io', true],
    ['mailto:a@b.c', true],
    ['docs/a.md', false],
    ['#anchor', false],
  ])('isExternal(%s) is %s', (target, external) => {
    expect(isExternal(target)).toBe(external);
  });
});

describe('docsMentions', () => {
  it.each([
    ['// rules: docs/concepts/accounting.md.', [{ line: 1, path: 'docs/concepts/accounting.md' }]],
    [
      ' * see docs/reference/webhook.md#the-denial)',
      [{ line: 1, path: 'docs/reference/webhook.md', anchor: 'the-denial' }],
    ],
    ['# values: docs/operating/install.md', [{ line: 1, path: 'docs/operating/install.md' }]],
    ["const page = 'docs/not-a-comment.md';", []],
    ['// https://karmada.io/docs/userguide is not ours', []],
  ])('%s', (source, mentions) => {
    expect(docsMentions(source)).toEqual(mentions);
  });
});
