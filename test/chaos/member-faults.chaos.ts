import type { KarmadaQuota } from '#api';
import { Quantity } from '#quantity';
import { eventually } from '../support/federation.js';
import { logRecords } from '../support/logs.js';
import { ChaosScenario } from './support/scenario.js';
import { expectRecountMatches } from './support/recount.js';

/**
 * Fault 5: a member API server crashes and comes back, and a member revokes the credential the
 * aggregator uses. Each time the cluster must be marked (Stale, then Unreachable), its last usage
 * must keep counting, and it must recover without restarting the aggregator.
 */
const scenario = ChaosScenario.setUp('member-faults', {
  members: 2,
  quotas: { team: { cpu: '10', pods: '50' } },
});

const slice = (quota: KarmadaQuota, cluster: string) =>
  quota.status?.clusters?.find((c) => c.name === cluster);
const cpu = (value: unknown) => Quantity.parse(String(value ?? '0'));

/** Waits for the member's slice of the quota to be in one of `states`; returns the quota. */
const clusterState = (cluster: string, states: string[], timeoutMs = 60_000) =>
  eventually(
    () => scenario.tenant.quota('team'),
    (q) => states.includes(slice(q, cluster)?.state ?? ''),
    timeoutMs,
  );

/** Every status version since `since` kept counting `cluster`'s usage at `cpu`. */
function keptCounting(cluster: string, since: number, expected: string): void {
  const dropped = scenario.recorder
    .of('team')
    .filter((s) => s.at >= since && cpu(s.used.cpu).cmp(Quantity.parse(expected)) < 0)
    .map((s) => `${s.resourceVersion}: used ${JSON.stringify(s.used)}`);
  expect({ cluster, dropped }).toEqual({ cluster, dropped: [] });
}

test('a member API server crash: marked, last usage kept, recovered without an aggregator restart', async () => {
  for (let i = 0; i < 2; i++) {
    await scenario.tenant.createBinding(`one-${i}`, { replicas: 1, cpu: '1', cluster: 'member1' });
    await scenario.tenant.createBinding(`two-${i}`, { replicas: 1, cpu: '1', cluster: 'member2' });
  }
  await scenario.tenant.propagateAll();
  await expectRecountMatches(scenario.tenant);
  const pid = scenario.service('aggregator').process.pid;

  const since = Date.now();
  await scenario.chaos.federation.stopMember('member1', { crash: true });
  const marked = await clusterState('member1', ['Unreachable'], 90_000);
  expect(slice(marked, 'member1')!.used.cpu).toBe('2');
  expect(marked.status?.used?.cpu).toBe('4');
  // Its usage still counts against the limit: 6 CPU are free, not 8.
  expect(await scenario.tenant.createBinding('too-big', { replicas: 7, cpu: '1', cluster: 'member2' })).toBe(
    'denied',
  );

  await scenario.chaos.federation.startMember('member1');
  await clusterState('member1', ['Ready'], 90_000);
  // Changes made after the restart are seen by the same aggregator process.
  await scenario.tenant.createBinding('after-restart', { replicas: 2, cpu: '1', cluster: 'member1' });
  await scenario.tenant.propagateAll();
  await expectRecountMatches(scenario.tenant, 90_000);
  keptCounting('member1', since, '4');
  expect(scenario.service('aggregator').process.pid).toBe(pid);
  expect(scenario.service('aggregator').process.running).toBe(true);
}, 600_000);

test('a revoked member credential: marked, last usage kept, recovered once a new one is issued', async () => {
  const pid = scenario.service('aggregator').process.pid;
  // The aggregator moves to a revocable service-account token of member2.
  await scenario.chaos.federation.issueMemberToken('member2');
  await eventually(
    async () => scenario.service('aggregator').process.logTail(200),
    (log) =>
      logRecords(log).some(
        (l) =>
          l.cluster === 'member2' && l.message.startsWith('endpoint or credentials of the cluster changed'),
      ),
    60_000,
  );
  await clusterState('member2', ['Ready'], 60_000);
  const before = slice(await scenario.tenant.quota('team'), 'member2')!.used.cpu;
  const used = (await scenario.tenant.quota('team')).status!.used!.cpu!;

  const since = Date.now();
  await scenario.chaos.federation.revokeMemberToken('member2');
  const marked = await clusterState('member2', ['Stale', 'Unreachable'], 120_000);
  expect(slice(marked, 'member2')!.used.cpu).toBe(before);

  await scenario.chaos.federation.issueMemberToken('member2');
  await clusterState('member2', ['Ready'], 90_000);
  await scenario.tenant.createBinding('after-new-token', { replicas: 1, cpu: '1', cluster: 'member2' });
  await scenario.tenant.propagateAll();
  await expectRecountMatches(scenario.tenant, 90_000);
  keptCounting('member2', since, used);
  expect(scenario.service('aggregator').process.pid).toBe(pid);
  expect(scenario.recorder.violations()).toEqual([]);
}, 600_000);
