import type { KarmadaQuota, ResourceBinding } from '#api';
import { bindingCharge, parseQuotaState } from '#quota';
import { asksNothing, bindingChange, uidProblem } from './admission-strategy.js';
import { decide } from './cas-round.js';

interface Shape {
  replicas?: number;
  priorityClassName?: string;
  deleting?: boolean;
  /** Clusters the Job is scheduled to (member1 unless told). */
  clusters?: string[];
  /** Clusters the Job has completed in. */
  completedIn?: string[];
}

const job = ({
  replicas = 2,
  priorityClassName,
  deleting,
  clusters = ['member1'],
  completedIn,
}: Shape = {}): ResourceBinding =>
  ({
    metadata: {
      name: 'batch',
      namespace: 'team-a',
      uid: 'u1',
      ...(deleting ? { deletionTimestamp: '2026-11-22T10:00:00Z' } : {}),
    },
    spec: {
      resource: { apiVersion: 'batch/v1', kind: 'Job', name: 'batch' },
      replicas,
      replicaRequirements: {
        resourceRequest: { cpu: '1' },
        ...(priorityClassName ? { priorityClassName } : {}),
      },
      clusters: clusters.map((name) => ({ name, replicas: replicas / clusters.length })),
    },
    ...(completedIn
      ? {
          status: {
            aggregatedStatus: completedIn.map((clusterName) => ({
              clusterName,
              status: { conditions: [{ type: 'Complete', status: 'True' }] },
            })),
          },
        }
      : {}),
  }) as unknown as ResourceBinding;

const change = (object: ResourceBinding, old?: ResourceBinding) =>
  bindingChange({ namespace: 'team-a', name: 'batch' }, object, bindingCharge(object).charge, false, old);

describe('asksNothing: what is answered without reading the quotas', () => {
  it.each<[string, ResourceBinding, ResourceBinding | undefined, boolean]>([
    ['a CREATE', job(), undefined, false],
    ['a scale-down', job({ replicas: 1 }), job(), true],
    ['no change', job(), job(), true],
    ['a scale-up', job({ replicas: 3 }), job(), false],
    [
      'a scale-down into another priority class',
      job({ replicas: 1, priorityClassName: 'high' }),
      job(),
      false,
    ],
    // A member cap there may refuse it (member caps: docs/concepts/member-caps.md).
    ['a move to another member', job({ clusters: ['member2'] }), job(), false],
    [
      'a scale-down on one of its members',
      job({ clusters: ['member1'] }),
      job({ clusters: ['member1', 'member2'] }),
      true,
    ],
    // Being deleted is final: it holds nothing ever again.
    [
      'a scale-up of a binding being deleted',
      job({ replicas: 3, deleting: true }),
      job({ deleting: true }),
      true,
    ],
    // A finished workload holds nothing while finished, as the reconciler counts it: a claim for its
    // increase would rest on an old charge the quota no longer counts (found by the simulation).
    [
      'a scale-up of a finished Job',
      job({ replicas: 3, completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      true,
    ],
    [
      'a finished Job changed in place',
      job({ completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      true,
    ],
    // Its stored object held nothing, so the new one is charged in full.
    [
      'a finished Job scheduled to a cluster it has not finished in',
      job({ clusters: ['member1', 'member2'], completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      false,
    ],
  ])('%s', (_name, object, old, expected) => {
    expect(asksNothing(change(object, old))).toBe(expected);
  });
});

describe('uidProblem: an UPDATE the API server cannot send', () => {
  const withUid = (uid: unknown): ResourceBinding => {
    const rb = job();
    (rb.metadata as { uid?: unknown }).uid = uid;
    return rb;
  };
  const noStoredUid =
    'oldObject.metadata.uid: Required value: an UPDATE names the stored object, which has a uid';
  it.each<[string, unknown, unknown, string | undefined]>([
    ['the same uid', 'u1', 'u1', undefined],
    ['no uid on the object (the API server fills it in)', undefined, 'u1', undefined],
    ['an empty uid on the object', '', 'u1', undefined],
    ['another uid', 'u2', 'u1', 'metadata.uid: Invalid value: "u2": field is immutable (stored: "u1")'],
    [
      'a uid that is not a string',
      7,
      'u1',
      'metadata.uid: Invalid value: 7: field is immutable (stored: "u1")',
    ],
    ['no uid on the stored object', 'u1', undefined, noStoredUid],
    ['an empty uid on the stored object', 'u1', '', noStoredUid],
  ])('%s', (_name, uid, storedUid, problem) => {
    expect(uidProblem(withUid(uid), withUid(storedUid))).toBe(problem);
  });

  it("an UPDATE whose object has no uid is keyed by the stored object's", () => {
    expect(change(withUid(undefined), withUid('u1')).item.binding.uid).toBe('u1');
    expect(change(withUid(''), withUid('u1')).item.binding.uid).toBe('u1');
  });
});

describe("decide (cas-round): the quotas that check a change and hold its stored object's charge", () => {
  const quota = (hard: Record<string, string>, used: Record<string, string>): KarmadaQuota => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'team-a', namespace: 'team-a' },
    spec: { hard },
    status: { used },
  });
  const decideOne = (object: ResourceBinding, old: ResourceBinding) => {
    const quotas = [quota({ cpu: '4' }, { cpu: '3' })];
    const result = decide(
      { quotas, states: quotas.map((q) => parseQuotaState(q).state) },
      [change(object, old)],
      Date.parse('2026-11-22T10:00:00Z'),
      { ttlSeconds: 120, landingWindowSeconds: 60 },
    );
    return { decision: result.decisions[0], written: result.changed };
  };

  it.each<[string, ResourceBinding, ResourceBinding, boolean]>([
    ['a running Job scaled up by 1 cpu: fits', job({ replicas: 3 }), job(), true],
    ['a running Job scaled up by 2 cpu: refused', job({ replicas: 4 }), job(), false],
    [
      'a finished Job scaled up by 1 cpu: only the increase is checked',
      job({ replicas: 3, completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      true,
    ],
    [
      'a finished Job scheduled to a cluster it has not finished in: charged in full (2 cpu)',
      job({ clusters: ['member1', 'member2'], completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      false,
    ],
    [
      'a binding being deleted, scaled up: not checked',
      job({ replicas: 10, deleting: true }),
      job({ deleting: true }),
      true,
    ],
  ])('%s', (_name, object, old, allowed) => {
    const { decision, written } = decideOne(object, old);
    expect(decision?.allowed).toBe(allowed);
    if (!allowed) expect(written).toEqual([]);
  });
});

describe('decide (cas-round) after a quota spec edit: N1 of the second accounting review', () => {
  // gold limits the high priority class to 10 cpu; `batch` (low) runs 8 cpu that gold does not count.
  const gold = (classes: string[], generation: number, observedGeneration: number): KarmadaQuota => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'gold', namespace: 'team-a', generation },
    spec: {
      hard: { cpu: '10' },
      scopeSelector: {
        matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: classes }],
      },
    },
    status: { used: { cpu: '2' }, observedGeneration },
  });
  const decideOne = (quota: KarmadaQuota, object: ResourceBinding, old?: ResourceBinding) => {
    const result = decide(
      { quotas: [quota], states: [parseQuotaState(quota).state] },
      [change(object, old)],
      Date.parse('2026-11-22T10:00:00Z'),
      { ttlSeconds: 120, landingWindowSeconds: 60 },
    );
    return result.decisions[0];
  };
  const low = (replicas: number) => job({ replicas, priorityClassName: 'low' });

  it.each<[string, KarmadaQuota, ResourceBinding, ResourceBinding | undefined, RegExp | undefined]>([
    [
      'scope widened, not recounted: a low scale-up 8 -> 12 cpu is refused as status unknown (it was admitted: 18 of 10)',
      gold(['high', 'low'], 2, 1),
      low(12),
      low(8),
      /^status unknown for quota: gold, resources: cpu: .*edited spec/,
    ],
    [
      'scope widened, not recounted: a low create of 4 cpu is refused as status unknown',
      gold(['high', 'low'], 2, 1),
      low(4),
      undefined,
      /^status unknown for quota: gold/,
    ],
    [
      'scope widened and recounted (used 10 counts batch): the same scale-up exceeds the quota',
      { ...gold(['high', 'low'], 2, 2), status: { used: { cpu: '10' }, observedGeneration: 2 } },
      low(12),
      low(8),
      /^exceeded quota: gold/,
    ],
    [
      "before the edit: the low scale-up is not gold's to check",
      gold(['high'], 1, 1),
      low(12),
      low(8),
      undefined,
    ],
    [
      'hard edited, not recounted: a decrease still passes (it asks nothing)',
      gold(['high', 'low'], 3, 2),
      low(4),
      low(8),
      undefined,
    ],
  ])('%s', (_name, quota, object, old, refusal) => {
    const decision = decideOne(quota, object, old);
    if (refusal === undefined) expect(decision).toEqual({ allowed: true });
    else expect(decision).toMatchObject({ allowed: false, message: expect.stringMatching(refusal) });
  });
});
