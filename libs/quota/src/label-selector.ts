/**
 * Kubernetes label selectors (metav1.LabelSelector) against an object's labels, as Karmada reads them
 * for its policies' cluster affinities and as member caps select members (member-caps.ts). Pure.
 */
import { isJsonObject } from '#api';

/** One requirement of a label or field selector against the value it reads (undefined: absent). */
export function requirementMatches(operator: string, values: string[], value: string | undefined): boolean {
  switch (operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [bound] = values;
      if (value === undefined || bound === undefined || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(bound))
        return false;
      return operator === 'Gt' ? Number(value) > Number(bound) : Number(value) < Number(bound);
    }
    default:
      return false;
  }
}

/** A metav1.LabelSelector against labels; a malformed selector matches nothing, as in Karmada. */
export function labelsMatch(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  if (!isJsonObject(selector)) return false;
  const matchLabels = isJsonObject(selector['matchLabels']) ? selector['matchLabels'] : {};
  for (const [key, value] of Object.entries(matchLabels)) if (labels[key] !== value) return false;
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : [];
  return expressions.every((expression) => {
    if (!isJsonObject(expression) || typeof expression['key'] !== 'string') return false;
    const values = Array.isArray(expression['values']) ? expression['values'].map(String) : [];
    const operator = String(expression['operator']);
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(operator)) return false;
    return requirementMatches(
      operator,
      values,
      Object.hasOwn(labels, expression['key']) ? labels[expression['key']] : undefined,
    );
  });
}
