/**
 * The aggregator-scale scenario's own process (run with --expose-gc so heap is measured after a
 * full GC, apart from the bench's own heap): synthetic pod watch events for N pods through the
 * aggregator's accounting core, exactly as MemberWatcher feeds it (podUsage with the
 * ReplicaSet -> Deployment lookup, then UsageLedger.upsertPod; deletePod for DELETED).
 * Progress goes to stderr, the figures as one JSON line to stdout.
 */
import { performance } from 'node:perf_hooks';
import type { V1Pod } from '@kubernetes/client-node';
import { Quantity } from '#quantity';
import { podUsage, UsageLedger } from '#usage';

const NAMESPACES = 100;
const DEPLOYMENTS_PER_NAMESPACE = 100;
const CHUNK = 10_000;
const REQUESTS = [
  { cpu: '100m', memory: '128Mi', milliCpu: 100n },
  { cpu: '250m', memory: '256Mi', milliCpu: 250n },
  { cpu: '500m', memory: '512Mi', milliCpu: 500n },
  { cpu: '1', memory: '1Gi', milliCpu: 1000n },
];

export interface AggregatorScaleFigures {
  pods: number;
  /** Every event (adds, status updates, deletes) over the time the core spent on them. */
  eventsPerSec: number;
  addEventsPerSec: number;
  updateEventsPerSec: number;
  deleteEventsPerSec: number;
  /** The same, with the JSON parsing of the watch stream counted in. */
  eventsPerSecWithParse: number;
  /** Heap (and typed-array memory) held per 100k tracked pods, after a full GC. */
  heapBytesPer100kPods: number;
  /** What 1,000,000 pods would hold at that rate. */
  heapBytesFor1MPods: number;
  problems: string[];
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with node --expose-gc');
  collect();
  collect();
};
const heldBytes = (): number => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

const namespaceOf = (i: number) => `team-${i % NAMESPACES}`;
const deploymentOf = (i: number) => Math.floor(i / NAMESPACES) % DEPLOYMENTS_PER_NAMESPACE;
const requestOf = (i: number) => REQUESTS[deploymentOf(i) % REQUESTS.length]!;
const uidOf = (i: number) => `6f1c2d3e-4b5a-4c6d-8e7f-${i.toString(16).padStart(12, '0')}`;

/** Pod i as the watch delivers it (JSON text), ReplicaSet-owned, Pending. */
function podJson(i: number, resourceVersion: number): string {
  const deployment = `web-${deploymentOf(i)}`;
  const rs = `${deployment}-7d4b9c8f5`;
  const { cpu, memory } = requestOf(i);
  return `{"metadata":{"name":"${rs}-${i.toString(36)}","generateName":"${rs}-","namespace":"${namespaceOf(i)}","uid":"${uidOf(i)}","resourceVersion":"${resourceVersion}","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"${deployment}","pod-template-hash":"7d4b9c8f5"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"${rs}","uid":"0b6c1f6e-1d2a-4c3b-9a8e-7f6d5c4b3a21","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"${cpu}","memory":"${memory}"}},"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","schedulerName":"default-scheduler","priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Unschedulable","message":"no nodes available to schedule pods"}],"qosClass":"Burstable"}}`;
}

/** Feeds pods [from, to) in chunks: parse (timed apart), then `handle` each (timed). */
function feed(
  from: number,
  to: number,
  resourceVersion: number,
  handle: (pod: V1Pod) => void,
): { parseMs: number; handleMs: number } {
  let parseMs = 0;
  let handleMs = 0;
  for (let start = from; start < to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK);
    const parts: string[] = [];
    for (let i = start; i < end; i++) parts.push(podJson(i, resourceVersion));
    const parsing = performance.now();
    const pods = JSON.parse(`[${parts.join(',')}]`) as V1Pod[];
    const handling = performance.now();
    for (const pod of pods) handle(pod);
    handleMs += performance.now() - handling;
    parseMs += handling - parsing;
  }
  return { parseMs, handleMs };
}

/** What the ledger must hold for pods [from, to): pods and millicores per namespace. */
function expectedTotals(from: number, to: number): Map<string, { pods: number; milliCpu: bigint }> {
  const totals = new Map<string, { pods: number; milliCpu: bigint }>();
  for (let i = from; i < to; i++) {
    const t = totals.get(namespaceOf(i)) ?? { pods: 0, milliCpu: 0n };
    t.pods++;
    t.milliCpu += requestOf(i).milliCpu;
    totals.set(namespaceOf(i), t);
  }
  return totals;
}

function checkTotals(ledger: UsageLedger, from: number, to: number, when: string, problems: string[]): void {
  const expected = expectedTotals(from, to);
  if (ledger.trackedPods() !== to - from)
    problems.push(`${when}: ${ledger.trackedPods()} pods tracked, ${to - from} expected`);
  for (const [namespace, t] of expected) {
    const used = ledger.snapshot(namespace).used;
    const is = (key: string, want: Quantity) =>
      used[key] !== undefined && Quantity.parse(used[key]).equals(want);
    const cpu = Quantity.fromMilli(t.milliCpu);
    if (!is('pods', Quantity.fromInt(BigInt(t.pods))) || !is('cpu', cpu) || !is('requests.cpu', cpu)) {
      const want = { pods: t.pods, cpu: cpu.toCanonicalString() };
      problems.push(`${when}: ${namespace} used ${JSON.stringify(used)}, expected ${JSON.stringify(want)}`);
    }
  }
  const deployments = ledger.snapshot(namespaceOf(from)).workloads;
  if (deployments.some((w) => w.kind !== 'Deployment'))
    problems.push(`${when}: pods not attributed to their Deployment: ${JSON.stringify(deployments[0])}`);
}

function run(pods: number): AggregatorScaleFigures {
  const log = (message: string) => process.stderr.write(`${message}\n`);
  const problems: string[] = [];
  const ledger = new UsageLedger();
  // The ReplicaSet -> Deployment lookup MemberWatcher keeps from its ReplicaSet watch.
  const owners = new Map<string, string>();
  for (let n = 0; n < NAMESPACES; n++)
    for (let d = 0; d < DEPLOYMENTS_PER_NAMESPACE; d++)
      owners.set(`team-${n}/web-${d}-7d4b9c8f5`, `web-${d}`);
  const owner = (rs: string, namespace: string) => owners.get(`${namespace}/${rs}`);
  const now = new Date();
  const upsert = (pod: V1Pod) => {
    ledger.upsertPod(pod.metadata!.namespace!, pod.metadata!.uid!, podUsage(pod, now, owner));
  };

  gc();
  const baseline = heldBytes();
  log(`aggregator-scale: ${pods} pods ADDED`);
  const add = feed(0, pods, 1, upsert);
  gc();
  const held = heldBytes() - baseline;
  checkTotals(ledger, 0, pods, 'after the adds', problems);

  const half = Math.floor(pods / 2);
  log(`aggregator-scale: ${half} status updates (MODIFIED), ${pods - half} DELETED`);
  const update = feed(0, half, 2, upsert);
  const deleting = performance.now();
  for (let i = half; i < pods; i++) ledger.deletePod(namespaceOf(i), uidOf(i));
  const deleteMs = performance.now() - deleting;
  checkTotals(ledger, 0, half, 'after the deletes', problems);

  const perSec = (events: number, ms: number) => Math.round(events / (ms / 1000));
  const events = pods + half + (pods - half);
  const coreMs = add.handleMs + update.handleMs + deleteMs;
  const perPod = held / pods;
  return {
    pods,
    eventsPerSec: perSec(events, coreMs),
    addEventsPerSec: perSec(pods, add.handleMs),
    updateEventsPerSec: perSec(half, update.handleMs),
    deleteEventsPerSec: perSec(pods - half, deleteMs),
    eventsPerSecWithParse: perSec(events, coreMs + add.parseMs + update.parseMs),
    heapBytesPer100kPods: Math.round(perPod * 100_000),
    heapBytesFor1MPods: Math.round(perPod * 1_000_000),
    problems: problems.slice(0, 5),
  };
}

const pods = Number(process.argv[2]);
if (!Number.isInteger(pods) || pods < CHUNK) {
  process.stderr.write(
    `usage: node --expose-gc aggregator-scale-child.js PODS (a whole number >= ${CHUNK})\n`,
  );
  process.exit(2);
}
process.stdout.write(`${JSON.stringify(run(pods))}\n`);
