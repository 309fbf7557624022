import { spawnSync } from 'node:child_process';
import { describeError } from '#api';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import {
  ensureBinaries,
  Federation,
  redisDatabaseUrl,
  repoRoot,
  startPrivateRedis,
  startServices,
  type RunningService,
} from '../../federation/src/index.js';
import { runAggregatorMembers } from './aggregator-members.js';
import { runAggregatorScale, stopAggregatorScale } from './aggregator-scale.js';
import { CorrectnessError, FULL, profiling, QUICK, type BenchContext } from './context.js';
import {
  parseGoPprofTop,
  renderCpuProfileSummary,
  renderGoProfileSummary,
  summarizeCpuProfile,
  type BenchProfile,
  type CpuProfile,
} from './cpu-profile.js';
import { runConvergence } from './convergence.js';
import { runEndToEnd, type AdmittedBindings } from './end-to-end.js';
import { awaitAdmissionOwner } from './admission-load.js';
import {
  admissionModeEnv,
  BENCH_ADMISSION_MODES,
  deleteEveryQuota,
  type BenchAdmissionMode,
} from './host.js';
import { HttpsJsonClient } from './https-client.js';
import { runHotQuota } from './hot-quota.js';
import { describeCode, describeCommit, describeMachine } from './machine.js';
import { renderMarkdown, renderTable, reportRows, targetChecks, type BenchReport } from './report.js';
import { runReplicas } from './replicas.js';
import { runResync } from './resync.js';
import { runStatusWrites } from './status-writes.js';
import { runUserLatency } from './user-latency.js';
import { runWebhookAlone } from './webhook-alone.js';

/** The scenarios, by the names --only takes, in the order they run. */
const SCENARIOS = {
  'aggregator-scale': 'aggregatorScale',
  'status-writes': 'statusWrites',
  'hot-quota': 'hotQuota',
  'webhook-alone': 'webhookAlone',
  replicas: 'replicas',
  'end-to-end': 'endToEnd',
  convergence: 'convergence',
  resync: 'resync',
  'aggregator-members': 'aggregatorMembers',
  'user-latency': 'userLatency',
} as const;
type ScenarioKey = (typeof SCENARIOS)[keyof typeof SCENARIOS];
/** Scenarios whose figures are timings only, with no correctness audit: `--audited` leaves them out. */
const UNAUDITED: readonly ScenarioKey[] = ['userLatency'];

const USAGE = `usage: npm run bench [-- [--quick] [--json FILE] [--only NAME,...] [--admission-mode MODE]]
  Starts a local federation (etcd, host and 2 member API servers, the product's services), runs
  every scenario, prints the figures against their targets and stops everything it started.
  aggregator-members and then user-latency run last, each on a federation of its own (20 members;
  real Karmada).
  --quick       shorter runs and smaller sizes (a few minutes)
  --json FILE   also write the figures and the machine as JSON to FILE
  --only NAMES  run only these scenarios (${Object.keys(SCENARIOS).join(', ')});
                resync needs end-to-end's bindings, so it runs that too
  --audited     run only the scenarios with a correctness audit (every one but user-latency, whose
                figures are timings only): what CI runs, for its audits
  --profile     CPU-profile the services each scenario starts (node --cpu-prof) into
                bench-profiles/<start time>/<scenario>/, and print where their time went
  --admission-mode MODE
                the product's webhooks in replicas, end-to-end, convergence, resync and
                user-latency run in ADMISSION_MODE=MODE (${BENCH_ADMISSION_MODES.join(' or ')};
                default batched); hot-quota and webhook-alone measure every mode anyway
  Exit code 1 when a scenario's correctness check fails or a scenario cannot run.
  KEEP_BENCH_STATE=1 keeps the federation's logs and data (they are kept anyway after a failure).`;

/** Waits until the product's owner-mode webhook holds the admission Lease. */
async function productOwner(services: readonly RunningService[]): Promise<void> {
  const webhook = services.find((s) => s.name === 'webhook')!;
  const client = new HttpsJsonClient(webhook.url, {
    ca: webhook.caPem!,
    clientCertificate: webhook.clientCertificate,
    maxSockets: 1,
  });
  try {
    await awaitAdmissionOwner(client, () => webhook.process.logTail());
  } finally {
    client.close();
  }
}

/** The bench's own Redis database: it is emptied before and after a run. */
const REDIS_DB = 15;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
      audited: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'admission-mode': { type: 'string', default: 'batched' },
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
  if (values.audited) for (const key of UNAUDITED) selected.delete(key);
  if (selected.has('resync')) selected.add('endToEnd');
  const admissionMode = values['admission-mode'] as BenchAdmissionMode;
  if (!BENCH_ADMISSION_MODES.includes(admissionMode))
    throw new Error(`--admission-mode: unknown mode "${admissionMode}"\n${USAGE}`);
  const sizes = values.quick ? QUICK : FULL;
  const started = Date.now();
  const log = (message: string) => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    const clock = `${String(Math.floor(elapsed / 60)).padStart(2, '0')}:${String(elapsed % 60).padStart(2, '0')}`;
    console.log(`[bench ${clock}] ${message}`);
  };
  const stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-bench-'));
  const redis = await benchRedis(stateDir);
  const redisUrl = redis.url;
  const profileDir = values.profile
    ? resolve('bench-profiles', new Date(started).toISOString().replaceAll(':', '-').slice(0, 19))
    : undefined;
  let federation: Federation | undefined;
  let karmadaFederation: Federation | undefined;
  let membersFederation: Federation | undefined;

  let interrupted = false;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopAggregatorScale();
      await federation?.stop();
      await membersFederation?.stop();
      await karmadaFederation?.stop();
      await flushBenchDatabase(redisUrl).catch((err: unknown) =>
        log(`could not empty Redis database ${REDIS_DB}: ${describeError(err)}`),
      );
      await redis.stop();
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
    commit: describeCommit(),
    code: describeCode(repoRoot()),
    mode: values.quick ? 'quick' : 'full',
    admissionMode,
    ...(values.only || values.audited ? { only: [...selected] } : {}),
    startedAt: new Date(started).toISOString(),
    durationSeconds: 0,
    sizes,
    targets: [],
    failures: [],
  };
  log(
    `${report.mode} run of ${report.commit} on ${report.machine.cpus} CPUs, load average ${report.machine.loadAverage}; ` +
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
    if (needs('statusWrites', 'hotQuota', 'webhookAlone', 'replicas', 'endToEnd', 'convergence'))
      federation = await Federation.start({ stateDir, members: 2, log, hostProfiling: Boolean(profileDir) });
    const ctx: BenchContext = {
      federation: federation!,
      redisUrl,
      sizes,
      admissionMode,
      services: [],
      log,
      profileDir,
    };
    // Before any service runs: only the bench writes these statuses.
    await scenario('statusWrites', () => runStatusWrites(ctx));
    // First, while no webhook is registered: these start webhooks of their own, unregistered.
    await scenario('hotQuota', () => runHotQuota(ctx));
    await scenario('webhookAlone', () => runWebhookAlone(ctx));
    await scenario('replicas', () => runReplicas(ctx));

    if (needs('endToEnd', 'convergence')) {
      // The scenarios above left about 150 quotas full of claims; swept by the product's reconciler
      // while end-to-end runs, they would be measured as part of its creates.
      try {
        const deleted = await deleteEveryQuota(ctx.federation.info.host);
        log(`deleted the ${deleted} KarmadaQuotas the scenarios before left behind`);
      } catch (err) {
        log(`could not delete the quotas the scenarios before left behind, going on: ${describeError(err)}`);
      }
      log(`starting the product: webhook (${admissionMode}), aggregator, reconciler`);
      ctx.services = await startServices(ctx.federation, {
        redisUrl,
        services: ['webhook', 'aggregator', 'reconciler'],
        // The bench times a full resync itself; the periodic one would only disturb the figures.
        env: {
          ...(await admissionModeEnv(ctx.federation.info.host, admissionMode, 'bench-admission-lease')),
          RESYNC_INTERVAL_SECONDS: '86400',
          LOG_LEVEL: 'warn',
        },
        ...profiling(profileDir, 'end-to-end,convergence,resync'),
      });
      if (admissionMode === 'owner') await productOwner(ctx.services);
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
    if (needs('aggregatorMembers')) {
      // Many members of its own, API servers only: the other scenarios' federation goes first.
      await federation?.stop();
      federation = undefined;
      await flushBenchDatabase(redisUrl);
      log(`aggregator-members: starting a federation of ${sizes.aggregatorMembers} members`);
      membersFederation = await Federation.start({
        stateDir: join(stateDir, 'aggregator-members'),
        members: sizes.aggregatorMembers,
        memberControllers: false,
        log,
      });
      const onMembers = membersFederation;
      await scenario('aggregatorMembers', () =>
        runAggregatorMembers(onMembers, { redisUrl, log, profileDir }),
      );
      await membersFederation.stop();
      membersFederation = undefined;
      await flushBenchDatabase(redisUrl);
    }
    if (needs('userLatency')) {
      // Karmada would act on the other scenarios' hand-written bindings: its own federation, alone.
      await federation?.stop();
      federation = undefined;
      await flushBenchDatabase(redisUrl);
      log('user-latency: starting a federation with real Karmada (its quota enforcement built in, off)');
      karmadaFederation = await Federation.start({
        stateDir: join(stateDir, 'user-latency'),
        members: 2,
        karmada: true,
        karmadaQuotaEnforcement: true,
        log,
      });
      const onKarmada = karmadaFederation;
      await scenario('userLatency', () =>
        runUserLatency(onKarmada, { redisUrl, sizes, admissionMode, log, profileDir }),
      );
    }
  } catch (err) {
    report.failures.push(`the federation: ${describeError(err)}`);
    log(`the bench could not go on: ${describeError(err)}`);
  } finally {
    log('stopping the federation');
    await stop();
  }

  // The services wrote their profiles as they exited, when the federation stopped.
  if (profileDir) {
    const { text, profile } = summarizeCpuProfiles(profileDir);
    report.profile = profile;
    console.log(`\n${text}\n`);
  }
  report.durationSeconds = Math.round((Date.now() - started) / 1000);
  report.targets = targetChecks(report);
  const rows = reportRows(report);
  console.log(`\n${renderTable(rows)}\n`);
  console.log(`Latest figures (docs/development/bench.md):\n\n${renderMarkdown(report, rows)}\n`);
  if (jsonFile) {
    // The comparison with Karmada's own quota at the top, where scripts comparing runs look first.
    const sideBySide =
      report.hotQuota && 'sideBySide' in report.hotQuota ? report.hotQuota.sideBySide : undefined;
    writeFileSync(jsonFile, `${JSON.stringify({ sideBySide, ...report }, null, 2)}\n`);
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

/**
 * Summarises every profile under `dir` into `dir/summary.txt` and the report's `profile`; returns
 * the text: the services' V8 profiles here, the host API server's Go profiles by `go tool pprof -top`.
 */
function summarizeCpuProfiles(dir: string): { text: string; profile: BenchProfile } {
  const profile: BenchProfile = { dir: relative(process.cwd(), dir), services: {}, apiServer: {} };
  const files = existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }) : [];
  const profiles = files.filter((f) => f.endsWith('.cpuprofile') || f.endsWith('.pprof')).sort();
  if (profiles.length === 0) return { text: `--profile: no CPU profile was written under ${dir}`, profile };
  const text = profiles
    .map((file) => {
      const name = file.replace(/\.(cpuprofile|pprof)$/, '');
      if (file.endsWith('.pprof')) {
        const top = spawnSync('go', ['tool', 'pprof', '-top', '-nodecount=25', join(dir, file)], {
          encoding: 'utf8',
        });
        if (top.status !== 0)
          return `${name}: go tool pprof failed: ${(top.stderr || top.error?.message || '').trim()}`;
        try {
          profile.apiServer[name] = parseGoPprofTop(top.stdout);
          return renderGoProfileSummary(name, profile.apiServer[name]);
        } catch (err) {
          return `${name}: ${describeError(err)}:\n${top.stdout.trimEnd()}`;
        }
      }
      const summary = summarizeCpuProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
      profile.services[name] = summary;
      return renderCpuProfileSummary(name, summary);
    })
    .join('\n\n');
  writeFileSync(join(dir, 'summary.txt'), `${text}\n`);
  return {
    text: `CPU profiles in ${dir} (open one in Chrome DevTools or speedscope, a .pprof with go tool pprof -http=: FILE):\n\n${text}`,
    profile,
  };
}

/**
 * The Redis the bench uses: database REDIS_DB of the one REDIS_URL names, or without it a private
 * redis-server of its own under `stateDir` (nothing to start by hand), stopped with the bench.
 */
async function benchRedis(stateDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.REDIS_URL;
  if (given) return { url: redisDatabaseUrl(given, REDIS_DB), stop: async () => {} };
  const redis = await startPrivateRedis(join(stateDir, 'redis'));
  return { url: redis.url(REDIS_DB), stop: () => redis.stop() };
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
