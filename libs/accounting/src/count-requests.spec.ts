import type { ReconcileTarget } from '#usage';
import { CountRequests } from './count-requests.js';

describe('CountRequests', () => {
  it('asks once per quota every few seconds, one round at a time, and warns once per round', async () => {
    const clock = { now: 0 };
    const asked: ReconcileTarget[] = [];
    const warnings: string[] = [];
    let failing = false;
    const requests = new CountRequests(
      async (target) => {
        if (failing) throw new Error('Redis is down');
        asked.push(target);
      },
      () => clock.now,
      (message) => warnings.push(message),
    );
    const first = requests.ask(['team-a/compute', 'ClusterKarmadaQuota/spanning']);
    expect(requests.ask(['team-b/compute'])).toBe(first); // a round is being sent: it is joined
    await first;
    expect(asked).toEqual([{ namespace: 'team-a' }, { clusterQuota: 'spanning' }]);
    await requests.ask(['team-a/compute']);
    expect(asked).toHaveLength(2); // asked less than 5 s ago
    clock.now = 5_000;
    failing = true;
    await requests.ask(['team-a/compute', 'team-b/compute', 'team-c/compute', 'team-d/compute']);
    expect(warnings).toEqual([
      'could not ask the reconciler for counts of 4 quota(s) (team-a/compute, team-b/compute, team-c/compute, ...): Error: Redis is down',
    ]);
    await requests.idle();
  });
});
