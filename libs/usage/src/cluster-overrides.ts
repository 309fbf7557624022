/**
 * What the OverridePolicies and ClusterOverridePolicies that apply to a binding make each of its
 * target clusters run, as Karmada v1.18.2 builds the cluster's Work (pkg/controllers/binding
 * common.go ensureWork, pkg/util/overridemanager): the template with the cluster's replicas, then
 * every matching ClusterOverridePolicy and then OverridePolicy, each list in Karmada's order, their
 * plaintext JSON patches applied. The charge (libs/quota charge.ts) takes the result per cluster;
 * docs/concepts/binding-cost.md#overridepolicies says what is read and what is not. Pure.
 */
import jsonPatch, { type Operation } from 'fast-json-patch';
import { isJsonObject, type Cluster, type ResourceBinding } from '#api';
import {
  interpretTemplate,
  isNativeReplicaKind,
  labelsMatch,
  memberReplicas,
  requirementMatches,
  reviseReplicas,
  type ClusterOverride,
} from '#quota';
import { replicaRequests } from './template-binding.js';

type Json = Readonly<Record<string, unknown>>;

/** The override policies that may apply to a binding, as the Karmada API server stores them. */
export interface OverridePolicies {
  /** Every ClusterOverridePolicy. */
  cluster: readonly unknown[];
  /** The OverridePolicies of the binding's namespace. */
  namespaced: readonly unknown[];
}

export interface ClusterOverridesInput {
  binding: ResourceBinding;
  /** The binding's resource template as stored (its labels select policies; its spec is patched). */
  template: unknown;
  policies: OverridePolicies;
  /** Karmada's Cluster objects by name (labels and fields select rules). */
  clusters: ReadonlyMap<string, Cluster>;
}

/**
 * The target clusters whose workload an override changes, with what it runs there; or an error
 * naming a target cluster a matching rule needs and `clusters` lacks (a cluster joined since the
 * caller's watch last heard: Karmada cannot build its Work without the Cluster either).
 */
export function clusterOverrides(input: ClusterOverridesInput): ClusterOverride[] | { error: string } {
  const template = input.template;
  if (!isJsonObject(template) || !isNativeReplicaKind(template['apiVersion'], template['kind'])) return [];
  const matching = [
    ...ordered(input.policies.cluster, template, 'ClusterOverridePolicy'),
    ...ordered(input.policies.namespaced, template, 'OverridePolicy'),
  ];
  if (matching.length === 0) return [];
  const found: ClusterOverride[] = [];
  for (const target of targetClusters(input.binding)) {
    const cluster = input.clusters.get(target.name);
    const rules = matching.flatMap((policy) => policy.rules.map((rule) => ({ policy: policy.name, rule })));
    if (cluster === undefined) {
      if (rules.some(({ rule }) => rule.targetCluster !== undefined || rule.patches.length > 0))
        return {
          error: `Cluster ${target.name} is not known yet to judge the OverridePolicies of its share`,
        };
      continue;
    }
    const applied = rules.filter(
      ({ rule }) => !rule.targetCluster || clusterMatches(cluster, rule.targetCluster),
    );
    const patches = applied.flatMap(({ rule }) => rule.patches);
    if (patches.length === 0) continue;
    const revised = reviseReplicas(template, target.replicas)!;
    let patched: Json;
    try {
      patched = jsonPatch.applyPatch(structuredClone(revised), patches, false, true).newDocument;
    } catch {
      // Karmada fails that cluster's Work and keeps the one it has: the binding's share is what runs.
      continue;
    }
    const change = changed(revised, patched);
    if (change.replicas === undefined && change.resourceRequest === undefined) continue;
    const policies = [
      ...new Set(applied.filter(({ rule }) => rule.patches.length > 0).map(({ policy }) => policy)),
    ];
    found.push({ cluster: target.name, ...change, policies });
  }
  return found;
}

/** The target clusters with their scheduled replicas (`spec.clusters`). */
function targetClusters(rb: ResourceBinding): { name: string; replicas: number }[] {
  const clusters: unknown = rb.spec?.clusters;
  if (!Array.isArray(clusters)) return [];
  return clusters.flatMap((c) =>
    isJsonObject(c) && typeof c['name'] === 'string'
      ? [{ name: c['name'], replicas: typeof c['replicas'] === 'number' ? c['replicas'] : 0 }]
      : [],
  );
}

/** What the patches changed of what a quota counts: the member's replicas, one replica's requests. */
function changed(revised: Json, patched: Json): Pick<ClusterOverride, 'replicas' | 'resourceRequest'> {
  const replicas = memberReplicas(patched);
  const before = requestsOf(revised);
  const after = requestsOf(patched);
  return {
    ...(replicas !== memberReplicas(revised) ? { replicas } : {}),
    ...(JSON.stringify(before) !== JSON.stringify(after) ? { resourceRequest: after } : {}),
  };
}

function requestsOf(template: Json): Record<string, string> {
  return replicaRequests(interpretTemplate(template)?.podSpec ?? {});
}

interface Rule {
  targetCluster?: Json;
  patches: Operation[];
}

interface MatchingPolicy {
  name: string;
  rules: Rule[];
}

/**
 * The policies whose resource selectors select the template (none: all), in Karmada's order: by how
 * precisely they select it (all < label selector < name), then by name.
 */
function ordered(policies: readonly unknown[], template: Json, kind: string): MatchingPolicy[] {
  const matching = policies.flatMap((policy) => {
    if (!isJsonObject(policy) || !isJsonObject(policy['spec'])) return [];
    const spec = policy['spec'];
    const selectors = Array.isArray(spec['resourceSelectors']) ? spec['resourceSelectors'] : [];
    const precision =
      selectors.length === 0 ? MATCH_ALL : Math.max(NO_MATCH, ...selectors.map((s) => selects(s, template)));
    if (precision === NO_MATCH) return [];
    const metadata = isJsonObject(policy['metadata']) ? policy['metadata'] : {};
    const name = String(metadata['name'] ?? '');
    const label =
      kind === 'OverridePolicy'
        ? `${kind} ${String(metadata['namespace'] ?? '')}/${name}`
        : `${kind} ${name}`;
    return [{ name, precision, policy: { name: label, rules: rulesOf(spec) } }];
  });
  matching.sort((a, b) => a.precision - b.precision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return matching.map((m) => m.policy);
}

const NO_MATCH = 0;
const MATCH_ALL = 1;
const MATCH_LABELS = 2;
const MATCH_NAME = 3;

/** How precisely one resource selector selects the template (pkg/util selector.go). */
function selects(selector: unknown, template: Json): number {
  if (!isJsonObject(selector)) return NO_MATCH;
  const metadata = isJsonObject(template['metadata']) ? template['metadata'] : {};
  const namespace = selector['namespace'];
  if (
    selector['apiVersion'] !== template['apiVersion'] ||
    selector['kind'] !== template['kind'] ||
    (typeof namespace === 'string' && namespace !== '' && namespace !== metadata['namespace'])
  )
    return NO_MATCH;
  const name = selector['name'];
  if (typeof name === 'string' && name !== '') return name === metadata['name'] ? MATCH_NAME : NO_MATCH;
  if (selector['labelSelector'] === undefined || selector['labelSelector'] === null) return MATCH_ALL;
  return labelsMatch(selector['labelSelector'], labelsOf(metadata)) ? MATCH_LABELS : NO_MATCH;
}

/** `overrideRules`, or the deprecated `targetCluster` + `overriders` as one rule. */
function rulesOf(spec: Json): Rule[] {
  const rules =
    Array.isArray(spec['overrideRules']) && spec['overrideRules'].length > 0
      ? spec['overrideRules']
      : [{ targetCluster: spec['targetCluster'], overriders: spec['overriders'] }];
  return rules.flatMap((rule) => {
    if (!isJsonObject(rule)) return [];
    const overriders = isJsonObject(rule['overriders']) ? rule['overriders'] : {};
    const plaintext = Array.isArray(overriders['plaintext']) ? overriders['plaintext'] : [];
    const patches = plaintext.flatMap((p): Operation[] =>
      isJsonObject(p) &&
      typeof p['path'] === 'string' &&
      ['add', 'remove', 'replace'].includes(String(p['operator']))
        ? [patchOf(String(p['operator']), p['path'], p['value'])]
        : [],
    );
    const target = rule['targetCluster'];
    return [{ ...(isJsonObject(target) ? { targetCluster: target } : {}), patches }];
  });
}

/** One JSON patch operation as Karmada marshals it: a zero `value` is omitted (`omitempty`), so null. */
function patchOf(op: string, path: string, value: unknown): Operation {
  if (op === 'remove') return { op, path };
  const omitted = value === undefined || value === null || value === 0 || value === '' || value === false;
  return { op: op as 'add' | 'replace', path, value: omitted ? null : value };
}

/** Does a rule's `targetCluster` (ClusterAffinity) select the cluster (pkg/util selector.go)? */
function clusterMatches(cluster: Cluster, affinity: Json): boolean {
  const name = cluster.metadata?.name ?? '';
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  if (strings(affinity['exclude']).includes(name)) return false;
  if (
    affinity['labelSelector'] != null &&
    !labelsMatch(affinity['labelSelector'], cluster.metadata?.labels ?? {})
  )
    return false;
  const fieldSelector = affinity['fieldSelector'];
  const expressions =
    isJsonObject(fieldSelector) && Array.isArray(fieldSelector['matchExpressions'])
      ? fieldSelector['matchExpressions']
      : [];
  for (const expression of expressions) {
    if (!isJsonObject(expression)) return false;
    const key = expression['key'];
    const values = strings(expression['values']);
    if (key === 'zone') {
      if (!zonesMatch(String(expression['operator']), values, cluster.spec?.zones ?? [])) return false;
      continue;
    }
    const field =
      key === 'provider' ? cluster.spec?.provider : key === 'region' ? cluster.spec?.region : undefined;
    if (!requirementMatches(String(expression['operator']), values, field || undefined)) return false;
  }
  const names = strings(affinity['clusterNames']);
  return names.length === 0 || names.includes(name);
}

function zonesMatch(operator: string, values: string[], zones: string[]): boolean {
  switch (operator) {
    case 'In':
      return zones.some((zone) => values.includes(zone));
    case 'NotIn':
      return !zones.some((zone) => values.includes(zone));
    case 'Exists':
      return zones.length > 0;
    case 'DoesNotExist':
      return zones.length === 0;
    default:
      return false;
  }
}

function labelsOf(metadata: Json): Record<string, string> {
  return isJsonObject(metadata['labels']) ? (metadata['labels'] as Record<string, string>) : {};
}
