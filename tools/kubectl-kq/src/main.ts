import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { parseCommand, USAGE, type Command } from './args.js';
import { CliError, describeError, explainError, isObjectNotFound, type RequestTarget } from './errors.js';
import { describeQuotas, quotaTable } from './format.js';
import { connect, type Connection } from './kubeconfig.js';

/** kubectl's name for the resource in messages. */
const RESOURCE_NAME = `${KARMADA_QUOTA.plural}.${KARMADA_QUOTA.group}`;
const API = { group: KARMADA_QUOTA.group, version: KARMADA_QUOTA.version, plural: KARMADA_QUOTA.plural };

type QueryCommand = Exclude<Command, { verb: 'help' }>;

interface Fetched {
  quotas: KarmadaQuota[];
  /** One message per named quota that does not exist; the others are still shown, as kubectl does. */
  notFound: string[];
}

async function fetchQuotas(command: QueryCommand, connection: Connection): Promise<Fetched> {
  const api = connection.kc.makeApiClient(k8s.CustomObjectsApi);
  const { namespace } = connection;
  const target = (verb: RequestTarget['verb'], name?: string): RequestTarget => ({
    server: connection.server,
    context: connection.context,
    verb,
    resource: RESOURCE_NAME,
    namespace: command.allNamespaces ? undefined : namespace,
    name,
  });
  if (command.names.length === 0) {
    try {
      const list = (await (command.allNamespaces
        ? api.listClusterCustomObject(API)
        : api.listNamespacedCustomObject({ ...API, namespace }))) as { items: KarmadaQuota[] };
      return { quotas: list.items, notFound: [] };
    } catch (err) {
      throw new CliError(explainError(err, target('list')));
    }
  }
  const fetched: Fetched = { quotas: [], notFound: [] };
  for (const name of command.names) {
    try {
      fetched.quotas.push((await api.getNamespacedCustomObject({ ...API, namespace, name })) as KarmadaQuota);
    } catch (err) {
      const message = explainError(err, target('get', name));
      if (!isObjectNotFound(err)) throw new CliError(message); // the next name would fail the same way
      fetched.notFound.push(message);
    }
  }
  return fetched;
}

/** What kubectl -o json|yaml prints: the object for one name, else a List. */
function serialize(command: QueryCommand, quotas: KarmadaQuota[]): string {
  const document =
    command.names.length === 1 && quotas.length === 1
      ? quotas[0]
      : { apiVersion: 'v1', kind: 'List', items: quotas, metadata: { resourceVersion: '' } };
  return command.output === 'json' ? `${JSON.stringify(document, null, 4)}\n` : yaml.dump(document);
}

async function run(argv: string[]): Promise<number> {
  const command = parseCommand(argv);
  if (command.verb === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const connection = connect(command.connection);
  const { quotas, notFound } = await fetchQuotas(command, connection);
  const now = new Date();
  if (quotas.length === 0 && notFound.length === 0 && command.output === 'table') {
    process.stderr.write(
      command.allNamespaces
        ? 'No resources found\n'
        : `No resources found in ${connection.namespace} namespace.\n`,
    );
    return 0;
  }
  if (command.output !== 'table') {
    process.stdout.write(serialize(command, quotas));
  } else if (quotas.length > 0) {
    const printed =
      command.verb === 'describe'
        ? describeQuotas(quotas, now)
        : quotaTable(quotas, now, command.allNamespaces);
    process.stdout.write(printed.text);
    for (const warning of printed.warnings) process.stderr.write(`${warning}\n`);
  }
  for (const message of notFound) process.stderr.write(`${message}\n`);
  return notFound.length > 0 ? 1 : 0;
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof CliError ? err.message : `error: ${describeError(err)}`}\n`);
    process.exitCode = 1;
  },
);
