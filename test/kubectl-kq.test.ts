import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { Redis } from 'ioredis';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  WORKLOAD_USAGE,
  type Cluster,
  type KarmadaQuota,
} from '#api';
import { Quantity } from '#quantity';
import { age, readUsageRecord, USAGE_RECORD_NAME } from '#quota-view';
import {
  Federation,
  freePort,
  kubeConfigFor,
  repoRoot,
  serviceAccountToken,
  startServices,
  writeKubeconfig,
} from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { binding, deployment, karmadaQuota, pod } from './support/fixtures.js';

/**
 * `kubectl kq` as a stranger gets it: built into the npm package and the krew archive
 * (npm run kq:package), installed from the package into a directory of its own, found by the real
 * kubectl on PATH and run on a Node found outside the repository, against a federation of its own
 * running what the sandbox runs (webhook, aggregator, reconciler), on Redis database 10.
 */
const REDIS_URL = testRedisUrl(10);
const REPO_PLUGIN_DIR = join(repoRoot(), 'tools', 'kubectl-kq', 'bin');
/** Each kubectl kq run starts kubectl and Node: seconds, far more on a loaded machine. */
const SLOW_TEST_MS = 600_000;

let federation: Federation;
let stateDir: string;
/** What kq:package wrote. */
let artifacts: { npmPackage: string; krewArchive: string; krewManifest: string; sha256: string };
/** A Node outside the repository, and the PATH of an admin who installed the package: its bin, that Node, the system. */
let nodeDir: string;
let pluginPath: string;

/** The first node on PATH that is not the repository's own (its node devDependency). */
function nodeOutsideRepo(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && !dir.startsWith(repoRoot()) && existsSync(join(dir, 'node'))) return dir;
  }
  return dirname(process.execPath);
}

function mustRun(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? ''}${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-kubectl-kq-'));
  const packaged = join(stateDir, 'packaged');
  artifacts = JSON.parse(
    mustRun(
      process.execPath,
      [join(repoRoot(), 'dist', 'tools', 'kubectl-kq', 'packaging', 'build.js'), '--out', packaged],
      repoRoot(),
    ),
  ) as typeof artifacts;
  // A tarball without dependencies: npm installs it without a registry.
  const prefix = join(stateDir, 'prefix');
  mustRun(
    'npm',
    ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', artifacts.npmPackage],
    stateDir,
  );
  nodeDir = nodeOutsideRepo();
  pluginPath = [join(prefix, 'bin'), nodeDir, '/usr/bin', '/bin'].join(':');

  federation = await Federation.start({ stateDir, members: 2 });
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  await startServices(federation, { redisUrl: REDIS_URL });
}, 600_000);

afterAll(async () => {
  await federation?.stop();
  if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of an admin with the installed plugin on PATH and the host kubeconfig in KUBECONFIG. */
const adminEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  NODE_PATH: undefined,
  PATH: pluginPath,
  KUBECONFIG: federation.info.host.kubeconfig,
  ...env,
});

/** `kubectl ARGS` (with the harness's kubectl) as that admin types it, outside the repository. */
function kubectl(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const result = spawnSync(federation.info.kubectl, args, {
    cwd: stateDir,
    encoding: 'utf8',
    timeout: 240_000, // a kubectl that hangs fails the test instead of stalling it
    env: adminEnv(env),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const kq = (args: string[], env: NodeJS.ProcessEnv = {}): Run => kubectl(['kq', ...args], env);

const host = () => kubeConfigFor(federation.info.host);
const objects = () => host().makeApiClient(k8s.CustomObjectsApi);
const member = (name: string) => kubeConfigFor(federation.info.members.find((m) => m.name === name)!);
const canonical = (value: unknown) => Quantity.parse(String(value ?? '0')).toString();

async function namespaceEverywhere(): Promise<string> {
  const namespace = uniqueName('kq');
  for (const kc of [host(), member('member1'), member('member2')]) {
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  }
  return namespace;
}

/** Creates the quota and waits for the reconciler to count its usage (until then increases are refused). */
const createQuota = async (namespace: string, name: string, hard: Record<string, string>) => {
  await objects().createNamespacedCustomObject({
    ...KARMADA_QUOTA,
    namespace,
    body: karmadaQuota(namespace, name, hard),
  });
  await usageCounted(host(), namespace, name);
};

const readQuota = (namespace: string, name: string) =>
  objects().getNamespacedCustomObject({ ...KARMADA_QUOTA, namespace, name }) as Promise<KarmadaQuota>;

/** A quantity list as kubectl kq prints it inline: `cpu=200m,pods=1`, canonical, by name. */
const inline = (list: Record<string, unknown>) =>
  Object.keys(list)
    .sort()
    .map((key) => `${key}=${canonical(list[key])}`)
    .join(',');

/** The Events kubectl describe would list for the quota. */
const quotaEvents = async (namespace: string, name: string) =>
  (
    await host()
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.kind=${KARMADA_QUOTA.kind},involvedObject.name=${name}`,
      })
  ).items;

/** The cells of a kubectl table line: tabwriter pads every column with at least two spaces. */
const cells = (line: string) => line.trim().split(/ {2,}/);

/** The rows of an indented describe section (`Clusters:` ...), without its header and dashes. */
function section(lines: string[], title: string): string[][] {
  const start = lines.indexOf(`${title}:`);
  if (start < 0) throw new Error(`no "${title}:" section in:\n${lines.join('\n')}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    rows.push(cells(line));
  }
  return rows;
}

/**
 * Runs `kubectl kq ARGS` (or another command) with the quota unchanged around it (the reconciler may rewrite status at
 * any time), so what it printed can be compared with the status it read.
 */
async function runAgainstSteadyStatus(namespace: string, name: string, args: string[], command = kq) {
  return eventually(
    async () => {
      const before = await readQuota(namespace, name);
      const startedAt = Date.now();
      const run = command(args);
      const finishedAt = Date.now();
      const after = await readQuota(namespace, name);
      return {
        quota: after,
        run,
        startedAt,
        finishedAt,
        steady: before.metadata?.resourceVersion === after.metadata?.resourceVersion,
      };
    },
    (result) => result.steady,
    300_000,
  );
}

/** Every age kubectl kq may have printed for `time` while it ran. */
function agesDuring(time: string, startedAt: number, finishedAt: number): string[] {
  const ages: string[] = [];
  for (let t = startedAt - 1_000; t <= finishedAt + 1_000; t += 500) ages.push(age(time, new Date(t)));
  return ages;
}

describe('kubectl kq', () => {
  let namespace: string;

  beforeAll(async () => {
    namespace = await namespaceEverywhere();
    // 2.5 CPU is stored as written; kubectl kq prints it canonically (2500m), as status has it.
    await createQuota(namespace, 'team', { cpu: '2.5', pods: '20' });
    const web = binding(namespace, 'web', {
      replicas: 3,
      cpu: '200m',
      clusters: [
        { name: 'member1', replicas: 2 },
        { name: 'member2', replicas: 1 },
      ],
    });
    await objects().createNamespacedCustomObject({ ...RESOURCE_BINDING, namespace, body: web });
    // Only member1's share runs yet (its 400m becomes used, 200m stays reserved); a pod made
    // directly in member2 counts in used too.
    await member('member1')
      .makeApiClient(k8s.AppsV1Api)
      .createNamespacedDeployment({ namespace, body: deployment('web', 2, '200m') });
    await member('member2')
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({
        namespace,
        body: pod('direct', '100m'),
      });
    await eventually(
      () => readQuota(namespace, 'team'),
      (quota) =>
        canonical(quota.status?.used?.cpu) === '500m' &&
        canonical(quota.status?.reserved?.cpu) === '200m' &&
        quota.status?.clusters?.length === 2 &&
        quota.status.clusters.every((c) => c.state === 'Ready'),
      240_000,
    );
  }, 300_000);

  test(
    'describe prints used, reserved, hard, every cluster, the workloads, reservations, waiting and Events as the API has them',
    async () => {
      // A binding far over the quota: refused (an AdmissionDenied Event), then waiting in status.
      await expect(
        objects().createNamespacedCustomObject({
          ...RESOURCE_BINDING,
          namespace,
          body: binding(namespace, 'huge', { replicas: 20, cpu: '1' }),
        }),
      ).rejects.toThrow(/exceeded quota/);
      await eventually(
        async () => ({
          quota: await readQuota(namespace, 'team'),
          events: await quotaEvents(namespace, 'team'),
        }),
        ({ quota, events }) =>
          !!quota.status?.waiting?.some((w) => w.binding === 'huge') &&
          events.some((e) => e.reason === 'AdmissionDenied'),
        240_000,
      );
      // The reconciler's record of the usage by workload has both members' usage.
      await eventually(
        () =>
          objects()
            .getNamespacedCustomObject({ ...WORKLOAD_USAGE, namespace, name: USAGE_RECORD_NAME })
            .then(readUsageRecord),
        (read) =>
          'usage' in read &&
          read.usage.clusters
            .flatMap((c) => c.workloads.map((w) => `${c.name}/${w.name}=${w.used.cpu}`))
            .join() === 'member1/web=400m,member2/direct=100m',
        60_000,
      );
      const clusters = (await objects().listClusterCustomObject(CLUSTER)) as { items: Cluster[] };

      const { quota, run, startedAt, finishedAt } = await runAgainstSteadyStatus(namespace, 'team', [
        'describe',
        'team',
        '-n',
        namespace,
      ]);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      const status = quota.status!;

      expect(cells(lines[0]!)).toEqual(['Name:', 'team']);
      expect(cells(lines[1]!)).toEqual(['Namespace:', namespace]);
      expect(cells(lines[2]!)).toEqual(['Scopes:', '<none> (every ResourceBinding of the namespace)']);
      expect(cells(lines[3]!)).toEqual(['Resource', 'Used', 'Reserved', 'Hard']);
      const resources = Object.keys(status.hard!).sort();
      const resourceRows = lines.slice(5, 5 + resources.length).map(cells);
      expect(resourceRows).toEqual(
        resources.map((r) => [
          r,
          canonical(status.used?.[r]),
          canonical(status.reserved?.[r]),
          canonical(status.hard![r]),
        ]),
      );
      expect(resourceRows).toEqual([
        ['cpu', '500m', '200m', '2500m'],
        ['pods', '3', '1', '20'],
      ]);

      // Every Cluster object, Karmada's Ready beside the quota's sync state and usage.
      const [clusterHeader, , ...clusterRows] = section(lines, 'Clusters');
      expect(clusterHeader).toEqual(['Cluster', 'Ready', 'Sync', 'Last Sync', ...resources]);
      const names = clusters.items.map((c) => c.metadata!.name!).sort();
      expect(clusterRows.map((row) => row[0])).toEqual(names);
      expect(clusterRows.map((row) => row.filter((_, i) => i !== 3))).toEqual(
        names.map((name) => {
          const object = clusters.items.find((c) => c.metadata!.name === name)!;
          const synced = status.clusters!.find((c) => c.name === name)!;
          return [
            name,
            object.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '<unknown>',
            synced.state,
            ...resources.map((r) => canonical(synced.used[r])),
          ];
        }),
      );
      status.clusters!.forEach((c, i) => {
        expect(agesDuring(c.lastSyncTime, startedAt, finishedAt)).toContain(clusterRows[i]![3]);
      });
      expect(clusterRows.map((row) => [row[0], row[4]])).toEqual([
        ['member1', '400m'],
        ['member2', '100m'],
      ]);

      // web is charged 3 x 200m, its claim retired once it was stored: nothing in flight. Of its
      // charge 2 pods run (observed), one is reserved; the pod made in member2 is no binding's.
      const [workloadHeader, , ...workloadRows] = section(lines, 'Workloads');
      expect(workloadHeader).toEqual(['Binding', 'Charged', 'In Flight', 'Observed', 'Reserved', 'Clusters']);
      expect(workloadRows.slice(0, -1)).toEqual([
        ['web', 'cpu=600m,pods=3', '<none>', 'cpu=400m,pods=2', 'cpu=200m,pods=1', 'member1=2,member2=1'],
        ['<not from a binding>', '<none>', '<none>', 'cpu=100m,pods=1', '<none>', '<none>'],
      ]);
      expect(workloadRows.at(-1)!.join(' ')).toMatch(
        /^Observed and reserved as the members ran at \S+ \(\d+s ago\)\.$/,
      );
      // Only claims in flight are listed: a stored binding is its own charge record.
      expect(status.reservations).toEqual([]);
      expect(lines.find((line) => line.startsWith('Reservations:'))).toMatch(/^Reservations:\s+<none>$/);

      const [, , ...waitingRows] = section(lines, 'Waiting');
      expect(waitingRows.map((row) => row.slice(0, 3))).toEqual(
        status.waiting!.map((w) => [w.binding, inline(w.requested), inline(w.free)]),
      );
      expect(waitingRows.map((row) => row[0])).toEqual(['huge']);

      const [, , ...conditionRows] = section(lines, 'Conditions');
      expect(conditionRows.map((row) => row.slice(0, 3))).toEqual(
        status.conditions!.map((c) => [c.type, c.status, c.reason]),
      );

      const [eventHeader, , ...eventRows] = section(lines, 'Events');
      expect(eventHeader).toEqual(['Type', 'Reason', 'Age', 'From', 'Message']);
      const events = await quotaEvents(namespace, 'team');
      expect(eventRows.map((row) => [row[0], row[1], row[3], row.slice(4).join('  ')]).sort()).toEqual(
        events.map((e) => [e.type, e.reason, e.source?.component, e.message?.trim()]).sort(),
      );
      expect(eventRows.map((row) => row.slice(0, 2))).toContainEqual(['Warning', 'AdmissionDenied']);
    },
    SLOW_TEST_MS,
  );

  test(
    'get lists the quota with how full it is; -o wide adds READY, clusters and waiting; -o json and name',
    async () => {
      const { quota, run } = await runAgainstSteadyStatus(namespace, 'team', ['get', '-n', namespace]);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const [header, ...rows] = run.stdout.trimEnd().split('\n').map(cells);
      expect(header).toEqual(['NAME', 'USED', 'USED+RESERVED/HARD', 'AGE']);
      // cpu is the fullest: (500m + 200m) / 2500m = 28%; pods (3 + 1) / 20 = 20%.
      expect(rows.map((row) => row.slice(0, 3))).toEqual([
        ['team', '28%', 'cpu: 500m+200m/2500m, pods: 3+1/20'],
      ]);
      expect(rows[0]![3]).toMatch(/^\d+(s|m)/);

      const wide = await runAgainstSteadyStatus(namespace, 'team', ['get', '-n', namespace, '-o', 'wide']);
      const [wideHeader, wideRow] = wide.run.stdout.trimEnd().split('\n').map(cells);
      expect(wideHeader).toEqual([
        'NAME',
        'USED',
        'USED+RESERVED/HARD',
        'AGE',
        'READY',
        'CLUSTERS',
        'WAITING',
      ]);
      const status = wide.quota.status!;
      expect(wideRow!.slice(4)).toEqual([
        status.conditions!.find((c) => c.type === 'Ready')!.status,
        `${status.clusters!.filter((c) => c.state === 'Ready').length}/${status.clusters!.length}`,
        String(status.waiting?.length ?? 0),
      ]);

      const json = kq(['get', 'team', '-n', namespace, '-o', 'json']);
      expect(json.status).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        kind: 'KarmadaQuota',
        metadata: { name: 'team', uid: quota.metadata!.uid },
      });
      expect(kq(['get', '-n', namespace, '-o', 'name'])).toEqual({
        status: 0,
        stdout: 'karmadaquota.quota.karmada.io/team\n',
        stderr: '',
      });
    },
    SLOW_TEST_MS,
  );

  test(
    'kubectl get kq: READY and cpu and memory by default within 80 columns, the rest with -o wide',
    async () => {
      const { quota, run: plain } = await runAgainstSteadyStatus(
        namespace,
        'team',
        ['get', 'kq', '-n', namespace],
        kubectl,
      );
      expect(plain.stderr).toBe('');
      const lines = plain.stdout.trimEnd().split('\n');
      expect(cells(lines[0]!)).toEqual([
        'NAME',
        'READY',
        'CPU USED',
        'CPU HARD',
        'MEMORY USED',
        'MEMORY HARD',
        'AGE',
      ]);
      expect(cells(lines[1]!).slice(0, 4)).toEqual([
        'team',
        quota.status!.conditions!.find((c) => c.type === 'Ready')!.status,
        String(quota.status!.used!.cpu),
        String(quota.spec.hard.cpu),
      ]);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
      const wide = kubectl(['get', 'kq', '-n', namespace, '-o', 'wide']);
      expect(cells(wide.stdout.split('\n')[0]!)).toEqual([
        'NAME',
        'READY',
        'CPU USED',
        'CPU RESERVED',
        'CPU HARD',
        'MEMORY USED',
        'MEMORY RESERVED',
        'MEMORY HARD',
        'PODS USED',
        'PODS RESERVED',
        'PODS HARD',
        'ENFORCEMENT',
        'AGE',
      ]);
    },
    SLOW_TEST_MS,
  );

  test(
    'get -A lists the quotas of every namespace with NAMESPACE first',
    async () => {
      const other = await namespaceEverywhere();
      await createQuota(other, 'other', { pods: '5' });
      await eventually(
        () => readQuota(other, 'other'),
        (quota) => quota.status?.hard !== undefined,
      );
      const run = await eventually(
        async () => kq(['get', '-A']),
        (result) => result.stdout.includes(other) && result.stdout.includes('28%'),
        300_000,
      );
      expect(run.status).toBe(0);
      const [header, ...rows] = run.stdout.trimEnd().split('\n').map(cells);
      expect(header).toEqual(['NAMESPACE', 'NAME', 'USED', 'USED+RESERVED/HARD', 'AGE']);
      expect(rows.map((row) => row.slice(0, 4)).sort()).toEqual(
        [
          [namespace, 'team', '28%', 'cpu: 500m+200m/2500m, pods: 3+1/20'],
          [other, 'other', '0%', 'pods: 0+0/5'],
        ].sort(),
      );
    },
    SLOW_TEST_MS,
  );

  test(
    'get --watch prints the quota, then a row per change from the API server, and ends cleanly on Ctrl-C',
    async () => {
      const watched = await namespaceEverywhere();
      await createQuota(watched, 'watched', { pods: '5' });
      const child = spawn(federation.info.kubectl, ['kq', 'get', 'watched', '-n', watched, '--watch'], {
        cwd: stateDir,
        env: adminEnv(),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<[number | null, string | null]>((resolve) =>
        child.on('exit', (code, signal) => resolve([code, signal])),
      );
      try {
        await eventually(
          async () => stdout,
          (out) => out.includes('pods: 0+0/5'),
          120_000,
        );
        const quota = await readQuota(watched, 'watched');
        await objects().replaceNamespacedCustomObject({
          ...KARMADA_QUOTA,
          namespace: watched,
          name: 'watched',
          body: { ...quota, spec: { hard: { pods: '6' } } },
        });
        // The reconciler copies spec.hard to status.hard: a change the watch reports.
        await eventually(
          async () => stdout,
          (out) => out.includes('pods: 0+0/6'),
          120_000,
        );
      } finally {
        child.kill('SIGINT'); // kubectl execs the plugin: this is Ctrl-C to kubectl kq itself
      }
      expect(await exited).toEqual([0, null]);
      expect(stderr).toBe('');
      const [header, ...rows] = stdout.trimEnd().split('\n').map(cells);
      expect(header).toEqual(['NAME', 'USED', 'USED+RESERVED/HARD', 'AGE']);
      expect(rows[0]!.slice(0, 3)).toEqual(['watched', '0%', 'pods: 0+0/5']);
      expect(rows.at(-1)!.slice(0, 3)).toEqual(['watched', '0%', 'pods: 0+0/6']);
      expect(rows.every((row) => row[0] === 'watched')).toBe(true);
    },
    SLOW_TEST_MS,
  );

  test(
    'kubectl completes kubectl kq through kubectl_complete-kq, with names from the API server',
    () => {
      const complete = (...words: string[]) => kubectl(['__complete', 'kq', ...words]);
      expect(complete('desc').stdout).toBe('describe\n:4\n');
      expect(complete('get', '-o', '').stdout).toBe('wide\nyaml\njson\nname\n:4\n');
      expect(complete('describe', '-n', namespace, '').stdout).toBe('team\n:4\n');
      expect(complete('get', '-n', namespace.slice(0, -1)).stdout).toContain(`${namespace}\n`);
    },
    SLOW_TEST_MS,
  );

  /**
   * What a shell does on <TAB> after sourcing `kubectl kq completion SHELL`: `prepare` runs before the
   * script is sourced, `complete` after it, with the command line's words as "$@".
   */
  function completeIn(shell: 'bash' | 'zsh', prepare: string, complete: string, words: string[]): string {
    const file = join(stateDir, `kubectl-kq.${shell}`);
    writeFileSync(file, kq(['completion', shell]).stdout);
    const program = `${prepare} source "$0"; ${complete}`;
    return spawnSync(shell, ['-c', program, file, ...words], {
      encoding: 'utf8',
      cwd: stateDir,
      env: adminEnv(),
    }).stdout;
  }

  test(
    'kubectl kq completion bash completes kubectl-kq in a real bash',
    () => {
      // COMP_WORDS and COMP_CWORD set, the registered function called, COMPREPLY printed.
      const completed = (words: string[]) =>
        completeIn(
          'bash',
          '',
          'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kubectl_kq; printf "%s\\n" "${COMPREPLY[@]}"',
          words,
        );
      expect(completed(['kubectl-kq', 'get', '-o', ''])).toBe('wide\nyaml\njson\nname\n');
      expect(completed(['kubectl-kq', 'describe', '-n', namespace, 't'])).toBe('team\n');
    },
    SLOW_TEST_MS,
  );

  const zsh = spawnSync('zsh', ['--version']).status === 0;
  if (!zsh) console.warn('Skipping the zsh completion test: zsh is not installed (apt-get install zsh).');
  (zsh ? test : test.skip)(
    'kubectl kq completion zsh completes kubectl-kq in a real zsh',
    () => {
      // words and CURRENT set, the registered function called; compadd and _files print what they get.
      const completed = (words: string[]) =>
        completeIn(
          'zsh',
          'autoload -U compinit; compinit -u -d "$0.dump";',
          'compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }; _files() { print FILES; }; ' +
            'words=("$@"); CURRENT=$#; _kubectl_kq',
          words,
        );
      expect(completed(['kubectl-kq', 'get', '-o', ''])).toBe('wide\nyaml\njson\nname\n');
      expect(completed(['kubectl-kq', 'describe', '-n', namespace, 't'])).toBe('team\n');
      expect(completed(['kubectl-kq', '--kubeconfig', ''])).toBe('FILES\n');
    },
    SLOW_TEST_MS,
  );

  test(
    'describe of a namespace that runs nothing yet lists every member cluster with zero usage',
    async () => {
      const idle = await namespaceEverywhere();
      await createQuota(idle, 'idle', { cpu: '1', pods: '5' });
      const clusters = (await objects().listClusterCustomObject(CLUSTER)) as { items: Cluster[] };
      const { quota, run } = await runAgainstSteadyStatus(idle, 'idle', ['describe', 'idle', '-n', idle]);
      expect([run.status, run.stderr]).toEqual([0, '']);
      const lines = run.stdout.trimEnd().split('\n');
      const [, , ...clusterRows] = section(lines, 'Clusters');
      expect(clusterRows.map((row) => [row[0], row[2], row[4], row[5]])).toEqual(
        clusters.items
          .map((c) => c.metadata!.name!)
          .sort()
          .map((name) => [
            name,
            quota.status?.clusters?.find((c) => c.name === name)?.state ?? '<none>',
            '0',
            '0',
          ]),
      );
      expect(clusterRows).toHaveLength(2);
      expect(lines).toContainEqual(expect.stringMatching(/^Workloads: +<none>$/));
    },
    SLOW_TEST_MS,
  );

  test(
    'the krew archive matches its manifest and runs as kubectl karmada-quota once installed as krew does',
    () => {
      const manifest = yaml.load(readFileSync(artifacts.krewManifest, 'utf8')) as {
        metadata: { name: string };
        spec: { platforms: { uri: string; sha256: string; bin: string }[] };
      };
      const [platform] = manifest.spec.platforms;
      expect(platform!.sha256).toBe(
        createHash('sha256').update(readFileSync(artifacts.krewArchive)).digest('hex'),
      );
      expect(platform!.uri.endsWith(`/${artifacts.krewArchive.split('/').at(-1)}`)).toBe(true);
      // krew: unpack into the store, link `bin` as kubectl-<name with _ for ->.
      const store = mkdtempSync(join(stateDir, 'krew-store-'));
      mustRun('tar', ['-xzf', artifacts.krewArchive, '-C', store], stateDir);
      const bin = mkdtempSync(join(stateDir, 'krew-bin-'));
      symlinkSync(
        join(store, platform!.bin),
        join(bin, `kubectl-${manifest.metadata.name.replaceAll('-', '_')}`),
      );
      const krewPath = { PATH: [bin, nodeDir, '/usr/bin', '/bin'].join(':') };
      const run = kubectl(['karmada-quota', 'get', '-n', namespace, '-o', 'name'], krewPath);
      expect(run).toEqual({ status: 0, stdout: 'karmadaquota.quota.karmada.io/team\n', stderr: '' });
      expect(kubectl(['karmada-quota', '--help'], krewPath).stdout).toMatch(/^kubectl karmada-quota: /);
    },
    SLOW_TEST_MS,
  );

  test(
    'no such quota: kubectl NotFound, exit 1; the quotas that exist are still shown',
    () => {
      const notFound = 'Error from server (NotFound): karmadaquotas.quota.karmada.io "nope" not found\n';
      const run = kq(['describe', 'nope', '-n', namespace]);
      expect([run.status, run.stdout, run.stderr]).toEqual([1, '', notFound]);

      const mixed = kq(['get', 'nope', 'team', '-n', namespace]);
      expect([mixed.status, mixed.stderr]).toEqual([1, notFound]);
      expect(
        mixed.stdout
          .trimEnd()
          .split('\n')
          .map((line) => cells(line)[0]),
      ).toEqual(['NAME', 'team']);
    },
    SLOW_TEST_MS,
  );

  test(
    'no access: the refusal names the user, verb, resource and namespace',
    async () => {
      const token = await serviceAccountToken(host(), {
        namespace,
        name: 'viewer',
        readQuotas: false,
        expirationSeconds: 600,
      });
      const kubeconfig = join(stateDir, 'viewer.kubeconfig');
      writeKubeconfig(kubeconfig, {
        name: 'viewer',
        server: federation.info.host.server,
        caPem: readFileSync(federation.info.host.caFile, 'utf8'),
        token,
      });
      const run = kq(['describe', 'team', '-n', namespace, '--kubeconfig', kubeconfig]);
      expect([run.status, run.stdout, run.stderr]).toEqual([
        1,
        '',
        `Error from server (Forbidden): karmadaquotas.quota.karmada.io "team" is forbidden: User ` +
          `"system:serviceaccount:${namespace}:viewer" cannot get resource "karmadaquotas" in API group ` +
          `"quota.karmada.io" in the namespace "${namespace}"\n`,
      ]);
    },
    SLOW_TEST_MS,
  );

  test(
    'a reader of quotas only: describe shows the quota and says which lists it may not read, and why',
    async () => {
      const token = await serviceAccountToken(host(), {
        namespace,
        name: 'reader',
        readQuotas: true,
        expirationSeconds: 600,
      });
      const kubeconfig = join(stateDir, 'reader.kubeconfig');
      writeKubeconfig(kubeconfig, {
        name: 'reader',
        server: federation.info.host.server,
        caPem: readFileSync(federation.info.host.caFile, 'utf8'),
        token,
      });
      const run = kq(['describe', 'team', '-n', namespace, '--kubeconfig', kubeconfig]);
      expect(run.status).toBe(0);
      const user = `"system:serviceaccount:${namespace}:reader"`;
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        `Warning: member clusters without usage in the namespace are not shown: Error from server (Forbidden): ` +
          `clusters.cluster.karmada.io is forbidden: User ${user} cannot list resource "clusters" in API group ` +
          `"cluster.karmada.io" at the cluster scope`,
        `Warning: the usage by workload in ${namespace} is not shown: Error from server (Forbidden): ` +
          `resourcebindings.work.karmada.io is forbidden: User ${user} cannot list resource "resourcebindings" ` +
          `in API group "work.karmada.io" in the namespace "${namespace}"`,
        `Warning: the Events of KarmadaQuota ${namespace}/team are not shown: Error from server (Forbidden): ` +
          `events is forbidden: User ${user} cannot list resource "events" in API group "" in the namespace ` +
          `"${namespace}"`,
      ]);
      const lines = run.stdout.trimEnd().split('\n');
      const [, , ...clusterRows] = section(lines, 'Clusters');
      expect(clusterRows.map((row) => row.slice(0, 3))).toEqual([
        ['member1', '<unknown>', 'Ready'],
        ['member2', '<unknown>', 'Ready'],
      ]);
      expect(lines).toContainEqual(
        expect.stringMatching(/^Workloads: +<unknown> \(the ResourceBindings could not be listed\)$/),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(/^Events: +<unknown> \(the Events could not be listed\)$/),
      );
    },
    SLOW_TEST_MS,
  );

  test(
    'no cluster: a closed port names the server and the context to check',
    async () => {
      const server = `https://127.0.0.1:${await freePort()}`;
      const kubeconfig = join(stateDir, 'closed.kubeconfig');
      writeKubeconfig(kubeconfig, {
        name: 'closed',
        server,
        caPem: readFileSync(federation.info.host.caFile, 'utf8'),
        token: 'unused',
      });
      const run = kq(['get', '--kubeconfig', kubeconfig]);
      expect([run.status, run.stdout, run.stderr]).toEqual([
        1,
        '',
        `error: the connection to the server ${server} was refused: is the API server running, and is ` +
          `kubeconfig context "closed" the cluster you meant? (kubectl config get-contexts)\n`,
      ]);
    },
    SLOW_TEST_MS,
  );

  test(
    'no cluster: a server whose certificate the kubeconfig does not trust',
    () => {
      const kubeconfig = join(stateDir, 'untrusted.kubeconfig');
      writeKubeconfig(kubeconfig, {
        name: 'untrusted',
        server: federation.info.host.server,
        caPem: readFileSync(federation.info.members[0]!.caFile, 'utf8'), // another cluster's CA
        token: federation.info.host.token,
      });
      const run = kq(['get', '--kubeconfig', kubeconfig]);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(
          `^error: cannot verify the TLS certificate of the server ${federation.info.host.server} \\(.+\\): ` +
            'check certificate-authority-data of the cluster in kubeconfig context "untrusted"\n$',
        ),
      );
    },
    SLOW_TEST_MS,
  );

  test(
    'a cluster without the KarmadaQuota CRD: says karmada-quota is not installed there',
    () => {
      const run = kq(['get', '--kubeconfig', federation.info.members[0]!.kubeconfig]);
      expect([run.status, run.stderr]).toEqual([
        1,
        `error: the server ${federation.info.members[0]!.server} doesn't have a resource type ` +
          `"karmadaquotas.quota.karmada.io": is karmada-quota installed there (its CRDs), and is ` +
          `kubeconfig context "member1" the Karmada control plane?\n`,
      ]);
    },
    SLOW_TEST_MS,
  );

  test(
    'no kubeconfig at all',
    () => {
      const home = mkdtempSync(join(stateDir, 'home-'));
      const run = kq(['get'], { KUBECONFIG: '', HOME: home });
      expect([run.status, run.stderr]).toEqual([
        1,
        `error: no kubeconfig: ${home}/.kube/config does not exist; set KUBECONFIG or pass --kubeconfig FILE\n`,
      ]);
    },
    SLOW_TEST_MS,
  );

  // Last: from here on the namespace's bindings also meet the ClusterKarmadaQuota.
  test(
    'get and describe list the ClusterKarmadaQuotas selecting the namespace beside its KarmadaQuotas',
    async () => {
      const name = uniqueName('org');
      const core = host().makeApiClient(k8s.CoreV1Api);
      await core.patchNamespace(
        { name: namespace, body: { metadata: { labels: { 'kq-test-org': name } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await objects().createClusterCustomObject({
        ...CLUSTER_KARMADA_QUOTA,
        body: {
          apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion,
          kind: CLUSTER_KARMADA_QUOTA.kind,
          metadata: { name },
          spec: { hard: { cpu: '100' }, namespaceSelector: { matchLabels: { 'kq-test-org': name } } },
        },
      });
      try {
        await eventually(
          () =>
            objects().getNamespacedCustomObject({
              ...APPLIED_CLUSTER_KARMADA_QUOTA,
              namespace,
              name,
            }) as Promise<KarmadaQuota>,
          (applied) => applied.status?.hard?.cpu === '100',
          60_000,
        );
        const run = kq(['get', '-n', namespace]);
        expect([run.status, run.stderr]).toEqual([0, '']);
        const rows = run.stdout.trimEnd().split('\n').map(cells);
        expect(rows.map((row) => row[0])).toEqual(['NAME', 'team', `ClusterKarmadaQuota/${name}`]);
        expect(rows[2]![2]).toMatch(/^cpu: \S+\+\S+\/100$/);

        const described = kq(['describe', `ClusterKarmadaQuota/${name}`, '-n', namespace]);
        expect([described.status, described.stderr]).toEqual([0, '']);
        const lines = described.stdout.split('\n').map(cells);
        expect(lines[0]).toEqual(['Name:', `ClusterKarmadaQuota/${name}`]);
        expect(lines.find((l) => l[0] === 'This namespace:')?.[1]).toMatch(/^used cpu=/);
        expect(kq(['get', `ckq/${name}`, '-n', namespace, '-o', 'name']).stdout).toBe(
          `appliedclusterkarmadaquota.quota.karmada.io/${name}\n`,
        );
      } finally {
        await objects().deleteClusterCustomObject({ ...CLUSTER_KARMADA_QUOTA, name });
      }
    },
    SLOW_TEST_MS,
  );
});

describe('the kubectl-kq wrapper', () => {
  test(
    'runs through a symlink on PATH',
    () => {
      const linkDir = mkdtempSync(join(stateDir, 'path-'));
      symlinkSync(join(REPO_PLUGIN_DIR, 'kubectl-kq'), join(linkDir, 'kubectl-kq'));
      const result = spawnSync(federation.info.kubectl, ['kq', '--help'], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${linkDir}:${process.env.PATH}` },
      });
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('kubectl kq describe');
    },
    SLOW_TEST_MS,
  );

  test('says how to build when dist/ is missing', () => {
    // A checkout with node installed but nothing compiled yet.
    const checkout = mkdtempSync(join(stateDir, 'checkout-'));
    mkdirSync(join(checkout, 'tools', 'kubectl-kq', 'bin'), { recursive: true });
    mkdirSync(join(checkout, 'node_modules', '.bin'), { recursive: true });
    copyFileSync(
      join(REPO_PLUGIN_DIR, 'kubectl-kq'),
      join(checkout, 'tools', 'kubectl-kq', 'bin', 'kubectl-kq'),
    );
    symlinkSync(process.execPath, join(checkout, 'node_modules', '.bin', 'node'));
    const result = spawnSync('sh', [join(checkout, 'tools', 'kubectl-kq', 'bin', 'kubectl-kq'), 'get'], {
      encoding: 'utf8',
    });
    expect([result.status, result.stderr]).toEqual([
      1,
      `error: kubectl-kq is not built: run npm run build in ${checkout}\n`,
    ]);
  });
});
