/**
 * Workload kinds beside Deployment in the simulation (docs/concepts/binding-cost.md): a Job, whose
 * binding declares replicas like a Deployment's but holds nothing once Karmada reports it finished,
 * and a DaemonSet, whose binding Karmada writes without spec.replicas or spec.replicaRequirements.
 * And the DETECTED invariant: what no admission sees (a member running more pods than the binding
 * says, a finished Job re-created) must be named in the quota's RunningBeyondCharge condition.
 */
import type { KarmadaQuota, KarmadaQuotaStatus, ResourceBinding } from '#api';
import type { ObservedCluster } from '#quota';
import { parseResourceList } from '#quantity';
import type { Key } from './model.js';

export type WorkloadKind = 'Deployment' | 'Job' | 'DaemonSet';

const API_VERSIONS: Record<WorkloadKind, string> = {
  Deployment: 'apps/v1',
  Job: 'batch/v1',
  DaemonSet: 'apps/v1',
};

export const kindOf = (rb: ResourceBinding): string => String(rb.spec?.resource?.kind ?? '');

/** `rb` (a Deployment's binding as the simulation builds it) as Karmada writes one for `kind`. */
export function asKind(rb: ResourceBinding, kind: WorkloadKind): ResourceBinding {
  const spec = { ...rb.spec!, resource: { ...rb.spec!.resource, apiVersion: API_VERSIONS[kind], kind } };
  if (kind === 'DaemonSet') {
    // Karmada's interpreter declares no replicas for it: the binding only lists its target clusters.
    delete spec.replicas;
    delete spec.replicaRequirements;
    spec.clusters = [{ name: 'member1' }];
  }
  return { ...rb, spec };
}

/**
 * An update of the stored binding `old`: it keeps its kind (Karmada names a binding after its
 * workload's kind) but names the template version it was written from, and keeps its status, which
 * the API server takes from the stored object (a subresource).
 */
export function asUpdateOf(rb: ResourceBinding, old: ResourceBinding): ResourceBinding {
  const version = rb.spec?.resource?.resourceVersion;
  const resource = { ...old.spec!.resource, ...(version === undefined ? {} : { resourceVersion: version }) };
  const updated: ResourceBinding = { ...rb, spec: { ...rb.spec!, resource } };
  if (old.status !== undefined) updated.status = old.status;
  return updated;
}

/** Is it a binding of a kind that runs pods while declaring none (charged its object count only)? */
export const declaresNoReplicas = (rb: ResourceBinding): boolean =>
  kindOf(rb) === 'DaemonSet' && rb.spec?.replicas === undefined && rb.spec?.replicaRequirements === undefined;

/** The status Karmada aggregates for a Job that completed in every cluster it was scheduled to. */
export const finishedStatus = (rb: ResourceBinding): ResourceBinding['status'] => ({
  aggregatedStatus: (rb.spec?.clusters ?? []).map((c) => ({
    clusterName: c.name,
    applied: true,
    status: { conditions: [{ type: 'Complete', status: 'True' }] },
  })),
});

/** The status Karmada aggregates for a Job running in every cluster it was scheduled to. */
export const runningStatus = (rb: ResourceBinding): ResourceBinding['status'] => ({
  aggregatedStatus: (rb.spec?.clusters ?? []).map((c) => ({
    clusterName: c.name,
    applied: true,
    status: { active: c.replicas ?? 0 },
  })),
});

/** Has Karmada reported the binding's Job finished everywhere (it then holds nothing on the quotas)? */
export function jobFinished(rb: ResourceBinding): boolean {
  const aggregated = rb.status?.['aggregatedStatus'];
  if (kindOf(rb) !== 'Job' || !Array.isArray(aggregated) || aggregated.length === 0) return false;
  const complete = aggregated as {
    clusterName: string;
    status?: { conditions?: { type: string; status: string }[] };
  }[];
  return (
    complete.every((a) => a.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) &&
    (rb.spec?.clusters ?? []).every((c) => complete.some((a) => a.clusterName === c.name))
  );
}

const amount = (value: unknown, key: string): number => {
  const parsed = parseResourceList({ [key]: value ?? '0' }, key).list[key];
  return parsed === undefined ? 0 : Number(key.startsWith('cpu') ? parsed.milliValue() : parsed.value());
};

/**
 * The one scope the simulation uses: the `high` priority class, of a binding as the services judge it
 * (the simulation writes bindings as Karmada does by default, with no class: its template's class is
 * given to it first, as the services do: Simulation.classified).
 */
export const isHigh = (rb: ResourceBinding): boolean =>
  rb.spec?.replicaRequirements?.priorityClassName === 'high';

/** Is the stored quota scoped (to `high`: the only scope the simulation writes, specOf)? */
export const selectsHighOnly = (quota: KarmadaQuota): boolean =>
  (quota.spec?.scopeSelector?.matchExpressions?.length ?? 0) > 0;

/**
 * The bindings whose workload runs beyond what they hold on `quota`, by an independent recount of the
 * rule (docs/concepts/accounting.md): per stored binding the quota counts (not being deleted, in its
 * scope), the usage observed in the clusters it is scheduled to, against its stored charge, or the
 * larger charge of a pending claim of its name (the status's entries with an expirationTime).
 */
export function expectedBeyondCharge(
  quota: KarmadaQuota,
  status: KarmadaQuotaStatus,
  bindings: readonly ResourceBinding[],
  clusters: readonly ObservedCluster[],
  chargeOf: (rb: ResourceBinding) => Record<Key, number>,
  sharesOf: (rb: ResourceBinding) => {
    on: ReadonlyMap<string, Record<Key, number>>;
    rest: Record<Key, number>;
  },
): string[] {
  // A member cap's key counts the pods on that member alone (docs/concepts/member-caps.md); which
  // members a cap by label covers is the reconciler's resolution, in the status' hard.
  const keys = [
    ...new Set([...Object.keys(quota.spec?.hard ?? {}), ...Object.keys(status.hard ?? {})]),
  ] as Key[];
  const scoped = selectsHighOnly(quota);
  const seen = new Set<string>();
  const beyond: string[] = [];
  for (const rb of bindings) {
    const name = rb.metadata!.name!;
    if (seen.has(name)) continue;
    seen.add(name);
    if (rb.metadata?.deletionTimestamp) continue;
    if (scoped && !isHigh(rb)) continue;
    const targets = new Set((rb.spec?.clusters ?? []).map((c) => c.name));
    const claim = (status.reservations ?? []).find(
      (r) => r.reservedBy.name === name && r.expirationTime !== undefined,
    );
    const charge = chargeOf(rb);
    const split = sharesOf(rb);
    // Per target cluster beyond its share; the unsplit rest and what a pending claim adds cover it.
    const runsBeyond = keys.some((key) => {
      let beyond = 0;
      for (const cluster of clusters) {
        if (!targets.has(cluster.name)) continue;
        let running = 0;
        // Pods on their way out (published apart, `terminating`) are never the binding's.
        const published = key === 'pods' ? 'pods' : 'cpu';
        if (published !== key && key !== `cpu@${cluster.name}`) continue;
        for (const workload of cluster.workloads)
          if (
            workload.kind === kindOf(rb) &&
            workload.name === rb.spec!.resource.name &&
            !workload.terminating
          )
            running += amount((workload.used as Record<string, unknown>)[published], published);
        beyond += Math.max(0, running - (split.on.get(cluster.name)?.[key] ?? 0));
      }
      return beyond > split.rest[key] + Math.max(0, amount(claim?.charge?.[key], key) - charge[key]);
    });
    if (runsBeyond) beyond.push(name);
  }
  return beyond.sort();
}

/** Why `status`'s RunningBeyondCharge condition does not name exactly `expected`; undefined when it does. */
export function detectionProblem(
  status: KarmadaQuotaStatus,
  expected: readonly string[],
  all: readonly string[],
): string | undefined {
  const condition = status.conditions?.find((c) => c.type === 'RunningBeyondCharge');
  if (condition === undefined) return 'no RunningBeyondCharge condition';
  const wanted = expected.length > 0 ? 'True' : 'False';
  if (condition.status !== wanted)
    return `RunningBeyondCharge=${condition.status}, expected ${wanted} for [${expected.join(',')}]: ${condition.message}`;
  const message = String(condition.message ?? '');
  const named = all.filter((name) => new RegExp(`(^|; )${name} runs `).test(message));
  if (named.join(',') !== [...expected].join(','))
    return `RunningBeyondCharge names [${named.join(',')}], expected [${expected.join(',')}]: ${message}`;
  return undefined;
}
