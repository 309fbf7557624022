import type * as k8s from '@kubernetes/client-node';
import { kubeconfigFiles, mergeKubeconfigs, selectContext, type KubeconfigEntries } from './kubeconfig.js';

describe('kubeconfigFiles', () => {
  const existing = new Set(['/home/me/.kube/config', '/etc/karmada.yaml', '/tmp/extra.yaml']);
  const exists = (path: string) => existing.has(path);

  it.each([
    {
      case: '--kubeconfig wins',
      flag: '/etc/karmada.yaml',
      env: '/tmp/extra.yaml',
      files: ['/etc/karmada.yaml'],
    },
    {
      case: 'KUBECONFIG lists several, missing ones skipped',
      flag: undefined,
      env: '/tmp/extra.yaml:/nope.yaml::/etc/karmada.yaml',
      files: ['/tmp/extra.yaml', '/etc/karmada.yaml'],
    },
    { case: 'else ~/.kube/config', flag: undefined, env: '', files: ['/home/me/.kube/config'] },
  ])('$case', ({ flag, env, files }) => {
    expect(kubeconfigFiles(flag, env, '/home/me', exists)).toEqual(files);
  });

  it.each([
    {
      case: 'a --kubeconfig file that does not exist',
      flag: '/nope.yaml',
      env: undefined,
      home: '/home/me',
      message: 'error: the kubeconfig file "/nope.yaml" (--kubeconfig) does not exist',
    },
    {
      case: 'KUBECONFIG naming only missing files',
      flag: undefined,
      env: '/a.yaml:/b.yaml',
      home: '/home/me',
      message: 'error: no kubeconfig: none of the files in KUBECONFIG exist (/a.yaml, /b.yaml)',
    },
    {
      case: 'no kubeconfig at all',
      flag: undefined,
      env: undefined,
      home: '/home/you',
      message:
        'error: no kubeconfig: /home/you/.kube/config does not exist; set KUBECONFIG or pass --kubeconfig FILE',
    },
  ])('refuses $case', ({ flag, env, home, message }) => {
    expect(() => kubeconfigFiles(flag, env, home, exists)).toThrow(message);
  });
});

const cluster = (name: string, server = `https://${name}:6443`): k8s.Cluster => ({
  name,
  server,
  skipTLSVerify: false,
});
const user = (name: string, token = name): k8s.User => ({ name, token });
const context = (name: string, namespace?: string, clusterName = name, userName = name): k8s.Context => ({
  name,
  cluster: clusterName,
  user: userName,
  ...(namespace ? { namespace } : {}),
});
const entries = (name: string, currentContext = name, namespace?: string): KubeconfigEntries => ({
  clusters: [cluster(name)],
  users: [user(name)],
  contexts: [context(name, namespace)],
  currentContext,
});

describe('mergeKubeconfigs', () => {
  it('keeps the first current-context set and the first definition of each name, as kubectl does', () => {
    const first = { ...entries('host', ''), users: [user('host', 'first-token')] };
    const second = { ...entries('member1'), users: [user('host', 'second-token'), user('member1')] };
    const third = entries('host', 'host');
    expect(mergeKubeconfigs([first, second, third])).toEqual({
      clusters: [cluster('host'), cluster('member1')],
      users: [user('host', 'first-token'), user('member1')],
      contexts: [context('host'), context('member1')],
      currentContext: 'member1',
    });
  });
});

describe('selectContext', () => {
  const both = mergeKubeconfigs([entries('host', 'host', 'team-a'), entries('member1')]);
  const source = 'the kubeconfig /k';

  it.each([
    {
      case: 'current-context and its namespace',
      flags: {},
      context: 'host',
      server: 'https://host:6443',
      ns: 'team-a',
    },
    {
      case: '-n over the context namespace',
      flags: { namespace: 'x' },
      context: 'host',
      server: 'https://host:6443',
      ns: 'x',
    },
    {
      case: '--context, namespace default',
      flags: { context: 'member1' },
      context: 'member1',
      server: 'https://member1:6443',
      ns: 'default',
    },
  ])('uses $case', ({ flags, context: name, server, ns }) => {
    const connection = selectContext(both, flags, source);
    expect([connection.context, connection.server, connection.namespace]).toEqual([name, server, ns]);
    expect(connection.kc.getCurrentContext()).toBe(name);
    expect(connection.kc.getCurrentCluster()?.server).toBe(server);
    expect(connection.kc.getCurrentUser()?.token).toBe(name);
  });

  it.each([
    {
      case: 'no current-context',
      entries: entries('host', ''),
      flags: {},
      message:
        'error: current-context is not set in the kubeconfig /k: pass --context NAME or run kubectl config use-context NAME',
    },
    {
      case: 'an unknown --context',
      entries: both,
      flags: { context: 'member9' },
      message: 'error: context "member9" (--context) does not exist in the kubeconfig /k',
    },
    {
      case: 'a current-context that is not defined',
      entries: entries('host', 'gone'),
      flags: {},
      message: 'error: context "gone" (current-context) does not exist in the kubeconfig /k',
    },
    {
      case: 'a context whose cluster is not defined',
      entries: { ...entries('host'), clusters: [] },
      flags: {},
      message: 'error: context "host" refers to cluster "host", which is not defined in the kubeconfig /k',
    },
    {
      case: 'a context whose user is not defined',
      entries: { ...entries('host'), users: [] },
      flags: {},
      message: 'error: context "host" refers to user "host", which is not defined in the kubeconfig /k',
    },
  ])('refuses $case', ({ entries: given, flags, message }) => {
    expect(() => selectContext(given, flags, source)).toThrow(message);
  });
});
