import type { ConnectionFlags } from './kubeconfig.js';
import { cobraOutput, complete, completionScript, Directive, type CompletionSources } from './completion.js';

/** Answers as a cluster with namespaces team-a and team-b, quotas per namespace, and two contexts. */
const asked: ConnectionFlags[] = [];
const sources: CompletionSources = {
  namespaces: async (flags) => {
    asked.push(flags);
    return ['team-a', 'team-b', 'default'];
  },
  quotas: async (flags) => {
    asked.push(flags);
    return flags.namespace === 'team-a' ? ['gpu', 'team'] : ['default-quota'];
  },
  contexts: () => ['karmada', 'member1'],
};
const failing: CompletionSources = {
  namespaces: () => Promise.reject(new Error('refused')),
  quotas: () => Promise.reject(new Error('refused')),
  contexts: () => {
    throw new Error('no kubeconfig');
  },
};

const none = Directive.NoFileComp;

describe('complete', () => {
  it.each([
    { words: [''], candidates: ['get', 'describe', 'completion', 'help'] },
    { words: ['de'], candidates: ['describe'] },
    { words: ['get', '--n'], candidates: ['--namespace'] },
    {
      words: ['get', '-'],
      candidates: [
        '--namespace',
        '--all-namespaces',
        '--output',
        '--watch',
        '--context',
        '--kubeconfig',
        '--help',
      ],
    },
    { words: ['get', '-o', ''], candidates: ['wide', 'yaml', 'json', 'name'] },
    { words: ['get', '--output', 'y'], candidates: ['yaml'] },
    { words: ['get', '--output=j'], candidates: ['--output=json'] },
    { words: ['get', '-n', 'team-'], candidates: ['team-a', 'team-b'] },
    { words: ['get', '--namespace=t'], candidates: ['--namespace=team-a', '--namespace=team-b'] },
    { words: ['describe', '-n', 'team-a', ''], candidates: ['gpu', 'team'] },
    { words: ['describe', '-nteam-a', 'g'], candidates: ['gpu'] },
    { words: ['describe', '--namespace=team-a', 'team', ''], candidates: ['gpu'] },
    { words: ['get', ''], candidates: ['default-quota'] },
    { words: ['get', '-A', ''], candidates: [] },
    { words: ['--context', ''], candidates: ['karmada', 'member1'] },
    { words: ['completion', ''], candidates: ['bash', 'zsh'] },
    { words: ['completion', 'bash', ''], candidates: [] },
  ])('$words -> $candidates', async ({ words, candidates }) => {
    expect(await complete(words, sources)).toEqual({ candidates, directive: none });
  });

  it('lets the shell complete a file name for --kubeconfig', async () => {
    expect(await complete(['get', '--kubeconfig', '/tm'], sources)).toEqual({
      candidates: [],
      directive: Directive.Default,
    });
  });

  it('looks names up with the connection flags typed so far', async () => {
    asked.length = 0;
    await complete(['get', '--context', 'karmada', '--kubeconfig', '/k', '-n', 'team-a', ''], sources);
    expect(asked).toEqual([{ context: 'karmada', kubeconfig: '/k', namespace: 'team-a' }]);
  });

  it.each([[['get', '']], [['get', '-n', '']], [['--context', '']]])(
    'offers nothing, and no file names, when the cluster cannot be asked: %j',
    async (words) => {
      expect(await complete(words, failing)).toEqual({ candidates: [], directive: none });
    },
  );
});

describe('cobraOutput', () => {
  it('prints a candidate a line, then the directive', () => {
    expect(cobraOutput({ candidates: ['a', 'b'], directive: 4 })).toBe('a\nb\n:4\n');
    expect(cobraOutput({ candidates: [], directive: 0 })).toBe(':0\n');
  });
});

describe('completionScript', () => {
  it.each([
    ['bash', 'complete -F _kubectl_kq kubectl-kq'],
    ['zsh', 'compdef _kubectl_kq kubectl-kq'],
  ] as const)('%s registers completion of kubectl-kq through __complete', (shell, registration) => {
    const script = completionScript(shell);
    expect(script).toContain('kubectl-kq __complete');
    expect(script.trimEnd().split('\n').at(-1)).toBe(registration);
  });
});
