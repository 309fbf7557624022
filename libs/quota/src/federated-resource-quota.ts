/**
 * Serving Karmada's FederatedResourceQuota (docs/operating/switch-from-frq.md): each FRQ gets a
 * KarmadaQuota beside it that karmada-quota enforces and counts (spec.overall as its hard, its static
 * assignments as member caps, the enforcement from an annotation), and the FRQ's status is written from that quota's status in
 * Karmada's shape. Pure: the reconciler's FederatedQuotas service reads and writes.
 */
import {
  ENFORCEMENTS,
  FEDERATED_RESOURCE_QUOTA,
  KARMADA_QUOTA,
  type FederatedResourceQuota,
  type FederatedResourceQuotaStatus,
  type KarmadaQuota,
  type MemberCap,
} from '#api';
import { isDeepStrictEqual } from 'node:util';
import { addLists, formatList, maskList, parseResourceList, type ResourceList } from '#quantity';
import { parseEnforcement } from './enforcement.js';
import { sameArray, sameList } from './status-equality.js';
import { quotaResourceNameErrors } from './validation.js';

/** The annotation on an FRQ that sets its quota's spec.enforcement (absent: Deny). */
export const FRQ_ENFORCEMENT_ANNOTATION = 'quota.karmada.io/enforcement';
/** The label on a KarmadaQuota naming the FRQ it serves. */
export const SERVES_FRQ_LABEL = 'quota.karmada.io/federated-resource-quota';

/** The name of the KarmadaQuota serving the FRQ `name` (FRQ names are at most 63 characters). */
export const servingQuotaName = (name: string): string => `frq-${name}`;

export interface ServingQuota {
  /** The KarmadaQuota to create or update (metadata, spec); undefined when none can be made. */
  quota: KarmadaQuota;
  /** Why parts of the FRQ are not enforced, for an Event on it: each an admin can act on. */
  problems: string[];
}

/**
 * The KarmadaQuota that serves `frq`: spec.overall's enforceable keys, and each static assignment's
 * as the cap of its member (docs/concepts/member-caps.md), owned by the FRQ.
 */
export function servingQuota(frq: FederatedResourceQuota): ServingQuota {
  const problems: string[] = [];
  const enforceable = (raw: unknown, field: string): ResourceList => {
    const { list, errors } = parseResourceList(raw, field);
    problems.push(...errors.map((e) => `${e.field}: ${e.message}; it is not enforced`));
    const hard: ResourceList = {};
    for (const [key, quantity] of Object.entries(list)) {
      const why = quotaResourceNameErrors(key);
      if (why.length === 0) hard[key] = quantity;
      else problems.push(`${field}[${key}]: ${why.join('; ')}; it is not enforced`);
    }
    return hard;
  };
  const hard = enforceable(frq.spec?.overall, 'spec.overall');
  const clusters: MemberCap[] = [];
  (frq.spec?.staticAssignments ?? []).forEach((assignment, i) => {
    const field = `spec.staticAssignments[${i}]`;
    const member = assignment?.clusterName;
    if (typeof member !== 'string' || member === '' || clusters.some((c) => c.name === member)) {
      problems.push(`${field}.clusterName: empty or assigned twice; this assignment is not enforced`);
      return;
    }
    const capped = enforceable(assignment.hard, `${field}.hard`);
    if (Object.keys(capped).length > 0) clusters.push({ name: member, hard: formatList(capped) });
  });
  const annotated = frq.metadata?.annotations?.[FRQ_ENFORCEMENT_ANNOTATION];
  const enforcement = parseEnforcement(annotated);
  if (annotated !== undefined && annotated !== enforcement)
    problems.push(
      `annotation ${FRQ_ENFORCEMENT_ANNOTATION}=${JSON.stringify(annotated)}: not one of ` +
        `${ENFORCEMENTS.join(', ')}; Deny is enforced`,
    );
  const name = frq.metadata?.name ?? '';
  return {
    quota: {
      apiVersion: KARMADA_QUOTA.apiVersion,
      kind: KARMADA_QUOTA.kind,
      metadata: {
        name: servingQuotaName(name),
        namespace: frq.metadata?.namespace ?? '',
        labels: { [SERVES_FRQ_LABEL]: name },
        ownerReferences: [
          {
            apiVersion: FEDERATED_RESOURCE_QUOTA.apiVersion,
            kind: FEDERATED_RESOURCE_QUOTA.kind,
            name,
            uid: frq.metadata?.uid ?? '',
            controller: true,
          },
        ],
      },
      spec: {
        hard: formatList(hard),
        ...(clusters.length > 0 ? { clusters } : {}),
        ...(enforcement === 'Deny' ? {} : { enforcement }),
      },
    },
    problems,
  };
}

/** Whether the quota stored serves `frq` as `wanted` says: same hard and caps (by value), same enforcement. */
export function servesAsWanted(current: KarmadaQuota, wanted: KarmadaQuota): boolean {
  return (
    sameList(current.spec?.hard, wanted.spec?.hard) &&
    sameArray(
      current.spec?.clusters,
      wanted.spec?.clusters,
      (a, b) => a['name'] === b.name && sameList(a['hard'], b.hard),
    ) &&
    parseEnforcement(current.spec?.enforcement) === parseEnforcement(wanted.spec?.enforcement)
  );
}

/** Whether `quota` is the one karmada-quota made for this FRQ (its label names it). */
export const servesFrq = (quota: KarmadaQuota, frqName: string): boolean =>
  quota.metadata?.labels?.[SERVES_FRQ_LABEL] === frqName;

/**
 * The FRQ's status from its serving quota's, in Karmada's shape: `overall` is spec.overall,
 * `overallUsed` what counts against it (used + reserved: admitted changes count before their pods
 * run, as Karmada's own enforcement counts a binding at admission), and `aggregatedStatus` each
 * member cluster's usage, with its static assignment as `hard` where it has one. Before the quota
 * has been counted, only `overall`.
 */
export function frqStatus(
  frq: FederatedResourceQuota,
  quota: KarmadaQuota | undefined,
): FederatedResourceQuotaStatus {
  const overall = frq.spec?.overall ?? {};
  const keys = Object.keys(overall);
  const read = (raw: unknown): ResourceList => maskList(parseResourceList(raw ?? {}, 'list').list, keys);
  const status: FederatedResourceQuotaStatus = { overall: { ...overall } };
  const counted =
    quota?.status?.used !== undefined && quota.status.observedGeneration === quota.metadata?.generation;
  if (!counted) return status;
  status.overallUsed = formatList(addLists(read(quota.status?.used), read(quota.status?.reserved)));
  const assigned = new Map((frq.spec?.staticAssignments ?? []).map((a) => [a.clusterName, a.hard]));
  const clusters = new Set([...(quota.status?.clusters ?? []).map((c) => c.name), ...assigned.keys()]);
  status.aggregatedStatus = [...clusters].sort().map((clusterName) => {
    const used = quota.status?.clusters?.find((c) => c.name === clusterName)?.used;
    const hard = assigned.get(clusterName);
    return { clusterName, ...(hard ? { hard: { ...hard } } : {}), used: formatList(read(used)) };
  });
  return status;
}

/** Two FRQ statuses alike (quantities by value), so an unchanged one is not written again. */
export function frqStatusEquals(
  a: FederatedResourceQuotaStatus | undefined,
  b: FederatedResourceQuotaStatus,
): boolean {
  // Unlike a KarmadaQuota status, an absent list and an empty one are written differently here.
  const same = (x: unknown, y: unknown) => (x === undefined) === (y === undefined) && sameList(x, y);
  return (
    same(a?.overall, b.overall) &&
    same(a?.overallUsed, b.overallUsed) &&
    (a?.aggregatedStatus === undefined) === (b.aggregatedStatus === undefined) &&
    sameArray(
      a?.aggregatedStatus,
      b.aggregatedStatus,
      (c, d) => c['clusterName'] === d.clusterName && same(c['hard'], d.hard) && same(c['used'], d.used),
    )
  );
}

/**
 * What a write of an FRQ changes of its team's limit: its spec.overall and its staticAssignments
 * (the member caps; set by a create, changed by an update; compared by value, "1" is "1000m") and its
 * enforcement annotation (added, changed or removed, as written). Other changes (labels, other
 * annotations) change none.
 */
export interface FrqLimitChange {
  overall?: 'setting' | 'changing';
  staticAssignments?: 'setting' | 'changing';
  /** The annotation's value before and after (undefined: absent); present only when they differ. */
  enforcement?: { from?: string; to?: string };
}

/**
 * The right that guards a team's limit, an FRQ's as a KarmadaQuota's: update on karmadaquotas in
 * its namespace (the chart's quota-admin role). Teams often may write policy.karmada.io/* for their
 * PropagationPolicies, so RBAC on FRQs alone does not keep a team from raising its own limit.
 */
export const QUOTA_ADMIN_RIGHT = {
  verb: 'update',
  group: KARMADA_QUOTA.group,
  resource: KARMADA_QUOTA.plural,
} as const;

/**
 * What the create (`old` undefined) or update of `frq` changes of its team's limit; undefined when
 * nothing, and the write needs no right beyond RBAC's on FRQs.
 */
export function frqLimitChange(
  frq: FederatedResourceQuota,
  old?: FederatedResourceQuota,
): FrqLimitChange | undefined {
  const change: FrqLimitChange = {};
  const overall = frq.spec?.overall;
  const oldOverall = old?.spec?.overall;
  // Identical lists are the same even where a value cannot be read (the CRD's pattern is looser).
  if (!isDeepStrictEqual(overall ?? {}, oldOverall ?? {}) && !sameList(overall, oldOverall))
    change.overall = old === undefined ? 'setting' : 'changing';
  const assigned = frq.spec?.staticAssignments ?? [];
  const oldAssigned = old?.spec?.staticAssignments ?? [];
  const sameAssignments =
    isDeepStrictEqual(assigned, oldAssigned) ||
    sameArray(
      oldAssigned,
      assigned,
      (a, b) => a['clusterName'] === b.clusterName && sameList(a['hard'], b.hard),
    );
  if (!sameAssignments) change.staticAssignments = old === undefined ? 'setting' : 'changing';
  const to = enforcementAnnotation(frq);
  const from = old && enforcementAnnotation(old);
  if (to !== from) change.enforcement = { from, to };
  return change.overall || change.staticAssignments || change.enforcement ? change : undefined;
}

const enforcementAnnotation = (frq: FederatedResourceQuota): string | undefined => {
  const value: unknown = frq.metadata?.annotations?.[FRQ_ENFORCEMENT_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
};

/**
 * What a refusal says of `change` to FRQ `namespace/name`: the change, what it decides, and the
 * right it needs, so that a federation admin can make it or grant that right.
 */
export function frqLimitChangeNeeds(namespace: string, name: string, change: FrqLimitChange): string {
  const parts: string[] = [];
  if (change.overall) parts.push(`${change.overall} spec.overall`);
  if (change.staticAssignments) parts.push(`${change.staticAssignments} spec.staticAssignments`);
  const { enforcement } = change;
  if (enforcement) {
    const annotation = `annotation ${FRQ_ENFORCEMENT_ANNOTATION}`;
    parts.push(
      enforcement.from === undefined
        ? `adding ${annotation}=${enforcement.to}`
        : enforcement.to === undefined
          ? `removing ${annotation} (${enforcement.from})`
          : `changing ${annotation} from ${enforcement.from} to ${enforcement.to}`,
    );
  }
  const limit = change.overall || change.staticAssignments;
  const decides =
    limit && enforcement
      ? "sets the team's limit and how it is enforced"
      : limit
        ? "sets the team's limit"
        : "sets how the team's limit is enforced";
  const { verb, resource, group } = QUOTA_ADMIN_RIGHT;
  return (
    `${parts.join(' and ')} of ${FEDERATED_RESOURCE_QUOTA.kind} ${namespace}/${name} ${decides}: ` +
    `it needs the right to ${verb} ${resource}.${group} in ${namespace} (karmada-quota's quota-admin role)`
  );
}
