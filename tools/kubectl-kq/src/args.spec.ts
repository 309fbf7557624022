import { isCompletionHelper, parseCommand, pluginCommand } from './args.js';

const query = {
  names: [],
  allNamespaces: false,
  output: 'table',
  watch: false,
  connection: { namespace: undefined, context: undefined, kubeconfig: undefined },
};

describe('parseCommand', () => {
  it.each([
    { argv: ['describe', 'team'], command: { ...query, verb: 'describe', names: ['team'] } },
    { argv: ['describe'], command: { ...query, verb: 'describe' } },
    {
      argv: ['describe', 'a', 'b', '-n', 'team-a'],
      command: {
        ...query,
        verb: 'describe',
        names: ['a', 'b'],
        connection: { ...query.connection, namespace: 'team-a' },
      },
    },
    {
      argv: ['get', '--namespace=team-a', '--context', 'karmada', '--kubeconfig', '/k'],
      command: {
        ...query,
        verb: 'get',
        connection: { namespace: 'team-a', context: 'karmada', kubeconfig: '/k' },
      },
    },
    { argv: ['get', '-A'], command: { ...query, verb: 'get', allNamespaces: true } },
    { argv: ['describe', '--all-namespaces'], command: { ...query, verb: 'describe', allNamespaces: true } },
    {
      argv: ['get', 'team', '-o', 'yaml'],
      command: { ...query, verb: 'get', names: ['team'], output: 'yaml' },
    },
    { argv: ['get', '-ojson'], command: { ...query, verb: 'get', output: 'json' } },
    { argv: ['get', '-o', 'wide', '-w'], command: { ...query, verb: 'get', output: 'wide', watch: true } },
    { argv: ['get', 'team', '--watch'], command: { ...query, verb: 'get', names: ['team'], watch: true } },
    { argv: ['get', '-oname'], command: { ...query, verb: 'get', output: 'name' } },
    { argv: ['completion', 'zsh'], command: { verb: 'completion', shell: 'zsh' } },
    // Completion words are partial: never refused.
    { argv: ['__complete', 'get', '--nam'], command: { verb: 'complete', words: ['get', '--nam'] } },
    { argv: ['-h'], command: { verb: 'help' } },
    { argv: ['describe', '--help'], command: { verb: 'help' } },
    { argv: ['help'], command: { verb: 'help' } },
  ])('$argv', ({ argv, command }) => {
    expect(parseCommand(argv)).toEqual(command);
  });

  it.each([
    { argv: [], problem: 'no command given: use get, describe or completion' },
    { argv: ['list'], problem: 'unknown command "list": use get, describe or completion' },
    { argv: ['get', '--follow'], problem: "Unknown option '--follow'" },
    { argv: ['get', '-n'], problem: "Option '-n, --namespace <value>' argument missing" },
    {
      argv: ['get', 'team', '-A'],
      problem: 'a quota cannot be retrieved by name across all namespaces: drop -A or the name',
    },
    { argv: ['describe', 'team', '-o', 'yaml'], problem: '-o/--output is only for get' },
    { argv: ['describe', 'team', '-w'], problem: '-w/--watch is only for get' },
    { argv: ['get', '-o', 'table'], problem: 'unknown output format "table": use wide, yaml, json, name' },
    {
      argv: ['get', '-o', 'jsonpath={.a}'],
      problem: 'unknown output format "jsonpath={.a}": use wide, yaml, json, name',
    },
    {
      argv: ['get', 'a', 'b', '-w'],
      problem: '--watch follows one quota or all of a namespace: give at most one NAME',
    },
    { argv: ['completion'], problem: 'completion takes one shell: bash or zsh' },
    { argv: ['completion', 'fish'], problem: 'completion takes one shell: bash or zsh' },
    { argv: ['get', '--context='], problem: '--context must not be empty' },
  ])('refuses $argv', ({ argv, problem }) => {
    expect(() => parseCommand(argv)).toThrow(`error: ${problem}\nSee 'kubectl kq --help' for usage.`);
  });
});

describe('pluginCommand: how kubectl names the plugin from the executable', () => {
  it.each([
    ['/usr/local/bin/kubectl-kq', 'kubectl kq'],
    ['/home/a/.krew/bin/kubectl-karmada_quota', 'kubectl karmada-quota'],
    ['/usr/local/bin/kubectl_complete-kq', 'kubectl kq'],
    ['/repo/dist/tools/kubectl-kq/src/main.js', 'kubectl kq'],
    ['/tmp/kubectl-kq.mjs', 'kubectl kq'],
    [undefined, 'kubectl kq'],
  ])('%s -> %s', (executable, command) => {
    expect(pluginCommand(executable)).toBe(command);
  });

  it.each([
    ['/usr/local/bin/kubectl_complete-kq', true],
    ['/usr/local/bin/kubectl-kq', false],
    [undefined, false],
  ])('%s is the completion helper: %s', (executable, helper) => {
    expect(isCompletionHelper(executable)).toBe(helper);
  });
});
