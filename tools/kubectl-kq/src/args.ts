import { parseArgs } from 'node:util';
import { CliError } from './errors.js';
import type { ConnectionFlags } from './kubeconfig.js';

/** The help text; `command` is how the plugin was invoked (`kubectl kq`, `kubectl karmada-quota`). */
export const usage = (
  command: string,
): string => `${command}: KarmadaQuotas of a Karmada federation, as kubectl shows ResourceQuotas.

Usage:
  ${command} describe [NAME ...] [-n NAMESPACE | -A]
      used, reserved and hard per resource; scopes; every member cluster with its usage and sync
      state; the usage of each workload (ResourceBinding); open reservations; waiting changes;
      conditions and the quota's Events
  ${command} get [NAME ...] [-n NAMESPACE | -A] [-o wide|yaml|json|name] [-w]
      quotas with how full they are (percent of the fullest resource, used + reserved)
  ${command} completion bash|zsh
      a shell completion script for kubectl-kq (kubectl kq <TAB> uses kubectl_complete-kq on PATH)

Flags:
  -n, --namespace NAMESPACE   namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces        every namespace (not with NAME)
  -o, --output FORMAT         get: wide (more columns), yaml, json or name instead of the table
  -w, --watch                 get: after the list, print a row for each change until Ctrl-C
      --context NAME          kubeconfig context (default: current-context)
      --kubeconfig FILE       kubeconfig file (default: KUBECONFIG, else ~/.kube/config)
  -h, --help                  this help
`;

export const OUTPUT_FORMATS = ['wide', 'yaml', 'json', 'name'] as const;
export type OutputFormat = 'table' | (typeof OUTPUT_FORMATS)[number];

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** The words a shell asks to complete (`__complete ARGS... PARTIAL`), as kubectl passes them to kubectl_complete-kq. */
export const COMPLETE_VERB = '__complete';

export type QueryCommand = {
  verb: 'get' | 'describe';
  names: string[];
  allNamespaces: boolean;
  output: OutputFormat;
  watch: boolean;
  connection: ConnectionFlags;
};

export type Command =
  | { verb: 'help' }
  | { verb: 'completion'; shell: Shell }
  | { verb: 'complete'; words: string[] }
  | QueryCommand;

/** The flags, in the shape node:util parseArgs takes; completion offers the same ones. */
export const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  output: { type: 'string', short: 'o' },
  watch: { type: 'boolean', short: 'w' },
  context: { type: 'string' },
  kubeconfig: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const VERBS = ['get', 'describe', 'completion', 'help'] as const;

/** The command line after `kubectl kq`, as kubectl would read it; a mistake is a CliError saying which. */
export function parseCommand(argv: string[]): Command {
  // Completion words are partial (`--name`, `-o`): not for the strict parser.
  if (argv[0] === COMPLETE_VERB) return { verb: 'complete', words: argv.slice(1) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // Node's own hint about '--' concerns its API, not this command line.
    throw usageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const { values, positionals } = parsed;
  const [verb, ...names] = positionals;
  if (values.help || verb === 'help') return { verb: 'help' };
  if (verb === undefined) throw usageError('no command given: use get, describe or completion');
  if (verb === 'completion') return { verb, shell: completionShell(names) };
  if (verb !== 'get' && verb !== 'describe')
    throw usageError(`unknown command "${verb}": use get, describe or completion`);
  const allNamespaces = values['all-namespaces'] ?? false;
  if (allNamespaces && names.length > 0) {
    throw usageError('a quota cannot be retrieved by name across all namespaces: drop -A or the name');
  }
  const output = values.output;
  const watch = values.watch ?? false;
  if (verb === 'describe' && output !== undefined) throw usageError('-o/--output is only for get');
  if (verb === 'describe' && watch) throw usageError('-w/--watch is only for get');
  if (output !== undefined && !(OUTPUT_FORMATS as readonly string[]).includes(output)) {
    throw usageError(`unknown output format "${output}": use ${OUTPUT_FORMATS.join(', ')}`);
  }
  if (watch && names.length > 1) {
    throw usageError('--watch follows one quota or all of a namespace: give at most one NAME');
  }
  for (const flag of ['namespace', 'context', 'kubeconfig'] as const) {
    if (values[flag] === '') throw usageError(`--${flag} must not be empty`);
  }
  return {
    verb,
    names,
    allNamespaces,
    output: (output ?? 'table') as OutputFormat,
    watch,
    connection: { namespace: values.namespace, context: values.context, kubeconfig: values.kubeconfig },
  };
}

function completionShell(words: string[]): Shell {
  const [shell, ...extra] = words;
  if (shell === undefined || extra.length > 0 || !(SHELLS as readonly string[]).includes(shell)) {
    throw usageError(`completion takes one shell: ${SHELLS.join(' or ')}`);
  }
  return shell as Shell;
}

/**
 * How kubectl names a plugin from its file name: `kubectl-karmada_quota` runs as `kubectl karmada-quota`.
 * Anything else (a bundle run by node directly, the repository's dist) is `kubectl kq`.
 */
export function pluginCommand(executable: string | undefined): string {
  const file = (executable ?? '').split('/').pop() ?? '';
  const match = /^kubectl[-_](?:complete-)?([a-z0-9_]+)$/.exec(file);
  return match ? `kubectl ${match[1]!.replaceAll('_', '-')}` : 'kubectl kq';
}

/** Is the executable kubectl's completion helper for the plugin (`kubectl_complete-kq`)? */
export const isCompletionHelper = (executable: string | undefined): boolean =>
  (executable ?? '').split('/').pop()?.startsWith('kubectl_complete-') ?? false;

const usageError = (problem: string) => new CliError(`error: ${problem}\nSee 'kubectl kq --help' for usage.`);
