import { parseArgs } from 'node:util';
import { CliError } from './errors.js';
import type { ConnectionFlags } from './kubeconfig.js';

export const USAGE = `kubectl kq: KarmadaQuotas of a Karmada federation, as kubectl shows ResourceQuotas.

Usage:
  kubectl kq describe [NAME ...] [-n NAMESPACE | -A]   used, reserved and hard per resource, per-cluster
                                                       usage, open reservations and conditions
  kubectl kq get [NAME ...] [-n NAMESPACE | -A] [-o json|yaml]
                                                       quotas with how full they are (percent of the
                                                       fullest resource, used + reserved)

Flags:
  -n, --namespace NAMESPACE   namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces        every namespace (not with NAME)
  -o, --output json|yaml      get: print the KarmadaQuota objects instead of the table
      --context NAME          kubeconfig context (default: current-context)
      --kubeconfig FILE       kubeconfig file (default: KUBECONFIG, else ~/.kube/config)
  -h, --help                  this help
`;

export type OutputFormat = 'table' | 'json' | 'yaml';

export type Command =
  | { verb: 'help' }
  | {
      verb: 'get' | 'describe';
      names: string[];
      allNamespaces: boolean;
      output: OutputFormat;
      connection: ConnectionFlags;
    };

const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  output: { type: 'string', short: 'o' },
  context: { type: 'string' },
  kubeconfig: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The command line after `kubectl kq`, as kubectl would read it; a mistake is a CliError saying which. */
export function parseCommand(argv: string[]): Command {
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
  if (verb === undefined) throw usageError('no command given: use get or describe');
  if (verb !== 'get' && verb !== 'describe')
    throw usageError(`unknown command "${verb}": use get or describe`);
  const allNamespaces = values['all-namespaces'] ?? false;
  if (allNamespaces && names.length > 0) {
    throw usageError('a quota cannot be retrieved by name across all namespaces: drop -A or the name');
  }
  const output = values.output ?? 'table';
  if (output !== 'table' && verb === 'describe') throw usageError('-o/--output is only for get');
  if (output !== 'table' && output !== 'json' && output !== 'yaml') {
    throw usageError(`unknown output format "${output}": use json or yaml`);
  }
  for (const flag of ['namespace', 'context', 'kubeconfig'] as const) {
    if (values[flag] === '') throw usageError(`--${flag} must not be empty`);
  }
  return {
    verb,
    names,
    allNamespaces,
    output,
    connection: { namespace: values.namespace, context: values.context, kubeconfig: values.kubeconfig },
  };
}

const usageError = (problem: string) => new CliError(`error: ${problem}\nSee 'kubectl kq --help' for usage.`);
