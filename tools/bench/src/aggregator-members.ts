import * as k8s from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { clusterStateKey, decodeHealth, decodeSnapshot, usageKey } from '#usage';
import {
  clusterLeaseHolders,
  kubeConfigFor,
  sleep,
  startServices,
  type ApiEndpoint,
  type Federation,
  type RunningService,
} from '../../federation/src/index.js';
import { CorrectnessError, profiling } from './context.js';
import { summarizeLatencies, type LatencySummary } from './stats.js';

export interface AggregatorMembersFigures {
  members: number;
  replicas: number;
  /** The Lease duration the replicas ran with (the product's default): their syncs come every third. */
  leaseDurationSeconds: number;
  /** From starting the replicas until every member's usage was published, Ready. */
  allPublishedSeconds: number;
  /** From starting the replicas until they held the cluster Leases in fair shares. */
  fairSplitSeconds: number;
  /** A pod made in a member until its usage was published, across every member, shares settled. */
  publishDelay: LatencySummary;
  /** From one replica's clean stop until the other held every cluster Lease. */
  takeAllSeconds: number;
  /** A pod made in each of the stopped replica's members as it stopped, until published by the other. */
  handoverDelay: LatencySummary;
}

/** Each member's namespace the scenario makes pods in. */
const NAMESPACE = 'bench-members';
const LEASE_DURATION_SECONDS = 15;
const REPLICAS = ['a', 'b'] as const;

/**
 * The aggregator against many real member API servers (one etcd, each its own --etcd-prefix), with
 * two replicas sharing them: how long until every member is published, until the replicas hold
 * fair shares, how long a change in a member takes to be published, and what a clean stop of one
 * replica costs the members it held. Correct when every pod made is published in the end and the
 * replicas split the members fairly.
 */
export async function runAggregatorMembers(
  federation: Federation,
  options: { redisUrl: string; log: (message: string) => void; profileDir?: string },
): Promise<AggregatorMembersFigures> {
  const { log } = options;
  const members = federation.info.members;
  const redis = new Redis(options.redisUrl);
  const made = new Map<string, number>(members.map((m) => [m.name, 0]));
  const makePod = async (member: ApiEndpoint): Promise<number> => {
    const count = made.get(member.name)! + 1;
    await kubeConfigFor(member)
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: `pod-${count}` },
          spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '10m' } } }] },
        },
      });
    made.set(member.name, count);
    return count;
  };
  const published = async (cluster: string): Promise<{ pods: number; ready: boolean }> => {
    const [snapshot, state] = await redis.mget(usageKey(NAMESPACE, cluster), clusterStateKey(cluster));
    const usage = snapshot === null ? undefined : decodeSnapshot(snapshot);
    const health = state === null ? undefined : decodeHealth(state);
    return {
      pods: usage?.ok ? Number(usage.value.used.pods ?? 0) : 0,
      ready: health?.ok === true && health.value.state === 'Ready',
    };
  };
  /** Ms from `since` until the member's published pods reach `count`. */
  const publishedAfter = async (cluster: string, count: number, since: number): Promise<number> => {
    await until(
      `${cluster}'s pod ${count} to be published`,
      120_000,
      async () => (await published(cluster)).pods >= count,
      5,
    );
    return performance.now() - since;
  };

  const replicas: RunningService[] = [];
  try {
    for (const member of members) {
      const core = kubeConfigFor(member).makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
      // No controller manager makes it in these members, and pods need it.
      await core.createNamespacedServiceAccount({
        namespace: NAMESPACE,
        body: { metadata: { name: 'default' } },
      });
      await makePod(member);
    }

    log(`aggregator-members: starting ${REPLICAS.length} aggregator replicas for ${members.length} members`);
    const started = performance.now();
    replicas.push(
      ...(
        await Promise.all(
          REPLICAS.map((id) =>
            startServices(federation, {
              redisUrl: options.redisUrl,
              services: ['aggregator'],
              instance: id,
              env: {
                AGGREGATOR_ID: id,
                LEASE_DURATION_SECONDS: String(LEASE_DURATION_SECONDS),
                LOG_LEVEL: 'warn',
              },
              ...profiling(options.profileDir, 'aggregator-members'),
            }),
          ),
        )
      ).flat(),
    );
    let allPublishedSeconds = Number.NaN;
    let fairSplitSeconds = Number.NaN;
    const fair = fairShares(members.length, REPLICAS.length);
    await until('every member published and the Leases split fairly', 300_000, async () => {
      if (Number.isNaN(allPublishedSeconds)) {
        const states = await Promise.all(members.map((m) => published(m.name)));
        if (states.every((s) => s.ready && s.pods >= 1))
          allPublishedSeconds = (performance.now() - started) / 1000;
      }
      if (Number.isNaN(fairSplitSeconds)) {
        const shares = [...countHolders(await clusterLeaseHolders(federation.info.host)).values()].sort(
          ascending,
        );
        if (JSON.stringify(shares) === JSON.stringify(fair))
          fairSplitSeconds = (performance.now() - started) / 1000;
      }
      return !Number.isNaN(allPublishedSeconds) && !Number.isNaN(fairSplitSeconds);
    });
    log(
      `aggregator-members: all published after ${allPublishedSeconds.toFixed(1)} s, ` +
        `fair shares (${fair.join(' / ')}) after ${fairSplitSeconds.toFixed(1)} s`,
    );

    const delays: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const member of members) {
        const since = performance.now();
        const count = await makePod(member);
        delays.push(await publishedAfter(member.name, count, since));
      }
    }

    const leaving = replicas.at(-1)!;
    const leavingId = REPLICAS.at(-1)!;
    const staying = REPLICAS[0];
    const before = await clusterLeaseHolders(federation.info.host);
    const handedOver = members.filter((m) => before.get(m.name) === leavingId);
    log(`aggregator-members: stopping replica ${leavingId} (it holds ${handedOver.length} members)`);
    const stopping = performance.now();
    const stopped = leaving.process.stop();
    const [handover, takeAllSeconds] = await Promise.all([
      Promise.all(
        handedOver.map(async (member) => publishedAfter(member.name, await makePod(member), stopping)),
      ),
      (async () => {
        await until(`replica ${staying} to hold every member`, 120_000, async () => {
          const now = await clusterLeaseHolders(federation.info.host);
          return members.every((m) => now.get(m.name) === staying);
        });
        return (performance.now() - stopping) / 1000;
      })(),
    ]);
    await stopped;

    const figures: AggregatorMembersFigures = {
      members: members.length,
      replicas: REPLICAS.length,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      allPublishedSeconds,
      fairSplitSeconds,
      publishDelay: summarizeLatencies(delays),
      takeAllSeconds,
      handoverDelay: summarizeLatencies(handover),
    };
    const wrong: string[] = [];
    for (const member of members) {
      const { pods, ready } = await published(member.name);
      if (pods !== made.get(member.name) || !ready)
        wrong.push(
          `${member.name}: ${pods} pods published${ready ? '' : ', not Ready'}, ${made.get(member.name)} made`,
        );
    }
    if (wrong.length > 0)
      throw new CorrectnessError(`published usage differs from the members: ${wrong.join('; ')}`, figures);
    return figures;
  } finally {
    await Promise.all(replicas.map((r) => r.process.stop()));
    redis.disconnect();
  }
}

const countHolders = (held: Map<string, string | undefined>): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const holder of held.values()) if (holder) counts.set(holder, (counts.get(holder) ?? 0) + 1);
  return counts;
};

/** Each replica's share of `members`, ascending: floor or ceil of members / replicas. */
const fairShares = (members: number, replicas: number): number[] =>
  Array.from(
    { length: replicas },
    (_, i) => Math.floor(members / replicas) + (i < members % replicas ? 1 : 0),
  ).sort(ascending);

const ascending = (a: number, b: number) => a - b;

/** Polls `done` every `everyMs` until it holds. */
async function until(
  what: string,
  timeoutMs: number,
  done: () => Promise<boolean>,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`aggregator-members: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
