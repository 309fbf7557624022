import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KARMADA_QUOTA, type KarmadaQuota } from '#api';
import { AdmissionBatcher } from '#accounting';
import {
  BindingOverrides,
  ConflictError,
  METRICS,
  MetricsModule,
  startService,
  TemplateClasses,
  type QuotaStore,
} from '#service-kit';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { Registry } from 'prom-client';
import {
  ADMISSION_STRATEGY,
  AdmissionController,
  WEBHOOK_CONFIG,
} from '../../../apps/webhook/src/admission.controller.js';
import { DenialEventRecorder } from '../../../apps/webhook/src/denial-events.js';
import { QuotaAdminRight } from '../../../apps/webhook/src/quota-admin-right.js';
import { StoredBindings } from '../../../apps/webhook/src/stored-bindings.js';
import { TemplateWarnings } from '../../../apps/webhook/src/template-warnings.js';
import { WaitingRecorder } from '../../../apps/webhook/src/waiting-recorder.js';
import { WatchedQuotaStore } from '../../../apps/webhook/src/watched-quota-store.js';
import { WebhookMetrics } from '../../../apps/webhook/src/webhook-metrics.js';
import { createClientCertificate, createServingCertificate, freePort } from '../../federation/src/index.js';
import { hardForPods } from './admission-load.js';
import { HttpsJsonClient } from './https-client.js';
import { runPart } from './webhook-alone.js';

/**
 * The webhook's own CPU per AdmissionReview, with no Karmada API server or Redis behind it:
 * webhook-alone's clients and reviews (realistic ResourceBinding CREATEs and scale-ups, every 20th
 * refused) against the real HTTPS server, client-certificate check and AdmissionController in a child
 * process, whose batches write to quotas kept in memory (a fresh one per round). What the process spent (process.cpuUsage)
 * over the reviews it answered: the cost of the review path alone, repeatable in seconds, where the
 * full bench's webhook-alone also counts the status writes' HTTPS and shares the cores with etcd and
 * the API server.
 *
 *   npm run build && node dist/tools/bench/src/review-cpu.js [--seconds 10] [--rounds 5] [--clients 64] [--profile DIR]
 */

const QUOTA = 'alone';
/** How long a status write takes, as the Karmada API server's did in webhook-alone: batches form meanwhile. */
const WRITE_MS = 30;

/** A quota per namespace in memory, with the API server's compare-and-swap on resourceVersion. */
class MemoryQuotaStore implements QuotaStore {
  private readonly quotas = new Map<string, KarmadaQuota>();
  private version = 1;

  cached(namespace: string): KarmadaQuota[] {
    let quota = this.quotas.get(namespace);
    if (quota === undefined) {
      const hard = hardForPods(1_000_000n);
      quota = {
        apiVersion: KARMADA_QUOTA.apiVersion,
        kind: KARMADA_QUOTA.kind,
        metadata: { name: QUOTA, namespace, uid: `${namespace}-uid`, generation: 1, resourceVersion: '1' },
        spec: { hard },
        status: {
          observedGeneration: 1,
          used: Object.fromEntries(Object.keys(hard).map((key) => [key, '0'])),
        },
      } as KarmadaQuota;
      this.quotas.set(namespace, quota);
    }
    return [quota];
  }

  async list(namespace: string): Promise<KarmadaQuota[]> {
    return this.cached(namespace);
  }

  async writeStatus(quota: KarmadaQuota): Promise<KarmadaQuota> {
    await new Promise((resolve) => setTimeout(resolve, WRITE_MS));
    const namespace = quota.metadata!.namespace!;
    if (quota.metadata?.resourceVersion !== this.cached(namespace)[0]!.metadata!.resourceVersion)
      throw new ConflictError('the quota changed');
    const written = { ...quota, metadata: { ...quota.metadata, resourceVersion: String(++this.version) } };
    this.quotas.set(namespace, written);
    return written;
  }
}

/** The webhook's controller with its Karmada API server and Redis collaborators answered in memory. */
function reviewModule() {
  const noRedis = { hget: async () => null, get: async () => null, eval: async () => 1 };
  const noQueue = { add: async () => undefined, close: async () => undefined };
  const quotas = new MemoryQuotaStore();
  return {
    module: class ReviewCpuModule {},
    imports: [MetricsModule.forRoot('webhook')],
    controllers: [AdmissionController],
    providers: [
      { provide: WEBHOOK_CONFIG, useValue: { ADMISSION_DEADLINE_MS: 10_000 } },
      { provide: WebhookMetrics, inject: [METRICS], useFactory: (r: Registry) => new WebhookMetrics(r) },
      {
        provide: ADMISSION_STRATEGY,
        inject: [WebhookMetrics],
        useFactory: (metrics: WebhookMetrics) =>
          new AdmissionBatcher(
            quotas,
            { ttlSeconds: 3_600, landingWindowSeconds: 30, clock: Date.now, maxConflictRetries: 5 },
            metrics,
          ),
      },
      {
        provide: DenialEventRecorder,
        useValue: new DenialEventRecorder(
          { write: async () => undefined } as never,
          (namespace, name) => ({ namespace, name }),
          new SchedulerRegistry(),
        ),
      },
      { provide: WaitingRecorder, useValue: new WaitingRecorder(noRedis as never, noQueue as never) },
      { provide: StoredBindings, useValue: { exists: async () => false } },
      { provide: TemplateWarnings, useValue: {} },
      // No quota selects by PriorityClass: TemplateClasses reads no template then.
      { provide: TemplateClasses, useValue: { classify: async (b: unknown[]) => [...b] } },
      {
        provide: BindingOverrides,
        useValue: { mayChange: () => false, apply: async (b: unknown[]) => b },
      },
      { provide: WatchedQuotaStore, useValue: { watchedIn: (ns: string) => quotas.cached(ns) } },
      { provide: QuotaAdminRight, useValue: {} },
    ],
  };
}

/** The child: serves the reviews and answers each message with its CPU use so far. */
async function serve(): Promise<void> {
  const { certFile, keyFile, clientCaFile, port } = JSON.parse(process.env.REVIEW_CPU_SERVE!) as {
    certFile: string;
    keyFile: string;
    clientCaFile: string;
    port: number;
  };
  await startService(reviewModule(), {
    name: 'webhook',
    port,
    bindAddress: '127.0.0.1',
    logLevel: 'warn',
    tls: { certFile, keyFile, clientCaFile, reloadSeconds: 3_600 },
    bodyLimitBytes: 7 * 1024 * 1024,
  });
  process.on('message', () => process.send!(process.cpuUsage()));
  process.send!('ready');
}

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (usage: NodeJS.CpuUsage) => resolve(usage.user + usage.system));
    child.send('cpu');
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      clients: { type: 'string', default: '64' },
      profile: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  const clients = Number(values.clients);
  const dir = mkdtempSync(join(tmpdir(), 'review-cpu-'));
  const serving = await createServingCertificate(dir, 'karmada-quota-webhook');
  const caller = await createClientCertificate(dir, 'karmada-apiserver-webhook-client');
  const port = await freePort();
  const child = fork(process.argv[1]!, [], {
    env: {
      ...process.env,
      REVIEW_CPU_SERVE: JSON.stringify({ ...serving, clientCaFile: caller.caFile, port }),
    },
    execArgv: values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [],
  });
  await new Promise((resolve) => child.once('message', resolve));
  const client = new HttpsJsonClient(`https://127.0.0.1:${port}`, {
    ca: serving.caPem,
    clientCertificate: caller,
    maxSockets: clients,
  });
  // Nothing settles a claim: each round starts on a quota of its own, as each part of webhook-alone.
  const namespaces = (round: string) => Array<string>(clients).fill(`review-cpu-${round}`);
  try {
    await runPart(client, namespaces('warm-up'), 2);
    const rounds: { cpuUs: number; perSec: number; p50Ms: number; p99Ms: number }[] = [];
    for (let r = 0; r < Number(values.rounds); r++) {
      const before = await cpuOf(child);
      const { load } = await runPart(client, namespaces(String(r)), seconds);
      const spent = (await cpuOf(child)) - before;
      const f = load.figures();
      if (f.errors > 0) throw new Error(`errors: ${f.errorSamples.join('; ')}`);
      const round = { cpuUs: spent / f.requests, perSec: f.admissionsPerSec, p50Ms: f.p50Ms, p99Ms: f.p99Ms };
      rounds.push(round);
      console.log(
        `round ${r + 1}: ${f.requests} reviews (${f.allowed} allowed, ${f.denied} denied), ` +
          `${round.cpuUs.toFixed(0)} µs CPU/review, ${round.perSec}/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms`,
      );
    }
    const cpu = rounds.map((r) => r.cpuUs).sort((a, b) => a - b);
    console.log(
      `CPU per review: median ${cpu[Math.floor(cpu.length / 2)]!.toFixed(0)} µs ` +
        `(${cpu[0]!.toFixed(0)}-${cpu.at(-1)!.toFixed(0)} over ${cpu.length} rounds of ${seconds} s, ${clients} clients)`,
    );
  } finally {
    client.close();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.REVIEW_CPU_SERVE) await serve();
else await main();
