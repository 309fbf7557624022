import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { KARMADA_QUOTA, RESOURCE_BINDING, type KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { age } from '#quota-view';
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
 * `kubectl kq`, the real executable found by the real kubectl on PATH, against a federation of its
 * own running what the sandbox runs (webhook, aggregator, reconciler), on Redis database 10.
 */
const REDIS_URL = testRedisUrl(10);
const PLUGIN_DIR = join(repoRoot(), 'tools', 'kubectl-kq', 'bin');
/** Each kubectl kq run starts kubectl and Node: seconds, far more on a loaded machine. */
const SLOW_TEST_MS = 600_000;

let federation: Federation;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-kubectl-kq-'));
  federation = await Federation.start({ stateDir, members: 2 });
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  await startServices(federation, { redisUrl: REDIS_URL });
}, 300_000);

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

/** `kubectl kq ARGS` as an admin types it: the plugin on PATH, the host kubeconfig in KUBECONFIG. */
function kq(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const result = spawnSync(federation.info.kubectl, ['kq', ...args], {
    encoding: 'utf8',
    timeout: 240_000, // a kubectl that hangs fails the test instead of stalling it
    env: {
      ...process.env,
      PATH: `${PLUGIN_DIR}:${process.env.PATH}`,
      KUBECONFIG: federation.info.host.kubeconfig,
      ...env,
    },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

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
 * Runs `kubectl kq ARGS` with the quota unchanged around it (the reconciler may rewrite status at
 * any time), so what it printed can be compared with the status it read.
 */
async function runAgainstSteadyStatus(namespace: string, name: string, args: string[]) {
  return eventually(
    async () => {
      const before = await readQuota(namespace, name);
      const startedAt = Date.now();
      const run = kq(args);
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
    'describe prints used, reserved, hard, the clusters and the reservations exactly as status has them',
    async () => {
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
      expect(cells(lines[2]!)).toEqual(['Resource', 'Used', 'Reserved', 'Hard']);
      const resources = Object.keys(status.hard!).sort();
      const resourceRows = lines.slice(4, 4 + resources.length).map(cells);
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

      const [clusterHeader, , ...clusterRows] = section(lines, 'Clusters');
      expect(clusterHeader).toEqual(['Cluster', 'State', 'Last Sync', ...resources]);
      expect(clusterRows.map((row) => row.filter((_, i) => i !== 2))).toEqual(
        status.clusters!.map((c) => [c.name, c.state, ...resources.map((r) => canonical(c.used[r]))]),
      );
      status.clusters!.forEach((c, i) => {
        expect(agesDuring(c.lastSyncTime, startedAt, finishedAt)).toContain(clusterRows[i]![2]);
      });
      expect(clusterRows.map((row) => [row[0], row[3]])).toEqual([
        ['member1', '400m'],
        ['member2', '100m'],
      ]);

      const [reservationHeader, , ...reservationRows] = section(lines, 'Reservations');
      expect(reservationHeader).toEqual(['Binding', 'Reserved', 'Expires']);
      expect(reservationRows.map((row) => row.slice(0, 2))).toEqual(
        status.reservations!.map((r) => [
          r.reservedBy.name,
          Object.keys(r.reserved)
            .sort()
            .map((key) => `${key}=${canonical(r.reserved[key])}`)
            .join(','),
        ]),
      );
      expect(reservationRows.map((row) => row.slice(0, 2))).toEqual([['web', 'cpu=200m,pods=1']]);
      const expiration = status.reservations![0]!.expirationTime;
      expect(reservationRows[0]![2]).toEqual(expiration ? expect.stringContaining(expiration) : '<none>');

      const [, , ...conditionRows] = section(lines, 'Conditions');
      expect(conditionRows.map((row) => row.slice(0, 3))).toEqual(
        status.conditions!.map((c) => [c.type, c.status, c.reason]),
      );
    },
    SLOW_TEST_MS,
  );

  test(
    'get lists the quota with how full it is and used+reserved/hard; -o json prints the object',
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

      const json = kq(['get', 'team', '-n', namespace, '-o', 'json']);
      expect(json.status).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        kind: 'KarmadaQuota',
        metadata: { name: 'team', uid: quota.metadata!.uid },
      });
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
          `"karmadaquotas.quota.karmada.io": is karmada-quota installed there (its KarmadaQuota CRD), and is ` +
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
});

describe('the kubectl-kq wrapper', () => {
  test(
    'runs through a symlink on PATH',
    () => {
      const linkDir = mkdtempSync(join(stateDir, 'path-'));
      symlinkSync(join(PLUGIN_DIR, 'kubectl-kq'), join(linkDir, 'kubectl-kq'));
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
    copyFileSync(join(PLUGIN_DIR, 'kubectl-kq'), join(checkout, 'tools', 'kubectl-kq', 'bin', 'kubectl-kq'));
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
