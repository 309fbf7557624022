import { parseCommand } from './args.js';

const query = {
  names: [],
  allNamespaces: false,
  output: 'table',
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
    { argv: ['-h'], command: { verb: 'help' } },
    { argv: ['describe', '--help'], command: { verb: 'help' } },
    { argv: ['help'], command: { verb: 'help' } },
  ])('$argv', ({ argv, command }) => {
    expect(parseCommand(argv)).toEqual(command);
  });

  it.each([
    { argv: [], problem: 'no command given: use get or describe' },
    { argv: ['list'], problem: 'unknown command "list": use get or describe' },
    { argv: ['get', '--watch'], problem: "Unknown option '--watch'" },
    { argv: ['get', '-n'], problem: "Option '-n, --namespace <value>' argument missing" },
    {
      argv: ['get', 'team', '-A'],
      problem: 'a quota cannot be retrieved by name across all namespaces: drop -A or the name',
    },
    { argv: ['describe', 'team', '-o', 'yaml'], problem: '-o/--output is only for get' },
    { argv: ['get', '-o', 'wide'], problem: 'unknown output format "wide": use json or yaml' },
    { argv: ['get', '--context='], problem: '--context must not be empty' },
  ])('refuses $argv', ({ argv, problem }) => {
    expect(() => parseCommand(argv)).toThrow(`error: ${problem}\nSee 'kubectl kq --help' for usage.`);
  });
});
