import type { KarmadaQuota } from '#api';
import { Registry } from 'prom-client';
import { quotaResourceSamples, registerQuotaMetrics } from './quota-metrics.js';

const quota = (
  name: string,
  spec: Record<string, string>,
  status?: KarmadaQuota['status'],
): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { namespace: 'team-a', name },
  spec: { hard: spec },
  ...(status ? { status } : {}),
});

describe('quotaResourceSamples', () => {
  test.each([
    {
      case: 'cores and bytes in base units, ratio of used + reserved',
      quota: quota(
        'q',
        { cpu: '10', memory: '4Gi' },
        {
          hard: { cpu: '10', memory: '4Gi' },
          used: { cpu: '2500m', memory: '1Gi' },
          reserved: { cpu: '500m' },
        },
      ),
      samples: [
        { resource: 'cpu', used: 2.5, reserved: 0.5, hard: 10, ratio: 0.3 },
        { resource: 'memory', used: 2 ** 30, reserved: 0, hard: 2 ** 32, ratio: 0.25 },
      ],
    },
    {
      case: 'not reconciled yet: spec.hard, nothing counted',
      quota: quota('q', { pods: '5' }),
      samples: [{ resource: 'pods', used: 0, reserved: 0, hard: 5, ratio: 0 }],
    },
    {
      case: 'over a lowered limit',
      quota: quota('q', { pods: '2' }, { hard: { pods: '2' }, used: { pods: '3' } }),
      samples: [{ resource: 'pods', used: 3, reserved: 0, hard: 2, ratio: 1.5 }],
    },
    {
      case: 'a zero limit: empty is 0, anything counted is +Inf',
      quota: quota(
        'q',
        { pods: '0', services: '0' },
        { hard: { pods: '0', services: '0' }, used: { pods: '1' } },
      ),
      samples: [
        { resource: 'pods', used: 1, reserved: 0, hard: 0, ratio: Number.POSITIVE_INFINITY },
        { resource: 'services', used: 0, reserved: 0, hard: 0, ratio: 0 },
      ],
    },
  ])('$case', ({ quota, samples }) => {
    expect(quotaResourceSamples(quota)).toEqual(samples);
  });
});

describe('registerQuotaMetrics', () => {
  test('series follow the cache: a deleted quota has none at the next scrape', async () => {
    const registry = new Registry();
    let quotas = [
      quota(
        'a',
        { pods: '4' },
        {
          hard: { pods: '4' },
          used: { pods: '3' },
          waiting: [
            { binding: 'b', requested: { pods: '2' }, free: { pods: '1' }, since: '2026-01-01T00:00:00Z' },
          ],
          conditions: [
            {
              type: 'RunningBeyondCharge',
              status: 'True',
              reason: 'UsageExceedsCharge',
              message: 'web runs pods=3 against a charge of pods=2',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        },
      ),
      quota('b', { pods: '1' }),
    ];
    registerQuotaMetrics(registry, () => quotas);
    const first = await registry.metrics();
    expect(first).toContain('karmada_quota_usage_ratio{namespace="team-a",quota="a",resource="pods"} 0.75');
    expect(first).toContain('karmada_quota_hard{namespace="team-a",quota="b",resource="pods"} 1');
    expect(first).toContain('karmada_quota_waiting_changes{namespace="team-a",quota="a"} 1');
    expect(first).toContain('karmada_quota_running_beyond_charge{namespace="team-a",quota="a"} 1');
    expect(first).toContain('karmada_quota_running_beyond_charge{namespace="team-a",quota="b"} 0');
    quotas = quotas.slice(0, 1);
    const second = await registry.metrics();
    expect(second).toContain('quota="a"');
    expect(second).not.toContain('quota="b"');
  });

  test("a member cap's series carry its member and plain resource name, apart from the global ones", async () => {
    const registry = new Registry();
    const capped = quota(
      'c',
      { cpu: '10' },
      {
        hard: { cpu: '10', 'cpu@member1': '4' },
        used: { cpu: '3', 'cpu@member1': '1' },
        reserved: { cpu: '1', 'cpu@member1': '1' },
      },
    );
    registerQuotaMetrics(registry, () => [capped]);
    const text = await registry.metrics();
    expect(text).toContain('karmada_quota_used{namespace="team-a",quota="c",resource="cpu"} 3');
    expect(text).toContain(
      'karmada_quota_member_usage_ratio{namespace="team-a",quota="c",member="member1",resource="cpu"} 0.5',
    );
    expect(text).toContain(
      'karmada_quota_member_hard{namespace="team-a",quota="c",member="member1",resource="cpu"} 4',
    );
    expect(text).not.toContain('resource="cpu@member1"');
  });

  test("a ClusterKarmadaQuota's series have no namespace and name the kind", async () => {
    const registry = new Registry();
    const spanning: KarmadaQuota = {
      ...quota('team', { cpu: '10' }, { hard: { cpu: '10' }, used: { cpu: '4' } }),
      kind: 'ClusterKarmadaQuota',
      metadata: { name: 'team' },
    };
    registerQuotaMetrics(registry, () => [quota('team', { cpu: '1' }), spanning]);
    const text = await registry.metrics();
    expect(text).toContain(
      'karmada_quota_used{namespace="",quota="ClusterKarmadaQuota/team",resource="cpu"} 4',
    );
    expect(text).toContain('karmada_quota_hard{namespace="team-a",quota="team",resource="cpu"} 1');
  });
});
