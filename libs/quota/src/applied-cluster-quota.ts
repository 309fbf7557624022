/**
 * What the AppliedClusterKarmadaQuota of one namespace holds (docs/concepts/cluster-quotas.md, "Who
 * reads a ClusterKarmadaQuota"): the projection of a ClusterKarmadaQuota into a namespace it counts,
 * so that the namespace's users, whom Kubernetes RBAC cannot grant the cluster-scoped quota, read
 * what limits them there. The reconciler writes it (apps/reconciler applied-cluster-quotas.ts).
 *
 * It holds the quota's spec whole, and of its status what concerns every namespace it selects alike
 * (hard, used, reserved, the member clusters, capsResolvedFor, observedGeneration, the conditions)
 * plus this namespace's own entries of the lists that name namespaces (namespaces, waiting,
 * wouldBeDenied). Left out: the claims (reservations, the accounting's own records, each naming
 * another namespace's binding), the count's version (observedBindingsVersion), other namespaces'
 * entries, and condition messages that would name other namespaces' bindings or problems (Ready when
 * False, RunningBeyondCharge when True), which are replaced by one naming only this namespace's
 * bindings, or the quota to ask about.
 */
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER_KARMADA_QUOTA,
  KarmadaQuotaConditionType,
  type AppliedClusterKarmadaQuota,
  type ClusterKarmadaQuotaSpec,
  type Condition,
  type KarmadaQuota,
  type KarmadaQuotaStatus,
} from '#api';

/** The label every projection carries: who writes it. */
export const APPLIED_MANAGED_BY = { 'app.kubernetes.io/managed-by': 'karmada-quota' } as const;

/** The label selector of every projection, for a list across namespaces. */
export const APPLIED_SELECTOR = Object.entries(APPLIED_MANAGED_BY)
  .map(([key, value]) => `${key}=${value}`)
  .join(',');

/** The namespaces that hold a projection of a quota with this status: the ones it counted. */
export function appliedNamespaces(status: KarmadaQuotaStatus | undefined): string[] {
  const lines = Array.isArray(status?.namespaces) ? status.namespaces : [];
  return [
    ...new Set(lines.map((line) => line?.namespace).filter((ns) => typeof ns === 'string' && ns !== '')),
  ];
}

/** Whether a binding named `<namespace>/<name>` (as a ClusterKarmadaQuota's records name it) is of `namespace`. */
const ofNamespace = (binding: unknown, namespace: string): boolean =>
  typeof binding === 'string' && binding.startsWith(`${namespace}/`);

/** The bindings a RunningBeyondCharge message names (status.ts describeBeyondCharge), in its order. */
const bindingsRunningBeyond = (message: string): string[] =>
  [...message.matchAll(/(?:^|; )(\S+) runs /g)].map((m) => m[1]!);

/** A condition as the namespace sees it: messages naming what is not the namespace's are replaced. */
function appliedCondition(condition: Condition, quota: string, namespace: string): Condition {
  if (condition.type === KarmadaQuotaConditionType.Ready && condition.status === 'False')
    return {
      ...condition,
      message:
        `the quota's status has problems, not all of them in this namespace: ` +
        `${CLUSTER_KARMADA_QUOTA.kind} ${quota}'s Ready condition names them (ask its administrators)`,
    };
  if (condition.type === KarmadaQuotaConditionType.RunningBeyondCharge && condition.status === 'True') {
    const here = bindingsRunningBeyond(String(condition.message)).filter((b) => ofNamespace(b, namespace));
    return {
      ...condition,
      message:
        here.length === 0
          ? 'workloads of other namespaces run beyond what their bindings were charged'
          : `${here.join(', ')} ${here.length === 1 ? 'runs' : 'run'} beyond what ` +
            `${here.length === 1 ? 'its binding was' : 'their bindings were'} charged (see ` +
            `docs/concepts/binding-cost.md); workloads of other namespaces may too`,
    };
  }
  return condition;
}

/** The quota's status as `namespace` may read it (file comment). */
export function appliedStatus(
  quota: string,
  status: KarmadaQuotaStatus,
  namespace: string,
): NonNullable<AppliedClusterKarmadaQuota['status']> {
  const { namespaces, waiting, wouldBeDenied, conditions, ...shared } = status;
  delete shared.reservations; // the claims: the accounting's own records
  delete shared.observedBindingsVersion; // the count's version: the accounting's too
  const own = (Array.isArray(namespaces) ? namespaces : []).filter((line) => line?.namespace === namespace);
  const waitingHere = (Array.isArray(waiting) ? waiting : []).filter((w) =>
    ofNamespace(w?.binding, namespace),
  );
  const deniedHere = (Array.isArray(wouldBeDenied) ? wouldBeDenied : []).filter((w) =>
    ofNamespace(w?.binding, namespace),
  );
  return {
    ...shared,
    namespaces: own,
    ...(waitingHere.length > 0 ? { waiting: waitingHere } : {}),
    ...(deniedHere.length > 0 ? { wouldBeDenied: deniedHere } : {}),
    ...(Array.isArray(conditions)
      ? { conditions: conditions.map((c) => appliedCondition(c, quota, namespace)) }
      : {}),
  };
}

/**
 * The AppliedClusterKarmadaQuota of `namespace` for the ClusterKarmadaQuota `quota` (as read; its
 * status as just computed: `status`): named as the quota, labelled as karmada-quota's, and owned by
 * the quota when it has a uid, so that the garbage collector deletes it with the quota.
 */
export function appliedClusterQuota(
  quota: KarmadaQuota,
  status: KarmadaQuotaStatus,
  namespace: string,
): AppliedClusterKarmadaQuota {
  const name = quota.metadata?.name ?? '';
  const uid = quota.metadata?.uid;
  return {
    apiVersion: APPLIED_CLUSTER_KARMADA_QUOTA.apiVersion,
    kind: APPLIED_CLUSTER_KARMADA_QUOTA.kind,
    metadata: {
      name,
      namespace,
      labels: { ...APPLIED_MANAGED_BY },
      ...(uid
        ? {
            ownerReferences: [
              { apiVersion: CLUSTER_KARMADA_QUOTA.apiVersion, kind: CLUSTER_KARMADA_QUOTA.kind, name, uid },
            ],
          }
        : {}),
    },
    spec: quota.spec as ClusterKarmadaQuotaSpec,
    status: appliedStatus(name, status, namespace),
  };
}
