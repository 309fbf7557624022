import { OTHER_USAGE, type PageLimit, type PageQuota, type PageSnapshot } from './wire.js';

/** Conditions whose True is the alarm (the others are healthy when True). */
const ALARM_WHEN_TRUE: ReadonlySet<string> = new Set(['OverQuota', 'RunningBeyondCharge']);

/**
 * The page's DOM from a snapshot. Every string from the API reaches the DOM as text (Text nodes,
 * setAttribute of fixed attribute names), never as markup.
 */

type Child = Node | string;

/** An element whose children are nodes or strings (Text nodes: data never becomes markup). */
export function el(
  tag: string,
  attributes: Record<string, string> = {},
  children: Child[] = [],
): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attributes: Record<string, string>, children: Element[] = []): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function table(
  headings: string[],
  rows: Child[][],
  rowAttributes: Record<string, string>[] = [],
): HTMLElement {
  return el('div', { class: 'scroll' }, [
    el('table', {}, [
      el('thead', {}, [
        el(
          'tr',
          {},
          headings.map((h) => el('th', { scope: 'col' }, [h])),
        ),
      ]),
      el(
        'tbody',
        {},
        rows.map((cells, i) =>
          el(
            'tr',
            rowAttributes[i] ?? {},
            cells.map((cell) => el('td', {}, [cell])),
          ),
        ),
      ),
    ]),
  ]);
}

const entries = (list: Record<string, string>): string[] =>
  Object.entries(list).map(([key, value]) => `${key}=${value}`);

const pairs = (list: Record<string, string>): string => entries(list).join(', ');

/** One item a line (a narrow column wraps between items, never inside one); '-' for none. */
const lines = (items: string[]): Child =>
  items.length
    ? el(
        'span',
        { class: 'lines' },
        items.map((item) => el('span', {}, [item])),
      )
    : '-';

const KNOWN_STATES = ['Ready', 'Stale', 'Unreachable'];
const HOUR_MS = 3600 * 1000;

/** "35% now, 20% 24h ago" (or since when the console has a history). */
function trendWords(trend: PageQuota['trends'][number]): string {
  const { first, last } = trend;
  if (!first || !last || first.at === last.at) return 'no history yet';
  const hours = Math.round((last.at - first.at) / HOUR_MS);
  const ago = hours >= 1 ? `${hours}h ago` : `${Math.max(1, Math.round((last.at - first.at) / 60_000))}m ago`;
  return `${last.percent}% now, ${first.percent}% ${ago}`;
}

function trendLine(trend: PageQuota['trends'][number] | undefined, resource: string): Element {
  if (!trend) return el('span');
  const words = trendWords(trend);
  const drawing = svg(
    'svg',
    {
      class: 'trend-line',
      viewBox: '0 0 120 24',
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': `${resource} used over the last 24 hours: ${words}`,
    },
    trend.points ? [svg('polyline', { points: trend.points })] : [],
  );
  return el('div', { class: 'trend', title: `used, last 24 hours (top: ${trend.ceiling}% of hard)` }, [
    drawing,
    el('span', { class: 'trend-words' }, [words]),
  ]);
}

/** Used, then reserved, against the limit; `label` says it in words (screen readers, hover). */
function bar(r: PageLimit, label: string): HTMLElement {
  const usedWidth = Math.min(r.usedPercent, 100);
  const reservedWidth = Math.min(r.reservedPercent, 100 - usedWidth);
  const used = el('div', { class: 'used' });
  used.style.width = `${usedWidth}%`;
  const reserved = el('div', { class: 'reserved' });
  reserved.style.width = `${reservedWidth}%`;
  return el('div', { class: 'bar', role: 'img', 'aria-label': label, title: label }, [used, reserved]);
}

/** "3 used (30%), 1 reserved (10%) of 10", then `over` if used + reserved exceeds the limit. */
const barWords = (r: PageLimit, over: string): string =>
  `${r.used} used (${r.usedPercent}%), ${r.reserved} reserved (${r.reservedPercent}%) ` +
  `of ${r.hard}${r.exceeded ? `, ${over}` : ''}`;

function resourceRow(r: PageLimit, trend: PageQuota['trends'][number] | undefined) {
  return el('div', { class: `resource${r.exceeded ? ' exceeded' : ''}`, 'data-resource': r.resource }, [
    el('div', { class: 'resource-head' }, [
      el('span', { class: 'resource-name' }, [r.resource]),
      el('span', { class: 'numbers' }, [
        el('span', { class: 'used' }, [r.used]),
        ' used + ',
        el('span', { class: 'reserved' }, [r.reserved]),
        ' reserved of ',
        el('span', { class: 'hard' }, [r.hard]),
      ]),
      r.exceeded ? el('span', { class: 'over' }, ['over quota']) : '',
    ]),
    bar(r, `${r.resource}: ${barWords(r, 'over quota')}`),
    trendLine(trend, r.resource),
  ]);
}

/** What single members may run (docs/concepts/member-caps.md); nothing for a quota that caps none. */
function memberCapsSection(q: PageQuota): Child[] {
  if (!q.memberCaps.length) return [];
  return [
    el('h3', {}, ['Member caps']),
    table(
      ['Member', 'Resource', 'Used', 'Reserved', 'Cap', 'Full'],
      q.memberCaps.map((c) => [
        c.member,
        c.resource,
        c.used,
        c.reserved,
        c.hard,
        el('div', { class: 'fill' }, [
          bar(c, `${c.resource} on ${c.member}: ${barWords(c, 'over its cap')}`),
          c.exceeded ? el('span', { class: 'over' }, ['over cap']) : '',
        ]),
      ]),
      q.memberCaps.map((c) => ({
        class: `member-cap${c.exceeded ? ' exceeded' : ''}`,
        'data-member': c.member,
        'data-resource': c.resource,
      })),
    ),
  ];
}

function workloadsSection(q: PageQuota): Child[] {
  const { rows, more, problems, usageAsOf, usageNotShown } = q.workloads;
  const parts: Child[] = [el('h3', {}, ['Usage by workload'])];
  if (!rows.length) {
    parts.push(el('p', { class: 'empty' }, ['Nothing uses or holds this quota.']));
  } else {
    // Used and reserved per workload come from the reconciler's usage record, which may not be there yet.
    const split = usageAsOf !== undefined;
    parts.push(
      table(
        ['Binding (clusters)', 'Charged', 'In flight', ...(split ? ['Used', 'Reserved'] : [])],
        rows.map((row) => [
          row.binding === OTHER_USAGE
            ? el('span', { class: 'other', title: 'pods no binding owns, or running beyond their charge' }, [
                'not from a binding',
              ])
            : el('span', {}, [
                row.binding,
                // Under the name, not in a column of their own: the table fits a phone.
                el('span', { class: 'where' }, [row.clusters.join(', ') || 'not scheduled']),
              ]),
          lines(entries(row.charged)),
          lines(entries(row.inFlight)),
          ...(split ? [lines(entries(row.observed ?? {})), lines(entries(row.reserved ?? {}))] : []),
        ]),
        rows.map((row) => ({ class: 'workload', 'data-binding': row.binding })),
      ),
    );
    if (more) parts.push(el('p', { class: 'hint' }, [`and ${more} smaller ones`]));
    parts.push(
      el('p', { class: 'hint usage-as-of' }, [
        split
          ? `Used and reserved by workload as the members ran at ${usageAsOf}.`
          : `Used and reserved by workload not shown: ${usageNotShown ?? 'no usage of the members'}.`,
      ]),
    );
  }
  if (problems.length) parts.push(el('p', { class: 'problems' }, [`Could not read: ${problems.join('; ')}`]));
  return parts;
}

function quotaCard(q: PageQuota): HTMLElement {
  // OverQuota counts the member caps too.
  const exceeded = [...q.resources, ...q.memberCaps].some((r) => r.exceeded);
  const resources = q.resources.map((r) => r.resource);
  const card = el(
    'section',
    { class: `quota${exceeded ? ' exceeded' : ''}`, 'data-namespace': q.namespace, 'data-name': q.name },
    [
      el('h2', {}, [
        el('span', { class: 'namespace' }, [`${q.namespace} /`]),
        el('span', { class: 'name' }, [q.name]),
        el('span', { class: 'percent' }, [`${q.percentUsed}% full`]),
        ...(q.enforcement === 'Deny'
          ? []
          : [
              el('span', { class: 'enforcement', title: 'spec.enforcement: refusals are not enforced' }, [
                q.enforcement,
              ]),
            ]),
      ]),
      el(
        'ul',
        { class: 'conditions' },
        q.conditions.map((c) => {
          const good = ALARM_WHEN_TRUE.has(c.type) ? c.status !== 'True' : c.status === 'True';
          return el(
            'li',
            { class: good ? 'good' : 'bad', title: c.reason + (c.message ? `: ${c.message}` : '') },
            [`${c.type} ${c.status}`],
          );
        }),
      ),
      el(
        'div',
        { class: 'resources' },
        q.resources.map((r) =>
          resourceRow(
            r,
            q.trends.find((t) => t.resource === r.resource),
          ),
        ),
      ),
    ],
  );
  card.append(el('p', { class: 'hint trend-source' }, [`Trends: ${q.trendSource}.`]));
  card.append(...memberCapsSection(q));
  card.append(...workloadsSection(q));
  card.append(el('h3', {}, ['Per cluster']));
  card.append(
    q.clusters.length
      ? table(
          ['Cluster', 'State', 'Last sync', ...resources],
          q.clusters.map((c) => [
            c.name,
            el('span', { class: `state-${KNOWN_STATES.includes(c.state) ? c.state : 'other'}` }, [c.state]),
            el('span', { title: c.lastSyncTime }, [`${c.lastSyncAge} ago`]),
            ...resources.map((r) => c.used[r] ?? '0'),
          ]),
        )
      : el('p', { class: 'empty' }, ['No cluster has reported usage yet.']),
  );
  card.append(el('h3', {}, ['Claims in flight']));
  card.append(
    q.reservations.length
      ? table(
          ['Binding', 'Reserved', 'Expires'],
          q.reservations.map((r) => [r.binding, pairs(r.reserved), r.expirationTime || '-']),
        )
      : el('p', { class: 'empty' }, [
          'None: every admitted change is stored, and held by its binding above.',
        ]),
  );
  card.append(el('h3', {}, ['Waiting for room']));
  card.append(
    q.waiting.length
      ? table(
          ['Binding', 'Requested', 'Free', 'Since'],
          q.waiting.map((w) => [w.binding, pairs(w.requested), pairs(w.free), w.since]),
        )
      : el('p', { class: 'empty' }, ['Nothing: no change this quota refused is still waiting.']),
  );
  if (q.enforcement !== 'Deny' || q.wouldBeDenied.length) {
    card.append(el('h3', {}, ['Would be denied (not enforced)']));
    card.append(
      q.wouldBeDenied.length
        ? table(
            ['Binding', 'Enforcement', 'Admitted at', 'Refusal'],
            q.wouldBeDenied.map((w) => [w.binding, w.enforcement, w.at, w.message]),
          )
        : el('p', { class: 'empty' }, [
            `Nothing in the last hour: spec.enforcement is ${q.enforcement}, and every change fit.`,
          ]),
    );
  }
  if (q.problems.length) {
    card.append(el('p', { class: 'problems' }, [`Could not read: ${q.problems.join('; ')}`]));
  }
  return card;
}

/** Replaces the list of quotas with those of `snapshot`. */
export function render(snapshot: PageSnapshot, who: HTMLElement, list: HTMLElement): void {
  who.textContent = snapshot.user;
  if (!snapshot.quotas.length) {
    list.replaceChildren(
      el('p', { class: 'empty' }, [
        'There is no KarmadaQuota you may read. A federation admin can grant get on karmadaquotas in your namespace.',
      ]),
    );
    return;
  }
  list.replaceChildren(
    el('p', { class: 'legend' }, [
      el('span', { class: 'l-used' }, ['used']),
      el('span', { class: 'l-reserved' }, ['reserved (admitted, not yet seen in the clusters)']),
      el('span', { class: 'l-over' }, ['over quota']),
      el('span', { class: 'l-trend' }, ['used over the last 24 hours']),
    ]),
    ...snapshot.quotas.map(quotaCard),
  );
}
