/**
 * Which bindings a quota applies to: `spec.scopeSelector.matchExpressions`, ANDed, with ResourceQuota's
 * PriorityClass semantics (k8s pkg/quota/v1/evaluator/core/pods.go podMatchesScopeFunc, which evaluates
 * In/NotIn/DoesNotExist as a label selector over `{PriorityClass: <name>}`, the map being empty when the
 * pod has no priority class):
 *
 * | operator     | binding with class `c`  | binding without a class |
 * | ------------ | ----------------------- | ----------------------- |
 * | In [v...]    | c in values             | no match                |
 * | NotIn [v...] | c not in values         | MATCH                   |
 * | Exists       | match                   | no match                |
 * | DoesNotExist | no match                | match                   |
 *
 * The priority class is `spec.replicaRequirements.priorityClassName`, or the template's, set by the
 * services before any rule here runs (templateClassNeeded; docs/concepts/scopes.md#karmadas-feature-gate).
 * A multi-template binding
 * (`spec.components`) matches when ANY of its components matches the whole selector, each component
 * taking its own `replicaRequirements.priorityClassName` or, without one, the top-level one: a quota
 * scoped to "high" is then charged for a workload with any high-priority part, rather than letting it
 * through unaccounted.
 *
 * As in Kubernetes, an expression this product cannot evaluate (a scope other than PriorityClass, an
 * unknown operator, In/NotIn without values) never matches; validation rejects such quotas anyway.
 */
import { isJsonObject, type KarmadaQuota, type ResourceBinding } from '#api';
import { bindingTemplates } from './charge.js';
import { isNativeReplicaKind } from './karmada-interpreter.js';

/** The scopes this product can evaluate from a ResourceBinding. */
export const SUPPORTED_SCOPES = ['PriorityClass'] as const;

/** Does one expression match a template with this priority class ('' or undefined: none)? */
export function priorityClassMatches(expression: unknown, priorityClassName: string | undefined): boolean {
  if (typeof expression !== 'object' || expression === null) return false;
  const { scopeName, operator, values } = expression as Record<string, unknown>;
  if (scopeName !== 'PriorityClass') return false;
  const name = priorityClassName ?? '';
  const list = Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
  switch (operator) {
    case 'Exists':
      return name !== '';
    case 'DoesNotExist':
      return name === '';
    case 'In':
      return list.length > 0 && name !== '' && list.includes(name);
    case 'NotIn':
      return list.length > 0 && (name === '' || !list.includes(name));
    default:
      return false;
  }
}

/** The priority classes scopes are evaluated on: equal for two bindings -> every quota selects both or neither. */
function scopeInputs(rb: ResourceBinding): string[] {
  const templates = bindingTemplates(rb);
  const classes = templates.length === 0 ? [undefined] : templates.map((t) => t.priorityClassName);
  return [...new Set(classes.map((c) => c ?? ''))].sort();
}

/** Does every quota select both bindings or neither (the same priority classes)? */
export function sameScopeInputs(a: ResourceBinding, b: ResourceBinding): boolean {
  const x = scopeInputs(a);
  const y = scopeInputs(b);
  return x.length === y.length && x.every((c, i) => c === y[i]);
}

/**
 * Does the quota select only some bindings: one or more expressions, or a malformed selector (which
 * selects none, bindingMatchesScopes)?
 */
export function isScoped(quota: KarmadaQuota): boolean {
  const selector: unknown = quota?.spec?.scopeSelector;
  if (selector === undefined || selector === null) return false;
  if (!isJsonObject(selector)) return true;
  const expressions = selector['matchExpressions'];
  if (expressions === undefined || expressions === null) return false;
  return !Array.isArray(expressions) || expressions.length > 0;
}

/** Does the quota's scope selector select this binding? A quota without a selector selects every binding. */
export function bindingMatchesScopes(quota: KarmadaQuota, rb: ResourceBinding): boolean {
  if (!isScoped(quota)) return true;
  const selector: unknown = quota.spec?.scopeSelector;
  const expressions = isJsonObject(selector) ? selector['matchExpressions'] : undefined;
  if (!Array.isArray(expressions)) return false; // malformed: selects none
  return scopeInputs(rb).some((priorityClassName) =>
    expressions.every((expression) => priorityClassMatches(expression, priorityClassName)),
  );
}

/** Does any expression of the quota's selector look at the priority class? */
export function hasPriorityClassScope(quota: KarmadaQuota): boolean {
  const selector: unknown = quota?.spec?.scopeSelector;
  const expressions = isJsonObject(selector) ? selector['matchExpressions'] : undefined;
  return (
    Array.isArray(expressions) &&
    expressions.some((e) => isJsonObject(e) && e['scopeName'] === 'PriorityClass')
  );
}

/** The resource template a binding propagates, as `spec.resource` names it. */
export interface TemplateRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** The template's uid and resourceVersion when the detector wrote the binding, if given. */
  uid?: string;
  resourceVersion?: string;
}

/**
 * The template whose pod spec carries this binding's priority class, when the binding cannot tell it
 * itself: written without Karmada's ResourceQuotaEstimate gate (no `replicaRequirements.namespace`),
 * naming no class, for a single-template kind Karmada interprets natively. Undefined otherwise: the
 * binding's own class (none included) is the one scopes judge.
 */
export function templateClassNeeded(rb: ResourceBinding): TemplateRef | undefined {
  const requirements = isJsonObject(rb?.spec?.replicaRequirements) ? rb.spec.replicaRequirements : {};
  if (named(requirements['priorityClassName']) || named(requirements['namespace'])) return undefined;
  return templateRefOf(rb);
}

const named = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * The resource template of a single-template binding of a kind Karmada interprets natively, as
 * `spec.resource` names it; undefined for other bindings (their templates are not read).
 */
export function templateRefOf(rb: ResourceBinding): TemplateRef | undefined {
  const spec: unknown = rb?.spec;
  if (!isJsonObject(spec)) return undefined;
  if (Array.isArray(spec['components']) && spec['components'].length > 0) return undefined;
  const resource = spec['resource'];
  if (!isJsonObject(resource)) return undefined;
  const { apiVersion, kind, name, uid, resourceVersion } = resource;
  const namespace = named(resource['namespace']) ? resource['namespace'] : rb.metadata?.namespace;
  if (!isNativeReplicaKind(apiVersion, kind) || !named(name) || !named(namespace)) return undefined;
  return {
    apiVersion: apiVersion as string,
    kind: kind as string,
    namespace,
    name,
    ...(named(uid) ? { uid } : {}),
    ...(named(resourceVersion) ? { resourceVersion } : {}),
  };
}

/** The binding as scopes judge it: `priorityClassName` set from its template ('' or undefined: none). */
export function withTemplateClass(
  rb: ResourceBinding,
  priorityClassName: string | undefined,
): ResourceBinding {
  if (!priorityClassName) return rb;
  const requirements = isJsonObject(rb.spec?.replicaRequirements) ? rb.spec.replicaRequirements : {};
  return {
    ...rb,
    spec: { ...rb.spec, replicaRequirements: { ...requirements, priorityClassName } },
  } as ResourceBinding;
}
