import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { CliError, describeError } from './errors.js';

/** The kubectl flags that pick the cluster, user and namespace. */
export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** A kubeconfig's named entries and current context (what one file or a merge of several holds). */
export interface KubeconfigEntries {
  clusters: k8s.Cluster[];
  users: k8s.User[];
  contexts: k8s.Context[];
  currentContext: string;
}

export interface Connection {
  kc: k8s.KubeConfig;
  context: string;
  server: string;
  /** -n, else the context's namespace, else `default`. */
  namespace: string;
}

/**
 * The kubeconfig files kubectl reads: the --kubeconfig file, else each existing file of the
 * KUBECONFIG list (missing ones are skipped, as kubectl does), else ~/.kube/config.
 */
export function kubeconfigFiles(
  flag: string | undefined,
  kubeconfigEnv: string | undefined,
  home: string,
  exists: (path: string) => boolean,
): string[] {
  if (flag) {
    if (!exists(flag))
      throw new CliError(`error: the kubeconfig file "${flag}" (--kubeconfig) does not exist`);
    return [flag];
  }
  const listed = (kubeconfigEnv ?? '').split(delimiter).filter(Boolean);
  if (listed.length > 0) {
    const found = listed.filter(exists);
    if (found.length === 0) {
      throw new CliError(
        `error: no kubeconfig: none of the files in KUBECONFIG exist (${listed.join(', ')})`,
      );
    }
    return found;
  }
  const fallback = join(home, '.kube', 'config');
  if (!exists(fallback)) {
    throw new CliError(
      `error: no kubeconfig: ${fallback} does not exist; set KUBECONFIG or pass --kubeconfig FILE`,
    );
  }
  return [fallback];
}

/**
 * Several kubeconfig files as kubectl merges them: the first file that sets current-context wins,
 * and so does the first definition of each named cluster, user and context.
 */
export function mergeKubeconfigs(files: KubeconfigEntries[]): KubeconfigEntries {
  const firstByName = <T extends { name: string }>(lists: T[][]): T[] => {
    const byName = new Map<string, T>();
    for (const item of lists.flat()) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  return {
    clusters: firstByName(files.map((f) => f.clusters)),
    users: firstByName(files.map((f) => f.users)),
    contexts: firstByName(files.map((f) => f.contexts)),
    currentContext: files.find((f) => f.currentContext)?.currentContext ?? '',
  };
}

/** The context to use (--context, else current-context) with its cluster, user and namespace. */
export function selectContext(
  entries: KubeconfigEntries,
  flags: ConnectionFlags,
  source: string,
): Connection {
  const name = flags.context || entries.currentContext;
  if (!name) {
    throw new CliError(
      `error: current-context is not set in ${source}: pass --context NAME or run kubectl config use-context NAME`,
    );
  }
  const context = entries.contexts.find((c) => c.name === name);
  if (!context) {
    const how = flags.context ? '--context' : 'current-context';
    throw new CliError(`error: context "${name}" (${how}) does not exist in ${source}`);
  }
  const cluster = entries.clusters.find((c) => c.name === context.cluster);
  if (!cluster) {
    throw new CliError(
      `error: context "${name}" refers to cluster "${context.cluster}", which is not defined in ${source}`,
    );
  }
  if (context.user && !entries.users.some((u) => u.name === context.user)) {
    throw new CliError(
      `error: context "${name}" refers to user "${context.user}", which is not defined in ${source}`,
    );
  }
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({ ...entries, currentContext: name });
  return {
    kc,
    context: name,
    server: cluster.server,
    namespace: flags.namespace || context.namespace || 'default',
  };
}

/** Reads the kubeconfig kubectl would use and picks the context, cluster and namespace of the flags. */
export function connect(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const files = kubeconfigFiles(flags.kubeconfig, env.KUBECONFIG, homedir(), existsSync);
  const entries = files.map((file): KubeconfigEntries => {
    const kc = new k8s.KubeConfig();
    try {
      kc.loadFromFile(file); // also resolves certificate paths relative to the file
    } catch (err) {
      throw new CliError(`error: cannot read the kubeconfig file ${file}: ${describeError(err)}`);
    }
    return {
      clusters: kc.getClusters(),
      users: kc.getUsers(),
      contexts: kc.getContexts(),
      currentContext: kc.getCurrentContext() ?? '',
    };
  });
  const source = files.length === 1 ? `the kubeconfig ${files[0]}` : `the kubeconfig (${files.join(', ')})`;
  return selectContext(mergeKubeconfigs(entries), flags, source);
}
