import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import {
  fetchDetails,
  fetchQuotas,
  listNamespaces,
  listQuotaNames,
  resourceName,
  watchRequest,
} from './api.js';
import {
  isCompletionHelper,
  parseCommand,
  pluginCommand,
  usage,
  COMPLETE_VERB,
  type QueryCommand,
} from './args.js';
import { cobraOutput, complete, completionScript } from './completion.js';
import { CliError, describeError } from './errors.js';
import { describeQuotas, quotaName, quotaRows, quotaTable, type TableOptions } from './format.js';
import { connect, type Connection, type ConnectionFlags } from './kubeconfig.js';
import { appendRow, columnWidths, GET_LAYOUT } from './tabwriter.js';

const out = (text: string) => process.stdout.write(text);
const err = (text: string) => process.stderr.write(text);

async function run(argv: string[], executable: string | undefined): Promise<number> {
  // kubectl runs the completion helper (kubectl_complete-kq) with the words after `kubectl kq`.
  const command = parseCommand(isCompletionHelper(executable) ? [COMPLETE_VERB, ...argv] : argv);
  switch (command.verb) {
    case 'help':
      out(usage(pluginCommand(executable)));
      return 0;
    case 'completion':
      out(completionScript(command.shell));
      return 0;
    case 'complete':
      out(cobraOutput(await complete(command.words, completionSources)));
      return 0;
    default:
      return query(command);
  }
}

const completionSources = {
  namespaces: (flags: ConnectionFlags) => listNamespaces(connect(flags)),
  quotas: (flags: ConnectionFlags) => listQuotaNames(connect(flags)),
  contexts: (flags: ConnectionFlags) =>
    connect(flags)
      .kc.getContexts()
      .map((c) => c.name),
};

async function query(command: QueryCommand): Promise<number> {
  const connection = connect(command.connection);
  const fetched = await fetchQuotas(command, connection);
  const { quotas, notFound } = fetched;
  const now = new Date();
  const table: TableOptions = { allNamespaces: command.allNamespaces, wide: command.output === 'wide' };
  const tabular = command.output === 'table' || command.output === 'wide';
  if (quotas.length === 0 && notFound.length === 0 && tabular) {
    err(
      command.allNamespaces
        ? 'No resources found\n'
        : `No resources found in ${connection.namespace} namespace.\n`,
    );
  }
  for (const message of notFound) err(`${message}\n`);
  for (const warning of fetched.warnings ?? []) err(`${warning}\n`);
  if (command.watch) {
    if (notFound.length > 0) return 1;
    return watch(command, connection, fetched.resourceVersion, quotas, table);
  }
  if (quotas.length > 0) {
    if (command.verb === 'describe') {
      const { details, warnings } = await fetchDetails(quotas, connection);
      const printed = describeQuotas(details, now);
      out(printed.text);
      for (const warning of [...warnings, ...printed.warnings]) err(`${warning}\n`);
    } else if (tabular) {
      const printed = quotaTable(quotas, now, table);
      out(printed.text);
      for (const warning of printed.warnings) err(`${warning}\n`);
    }
  }
  if (!tabular) out(serialize(command, quotas));
  return notFound.length > 0 ? 1 : 0;
}

/** What kubectl -o json|yaml|name prints: the object for one name, else a List (one name a line for -o name). */
function serialize(command: QueryCommand, quotas: KarmadaQuota[]): string {
  if (command.output === 'name') return quotas.map((q) => `${quotaName(q)}\n`).join('');
  const document =
    command.names.length === 1 && quotas.length === 1
      ? quotas[0]
      : { apiVersion: 'v1', kind: 'List', items: quotas, metadata: { resourceVersion: '' } };
  return command.output === 'json' ? `${JSON.stringify(document, null, 4)}\n` : yaml.dump(document);
}

/**
 * `get --watch`: the quotas as they are, then one entry per change the API server reports, until
 * Ctrl-C (exit 0). A watch the server closes is resumed where it was; one whose resourceVersion is
 * too old (410 Gone) starts again from a new list.
 */
async function watch(
  command: QueryCommand,
  connection: Connection,
  listedVersion: string,
  listed: KarmadaQuota[],
  table: TableOptions,
): Promise<number> {
  const print = printer(command, table, listed);
  const { path, fieldSelector } = watchRequest(command, connection);
  let resourceVersion = listedVersion;
  let controller: AbortController | undefined;
  let stopped = false;
  const interrupted = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        stopped = true;
        controller?.abort();
        resolve();
      });
    }
  });
  while (!stopped) {
    let gone = false;
    const ended = new Promise<unknown>((resolve) => {
      void new k8s.Watch(connection.kc)
        .watch(
          path,
          { resourceVersion, fieldSelector, allowWatchBookmarks: true },
          (type: string, object: KarmadaQuota & { code?: number; message?: string }) => {
            if (type === 'ERROR') {
              gone = object.code === 410;
              if (!gone) resolve(new Error(object.message ?? 'the watch failed'));
              return;
            }
            resourceVersion = object.metadata?.resourceVersion ?? resourceVersion;
            if (type !== 'BOOKMARK') print(object);
          },
          resolve,
        )
        .then((c) => {
          controller = c;
          if (stopped) c.abort();
        });
    });
    const failure = await Promise.race([ended, interrupted]);
    if (stopped) break;
    if (gone) {
      // Changes in between are not replayed: the quotas as they are now stand for them.
      const relisted = await fetchQuotas(command, connection);
      for (const quota of relisted.quotas) print(quota);
      resourceVersion = relisted.resourceVersion;
    } else if (failure) {
      const status = (failure as { statusCode?: number }).statusCode;
      throw new CliError(
        `error: watching ${resourceName(KARMADA_QUOTA)} on ${connection.server} (kubeconfig context ` +
          `"${connection.context}") failed: ${describeError(failure)}${status ? ` (HTTP ${status})` : ''}`,
      );
    }
  }
  return 0;
}

/**
 * Prints the listed quotas of a watch, and returns what prints each change in the command's format;
 * table rows keep the columns at least as wide as the lines above them, as kubectl's do.
 */
function printer(
  command: QueryCommand,
  table: TableOptions,
  listed: KarmadaQuota[],
): (quota: KarmadaQuota) => void {
  let print: (quota: KarmadaQuota) => void;
  if (command.output === 'json') print = (q) => out(`${JSON.stringify(q, null, 4)}\n`);
  else if (command.output === 'yaml') print = (q) => out(`---\n${yaml.dump(q)}`);
  else if (command.output === 'name') print = (q) => out(`${quotaName(q)}\n`);
  else {
    const initial = quotaRows(listed, new Date(), table);
    let widths = columnWidths([initial.header, ...initial.rows], GET_LAYOUT);
    let headerShown = listed.length > 0;
    if (headerShown) out(quotaTable(listed, new Date(), table).text);
    for (const warning of initial.warnings) err(`${warning}\n`);
    return (quota) => {
      const { header, rows, warnings } = quotaRows([quota], new Date(), table);
      for (const cells of headerShown ? rows : [header, ...rows]) {
        const appended = appendRow(cells, widths, GET_LAYOUT);
        widths = appended.widths;
        out(`${appended.line}\n`);
      }
      headerShown = true;
      for (const warning of warnings) err(`${warning}\n`);
    };
  }
  for (const quota of listed) print(quota);
  return print;
}

run(process.argv.slice(2), process.argv[1]).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    err(`${error instanceof CliError ? error.message : `error: ${describeError(error)}`}\n`);
    process.exitCode = 1;
  },
);
