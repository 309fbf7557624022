import { CorrectnessError, type BenchContext } from './context.js';
import {
  contendedProblems,
  createContendedQuotas,
  measuredLoad,
  preparedBindings,
  settledFigures,
  startContendedServices,
  type HotQuotaModeFigures,
} from './hot-quota.js';

/** The same load with one and with two replicas of each service: the hot-quota figures and audit. */
export interface ReplicaComparison {
  one: HotQuotaModeFigures;
  two: HotQuotaModeFigures;
}

export interface ReplicasFigures {
  clients: number;
  /** Seconds of load per quota set and replica count. */
  seconds: number;
  /** Namespaces (a quota each) of the many-quotas load. */
  namespaces: number;
  hotQuota: ReplicaComparison;
  manyQuotas: ReplicaComparison;
}

const REPLICA_COUNTS = [
  ['one', 1],
  ['two', 2],
] as const;

/**
 * The hot-quota load (the run's admission mode) run by one webhook and one reconciler, then by two of each on the
 * same Redis (client c posts to webhook c mod 2): against one hot quota, then spread over
 * `manyQuotaNamespaces` quotas, fresh quotas for each replica count. Every quota is audited as in
 * hot-quota once the reconcilers are idle.
 */
export async function runReplicas(ctx: BenchContext): Promise<ReplicasFigures> {
  const { sizes } = ctx;
  const host = ctx.federation.info.host;
  const clients = sizes.hotQuotaClients;
  const runs: Partial<Record<'hotQuota' | 'manyQuotas', Partial<ReplicaComparison>>> = {};
  const problems: string[] = [];
  for (const [key, replicas] of REPLICA_COUNTS) {
    const sets = {
      hotQuota: Array<string>(clients).fill(`replicas-${key}-hot`),
      manyQuotas: Array.from(
        { length: clients },
        (_, c) => `replicas-${key}-many-${c % sizes.manyQuotaNamespaces}`,
      ),
    };
    const label = `replicas (${replicas})`;
    ctx.log(`${label}: quotas, then ${replicas} webhook(s) and ${replicas} reconciler(s)`);
    await createContendedQuotas(host, [...sets.hotQuota, ...sets.manyQuotas]);
    const ours = await startContendedServices(ctx, {
      mode: ctx.admissionMode,
      replicas,
      instance: `replicas-${key}`,
      profileScenario: `replicas-${key}`,
    });
    try {
      // Every client at once, each scaling its own bindings in turn (hot-quota does it one at a time).
      ctx.log(`${label}: scaling every binding once, the clients at once`);
      const hotDriven = await preparedBindings(host, ours.webhooks, sets.hotQuota, clients);
      const manyDriven = await preparedBindings(host, ours.webhooks, sets.manyQuotas, clients);
      ctx.log(`${label}: ${clients} clients on one quota for ${sizes.replicasSeconds} s`);
      const hot = await measuredLoad(ours.webhooks, hotDriven, sizes.replicasSeconds);
      ctx.log(`${label}: ${hot.load.summary()}`);
      ctx.log(
        `${label}: ${clients} clients on ${sizes.manyQuotaNamespaces} quotas for ${sizes.replicasSeconds} s`,
      );
      const many = await measuredLoad(ours.webhooks, manyDriven, sizes.replicasSeconds);
      ctx.log(`${label}: ${many.load.summary()}; waiting for the reconcilers to settle, then auditing`);
      await ours.reconcilerIdle();
      for (const [set, run, driven] of [
        ['hotQuota', hot, hotDriven],
        ['manyQuotas', many, manyDriven],
      ] as const) {
        const figures = await settledFigures(host, run, driven);
        (runs[set] ??= {})[key] = figures;
        problems.push(...contendedProblems(`replicas (${set}, ${replicas})`, figures));
      }
    } finally {
      await ours.stop();
    }
  }
  const result: ReplicasFigures = {
    clients,
    seconds: sizes.replicasSeconds,
    namespaces: sizes.manyQuotaNamespaces,
    hotQuota: runs.hotQuota as ReplicaComparison,
    manyQuotas: runs.manyQuotas as ReplicaComparison,
  };
  if (problems.length > 0) throw new CorrectnessError(problems.join('\n'), result);
  return result;
}
