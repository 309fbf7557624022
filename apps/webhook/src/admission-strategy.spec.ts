import type { ResourceBinding } from '#api';
import { bindingCharge } from '#quota';
import { asksNothing, bindingChange } from './admission-strategy.js';

interface Shape {
  replicas?: number;
  priorityClassName?: string;
  deleting?: boolean;
  /** Clusters the Job has completed in (it is scheduled to member1). */
  completedIn?: string[];
}

const job = ({ replicas = 2, priorityClassName, deleting, completedIn }: Shape = {}): ResourceBinding =>
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
      clusters: [{ name: 'member1', replicas }],
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
    // The reconciler counts nothing for these (holdsCharge): nothing to check.
    [
      'a scale-up of a binding being deleted',
      job({ replicas: 3, deleting: true }),
      job({ deleting: true }),
      true,
    ],
    [
      'a scale-up of a finished Job',
      job({ replicas: 3, completedIn: ['member1'] }),
      job({ completedIn: ['member1'] }),
      true,
    ],
    // Its stored object held nothing, so the new one is charged in full.
    ['a finished Job that is no longer finished', job(), job({ completedIn: ['member1'] }), false],
  ])('%s', (_name, object, old, expected) => {
    expect(asksNothing(change(object, old))).toBe(expected);
  });
});
