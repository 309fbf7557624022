import { join } from 'node:path';
import type { Federation, RunningService } from '../../federation/src/index.js';
import type { BenchAdmissionMode } from './host.js';

/** How big each scenario runs: `--quick` shrinks durations and sizes to fit a few minutes. */
export interface BenchSizes {
  /** status-writes: compare-and-swap status writes per writer, for each entry count. */
  statusWritesPerWriter: number;
  /** hot-quota: seconds of load per mode (after a short warm-up), and concurrent clients. */
  hotQuotaSeconds: number;
  hotQuotaClients: number;
  /** webhook-alone: seconds of load per part (one quota, many quotas), and concurrent clients. */
  webhookAloneSeconds: number;
  webhookAloneClients: number;
  /** replicas: seconds of load per quota set and replica count (its clients: hotQuotaClients). */
  replicasSeconds: number;
  /** webhook-alone and replicas: namespaces (a quota each) the many-quotas load spreads over. */
  manyQuotaNamespaces: number;
  /** end-to-end: concurrent creates; the creates per mode are resyncQuotas x resyncBindingsPerQuota. */
  endToEndConcurrency: number;
  /** convergence: pods kept across the members, churn waves, pods deleted and created per wave. */
  convergencePods: number;
  convergenceWaves: number;
  convergenceWavePods: number;
  /** aggregator scale: pods fed to the usage ledger. */
  aggregatorPods: number;
  /** aggregator-members: member API servers two aggregator replicas share. */
  aggregatorMembers: number;
  /** resync: quotas (one per namespace) and bindings per quota. */
  resyncQuotas: number;
  resyncBindingsPerQuota: number;
  /** user-latency: Deployments applied one at a time, then at once, per mode. */
  userLatencyDeployments: number;
  userLatencyBurst: number;
}

export const FULL: BenchSizes = {
  statusWritesPerWriter: 150,
  hotQuotaSeconds: 30,
  hotQuotaClients: 64,
  webhookAloneSeconds: 30,
  webhookAloneClients: 64,
  replicasSeconds: 20,
  manyQuotaNamespaces: 50,
  endToEndConcurrency: 32,
  convergencePods: 1_000,
  convergenceWaves: 5,
  convergenceWavePods: 100,
  aggregatorPods: 1_000_000,
  aggregatorMembers: 20,
  resyncQuotas: 100,
  resyncBindingsPerQuota: 100,
  userLatencyDeployments: 30,
  userLatencyBurst: 100,
};

export const QUICK: BenchSizes = {
  statusWritesPerWriter: 50,
  hotQuotaSeconds: 8,
  hotQuotaClients: 64,
  webhookAloneSeconds: 8,
  webhookAloneClients: 64,
  replicasSeconds: 4,
  manyQuotaNamespaces: 50,
  endToEndConcurrency: 32,
  convergencePods: 1_000,
  convergenceWaves: 1,
  convergenceWavePods: 100,
  aggregatorPods: 200_000,
  aggregatorMembers: 10,
  resyncQuotas: 100,
  resyncBindingsPerQuota: 10,
  userLatencyDeployments: 10,
  userLatencyBurst: 100,
};

/** What every scenario on the federation gets. */
export interface BenchContext {
  federation: Federation;
  /** Redis with the bench's own database (15). */
  redisUrl: string;
  sizes: BenchSizes;
  /** The protocol of the product's webhooks in replicas, end-to-end and user-latency (`--admission-mode`). */
  admissionMode: BenchAdmissionMode;
  /** The product's services, once started (after the hot-quota scenario, which runs its own webhooks). */
  services: RunningService[];
  log: (message: string) => void;
  /** With `--profile`: where the services' CPU profiles go, a folder per scenario. */
  profileDir?: string;
}

/** startServices' options that profile the services a scenario starts, when the run profiles. */
export const profiling = (profileDir: string | undefined, scenario: string): { cpuProfileDir?: string } =>
  profileDir ? { cpuProfileDir: join(profileDir, scenario) } : {};

/**
 * A scenario's correctness condition failed: the run exits non-zero with this message, and reports
 * the scenario's `figures` when it got that far.
 */
export class CorrectnessError extends Error {
  override name = 'CorrectnessError';
  constructor(
    message: string,
    readonly figures?: object,
  ) {
    super(message);
  }
}
