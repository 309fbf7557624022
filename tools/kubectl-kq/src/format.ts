import type { CoreV1Event } from '@kubernetes/client-node';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  type Cluster,
  type KarmadaQuota,
  type LabelSelector,
  type ResourceBinding,
} from '#api';
import { age, quotaView, workloadUsage, type QuotaView, type WorkloadObservations } from '#quota-view';
import { DESCRIBE_LAYOUT, GET_LAYOUT, tabwrite } from './tabwriter.js';

/** Text for stdout, and warnings (status fields that could not be read) for stderr. */
export interface Printed {
  text: string;
  warnings: string[];
}

/** Whether `quota` is an AppliedClusterKarmadaQuota (kubectl kq lists them beside the KarmadaQuotas). */
export const isApplied = (quota: KarmadaQuota): boolean =>
  (quota.kind as string | undefined) === APPLIED_CLUSTER_KARMADA_QUOTA.kind;

/** How a quota is named in tables and describe: a projection by its ClusterKarmadaQuota, as refusals name it. */
const shownName = (quota: KarmadaQuota, name: string): string =>
  isApplied(quota) ? `${CLUSTER_KARMADA_QUOTA.kind}/${name}` : name;

const NONE = '<none>';
const UNKNOWN = '<unknown>';

/**
 * What describe shows of one quota besides the quota itself; a list left undefined could not be
 * read (the caller warned why), and its section says so.
 */
export interface QuotaDetails {
  quota: KarmadaQuota;
  /** The federation's member clusters (Cluster objects). */
  clusters?: Cluster[];
  /** The ResourceBindings of the quota's namespace. */
  bindings?: ResourceBinding[];
  /** Events whose involvedObject is the quota. */
  events?: CoreV1Event[];
  /** The members' usage by workload, from the namespace's usage record, or why there is none. */
  usage?: WorkloadObservations;
}

/**
 * `kubectl kq describe`: the `kubectl describe quota` layout with a Reserved column, then every
 * member cluster, the usage by workload, the open reservations, the waiting changes, the conditions
 * and the Events. Several quotas are separated as kubectl separates them (two blank lines).
 */
export function describeQuotas(details: QuotaDetails[], now: Date): Printed {
  const printed = details.map((d) => describeOne(d, now));
  return {
    text: printed.map((p) => p.text).join('\n\n'),
    warnings: printed.flatMap((p) => p.warnings),
  };
}

function describeOne(details: QuotaDetails, now: Date): Printed {
  const { quota } = details;
  const view = quotaView(quota);
  const applied = isApplied(quota);
  const own = applied ? quota.status?.namespaces?.find((n) => n.namespace === view.namespace) : undefined;
  const lines = [
    `Name:\t${shownName(quota, view.name)}`,
    `Namespace:\t${view.namespace}`,
    ...(applied
      ? [
          `Selects:\t${selector((quota.spec as { namespaceSelector?: LabelSelector }).namespaceSelector)} ` +
            `(limits summed over every namespace selected; read-only, from ${APPLIED_CLUSTER_KARMADA_QUOTA.kind} ${view.name})`,
          `This namespace:\tused ${inline(stringList(own?.used))}, reserved ${inline(stringList(own?.reserved))}`,
        ]
      : []),
    `Scopes:\t${scopes(quota)}`,
    ...(view.enforcement === 'Deny'
      ? []
      : [`Enforcement:\t${view.enforcement} (refusals are not enforced: see Would be denied)`]),
    'Resource\tUsed\tReserved\tHard',
    '--------\t----\t--------\t----',
    ...view.resources.map((r) => `${r.resource}\t${r.used}\t${r.reserved}\t${r.hard}`),
  ];
  const section = (title: string, header: string[], rows: string[][] | undefined, unreadable = '') => {
    if (rows === undefined) return void lines.push(`${title}:\t${UNKNOWN}${unreadable}`);
    if (rows.length === 0) return void lines.push(`${title}:\t${NONE}`);
    lines.push(`${title}:`);
    for (const cells of [header, header.map((h) => '-'.repeat(h.length)), ...rows])
      lines.push(`  ${cells.join('\t')}`);
  };
  const resources = view.resources.map((r) => r.resource);
  section(
    'Clusters',
    ['Cluster', 'Ready', 'Sync', 'Last Sync', ...resources],
    clusterRows(details, view, now),
  );
  if (view.memberCaps.length > 0)
    section(
      'Member caps',
      ['Member', 'Resource', 'Used', 'Reserved', 'Cap'],
      view.memberCaps.map((c) => [c.member, c.resource, c.used, c.reserved, c.hard]),
    );
  const workloads = details.bindings && workloadUsage(quota, details.bindings, details.usage);
  const split = workloads?.usageAsOf !== undefined;
  section(
    'Workloads',
    ['Binding', 'Charged', 'In Flight', ...(split ? ['Observed', 'Reserved'] : []), 'Clusters'],
    workloads?.rows.map((w) => [
      w.binding,
      inline(w.charged),
      inline(w.inFlight),
      ...(split ? [inline(w.observed ?? {}), inline(w.reserved ?? {})] : []),
      w.clusters.join(',') || NONE,
    ]),
    ' (the ResourceBindings could not be listed)',
  );
  // A line without a tab: it ends the table's column block instead of widening its first column.
  const asOf = workloads?.usageAsOf;
  if (workloads?.rows.length)
    lines.push(
      asOf === undefined
        ? `  Not split into observed and reserved: ${workloads.usageNotShown ?? 'no usage record read'}.`
        : `  Observed and reserved as the members ran at ${asOf} (${age(asOf, now)} ago).`,
    );
  // A projection carries no claims (they name other namespaces' bindings), and no Events of its own.
  if (!applied)
    section(
      'Reservations',
      ['Binding', 'Reserved', 'Expires'],
      view.reservations.map((r) => [r.binding, inline(r.reserved), expires(r.expirationTime, now)]),
    );
  section(
    'Waiting',
    ['Binding', 'Requested', 'Free', 'Since'],
    view.waiting.map((w) => [
      w.binding,
      inline(w.requested),
      inline(w.free),
      `${w.since} (${age(w.since, now)} ago)`,
    ]),
  );
  if (view.enforcement !== 'Deny' || view.wouldBeDenied.length > 0)
    section(
      'Would be denied (not enforced)',
      ['Binding', 'Enforcement', 'Admitted', 'Refusal'],
      view.wouldBeDenied.map((w) => [w.binding, w.enforcement, `${age(w.at, now)} ago`, w.message]),
    );
  section(
    'Conditions',
    ['Type', 'Status', 'Reason', 'Message'],
    view.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
  );
  if (!applied)
    section(
      'Events',
      ['Type', 'Reason', 'Age', 'From', 'Message'],
      details.events && eventRows(details.events, now),
      ' (the Events could not be listed)',
    );
  return {
    text: tabwrite(`${lines.join('\n')}\n`, DESCRIBE_LAYOUT),
    warnings: [
      ...warningsOf(view),
      ...(workloads?.problems ?? []).map((p) => `Warning: KarmadaQuota ${view.namespace}/${view.name}: ${p}`),
    ],
  };
}

/** A quantity map as read (an unquoted integer is a number on the wire). */
const stringList = (list: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(list ?? {}).map(([k, v]) => [k, String(v)]));

/** A namespace selector on one line, `team=a, env In (dev, prod)`; `{}` selects every namespace. */
function selector(s: LabelSelector | undefined): string {
  const parts = [
    ...Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s?.matchExpressions ?? []).map((e) =>
      [e.key, e.operator, e.values?.length ? `(${e.values.join(', ')})` : ''].join(' ').trim(),
    ),
  ];
  return parts.length > 0 ? parts.join(', ') : 'every namespace';
}

/** `resource=quantity,...`, or <none>. */
const inline = (list: Record<string, string>) =>
  Object.entries(list)
    .map(([resource, quantity]) => `${resource}=${quantity}`)
    .join(',') || NONE;

/** spec.scopeSelector as one line, `PriorityClass In (high, low); ...` (the expressions are ANDed). */
function scopes(quota: KarmadaQuota): string {
  const expressions = quota.spec?.scopeSelector?.matchExpressions ?? [];
  if (expressions.length === 0) return `${NONE} (every ResourceBinding of the namespace)`;
  return expressions
    .map((e) =>
      [e.scopeName, e.operator, e.values?.length ? `(${e.values.join(', ')})` : ''].join(' ').trim(),
    )
    .join('; ');
}

/**
 * Every member cluster, from the Cluster objects and the quota's status together: a cluster with no
 * usage in the namespace has no status entry yet, so it shows zero usage and no sync. Ready is
 * Karmada's view of the cluster (its Ready condition); Sync is whether its usage is current.
 */
function clusterRows(details: QuotaDetails, view: QuotaView, now: Date): string[][] {
  const resources = view.resources.map((r) => r.resource);
  const objects = new Map((details.clusters ?? []).map((c) => [c.metadata?.name ?? '', c]));
  const synced = new Map(view.clusters.map((c) => [c.name, c]));
  const names = [...new Set([...objects.keys(), ...synced.keys()])].filter(Boolean).sort();
  return names.map((name) => {
    const object = objects.get(name);
    const ready = object?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const sync = synced.get(name);
    return [
      name,
      ready ?? (details.clusters && !object ? 'NotFound' : UNKNOWN),
      sync?.state ?? NONE,
      sync ? age(sync.lastSyncTime, now) : NONE,
      ...resources.map((r) => sync?.used[r] ?? '0'),
    ];
  });
}

/** kubectl's describe Events rows (describe.DescribeEvents), oldest first. */
export function eventRows(events: CoreV1Event[], now: Date): string[][] {
  const time = (value: Date | string | undefined | null) =>
    value instanceof Date ? value.toISOString() : (value ?? '');
  const last = (e: CoreV1Event) => time(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime);
  return [...events]
    .sort((a, b) => Date.parse(last(a)) - Date.parse(last(b)))
    .map((e) => {
      const first = age(time(e.eventTime ?? e.firstTimestamp), now);
      const count = e.series?.count ?? e.count ?? 1;
      const interval = count > 1 ? `${age(last(e), now)} (x${count} over ${first})` : first;
      return [
        e.type ?? '',
        e.reason ?? '',
        interval,
        e.source?.component || e.reportingComponent || '',
        (e.message ?? '').trim(),
      ];
    });
}

/** `<none>` for a reservation without expiry, else the time and how far off it is. */
function expires(time: string, now: Date): string {
  if (!time) return NONE;
  const at = new Date(time);
  if (Number.isNaN(at.getTime())) return time;
  return at >= now ? `${time} (in ${age(now.toISOString(), at)})` : `${time} (${age(time, now)} ago)`;
}

export interface TableOptions {
  allNamespaces: boolean;
  /** -o wide: READY, CLUSTERS (Ready of all in status) and WAITING after AGE. */
  wide: boolean;
}

export interface Rows {
  header: string[];
  rows: string[][];
  warnings: string[];
}

/**
 * `kubectl kq get`: NAME, USED (the fullest resource's used + reserved, in percent of hard),
 * USED+RESERVED/HARD per resource and AGE; NAMESPACE first with -A.
 */
export function quotaRows(quotas: KarmadaQuota[], now: Date, options: TableOptions): Rows {
  const views = quotas.map(quotaView);
  const rows = views.map((view, i) => [
    ...(options.allNamespaces ? [view.namespace] : []),
    shownName(quotas[i]!, view.name),
    `${view.percentUsed}%`,
    view.resources.map((r) => `${r.resource}: ${r.used}+${r.reserved}/${r.hard}`).join(', ') || NONE,
    age(String(quotas[i]!.metadata?.creationTimestamp ?? ''), now),
    ...(options.wide
      ? [
          view.conditions.find((c) => c.type === 'Ready')?.status ?? NONE,
          `${view.clusters.filter((c) => c.state === 'Ready').length}/${view.clusters.length}`,
          String(view.waiting.length),
        ]
      : []),
  ]);
  const header = [
    ...(options.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'USED',
    'USED+RESERVED/HARD',
    'AGE',
    ...(options.wide ? ['READY', 'CLUSTERS', 'WAITING'] : []),
  ];
  return { header, rows, warnings: views.flatMap(warningsOf) };
}

export function quotaTable(quotas: KarmadaQuota[], now: Date, options: TableOptions): Printed {
  const { header, rows, warnings } = quotaRows(quotas, now, options);
  return {
    text: tabwrite(`${[header, ...rows].map((cells) => cells.join('\t')).join('\n')}\n`, GET_LAYOUT),
    warnings,
  };
}

/**
 * -o name: `karmadaquota.quota.karmada.io/NAME` (or `appliedclusterkarmadaquota.quota.karmada.io/NAME`),
 * as kubectl prints a custom resource.
 */
export const quotaName = (quota: KarmadaQuota): string => {
  const info = isApplied(quota) ? APPLIED_CLUSTER_KARMADA_QUOTA : KARMADA_QUOTA;
  return `${info.singular}.${info.group}/${quota.metadata?.name ?? ''}`;
};

const warningsOf = (view: QuotaView): string[] =>
  view.problems.map((problem) => `Warning: KarmadaQuota ${view.namespace}/${view.name}: ${problem}`);
