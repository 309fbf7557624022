import { describeError } from '#api';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ensureBinaries, Federation, startServices } from '../../federation/src/index.js';
import { runAggregatorScale, stopAggregatorScale } from './aggregator-scale.js';
import { CorrectnessError, FULL, QUICK, type BenchContext } from './context.js';
import { runConvergence } from './convergence.js';
import { runEndToEnd, type AdmittedBindings } from './end-to-end.js';
import { runHotQuota } from './hot-quota.js';
import { describeMachine } from './machine.js';
import { renderMarkdown, renderTable, reportRows, targetChecks, type BenchReport } from './report.js';
import { runResync } from './resync.js';

/** The scenarios, by the names --only takes, in the order they run. */
const SCENARIOS = {
  'aggregator-scale': 'aggregatorScale',
  'hot-quota': 'hotQuota',
  'end-to-end': 'endToEnd',
  convergence: 'convergence',
  resync: 'resync',
} as const;
type ScenarioKey = (typeof SCENARIOS)[keyof typeof SCENARIOS];

const USAGE = `usage: npm run bench [-- [--quick] [--json FILE] [--only NAME,...]]
  Starts a local federation (etcd, host and 2 member API servers, the product's services), runs
  every scenario, prints the figures against spec §11's targets and stops everything it started.
  --quick       shorter runs and smaller sizes (a few minutes)
  --json FILE   also write the figures and the machine as JSON to FILE
  --only NAMES  run only these scenarios (${Object.keys(SCENARIOS).join(', ')});
                resync needs end-to-end's bindings, so it runs that too
  Exit code 1 when a scenario's correctness check fails or a scenario cannot run.
  KEEP_BENCH_STATE=1 keeps the federation's logs and data (they are kept anyway after a failure).`;

/** The bench's own Redis database: it is emptied before and after a run. */
const REDIS_DB = 15;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const jsonFile = values.json ? resolve(values.json) : undefined;
  const selected = new Set<ScenarioKey>();
  for (const name of values.only?.split(',') ?? Object.keys(SCENARIOS)) {
    const key = SCENARIOS[name.trim() as keyof typeof SCENARIOS];
    if (!key) throw new Error(`--only: unknown scenario "${name}"\n${USAGE}`);
    selected.add(key);
  }
  if (selected.has('resync')) selected.add('endToEnd');
  const sizes = values.quick ? QUICK : FULL;
  const started = Date.now();
  const log = (message: string) => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    const clock = `${String(Math.floor(elapsed / 60)).padStart(2, '0')}:${String(elapsed % 60).padStart(2, '0')}`;
    console.log(`[bench ${clock}] ${message}`);
  };
  const redisUrl = `${(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').replace(/\/\d*$/, '')}/${REDIS_DB}`;
  const stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-bench-'));
  let federation: Federation | undefined;

  let interrupted = false;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopAggregatorScale();
      await federation?.stop();
      await flushBenchDatabase(redisUrl).catch((err: unknown) =>
        log(`could not empty Redis database ${REDIS_DB}: ${describeError(err)}`),
      );
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      log(`${signal}: stopping everything the bench started`);
      void stop().finally(() => process.exit(130));
    });
  }

  const binaries = await ensureBinaries();
  const report: BenchReport = {
    machine: describeMachine({ kubernetes: binaries.kubernetesVersion, etcd: binaries.etcdVersion }),
    mode: values.quick ? 'quick' : 'full',
    startedAt: new Date(started).toISOString(),
    durationSeconds: 0,
    sizes,
    targets: [],
    failures: [],
  };
  log(
    `${report.mode} run on ${report.machine.cpus} CPUs, load average ${report.machine.loadAverage}; ` +
      `state in ${stateDir}, Redis ${redisUrl}`,
  );
  const scenario = async <K extends ScenarioKey>(
    key: K,
    run: () => Promise<Exclude<BenchReport[K], undefined | { error: string }>>,
  ) => {
    if (interrupted || !selected.has(key)) return;
    try {
      report[key] = await run();
    } catch (err) {
      const message = describeError(err);
      const figures = err instanceof CorrectnessError ? err.figures : undefined;
      report[key] = { ...figures, error: message } as BenchReport[K];
      report.failures.push(`${key}: ${message}`);
      log(
        `${key} ${err instanceof CorrectnessError ? 'FAILED its correctness check' : 'could not run'}: ${message}`,
      );
    }
  };

  try {
    await flushBenchDatabase(redisUrl);
    // In-process, before the federation takes the CPU.
    await scenario('aggregatorScale', () => {
      log(`aggregator-scale: ${sizes.aggregatorPods.toLocaleString('en-US')} pods through the usage ledger`);
      return runAggregatorScale(sizes.aggregatorPods, log);
    });
    const needs = (...keys: ScenarioKey[]) => !interrupted && keys.some((key) => selected.has(key));
    if (needs('hotQuota', 'endToEnd', 'convergence'))
      federation = await Federation.start({ stateDir, members: 2, log });
    const ctx: BenchContext = { federation: federation!, redisUrl, sizes, services: [], log };
    // First, while no webhook is registered: it starts webhooks of its own, one per mode, unregistered.
    await scenario('hotQuota', () => runHotQuota(ctx));

    if (needs('endToEnd', 'convergence')) {
      log('starting the product: webhook (batched), aggregator, reconciler');
      ctx.services = await startServices(ctx.federation, {
        redisUrl,
        services: ['webhook', 'aggregator', 'reconciler'],
        // The bench times a full resync itself; the periodic one would only disturb the figures.
        env: { RESYNC_INTERVAL_SECONDS: '86400', LOG_LEVEL: 'warn' },
      });
    }
    let admitted: AdmittedBindings | undefined;
    await scenario('endToEnd', async () => {
      const result = await runEndToEnd(ctx);
      admitted = result.admitted;
      return result.figures;
    });
    await scenario('convergence', () => runConvergence(ctx));
    await scenario('resync', () => {
      if (!admitted) throw new Error('needs the bindings the end-to-end scenario creates, and it failed');
      return runResync(ctx, admitted);
    });
  } catch (err) {
    report.failures.push(`the federation: ${describeError(err)}`);
    log(`the bench could not go on: ${describeError(err)}`);
  } finally {
    log('stopping the federation');
    await stop();
  }

  report.durationSeconds = Math.round((Date.now() - started) / 1000);
  report.targets = targetChecks(report);
  const rows = reportRows(report);
  console.log(`\n${renderTable(rows)}\n`);
  console.log(`README "Performance" figures:\n\n${renderMarkdown(report, rows)}\n`);
  if (jsonFile) {
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    log(`figures written to ${jsonFile}`);
  }
  if (report.failures.length > 0) {
    log(`FAILED (logs kept in ${stateDir}):\n  ${report.failures.join('\n  ')}`);
    return 1;
  }
  if (process.env.KEEP_BENCH_STATE === '1') log(`state kept in ${stateDir}`);
  else rmSync(stateDir, { recursive: true, force: true });
  log(`done in ${report.durationSeconds} s`);
  return 0;
}

async function flushBenchDatabase(url: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: true });
  try {
    await redis.connect();
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench: ${describeError(err)}`);
    process.exit(1);
  },
);
