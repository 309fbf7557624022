/**
 * Validation of a KarmadaQuota or a ClusterKarmadaQuota, run by the webhook on CREATE/UPDATE.
 * Kubernetes-style field errors (k8s pkg/apis/core/validation ValidateResourceQuota), with messages
 * that tell a federation admin what to change. Keys this product cannot enforce are rejected, never silently ignored.
 *
 * Resource names (`spec.hard[<name>]`):
 * - a Kubernetes qualified name (`[prefix/]name`, the prefix a DNS subdomain);
 * - accepted only when enforced, i.e. charged to bindings AND observed in the members
 *   (isEnforcedQuotaKey): without `/`, one of STANDARD_QUOTA_RESOURCES, `hugepages-<size>` or
 *   `requests.hugepages-<size>` (size a positive quantity); with `/`, `count/<resource>` or
 *   `count/<resource>.<group>` (lowercase, as API resources are named; not `count/pods`), an
 *   extended resource (`example.com/gpu`) or its request form (`requests.example.com/gpu`);
 * - everything else is rejected with the reason and what to use instead: `limits.*` (a
 *   ResourceBinding carries only requests), `requests.storage` and per-storage-class names (a binding
 *   carries no claims' sizes), `services.nodeports`/`services.loadbalancers` (nor a Service's type),
 *   `kubernetes.io/*` names (no container requests them as extended resources).
 * Values: valid quantities (strings, or numbers as the CRD's int-or-string allows), >= 0, and whole
 * numbers for object counts and extended resources (isIntegerQuotaResource).
 */
import { parseResourceList, type FieldError } from '#quantity';
import { Quantity, QuantityError } from '#quantity';
import { ENFORCEMENTS, isJsonObject, SCOPE_SELECTOR_OPERATORS } from '#api';
import {
  COUNT_PREFIX,
  HUGEPAGES_PREFIX,
  isEnforcedQuotaKey,
  isIntegerQuotaResource,
  LIMITS_PREFIX,
  REQUESTS_PREFIX,
  STANDARD_QUOTA_RESOURCES,
  STORAGE_CLASS_SUFFIX,
  stripRequests,
} from './resource-names.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import { isEnforcement } from './enforcement.js';

const QUALIFIED_NAME_MAX = 63;
const DNS_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RESOURCE_AND_GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** ResourceQuota scopes that exist in Kubernetes but cannot be judged from a ResourceBinding, and why. */
const UNSUPPORTED_SCOPES: Readonly<Record<string, string>> = {
  Terminating: "a ResourceBinding does not carry the pods' activeDeadlineSeconds",
  NotTerminating: "a ResourceBinding does not carry the pods' activeDeadlineSeconds",
  BestEffort: "a ResourceBinding does not carry the pods' limits, so their QoS class is unknown",
  NotBestEffort: "a ResourceBinding does not carry the pods' limits, so their QoS class is unknown",
  CrossNamespacePodAffinity: "a ResourceBinding does not carry the pods' affinity terms",
  VolumeAttributesClass: 'a ResourceBinding does not carry persistent volume claims',
};

const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

const EXAMPLES = 'example.com/gpu, requests.example.com/gpu, hugepages-2Mi or count/deployments.apps';

/** Checks that `name` is a Kubernetes qualified name: `[dns-subdomain/]name`. */
function qualifiedNameErrors(name: string): string[] {
  const parts = name.split('/');
  if (parts.length > 2) {
    return [
      `a resource name may contain at most one "/" (a DNS subdomain prefix, then a name), e.g. ${EXAMPLES}`,
    ];
  }
  const errors: string[] = [];
  const local = parts.length === 2 ? (parts[1] as string) : name;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix.length === 0) errors.push('the prefix before "/" must not be empty, e.g. example.com/gpu');
    else if (prefix.length > DNS_SUBDOMAIN_MAX || !DNS_SUBDOMAIN.test(prefix)) {
      errors.push(
        `the prefix ${JSON.stringify(prefix)} must be a DNS subdomain: lowercase letters, digits, "-" and ".", ` +
          `starting and ending with a letter or digit, at most ${DNS_SUBDOMAIN_MAX} characters`,
      );
    }
  }
  if (local.length === 0) errors.push('the name must not be empty');
  else if (local.length > QUALIFIED_NAME_MAX) {
    errors.push(`the name after the prefix must be at most ${QUALIFIED_NAME_MAX} characters`);
  } else if (!QUALIFIED_NAME.test(local)) {
    errors.push(
      `the name ${JSON.stringify(local)} must consist of letters, digits, "-", "_" or ".", ` +
        'and start and end with a letter or digit',
    );
  }
  return errors;
}

const SERVICE_TYPE_REASON =
  "a ResourceBinding does not carry a Service's type, so node ports and load balancers cannot be " +
  'charged at admission; limit services (or count/services) here, and';
const CLAIM_STORAGE_REASON =
  'a ResourceBinding does not carry the persistent volume claims of its workload, nor their sizes, so ' +
  'the storage they request cannot be charged at admission; limit the number of claims with ' +
  'persistentvolumeclaims (or count/persistentvolumeclaims) here, and';

/** Why a well-known key is not enforced, and what to use instead. */
const NOT_ENFORCED_REASONS: Readonly<Record<string, string>> = {
  'services.nodeports': `${SERVICE_TYPE_REASON} services.nodeports with a ResourceQuota in each member cluster`,
  'services.loadbalancers': `${SERVICE_TYPE_REASON} services.loadbalancers with a ResourceQuota in each member cluster`,
  'requests.storage': `${CLAIM_STORAGE_REASON} requests.storage with a ResourceQuota in each member cluster`,
  storage: `${CLAIM_STORAGE_REASON} requests.storage with a ResourceQuota in each member cluster`,
  'count/pods':
    "a workload's pods are charged and observed under pods, which counts the pods that have not finished; " +
    'use pods',
};

/**
 * Why a `spec.hard` key is not accepted, or [] when it is. A key is accepted only when it is
 * enforced (isEnforcedQuotaKey: charged to bindings and observed in the members) and well formed;
 * every other key gets a message naming it and what to use instead.
 */
export function quotaResourceNameErrors(name: string): string[] {
  const syntax = qualifiedNameErrors(name);
  if (syntax.length > 0) return syntax;
  if (isEnforcedQuotaKey(name)) return formatErrors(name);
  return [notEnforcedMessage(name)];
}

/** A huge page size or a counted resource that cannot be read. */
function formatErrors(name: string): string[] {
  const hugepages = stripRequests(name) ?? name;
  if (hugepages.startsWith(HUGEPAGES_PREFIX)) return hugePageSizeErrors(name, hugepages);
  if (name.startsWith(COUNT_PREFIX) && !RESOURCE_AND_GROUP.test(name.slice(COUNT_PREFIX.length))) {
    return [
      `${name} must name an API resource as count/<resource>.<group> (count/<resource> for the core group), ` +
        'in lowercase plural form, e.g. count/deployments.apps or count/services',
    ];
  }
  return [];
}

function notEnforcedMessage(name: string): string {
  if (name.startsWith(LIMITS_PREFIX)) {
    const resource = name.slice(LIMITS_PREFIX.length);
    return (
      `${name} is not supported: a ResourceBinding carries only resource requests, so limits cannot be ` +
      `enforced; use ${REQUESTS_PREFIX}${resource} or ${resource}`
    );
  }
  if (Object.hasOwn(NOT_ENFORCED_REASONS, name))
    return `${name} is not supported: ${NOT_ENFORCED_REASONS[name]}`;
  if (!name.includes('/')) {
    return (
      `${name} is not a standard quota resource: use one of ${STANDARD_QUOTA_RESOURCES.join(', ')}, ` +
      `hugepages-<size>, requests.hugepages-<size>, or a fully qualified name such as ${EXAMPLES}`
    );
  }
  if (name.slice(0, name.indexOf('/')).endsWith(STORAGE_CLASS_SUFFIX)) {
    return `${name} is not supported: storage requested per storage class is not tracked; ${CLAIM_STORAGE_REASON} ${name} with a ResourceQuota in each member cluster`;
  }
  return (
    `${name} is not supported: no ResourceBinding is charged for it, so it cannot be enforced; use an ` +
    `extended resource (a name outside kubernetes.io) or an object count, e.g. ${EXAMPLES}`
  );
}

function hugePageSizeErrors(name: string, hugepages: string): string[] {
  const size = hugepages.slice(HUGEPAGES_PREFIX.length);
  try {
    if (Quantity.parse(size).sign() > 0) return [];
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
  }
  return [`${name} must name a huge page size as hugepages-<size>, e.g. hugepages-2Mi or hugepages-1Gi`];
}

function validateHard(hard: unknown, errors: FieldError[], field = 'spec.hard'): void {
  if (hard === undefined || hard === null) {
    errors.push({ field, message: `Required value: set the limits, e.g. {cpu: "100", memory: 200Gi}` });
    return;
  }
  if (!isJsonObject(hard)) {
    errors.push({
      field,
      message: `must be an object mapping resource names to quantities, e.g. {cpu: "100"}; got ${kindOf(hard)}`,
      value: hard,
    });
    return;
  }
  const parsed = parseResourceList(hard, field);
  const valueErrors = new Map(parsed.errors.map((error) => [error.field, error]));
  for (const name of Object.keys(hard).sort()) {
    const keyField = `${field}[${name}]`;
    for (const message of quotaResourceNameErrors(name))
      errors.push({ field: keyField, message, value: name });
    const valueError = valueErrors.get(keyField);
    if (valueError !== undefined) {
      errors.push({
        field: keyField,
        message: `${valueError.message}; use a quantity such as "2", "500m" or "1Gi"`,
        value: valueError.value,
      });
      continue;
    }
    const quantity = parsed.list[name];
    if (quantity === undefined) continue;
    const raw = hard[name];
    if (quantity.sign() < 0) {
      errors.push({
        field: keyField,
        message: `must be greater than or equal to 0, got ${quantity.toString()}`,
        value: raw,
      });
    } else if (isIntegerQuotaResource(name) && quantity.nanoValue() % 1_000_000_000n !== 0n) {
      errors.push({
        field: keyField,
        message: `must be a whole number: ${name} is counted in whole units, so ${quantity.toString()} cannot be enforced; use e.g. "${quantity.value()}"`,
        value: raw,
      });
    }
  }
}

function validateScopeSelector(selector: unknown, errors: FieldError[]): void {
  const field = 'spec.scopeSelector';
  if (selector === undefined || selector === null) return;
  if (!isJsonObject(selector)) {
    errors.push({
      field,
      message: `must be an object with matchExpressions, got ${kindOf(selector)}`,
      value: selector,
    });
    return;
  }
  const expressions = selector['matchExpressions'];
  if (expressions === undefined || expressions === null) return;
  if (!Array.isArray(expressions)) {
    errors.push({
      field: `${field}.matchExpressions`,
      message: `must be a list of {scopeName, operator, values}, got ${kindOf(expressions)}`,
      value: expressions,
    });
    return;
  }
  const operators = SCOPE_SELECTOR_OPERATORS.map((o) => JSON.stringify(o)).join(', ');
  expressions.forEach((expression: unknown, i) => {
    const path = `${field}.matchExpressions[${i}]`;
    if (!isJsonObject(expression)) {
      errors.push({
        field: path,
        message: `must be an object {scopeName, operator, values}, got ${kindOf(expression)}`,
        value: expression,
      });
      return;
    }
    const { scopeName, operator, values } = expression;
    if (scopeName === undefined || scopeName === null || scopeName === '') {
      errors.push({ field: `${path}.scopeName`, message: 'Required value: use "PriorityClass"' });
    } else if (!(SUPPORTED_SCOPES as readonly unknown[]).includes(scopeName)) {
      const name = String(scopeName);
      const why = Object.hasOwn(UNSUPPORTED_SCOPES, name)
        ? `scope ${name} is not supported: ${UNSUPPORTED_SCOPES[name]}, so it cannot be judged at admission`
        : `unknown scope ${JSON.stringify(scopeName)}`;
      errors.push({
        field: `${path}.scopeName`,
        message: `${why}; the only supported scope is "PriorityClass" (matched against the workload's priorityClassName)`,
        value: scopeName,
      });
    }
    if (operator === undefined || operator === null || operator === '') {
      errors.push({ field: `${path}.operator`, message: `Required value: use one of ${operators}` });
      return;
    }
    if (!(SCOPE_SELECTOR_OPERATORS as readonly unknown[]).includes(operator)) {
      errors.push({
        field: `${path}.operator`,
        message: `Unsupported value ${JSON.stringify(operator)}: supported values: ${operators}`,
        value: operator,
      });
      return;
    }
    const valuesField = `${path}.values`;
    const hasValues = Array.isArray(values) ? values.length > 0 : values !== undefined && values !== null;
    if (operator === 'In' || operator === 'NotIn') {
      if (!Array.isArray(values) || values.length === 0) {
        errors.push({
          field: valuesField,
          message: `Required value: operator ${operator} needs at least one priority class name, e.g. [high]`,
          value: values,
        });
        return;
      }
      values.forEach((value: unknown, j) => {
        if (typeof value !== 'string' || value.length === 0) {
          errors.push({
            field: `${valuesField}[${j}]`,
            message: 'must be a non-empty priority class name',
            value,
          });
        }
      });
    } else if (hasValues) {
      errors.push({
        field: valuesField,
        message: `Forbidden: operator ${operator} takes no values; remove values or use In/NotIn`,
        value: values,
      });
    }
  });
}

/**
 * `spec.clusters[]`: each entry caps one member cluster named once, or the members a label selector
 * matches, and has its caps (member-caps.ts).
 */
function validateMemberCaps(caps: unknown, errors: FieldError[]): void {
  if (caps === undefined || caps === null) return;
  if (!Array.isArray(caps)) {
    errors.push({
      field: 'spec.clusters',
      message: `must be a list of member caps, e.g. [{name: member1, hard: {cpu: "60"}}]; got ${kindOf(caps)}`,
      value: caps,
    });
    return;
  }
  const named = new Set<string>();
  caps.forEach((cap: unknown, i) => {
    const field = `spec.clusters[${i}]`;
    if (!isJsonObject(cap)) {
      errors.push({ field, message: `must be an object with name and hard, got ${kindOf(cap)}`, value: cap });
      return;
    }
    const name = cap['name'];
    const selector = cap['labelSelector'];
    const hasName = name !== undefined && name !== null;
    const hasSelector = selector !== undefined && selector !== null;
    if (hasName === hasSelector) {
      errors.push({
        field,
        message: hasName
          ? 'Invalid value: set name or labelSelector, not both'
          : 'Required value: the member cluster to cap, by name or by labelSelector',
      });
    } else if (hasSelector) {
      validateLabelSelector(selector, `${field}.labelSelector`, errors);
    } else if (typeof name !== 'string' || name.length > DNS_SUBDOMAIN_MAX || !DNS_SUBDOMAIN.test(name)) {
      errors.push({
        field: `${field}.name`,
        message: 'must be the name of a Karmada Cluster (a DNS-1123 subdomain, e.g. member1)',
        value: name,
      });
    } else if (named.has(name)) {
      errors.push({
        field: `${field}.name`,
        message: `Duplicate value: member cluster ${name} is capped by an earlier entry; merge the two`,
        value: name,
      });
    }
    if (typeof name === 'string') named.add(name);
    validateHard(cap['hard'], errors, `${field}.hard`);
  });
}

/** A metav1.LabelSelector: matchLabels of strings, matchExpressions of In/NotIn/Exists/DoesNotExist. */
function validateLabelSelector(selector: unknown, field: string, errors: FieldError[]): void {
  if (!isJsonObject(selector)) {
    errors.push({
      field,
      message: `must be a label selector object, got ${kindOf(selector)}`,
      value: selector,
    });
    return;
  }
  const labels = selector['matchLabels'];
  if (labels !== undefined && labels !== null) {
    if (!isJsonObject(labels) || Object.values(labels).some((v) => typeof v !== 'string'))
      errors.push({
        field: `${field}.matchLabels`,
        message: 'must map label keys to strings',
        value: labels,
      });
  }
  const expressions = selector['matchExpressions'];
  if (expressions === undefined || expressions === null) return;
  if (!Array.isArray(expressions)) {
    errors.push({ field: `${field}.matchExpressions`, message: 'must be a list', value: expressions });
    return;
  }
  expressions.forEach((expression: unknown, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    if (!isJsonObject(expression) || typeof expression['key'] !== 'string' || expression['key'] === '') {
      errors.push({ field: `${at}.key`, message: 'Required value: the label key' });
      return;
    }
    const operator = expression['operator'];
    const values = expression['values'];
    const listed = Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string');
    if (operator === 'In' || operator === 'NotIn') {
      if (!listed)
        errors.push({
          field: `${at}.values`,
          message: `Required value: ${operator} needs label values`,
          value: values,
        });
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (Array.isArray(values) && values.length > 0)
        errors.push({ field: `${at}.values`, message: `must be empty for ${operator}`, value: values });
    } else {
      errors.push({
        field: `${at}.operator`,
        message: 'Unsupported value: supported values: "In", "NotIn", "Exists", "DoesNotExist"',
        value: operator,
      });
    }
  });
}

/** The selector's expressions as compared for immutability: absent, null and empty are the same. */
function scopeOf(spec: unknown): string {
  const selector = isJsonObject(spec) ? spec['scopeSelector'] : undefined;
  const expressions = isJsonObject(selector) ? selector['matchExpressions'] : selector;
  return Array.isArray(expressions) && expressions.length === 0
    ? 'null'
    : JSON.stringify(expressions ?? null);
}

/**
 * Field errors of a KarmadaQuota object (its spec); [] when valid. With `old` (an UPDATE's stored
 * object) the scope may not change, as ResourceQuota's scopes may not: a change decided against the
 * old scope could otherwise be counted against neither (docs/concepts/scopes.md).
 */
export function validateKarmadaQuota(obj: unknown, old?: unknown): FieldError[] {
  return validateQuota('KarmadaQuota', obj, old);
}

/**
 * Field errors of a ClusterKarmadaQuota object; [] when valid: every rule of validateKarmadaQuota
 * on the spec they share (the scope immutable on an update too), a namespaceSelector that is a
 * valid label selector ({} selects every namespace), and no metadata.namespace, as the kind is
 * cluster-scoped (docs/concepts/cluster-quotas.md).
 */
export function validateClusterKarmadaQuota(obj: unknown, old?: unknown): FieldError[] {
  const errors = validateQuota('ClusterKarmadaQuota', obj, old);
  if (!isJsonObject(obj)) return errors;
  const metadata = obj['metadata'];
  const namespace = isJsonObject(metadata) ? metadata['namespace'] : undefined;
  if (namespace !== undefined && namespace !== null && namespace !== '') {
    errors.unshift({
      field: 'metadata.namespace',
      message:
        'Forbidden: a ClusterKarmadaQuota is cluster-scoped: remove the namespace, and select the ' +
        'namespaces it spans with spec.namespaceSelector (or use a KarmadaQuota for one namespace)',
      value: namespace,
    });
  }
  const spec = obj['spec'];
  if (!isJsonObject(spec)) return errors;
  const selector = spec['namespaceSelector'];
  if (selector === undefined || selector === null) {
    errors.push({
      field: 'spec.namespaceSelector',
      message:
        'Required value: the namespaces the quota spans, by their labels, e.g. ' +
        '{matchLabels: {team: a}}; {} selects every namespace',
    });
  } else {
    validateLabelSelector(selector, 'spec.namespaceSelector', errors);
  }
  return errors;
}

/** The rules both kinds apply to the spec they share; `kind` names the object in messages. */
function validateQuota(
  kind: 'KarmadaQuota' | 'ClusterKarmadaQuota',
  obj: unknown,
  old: unknown,
): FieldError[] {
  const errors: FieldError[] = [];
  if (!isJsonObject(obj)) {
    return [{ field: '<root>', message: `must be a ${kind} object, got ${kindOf(obj)}`, value: obj }];
  }
  const spec = obj['spec'];
  if (spec === undefined || spec === null) {
    const needs = kind === 'KarmadaQuota' ? 'spec.hard' : 'spec.hard and spec.namespaceSelector';
    return [{ field: 'spec', message: `Required value: a ${kind} needs ${needs}` }];
  }
  if (!isJsonObject(spec)) {
    return [
      {
        field: 'spec',
        message: `must be an object with hard and scopeSelector, got ${kindOf(spec)}`,
        value: spec,
      },
    ];
  }
  validateHard(spec['hard'], errors);
  validateMemberCaps(spec['clusters'], errors);
  validateScopeSelector(spec['scopeSelector'], errors);
  if (isJsonObject(old) && scopeOf(old['spec']) !== scopeOf(spec)) {
    errors.push({
      field: 'spec.scopeSelector',
      message:
        "Invalid value: field is immutable: a quota's scope cannot change, as a ResourceQuota's cannot; " +
        'create a quota with the new scope, then delete this one',
      value: spec['scopeSelector'],
    });
  }
  const enforcement = spec['enforcement'];
  if (enforcement !== undefined && enforcement !== null && !isEnforcement(enforcement)) {
    errors.push({
      field: 'spec.enforcement',
      message: `Unsupported value: supported values: ${ENFORCEMENTS.map((e) => `"${e}"`).join(', ')}`,
      value: enforcement,
    });
  }
  if (spec['scopes'] !== undefined && spec['scopes'] !== null) {
    errors.push({
      field: 'spec.scopes',
      message: `Forbidden: ${kind} has no spec.scopes; use spec.scopeSelector.matchExpressions with scopeName PriorityClass`,
      value: spec['scopes'],
    });
  }
  return errors;
}
