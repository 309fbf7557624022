import { randomInt } from 'node:crypto';
import { Agent } from 'node:https';
import { sleep } from '../../tools/federation/src/index.js';
import {
  admissionResponse,
  bindingReview,
  postOversized,
  postToWebhook,
  type WebhookReply,
} from './support/admission.js';
import { ChaosScenario } from './support/scenario.js';
import { get, mib, processFigures, type ProcessFigures } from './support/metrics.js';
import { expectRecountMatches } from './support/recount.js';

/**
 * Fault 7: fuzzed input to the running webhook over HTTPS: random and mutated AdmissionReviews,
 * huge and malformed quantities, wrong kinds, missing fields, broken JSON and oversized bodies.
 * Every reply must be a well-formed AdmissionReview response or a 4xx, the process must stay up and
 * its memory bounded. Reproducible: CHAOS_FUZZ_SEED (printed) and CHAOS_FUZZ_REQUESTS (default 3000).
 */
const SEED = Number(process.env.CHAOS_FUZZ_SEED ?? randomInt(2 ** 31));
const REQUESTS = Number(process.env.CHAOS_FUZZ_REQUESTS ?? 3000);
const CONCURRENCY = 16;
const SAMPLE_EVERY = Math.max(250, Math.floor(REQUESTS / 20));
/**
 * Memory bounds. Resident memory grows at first (allocator arenas after megabyte-sized strings,
 * JIT, TLS sessions) and levels off, under this ceiling even after 40,000 requests (about 360 MiB);
 * the heap's floor (its lowest sample over the last third of the run, after collections) must stay
 * near where it started: a leak raises the floor.
 */
const RSS_CEILING = 512 * 1024 * 1024;
const HEAP_FLOOR_GROWTH = 32 * 1024 * 1024;

const scenario = ChaosScenario.setUp('fuzz', {
  members: 1,
  quotas: { team: { cpu: '10', memory: '10Gi', pods: '20' } },
});

/** mulberry32: a small seeded generator, so a failing run can be replayed from its seed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof generator>;

const QUANTITIES = [
  '1',
  '100m',
  '0',
  '-1',
  '1.5.5',
  '1e3',
  '1E-3',
  '1e1000000000',
  '1e-1000000000',
  '9'.repeat(5_000),
  `0.${'0'.repeat(5_000)}1`,
  '12xy',
  ' 1',
  '1Ki2',
  '0x10',
  'NaN',
  'Infinity',
  '',
  '1Pi',
  '8Ei',
  '99999999999999999999999E',
  '.5',
  '5.',
  '+1',
  '１',
];
const WEIRD_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  Number.MAX_SAFE_INTEGER,
  [],
  {},
  '',
  'x'.repeat(100_000),
  [[[[[]]]]],
  { '': null },
];

function randomValue(r: Random, depth = 0): unknown {
  switch (r.int(depth > 3 ? 4 : 6)) {
    case 0:
      return r.pick(QUANTITIES);
    case 1:
      return structuredClone(r.pick(WEIRD_VALUES)); // a copy: mutations must not make shared values circular
    case 2:
      return r.int(2) === 0 ? r.int(1_000_000) : -r.next() * 1e6;
    case 3:
      return String.fromCharCode(...Array.from({ length: r.int(40) }, () => r.int(0xd7ff)));
    case 4:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: r.int(4) }, () => [
          r.pick(['cpu', 'pods', 'memory', 'x', '']),
          randomValue(r, depth + 1),
        ]),
      );
  }
}

/** Replaces, deletes or adds a value at a random path of `obj`. */
function mutate(r: Random, obj: unknown): unknown {
  if (obj === null || typeof obj !== 'object' || r.int(4) === 0) return randomValue(r);
  const record = obj as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0 || r.int(6) === 0) {
    record[r.pick(['spec', 'replicas', 'uid', 'kind', 'cpu', 'object', 'x'])] = randomValue(r);
    return obj;
  }
  const key = r.pick(keys);
  if (r.int(5) === 0) delete record[key];
  else record[key] = mutate(r, record[key]);
  return obj;
}

/** A valid binding review for the fuzz namespace (or another), before mutation. */
function baseReview(r: Random, i: number): object {
  const replicas = r.pick([0, 1, 2, 3, 1000, 2 ** 31, -1]);
  const rb = scenario.tenant.binding(`fuzz-${i}`, {
    replicas: Math.max(replicas, 0),
    cpu: r.pick(QUANTITIES),
    cluster: 'member1',
  });
  rb.spec!.replicas = replicas;
  rb.spec!.replicaRequirements!.resourceRequest = { cpu: r.pick(QUANTITIES), memory: r.pick(QUANTITIES) };
  if (r.int(3) === 0) rb.metadata!.namespace = r.pick(['', 'kube-system', 'no-such-namespace', 'Bad_NS']);
  rb.metadata!.uid = `u-${i}`;
  const operation = r.pick(['CREATE', 'UPDATE'] as const);
  const old = operation === 'UPDATE' ? structuredClone(rb) : undefined;
  if (old) old.spec!.replicas = r.pick([0, 1, 5]);
  return bindingReview(operation, rb, { uid: `req-${i}`, oldObject: old, dryRun: r.int(4) === 0 });
}

function quotaReview(r: Random, i: number): object {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `req-${i}`,
      kind: { group: 'quota.karmada.io', version: 'v1alpha1', kind: 'KarmadaQuota' },
      operation: r.pick(['CREATE', 'UPDATE', 'DELETE']),
      namespace: scenario.tenant.namespace,
      name: `q-${i}`,
      object: {
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'KarmadaQuota',
        metadata: { name: `q-${i}`, namespace: scenario.tenant.namespace },
        spec: {
          hard: {
            [r.pick(['cpu', 'pods', 'limits.cpu', 'count/deployments.apps', 'nvidia.com/gpu', 'Bad Key'])]:
              r.pick(QUANTITIES),
          },
          ...(r.int(3) === 0 ? { scopeSelector: randomValue(r) } : {}),
        },
      },
    },
  };
}

interface FuzzCase {
  path: string;
  body: string | Buffer;
  contentType?: string;
  /** The request uid the reply must echo, when the body carried a valid one. */
  uid?: string;
}

function fuzzCase(r: Random, i: number): FuzzCase {
  const path = r.int(4) === 0 ? '/validate/karmadaquotas' : '/validate/resourcebindings';
  const review = (path.endsWith('karmadaquotas') ? quotaReview : baseReview)(r, i) as Record<string, unknown>;
  switch (r.int(12)) {
    case 0: // raw bytes
      return { path, body: Buffer.from(Array.from({ length: r.int(2_000) }, () => r.int(256))) };
    case 1: // truncated JSON
      return { path, body: JSON.stringify(review).slice(0, r.int(200)) };
    case 2: // another content type
      return {
        path,
        body: JSON.stringify(review),
        contentType: r.pick(['text/plain', 'application/yaml', '']),
      };
    case 3: // deeply nested
      return { path, body: `${'['.repeat(20_000)}${']'.repeat(20_000)}` };
    case 4: // wrong kind on the endpoint
      return {
        path: path.endsWith('karmadaquotas') ? '/validate/resourcebindings' : '/validate/karmadaquotas',
        body: JSON.stringify(review),
        uid: `req-${i}`,
      };
    case 5: // unmutated: a valid review (valid or invalid quantities inside)
      return { path, body: JSON.stringify(review), uid: `req-${i}` };
    default: {
      // 1 to 4 random mutations, mostly inside the object (past the envelope checks), else anywhere
      let mutated: unknown = review;
      const request = review.request as Record<string, unknown>;
      for (let m = 0, n = 1 + r.int(4); m < n; m++) {
        const inside = r.int(10) < 7 ? r.pick(['object', 'oldObject']) : undefined;
        if (inside) request[inside] = mutate(r, request[inside]);
        else mutated = mutate(r, mutated);
      }
      const sent = (mutated as { request?: { uid?: unknown } } | null)?.request;
      const uid = typeof sent?.uid === 'string' && sent.uid !== '' ? sent.uid : undefined;
      return { path, body: JSON.stringify(mutated) ?? 'null', uid };
    }
  }
}

/** Why a reply is not acceptable, or undefined when it is. */
function problem(c: FuzzCase, reply: WebhookReply): string | undefined {
  if (reply.status >= 400 && reply.status < 500) return undefined;
  if (reply.status !== 200) return `HTTP ${reply.status} ${reply.error ?? reply.body.slice(0, 300)}`;
  const response = admissionResponse(reply);
  if (!response)
    return `a 200 that is not a well-formed AdmissionReview response: ${reply.body.slice(0, 300)}`;
  if (c.uid !== undefined && response.uid !== c.uid) return `answered uid ${response.uid} for ${c.uid}`;
  return undefined;
}

test(`${REQUESTS} fuzzed AdmissionReviews: well-formed answers or 4xx, no crash, bounded memory`, async () => {
  process.stderr.write(`[fuzz] seed ${SEED} (replay: CHAOS_FUZZ_SEED=${SEED}), ${REQUESTS} requests\n`);
  const r = generator(SEED);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const pid = scenario.service('webhook').process.pid;
  const baseline = await processFigures(scenario.service('webhook').url);
  let peakRss = baseline.rssBytes;
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  const series: ({ sent: number } & ProcessFigures)[] = [];
  const cases = Array.from({ length: REQUESTS }, (_, i) => fuzzCase(r, i));
  let nextCase = 0;
  const worker = async () => {
    while (nextCase < cases.length) {
      const i = nextCase++;
      const c = cases[i]!;
      const reply = await postToWebhook(scenario.service('webhook'), c.path, c.body, {
        agent,
        contentType: c.contentType,
      });
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      const why = problem(c, reply);
      if (why) problems.push(`case ${i}: ${why}`);
      if (i % SAMPLE_EVERY === 0) {
        const figures = await processFigures(scenario.service('webhook').url);
        peakRss = Math.max(peakRss, figures.rssBytes);
        series.push({ sent: i, ...figures });
      }
    }
  };
  // Oversized bodies alongside, declared and chunked: above the body limit (7 MiB) the answer is 413.
  const oversized = Promise.all(
    [true, false].map((declared) =>
      postOversized(scenario.service('webhook'), '/validate/resourcebindings', 8 * 1024 * 1024, declared),
    ),
  );
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  agent.destroy();

  const after = await processFigures(scenario.service('webhook').url);
  peakRss = Math.max(peakRss, after.rssBytes);
  process.stderr.write(
    `[fuzz] replies by HTTP status ${JSON.stringify(Object.fromEntries(statuses))}; RSS ${mib(baseline.rssBytes)} -> ` +
      `${mib(after.rssBytes)} (peak ${mib(peakRss)}), heap ${mib(baseline.heapUsedBytes)} -> ${mib(after.heapUsedBytes)}\n` +
      `[fuzz] requests sent: RSS, heap: ${series.map((f) => `${f.sent}: ${mib(f.rssBytes)}, ${mib(f.heapUsedBytes)}`).join('; ')}\n`,
  );
  expect(problems.slice(0, 20)).toEqual([]);
  // Every case reached the handler: refused for its client certificate, it would pass as a 4xx.
  expect([401, 403].filter((status) => statuses.has(status))).toEqual([]);
  expect((await oversized).map((reply) => reply.status)).toEqual([413, 413]);
  expect(scenario.service('webhook').process.running).toBe(true);
  expect(scenario.service('webhook').process.pid).toBe(pid);
  expect((await get(`${scenario.service('webhook').url}/healthz`)).status).toBe(200);
  expect(peakRss).toBeLessThan(RSS_CEILING);
  const heapFloor = Math.min(...series.slice(-Math.ceil(series.length / 3)).map((f) => f.heapUsedBytes));
  expect(heapFloor - baseline.heapUsedBytes).toBeLessThan(HEAP_FLOOR_GROWTH);

  // What the fuzz admitted were bindings that never persisted: their reservations expire.
  await sleep(1_000);
  await expectRecountMatches(scenario.tenant, 120_000);
  expect(scenario.recorder.violations()).toEqual([]);
}, 900_000);
