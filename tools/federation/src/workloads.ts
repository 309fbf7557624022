/** What a user applies to the Karmada API server: a workload and the PropagationPolicy that places it. */
export interface KarmadaWorkload {
  workload: {
    apiVersion: 'apps/v1' | 'batch/v1';
    kind: 'Deployment' | 'Job';
    metadata: { name: string; namespace: string };
    spec: Record<string, unknown>;
  };
  policy: {
    apiVersion: 'policy.karmada.io/v1alpha1';
    kind: 'PropagationPolicy';
    metadata: { name: string; namespace: string };
    spec: Record<string, unknown>;
  };
}

/**
 * A Deployment of `replicas` pods each requesting `cpu` (and 256Mi), or a Job running `replicas` of
 * them at once (parallelism) for `completions`, and a PropagationPolicy of the same name placing it on
 * `clusters`: `Divided` splits the replicas by equal static weights (members have no nodes, so dynamic
 * weights would not schedule), `Dynamic` divides them by what each cluster has room for, as Karmada's
 * estimators answer (`dynamicWeight: AvailableReplicas`; needs members with Nodes), `Duplicated` runs
 * all of them in each cluster.
 */
export function karmadaWorkload(options: {
  name: string;
  namespace: string;
  replicas: number;
  cpu: string;
  clusters: string[];
  placement?: 'Divided' | 'Dynamic' | 'Duplicated';
  kind?: 'Deployment' | 'Job';
  completions?: number;
}): KarmadaWorkload {
  const { name, namespace, clusters } = options;
  const container = { name, image: 'nginx', resources: { requests: { cpu: options.cpu, memory: '256Mi' } } };
  const workload: KarmadaWorkload['workload'] =
    options.kind === 'Job'
      ? {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name, namespace },
          spec: {
            parallelism: options.replicas,
            completions: options.completions ?? options.replicas,
            template: { spec: { restartPolicy: 'Never', containers: [container] } },
          },
        }
      : {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace },
          spec: {
            replicas: options.replicas,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name } }, spec: { containers: [container] } },
          },
        };
  const replicaScheduling =
    options.placement === 'Duplicated'
      ? { replicaSchedulingType: 'Duplicated' }
      : {
          replicaSchedulingType: 'Divided',
          replicaDivisionPreference: 'Weighted',
          weightPreference:
            options.placement === 'Dynamic'
              ? { dynamicWeight: 'AvailableReplicas' }
              : {
                  staticWeightList: clusters.map((c) => ({
                    targetCluster: { clusterNames: [c] },
                    weight: 1,
                  })),
                },
        };
  return {
    workload,
    policy: {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'PropagationPolicy',
      metadata: { name, namespace },
      spec: {
        resourceSelectors: [{ apiVersion: workload.apiVersion, kind: workload.kind, name }],
        placement: { clusterAffinity: { clusterNames: clusters }, replicaScheduling },
      },
    },
  };
}
