import type { KarmadaQuota } from '#api';
import { age, quotaView, type QuotaView } from '#quota-view';
import { DESCRIBE_LAYOUT, GET_LAYOUT, tabwrite } from './tabwriter.js';

/** Text for stdout, and warnings (status fields that could not be read) for stderr. */
export interface Printed {
  text: string;
  warnings: string[];
}

const NONE = '<none>';

/**
 * `kubectl kq describe`: the `kubectl describe quota` layout with a Reserved column, then the
 * per-cluster usage, the open reservations and the conditions. Several quotas are separated as
 * kubectl separates them (two blank lines).
 */
export function describeQuotas(quotas: KarmadaQuota[], now: Date): Printed {
  const views = quotas.map(quotaView);
  return {
    text: views.map((view) => describeView(view, now)).join('\n\n'),
    warnings: views.flatMap(warningsOf),
  };
}

function describeView(view: QuotaView, now: Date): string {
  const lines = [
    `Name:\t${view.name}`,
    `Namespace:\t${view.namespace}`,
    'Resource\tUsed\tReserved\tHard',
    '--------\t----\t--------\t----',
    ...view.resources.map((r) => `${r.resource}\t${r.used}\t${r.reserved}\t${r.hard}`),
  ];
  const section = (title: string, header: string[], rows: string[][]) => {
    if (rows.length === 0) return void lines.push(`${title}:\t${NONE}`);
    lines.push(`${title}:`);
    for (const cells of [header, header.map((h) => '-'.repeat(h.length)), ...rows])
      lines.push(`  ${cells.join('\t')}`);
  };
  const resources = view.resources.map((r) => r.resource);
  section(
    'Clusters',
    ['Cluster', 'State', 'Last Sync', ...resources],
    view.clusters.map((c) => [c.name, c.state, age(c.lastSyncTime, now), ...resources.map((r) => c.used[r])]),
  );
  section(
    'Reservations',
    ['Binding', 'Reserved', 'Expires'],
    view.reservations.map((r) => [
      r.binding,
      Object.entries(r.reserved)
        .map(([resource, quantity]) => `${resource}=${quantity}`)
        .join(',') || NONE,
      expires(r.expirationTime, now),
    ]),
  );
  section(
    'Conditions',
    ['Type', 'Status', 'Reason', 'Message'],
    view.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
  );
  return tabwrite(`${lines.join('\n')}\n`, DESCRIBE_LAYOUT);
}

/** `<none>` for a reservation without expiry, else the time and how far off it is. */
function expires(time: string, now: Date): string {
  if (!time) return NONE;
  const at = new Date(time);
  if (Number.isNaN(at.getTime())) return time;
  return at >= now ? `${time} (in ${age(now.toISOString(), at)})` : `${time} (${age(time, now)} ago)`;
}

/**
 * `kubectl kq get`: NAME, USED (the fullest resource's used + reserved, in percent of hard),
 * USED+RESERVED/HARD per resource and AGE; NAMESPACE first with -A.
 */
export function quotaTable(quotas: KarmadaQuota[], now: Date, allNamespaces: boolean): Printed {
  const views = quotas.map(quotaView);
  const rows = views.map((view, i) => [
    ...(allNamespaces ? [view.namespace] : []),
    view.name,
    `${view.percentUsed}%`,
    view.resources.map((r) => `${r.resource}: ${r.used}+${r.reserved}/${r.hard}`).join(', ') || NONE,
    age(String(quotas[i]!.metadata?.creationTimestamp ?? ''), now),
  ]);
  const header = [...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'USED', 'USED+RESERVED/HARD', 'AGE'];
  return {
    text: tabwrite(`${[header, ...rows].map((cells) => cells.join('\t')).join('\n')}\n`, GET_LAYOUT),
    warnings: views.flatMap(warningsOf),
  };
}

const warningsOf = (view: QuotaView): string[] =>
  view.problems.map((problem) => `Warning: KarmadaQuota ${view.namespace}/${view.name}: ${problem}`);
