import type { KarmadaQuota, ResourceBinding } from '#api';
import { TemplateWarnings } from './template-warnings.js';

const NAMESPACE = 'team';
const TIMING = { ttlSeconds: 120, landingWindowSeconds: 60 };

/** A quota whose usage is counted for its spec, as the reconciler leaves it. */
const quota = (name: string, enforcement: string | undefined, hard: string, used: string): KarmadaQuota => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name, namespace: NAMESPACE, generation: 1, resourceVersion: '1' },
  spec: { hard: { cpu: hard }, ...(enforcement ? { enforcement } : {}) } as KarmadaQuota['spec'],
  status: { used: { cpu: used }, observedGeneration: 1 },
});

const deployment = (replicas: number, cpu = '1', kind = 'Deployment') => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name: 'web', namespace: NAMESPACE },
  spec: { replicas, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } } },
});

/** The quotas as the running watches report them, and the stored bindings. */
function warningsWith(quotas: KarmadaQuota[], stored: ResourceBinding[] = []) {
  const cache = { watchedIn: () => quotas, selectedNamespaces: () => [{ name: NAMESPACE }] };
  const reads: string[] = [];
  const bindings = {
    read: async (_: string, name: string) => {
      reads.push(name);
      return stored.find((b) => b.metadata?.name === name);
    },
  };
  return { warnings: new TemplateWarnings(cache, bindings, TIMING), reads };
}

describe('TemplateWarnings', () => {
  it("warns of each Warn quota that will refuse the workload's binding, in Kubernetes' words", async () => {
    const { warnings } = warningsWith([quota('team', 'Warn', '2', '1')]);
    expect(await warnings.warnings(NAMESPACE, deployment(2), {})).toEqual([
      'KarmadaQuota team would deny the ResourceBinding web-deployment of this workload ' +
        '(spec.enforcement: Warn, not enforced): exceeded quota: team, requested: cpu=2, used: cpu=1, limited: cpu=2',
    ]);
  });

  it.each([
    ['it fits', [quota('team', 'Warn', '4', '1')]],
    ['the quota enforces (Deny: its refusal is the binding write)', [quota('team', undefined, '2', '1')]],
    ['the quota only records (DryRun)', [quota('team', 'DryRun', '2', '1')]],
    ['the namespace has no quota', []],
  ])('says nothing when %s', async (_, quotas) => {
    const { warnings } = warningsWith(quotas);
    expect(await warnings.warnings(NAMESPACE, deployment(2), {})).toEqual([]);
  });

  it('reads no binding in a namespace without a Warn quota', async () => {
    const { warnings, reads } = warningsWith([quota('team', undefined, '2', '1')]);
    await warnings.warnings(NAMESPACE, deployment(5), {});
    expect(reads).toEqual([]);
  });

  it("weighs a scale-up against the stored binding's charge: only the increase must fit", async () => {
    const stored: ResourceBinding = {
      metadata: { name: 'web-deployment', namespace: NAMESPACE, uid: 'u1', resourceVersion: '7' },
      spec: {
        resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NAMESPACE, name: 'web' },
        replicas: 2,
        replicaRequirements: { resourceRequest: { cpu: '1' } },
        clusters: [{ name: 'member1', replicas: 2 }],
      },
    };
    // used 2 is the stored binding's own 2 CPU: 3 replicas ask 1 more, which fits under 3.
    const { warnings, reads } = warningsWith([quota('team', 'Warn', '3', '2')], [stored]);
    expect(await warnings.warnings(NAMESPACE, deployment(3), {})).toEqual([]);
    expect(reads).toEqual(['web-deployment']);
    const [warning] = await warnings.warnings(NAMESPACE, deployment(4), {});
    expect(warning).toContain('exceeded quota: team, requested: cpu=2, used: cpu=2, limited: cpu=3');
    // A scale-down asks nothing.
    expect(await warnings.warnings(NAMESPACE, deployment(1), {})).toEqual([]);
  });

  it('says nothing of a kind whose binding the template does not tell (a DaemonSet)', async () => {
    const { warnings } = warningsWith([quota('team', 'Warn', '1', '1')]);
    expect(await warnings.warnings(NAMESPACE, deployment(5, '1', 'DaemonSet'), {})).toEqual([]);
  });
});
