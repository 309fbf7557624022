import type { AggregatorMembersFigures } from './aggregator-members.js';
import type { AggregatorScaleFigures } from './aggregator-scale-child.js';
import type { BenchSizes } from './context.js';
import type { ConvergenceFigures } from './convergence.js';
import type { BenchProfile } from './cpu-profile.js';
import type { EndToEndFigures } from './end-to-end.js';
import type { BenchAdmissionMode } from './host.js';
import type { HotQuotaFigures, HotQuotaModeFigures } from './hot-quota.js';
import type { Machine } from './machine.js';
import type { ReplicaComparison, ReplicasFigures } from './replicas.js';
import type { ResyncFigures } from './resync.js';
import type { StatusWriteFigures } from './status-writes.js';
import { ratio } from './stats.js';
import type { UserLatencyFigures, UserLatencyRun } from './user-latency.js';
import type { OwnerAloneRun, WebhookAloneFigures, WebhookAloneRun } from './webhook-alone.js';

/** A scenario's figures, or why it produced none, or both when its correctness check failed. */
export type Outcome<T> = T | { error: string } | (T & { error: string });

export interface BenchReport {
  machine: Machine;
  /** The code measured: `git describe --always --dirty` where the bench started. */
  commit: string;
  /** A digest of the code measured (describeCode): equal for two runs of the same code. */
  code: string;
  mode: 'quick' | 'full';
  /** `--admission-mode`: the protocol of the product's webhooks (absent in runs before it: batched). */
  admissionMode?: BenchAdmissionMode;
  /** With `--only`: the scenarios it ran; absent when every scenario ran. */
  only?: string[];
  startedAt: string;
  durationSeconds: number;
  sizes: BenchSizes;
  statusWrites?: Outcome<StatusWriteFigures>;
  hotQuota?: Outcome<HotQuotaFigures>;
  webhookAlone?: Outcome<WebhookAloneFigures>;
  replicas?: Outcome<ReplicasFigures>;
  endToEnd?: Outcome<EndToEndFigures>;
  convergence?: Outcome<ConvergenceFigures>;
  aggregatorScale?: Outcome<AggregatorScaleFigures>;
  resync?: Outcome<ResyncFigures>;
  aggregatorMembers?: Outcome<AggregatorMembersFigures>;
  userLatency?: Outcome<UserLatencyFigures>;
  /** With `--profile`: where the services' and the Karmada API server's CPU went. */
  profile?: BenchProfile;
  /** Each figure docs/development/bench.md#targets sets a target for, against it (reported, never asserted). */
  targets: TargetCheck[];
  /** Correctness conditions that failed and scenarios that could not run: the exit code is 1. */
  failures: string[];
}

export interface TargetCheck {
  scenario: string;
  figure: string;
  value: number;
  target: string;
  met: boolean;
}

export interface Row {
  scenario: string;
  figure: string;
  value: string;
  target: string;
  /** 'met', 'MISSED', or '' for figures without a target. */
  verdict: string;
}

const GiB = 2 ** 30;
const MiB = 2 ** 20;

export const count = (n: number): string =>
  Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
export const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : 'n/a');
export const bytes = (n: number): string =>
  n >= GiB
    ? `${(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${(n / MiB).toFixed(1)} MiB`
      : `${(n / 1024).toFixed(1)} KiB`;
const times = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a');
const latencies = (f: { p50Ms: number; p95Ms?: number; p99Ms: number }) =>
  [f.p50Ms, f.p95Ms, f.p99Ms]
    .filter((v): v is number => v !== undefined)
    .map((v) => v.toFixed(1))
    .join(' / ') + (f.p95Ms === undefined ? ' ms (p50 / p99)' : ' ms (p50 / p95 / p99)');

/** The figures of an outcome (`probe`: a field every set of figures has), if it has them. */
export const figuresOf = <T extends object>(
  outcome: Outcome<T> | undefined,
  probe: keyof T,
): T | undefined => (outcome !== undefined && probe in outcome ? (outcome as T) : undefined);
const errorOf = (outcome: object | undefined): string | undefined =>
  outcome !== undefined && 'error' in outcome ? String(outcome.error) : undefined;

/** The targets docs/development/bench.md#targets states, checked against the figures the run produced. */
export function targetChecks(
  report: Pick<
    BenchReport,
    | 'hotQuota'
    | 'webhookAlone'
    | 'replicas'
    | 'endToEnd'
    | 'convergence'
    | 'aggregatorScale'
    | 'resync'
    | 'userLatency'
  >,
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const check = (scenario: string, figure: string, value: number, target: string, met: boolean) =>
    checks.push({ scenario, figure, value, target, met });
  const hot = figuresOf(report.hotQuota, 'batched');
  if (hot) {
    const frq = hot.karmadaFrq;
    const gain = ratio(hot.batched.admissionsPerSec, frq.admissionsPerSec);
    check('hot-quota', 'batched admissions/s over Karmada FRQ', gain, ">= 10x Karmada's FRQ", gain >= 10);
    check(
      'hot-quota',
      'batched p99 latency (ms)',
      hot.batched.p99Ms,
      "below Karmada's FRQ",
      hot.batched.p99Ms < frq.p99Ms,
    );
    check('hot-quota', 'batched failed closed (5xx)', hot.batched.errors, '0', hot.batched.errors === 0);
    if (hot.owner) {
      const ownerGain = ratio(hot.owner.admissionsPerSec, frq.admissionsPerSec);
      check(
        'hot-quota',
        'owner (experimental) admissions/s over Karmada FRQ',
        ownerGain,
        ">= 10x Karmada's FRQ",
        ownerGain >= 10,
      );
      check(
        'hot-quota',
        'owner (experimental) p99 latency (ms)',
        hot.owner.p99Ms,
        "below Karmada's FRQ",
        hot.owner.p99Ms < frq.p99Ms,
      );
    }
    for (const [mode, f] of [
      ['batched', hot.batched],
      ['cas-per-admission', hot.casPerAdmission],
      ...(hot.owner ? [['owner (experimental)', hot.owner] as const] : []),
      ...(hot.clusterQuota ? [[CLUSTER_QUOTA_RUN, hot.clusterQuota] as const] : []),
    ] as const)
      check('hot-quota', `${mode} over-admitted keys`, f.overAdmitted, '0', f.overAdmitted === 0);
  }
  const aloneTargets = (prefix: string, f: { admissionsPerSec: number; p99Ms: number } | undefined) => {
    if (!f) return;
    check(
      'webhook-alone',
      `${prefix}admissions/s`,
      f.admissionsPerSec,
      '>= 2,000',
      f.admissionsPerSec >= 2_000,
    );
    check('webhook-alone', `${prefix}p99 latency (ms)`, f.p99Ms, '<= 25 ms', f.p99Ms <= 25);
  };
  aloneTargets('', figuresOf(report.webhookAlone, 'oneQuota'));
  aloneTargets('owner (experimental) ', figuresOf(report.webhookAlone, 'owner'));
  const replicas = figuresOf(report.replicas, 'hotQuota');
  if (replicas)
    for (const [set, comparison] of replicaSets(replicas)) {
      const gain = replicaGain(comparison);
      check('replicas', `${set}: admissions/s 2 / 1 replicas`, gain, '>= 1.00x', gain >= 1);
    }
  const e2e = figuresOf(report.endToEnd, 'withWebhook');
  if (e2e) {
    check('end-to-end', 'p99 ratio', e2e.p99Ratio, '<= 1.5x', e2e.p99Ratio <= 1.5);
    const closed = e2e.withWebhook.failedClosed;
    check('end-to-end', 'failed closed (5xx)', closed, '0', closed === 0);
  }
  const convergence = figuresOf(report.convergence, 'p99Ms');
  if (convergence)
    check('convergence', 'p99 delay (ms)', convergence.p99Ms, '<= 500 ms', convergence.p99Ms <= 500);
  const aggregator = figuresOf(report.aggregatorScale, 'eventsPerSec');
  if (aggregator) {
    check(
      'aggregator-scale',
      'events/s',
      aggregator.eventsPerSec,
      '>= 50,000',
      aggregator.eventsPerSec >= 50_000,
    );
    check(
      'aggregator-scale',
      'heap for 1M pods (bytes)',
      aggregator.heapBytesFor1MPods,
      '<= 1 GiB',
      aggregator.heapBytesFor1MPods <= GiB,
    );
  }
  const resync = figuresOf(report.resync, 'seconds');
  if (resync) check('resync', 'full resync (s)', resync.seconds, '<= 1 s', resync.seconds <= 1);
  const user = figuresOf(report.userLatency, 'burst');
  if (user)
    for (const [name, run] of userLatencyRuns(user)) {
      check(
        'user-latency',
        `${name}: p99 ratio ours / no quota`,
        run.p99RatioOurs,
        '<= 1.1x',
        run.p99RatioOurs <= 1.1,
      );
      check(
        'user-latency',
        `${name}: p99 ours (ms)`,
        run.ours.p99Ms,
        "below Karmada's FRQ",
        run.ours.p99Ms < run.karmadaFrq.p99Ms,
      );
    }
  return checks;
}

/** Every figure worth reading, in the order the scenarios ran, with its target when it has one. */
export function reportRows(report: BenchReport): Row[] {
  const rows: Row[] = [];
  const verdictOf = (scenario: string, figure: string) => {
    const t = report.targets.find((c) => c.scenario === scenario && c.figure === figure);
    return t ? { target: t.target, verdict: t.met ? 'met' : 'MISSED' } : { target: '', verdict: '' };
  };
  const row = (scenario: string, figure: string, value: string, targetOf?: string) =>
    rows.push({
      scenario,
      figure,
      value,
      ...(targetOf ? verdictOf(scenario, targetOf) : { target: '', verdict: '' }),
    });
  const error = (scenario: string, outcome: object | undefined) => {
    const message = errorOf(outcome);
    if (message !== undefined)
      rows.push({
        scenario,
        figure: 'FAILED',
        value: message.split('\n')[0]!.slice(0, 100),
        target: '',
        verdict: '',
      });
  };

  error('status-writes', report.statusWrites);
  for (const run of figuresOf(report.statusWrites, 'runs')?.runs ?? []) {
    const of = `status with ${run.entries} reservation entries (${bytes(run.bodyBytes)})`;
    row('status-writes', `${of}: writes/s`, count(run.writesPerSec));
    row('status-writes', `${of}: API server CPU per write`, ms(run.apiServerCpuMsPerWrite));
  }
  error('hot-quota', report.hotQuota);
  const hot = figuresOf(report.hotQuota, 'batched');
  if (hot) {
    const mode = (name: string, f: HotQuotaModeFigures, withTargets: boolean) => {
      row('hot-quota', `${name}: admissions/s`, count(f.admissionsPerSec));
      row(
        'hot-quota',
        `${name}: latency`,
        latencies(f),
        withTargets ? 'batched p99 latency (ms)' : undefined,
      );
      row(
        'hot-quota',
        `${name}: allowed / denied / errors`,
        `${count(f.allowed)} / ${count(f.denied)} / ${count(f.errors)}`,
        withTargets ? 'batched failed closed (5xx)' : undefined,
      );
      row('hot-quota', `${name}: over-admitted keys`, String(f.overAdmitted), `${name} over-admitted keys`);
      row('hot-quota', `${name}: admissions per status write`, f.meanBatchSize.toFixed(1));
      row(
        'hot-quota',
        `${name}: refused on arrival (no wait for the batch in flight)`,
        count(f.refusedOnArrival),
      );
      row('hot-quota', `${name}: mean time inside the webhook`, `${f.webhookMeanMs} ms`);
    };
    mode('batched', hot.batched, true);
    mode('cas-per-admission', hot.casPerAdmission, false);
    if (hot.owner) {
      mode('owner (experimental)', hot.owner, false);
      row(
        'hot-quota',
        'ours (owner, experimental) / Karmada FRQ admissions/s',
        times(ratio(hot.owner.admissionsPerSec, hot.karmadaFrq.admissionsPerSec)),
        'owner (experimental) admissions/s over Karmada FRQ',
      );
    }
    if (hot.clusterQuota) {
      mode(CLUSTER_QUOTA_RUN, hot.clusterQuota, false);
      row(
        'hot-quota',
        `${CLUSTER_QUOTA_RUN}: status write conflicts`,
        count(hot.clusterQuota.statusConflicts),
      );
    }
    row('hot-quota', 'speedup (batched / cas-per-admission)', times(hot.speedup));
    const frq = hot.karmadaFrq;
    const karmada = `Karmada FRQ (${frq.karmadaVersion})`;
    row('hot-quota', `${karmada}: admissions/s`, count(frq.admissionsPerSec));
    row('hot-quota', `${karmada}: latency`, latencies(frq));
    row(
      'hot-quota',
      `${karmada}: allowed / denied / errors`,
      `${count(frq.allowed)} / ${count(frq.denied)} / ${count(frq.errors)}`,
    );
    row(
      'hot-quota',
      `${karmada}: over-admitted keys`,
      frq.overAdmittedKeys.length ? `${frq.overAdmitted} (${frq.overAdmittedKeys.join(', ')})` : '0',
    );
    row('hot-quota', `${karmada}: status drift keys`, frq.statusDrift.join(', ') || 'none');
    row(
      'hot-quota',
      'ours (batched) / Karmada FRQ admissions/s',
      times(ratio(hot.batched.admissionsPerSec, frq.admissionsPerSec)),
      'batched admissions/s over Karmada FRQ',
    );
  }
  error('webhook-alone', report.webhookAlone);
  const alone = figuresOf(report.webhookAlone, 'oneQuota');
  if (alone) {
    const clients = `${alone.clients} clients, no stores or reconciler`;
    row('webhook-alone', `${clients}: admissions/s`, count(alone.admissionsPerSec), 'admissions/s');
    row('webhook-alone', `${clients}: latency`, latencies(alone), 'p99 latency (ms)');
    const part = (name: string, f: WebhookAloneRun) => {
      row('webhook-alone', `${name}: admissions/s`, count(f.admissionsPerSec));
      row('webhook-alone', `${name}: latency`, latencies(f));
      row(
        'webhook-alone',
        `${name}: allowed / denied / errors`,
        `${count(f.allowed)} / ${count(f.denied)} / ${count(f.errors)}`,
      );
      row('webhook-alone', `${name}: admissions per status write`, f.meanBatchSize.toFixed(1));
      if (f.cpuUsPerReview !== undefined)
        row('webhook-alone', `${name}: webhook CPU per review`, `${count(f.cpuUsPerReview)} µs`);
    };
    part('one quota', alone.oneQuota);
    part(`${alone.manyQuotas.quotas} quotas`, alone.manyQuotas);
    const ownerRows = (name: string, run: OwnerAloneRun, target?: string) => {
      row(
        'webhook-alone',
        `${name}: admissions/s`,
        count(run.admissionsPerSec),
        target && `${target} admissions/s`,
      );
      row('webhook-alone', `${name}: latency`, latencies(run), target && `${target} p99 latency (ms)`);
      row(
        'webhook-alone',
        `${name}: allowed / denied / errors`,
        `${count(run.allowed)} / ${count(run.denied)} / ${count(run.errors)}`,
      );
      row('webhook-alone', `${name}: webhook CPU per review`, `${count(run.cpuUsPerReview)} µs`);
    };
    if (alone.owner) ownerRows('owner (experimental), one quota', alone.owner, 'owner (experimental)');
    // Both processes' CPU: the forwarder's and the owner's.
    if (alone.forwarded) ownerRows('owner (experimental), forwarded by a second replica', alone.forwarded);
  }
  error('replicas', report.replicas);
  const replicas = figuresOf(report.replicas, 'hotQuota');
  if (replicas)
    for (const [set, { one, two }] of replicaSets(replicas)) {
      // One replica's figure, then two replicas': ' / ' between plain numbers, '; ' between lists.
      const both = (f: (r: HotQuotaModeFigures) => string, between = ' / ') => `${f(one)}${between}${f(two)}`;
      row(
        'replicas',
        `${set}: admissions/s, 1 / 2 replicas`,
        `${both((r) => count(r.admissionsPerSec))} (${times(replicaGain({ one, two }))})`,
        `${set}: admissions/s 2 / 1 replicas`,
      );
      row(
        'replicas',
        `${set}: p50 / p99, 1; 2 replicas`,
        both((r) => `${r.p50Ms.toFixed(1)} / ${ms(r.p99Ms)}`, '; '),
      );
      row(
        'replicas',
        `${set}: status conflicts per 100 admissions, 1 / 2 replicas`,
        both((r) => conflictsPer100(r).toFixed(1)),
      );
      row(
        'replicas',
        `${set}: allowed / denied / errors, 1; 2 replicas`,
        both((r) => `${count(r.allowed)} / ${count(r.denied)} / ${count(r.errors)}`, '; '),
      );
    }
  error('end-to-end', report.endToEnd);
  const e2e = figuresOf(report.endToEnd, 'withWebhook');
  if (e2e) {
    row('end-to-end', 'create latency with the webhook', latencies(e2e.withWebhook));
    row('end-to-end', 'create latency without the webhook', latencies(e2e.withoutWebhook));
    row('end-to-end', 'p99 ratio (with / without)', times(e2e.p99Ratio), 'p99 ratio');
    row(
      'end-to-end',
      'Karmada API server CPU per create (with / without)',
      `${ms(e2e.withWebhook.apiServerCpuMsPerCreate)} / ${ms(e2e.withoutWebhook.apiServerCpuMsPerCreate)}`,
    );
    if (e2e.inWebhook)
      row(
        'end-to-end',
        'time in the webhook per create (API server metrics)',
        `${ms(e2e.inWebhook.meanMs)} of ${ms(e2e.withWebhook.meanMs)} mean (${Math.round(e2e.inWebhook.shareOfCreate * 100)} %)`,
      );
    row(
      'end-to-end',
      'KarmadaQuota status writes per create (conflicts)',
      `${e2e.quotaStatusWrites.perCreate.toFixed(2)} (${e2e.quotaStatusWrites.conflictsPerCreate.toFixed(2)})`,
    );
    row(
      'end-to-end',
      'failed closed with the webhook (Karmada API server late)',
      count(e2e.withWebhook.failedClosed),
      'failed closed (5xx)',
    );
    row('end-to-end', 'errors (with / without)', `${e2e.withWebhook.errors} / ${e2e.withoutWebhook.errors}`);
  }
  error('convergence', report.convergence);
  const convergence = figuresOf(report.convergence, 'p99Ms');
  if (convergence) {
    row(
      'convergence',
      `delay to status.used (${count(convergence.samples)} changes)`,
      latencies(convergence),
      'p99 delay (ms)',
    );
  }
  error('aggregator-scale', report.aggregatorScale);
  const aggregator = figuresOf(report.aggregatorScale, 'eventsPerSec');
  if (aggregator) {
    row(
      'aggregator-scale',
      `events/s (${count(aggregator.pods)} pods)`,
      count(aggregator.eventsPerSec),
      'events/s',
    );
    row('aggregator-scale', 'events/s with JSON parsing', count(aggregator.eventsPerSecWithParse));
    row('aggregator-scale', 'heap per 100k pods', bytes(aggregator.heapBytesPer100kPods));
    row(
      'aggregator-scale',
      'heap for 1M pods',
      bytes(aggregator.heapBytesFor1MPods),
      'heap for 1M pods (bytes)',
    );
  }
  error('resync', report.resync);
  const resync = figuresOf(report.resync, 'seconds');
  if (resync) {
    row(
      'resync',
      `full resync, ${count(resync.bindings)} bindings / ${resync.quotas} quotas`,
      `${resync.seconds.toFixed(2)} s`,
      'full resync (s)',
    );
    row('resync', 'of which computeQuotaStatus', `${resync.computeSeconds.toFixed(3)} s`);
  }
  error('aggregator-members', report.aggregatorMembers);
  const members = figuresOf(report.aggregatorMembers, 'publishDelay');
  if (members) {
    const shared = `${members.members} members, ${members.replicas} replicas`;
    row(
      'aggregator-members',
      `${shared}: all published after`,
      `${members.allPublishedSeconds.toFixed(1)} s`,
    );
    row(
      'aggregator-members',
      `${shared}: fair shares after (Lease ${members.leaseDurationSeconds} s)`,
      `${members.fairSplitSeconds.toFixed(1)} s`,
    );
    row('aggregator-members', 'pod made -> usage published', latencies(members.publishDelay));
    row(
      'aggregator-members',
      'one replica stopped: the other holds all after',
      `${members.takeAllSeconds.toFixed(1)} s`,
    );
    row('aggregator-members', 'pod made as it stopped -> published', latencies(members.handoverDelay));
  }
  error('user-latency', report.userLatency);
  const user = figuresOf(report.userLatency, 'burst');
  if (user)
    for (const [name, run] of userLatencyRuns(user)) {
      const pods = `${name} (${run.deployments} Deployments x ${user.replicasPerDeployment} pods)`;
      row('user-latency', `${pods}: no quota`, latencies(run.noQuota));
      row('user-latency', `${name}: ours`, latencies(run.ours), `${name}: p99 ours (ms)`);
      row('user-latency', `${name}: Karmada FRQ (${user.karmadaVersion})`, latencies(run.karmadaFrq));
      row(
        'user-latency',
        `${name}: p99 ratio ours / no quota`,
        times(run.p99RatioOurs),
        `${name}: p99 ratio ours / no quota`,
      );
      row('user-latency', `${name}: p99 ratio Karmada FRQ / no quota`, times(run.p99RatioKarmadaFrq));
    }
  return rows;
}

/** The hot-quota run on one ClusterKarmadaQuota over two namespaces, as the report names it. */
const CLUSTER_QUOTA_RUN = 'one ClusterKarmadaQuota over 2 namespaces (batched)';

/** The replicas scenario's quota sets by the names the report gives them. */
const replicaSets = (f: ReplicasFigures): [string, ReplicaComparison][] => [
  ['one quota', f.hotQuota],
  [`${f.namespaces} quotas`, f.manyQuotas],
];

/** Admissions/s with two replicas over those with one. */
const replicaGain = ({ one, two }: ReplicaComparison): number =>
  ratio(two.admissionsPerSec, one.admissionsPerSec);

/** Status writes that met a conflict, per 100 requests answered. */
const conflictsPer100 = (f: HotQuotaModeFigures): number =>
  f.requests === 0 ? 0 : (f.statusConflicts / f.requests) * 100;

/** The user-latency runs by the names the report gives them. */
const userLatencyRuns = (f: UserLatencyFigures): [string, UserLatencyRun][] => [
  ['one at a time', f],
  ['burst', f.burst],
];

const COLUMNS: [keyof Row, string][] = [
  ['scenario', 'scenario'],
  ['figure', 'figure'],
  ['value', 'value'],
  ['target', 'target'],
  ['verdict', ''],
];

/** The rows as a plain-text table with aligned columns, for the terminal. */
export function renderTable(rows: readonly Row[]): string {
  const widths = COLUMNS.map(([key, title]) => Math.max(title.length, ...rows.map((r) => r[key].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [
    line(COLUMNS.map(([, title]) => title)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(COLUMNS.map(([key]) => r[key]))),
  ].join('\n');
}

/** The figures for docs/development/bench.md#latest-figures: the machine, then the rows as a Markdown table. */
export function renderMarkdown(report: BenchReport, rows: readonly Row[]): string {
  const m = report.machine;
  const escape = (s: string) => s.replaceAll('|', '\\|');
  const flags = [
    ...(report.mode === 'quick' ? ['--quick'] : []),
    ...(report.admissionMode === 'owner' ? ['--admission-mode owner'] : []),
  ];
  return [
    `Measured ${report.startedAt.slice(0, 10)} with \`npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}\` on ${m.cpus} CPUs ` +
      `(${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, Kubernetes ${m.kubernetes}, etcd ${m.etcd}; ` +
      `load average ${m.loadAverage} at the start.`,
    '',
    '| scenario | figure | value | target | |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${[r.scenario, r.figure, r.value, r.target, r.verdict].map(escape).join(' | ')} |`),
  ].join('\n');
}

/**
 * README's Performance summary: the headline figures of a full run beside Karmada's and their
 * targets, as a Markdown table (`npm run bench:publish` writes it; docs.spec checks README shows it).
 */
export function renderReadmeSummary(report: BenchReport): string {
  const hot = figuresOf(report.hotQuota, 'batched');
  const owner = report.admissionMode === 'owner';
  // A run in owner mode headlines the owner's parts of hot-quota and webhook-alone.
  const ours = hot && (owner ? hot.owner : hot.batched);
  const aloneFigures = figuresOf(report.webhookAlone, 'oneQuota');
  const alone = owner ? aloneFigures?.owner : aloneFigures;
  const e2e = figuresOf(report.endToEnd, 'withWebhook');
  const convergence = figuresOf(report.convergence, 'p99Ms');
  const resync = figuresOf(report.resync, 'seconds');
  const user = figuresOf(report.userLatency, 'burst');
  const perSec = (f: { admissionsPerSec: number; p99Ms: number }) =>
    `${count(f.admissionsPerSec)}, ${Math.round(f.p99Ms)} ms`;
  const oneDigit = (n: number) => `${n.toFixed(1)}x`;
  const missing = 'not measured';
  const sizes = report.sizes;
  const rows: [string, string, string, string][] = [
    [
      `${sizes.hotQuotaClients} clients, one quota: requests/s, p99`,
      ours ? perSec(ours) : missing,
      hot ? perSec(hot.karmadaFrq) : '',
      '10x FRQ',
    ],
    [
      'same load: admitted / failed closed / status exact',
      ours ? `${count(ours.allowed)} / ${count(ours.errors)} / yes` : missing,
      hot
        ? `${count(hot.karmadaFrq.allowed)} / ${count(hot.karmadaFrq.errors)} / ${hot.karmadaFrq.statusDrift.length ? 'no' : 'yes'}`
        : '',
      '0',
    ],
    [
      `webhook alone, ${sizes.webhookAloneClients} clients: requests/s, p99`,
      alone ? perSec(alone) : missing,
      '',
      '2,000, 25 ms',
    ],
    [
      `binding create, ${sizes.endToEndConcurrency} at once: p99 with / without us`,
      e2e ? oneDigit(e2e.p99Ratio) : missing,
      '',
      '1.5x',
    ],
    [
      'member change to `status.used`: p99',
      convergence ? `${Math.round(convergence.p99Ms)} ms` : missing,
      '',
      '500 ms',
    ],
    [
      `full resync, ${count(sizes.resyncQuotas * sizes.resyncBindingsPerQuota)} bindings`,
      resync ? `${resync.seconds.toFixed(2)} s` : missing,
      '',
      '1 s',
    ],
    [
      'Deployment to pods, one at a time: p99 vs no quota',
      user ? times(user.p99RatioOurs) : missing,
      user ? times(user.p99RatioKarmadaFrq) : '',
      '1.1x, below FRQ',
    ],
    [
      `${sizes.userLatencyBurst} Deployments at once: p99 vs no quota`,
      user ? times(user.burst.p99RatioOurs) : missing,
      user ? times(user.burst.p99RatioKarmadaFrq) : '',
      '1.1x',
    ],
  ];
  return [
    `| figure | KarmadaQuota${owner ? ' (owner mode)' : ''} | Karmada FRQ | target |`,
    '| --- | --- | --- | --- |',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}
