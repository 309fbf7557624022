/**
 * ResourceList helpers, mirroring k8s.io/apiserver/pkg/quota/v1 (Add, Subtract, Max, Mask, IsZero,
 * LessThanOrEqual, Equals) and the quota admission plugin's prettyPrint. All functions are pure:
 * they never mutate their arguments, and they build results with own properties only (a resource
 * named "__proto__" is stored as data, never as a prototype).
 */
import { Quantity, QuantityError } from './quantity.js';

/** Resource name -> quantity (Kubernetes `corev1.ResourceList`). */
export type ResourceList = Record<string, Quantity>;

/** A Kubernetes-style validation error, e.g. `{ field: 'spec.hard[cpu]', message: ..., value: '1x' }`. */
export interface FieldError {
  field: string;
  message: string;
  value?: unknown;
}

/** How a FieldError reads in a message: `spec.hard[cpu]: <why>`. */
export const describeFieldError = (error: FieldError): string => `${error.field}: ${error.message}`;

const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sorted by code unit, which for resource names (ASCII) is Go's sort.Strings byte order. The lists
 * built here already hold their keys in that order, so they are checked before they are sorted.
 */
function sortedKeys(list: object): string[] {
  const keys = Object.keys(list);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort(compareNames);
  }
  return keys;
}

const has = (list: object, key: string): boolean => Object.hasOwn(list, key);

const get = (list: ResourceList, key: string): Quantity | undefined =>
  has(list, key) ? list[key] : undefined;

/** Own data properties only: a plain assignment of "__proto__" would set the prototype instead. */
function build(entries: readonly (readonly [string, Quantity])[]): ResourceList {
  const list: ResourceList = {};
  for (const [key, value] of entries) {
    if (key === '__proto__')
      Object.defineProperty(list, key, { value, enumerable: true, writable: true, configurable: true });
    else list[key] = value;
  }
  return list;
}

/**
 * Decodes a wire ResourceList (`Record<string, string>` in JSON) into quantities; never throws.
 * Per entry, like Kubernetes' Quantity.UnmarshalJSON:
 * - a string is trimmed of surrounding whitespace, then parsed with Quantity.parse;
 * - null decodes to zero (Go's UnmarshalJSON("null") leaves a zero Quantity);
 * - a number is parsed from `String(n)`: Go parses the JSON number's text, and JavaScript's
 *   shortest round-trip text ("0.5", "1e+21", "1e-7") is always valid quantity syntax. Once JSON.parse
 *   has run the original text is gone, so `1e3` arrives as 1000 (DecimalSI "1k", where Go would keep
 *   DecimalExponent "1e3"). NaN, Infinity and integers beyond Number.MAX_SAFE_INTEGER (which
 *   JSON.parse may already have rounded) are rejected: send such values as strings;
 * - a bigint is taken as an exact integer; anything else is an error.
 * `raw` null or undefined is an empty list; any other non-object is a single error at `fieldPath`.
 */
export function parseResourceList(
  raw: unknown,
  fieldPath: string,
): { list: ResourceList; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (raw === null || raw === undefined) return { list: {}, errors };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    const kind = Array.isArray(raw) ? 'array' : typeof raw;
    errors.push({
      field: fieldPath,
      message: `must be an object mapping resource names to quantities, got ${kind}`,
      value: raw,
    });
    return { list: {}, errors };
  }
  const entries: [string, Quantity][] = [];
  for (const key of sortedKeys(raw)) {
    const value: unknown = (raw as Record<string, unknown>)[key];
    const result = parseWireQuantity(value);
    if (result instanceof Quantity) entries.push([key, result]);
    else errors.push({ field: `${fieldPath}[${key}]`, message: result, value });
  }
  return { list: build(entries), errors };
}

function parseWireQuantity(value: unknown): Quantity | string {
  let text: string;
  switch (typeof value) {
    case 'string':
      text = value.trim();
      break;
    case 'number':
      if (!Number.isFinite(value)) return `must be a finite number, got ${String(value)}`;
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        return `number ${String(value)} is beyond JavaScript's exact integer range; send it as a string`;
      }
      text = String(value);
      break;
    case 'bigint':
      return Quantity.fromInt(value);
    case 'object':
      if (value === null) return Quantity.zero();
      return 'must be a quantity string or number, got object';
    default:
      return `must be a quantity string or number, got ${typeof value}`;
  }
  try {
    return Quantity.parse(text);
  } catch (err) {
    if (err instanceof QuantityError) return err.message;
    throw err;
  }
}

/** quota.Add: every key of either list; a key in only one list is copied. */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  return combine(
    a,
    b,
    (x, y) => x.add(y),
    (y) => y,
  );
}

/** quota.Subtract: every key of either list; a key only in `b` becomes its negation. */
export function subtractLists(a: ResourceList, b: ResourceList): ResourceList {
  return combine(
    a,
    b,
    (x, y) => x.sub(y),
    (y) => y.neg(),
  );
}

/** quota.Max: every key of either list, the larger value; on a tie `b`'s quantity (and format) wins. */
export function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  return combine(
    a,
    b,
    (x, y) => (x.cmp(y) <= 0 ? y : x),
    (y) => y,
  );
}

/** Every key of either list, in sorted order (a merge of the two sorted key lists). */
function combine(
  a: ResourceList,
  b: ResourceList,
  both: (x: Quantity, y: Quantity) => Quantity,
  onlyB: (y: Quantity) => Quantity,
): ResourceList {
  const keysA = sortedKeys(a);
  const keysB = sortedKeys(b);
  const entries: [string, Quantity][] = [];
  let i = 0;
  let j = 0;
  while (i < keysA.length || j < keysB.length) {
    const keyA = keysA[i];
    const keyB = keysB[j];
    if (keyB === undefined || (keyA !== undefined && keyA < keyB)) {
      entries.push([keyA as string, a[keyA as string] as Quantity]);
      i++;
    } else if (keyA === undefined || keyB < keyA) {
      entries.push([keyB, onlyB(b[keyB] as Quantity)]);
      j++;
    } else {
      const x = a[keyA] as Quantity;
      const y = b[keyB];
      entries.push([keyA, y === undefined ? x : both(x, y)]);
      i++;
      j++;
    }
  }
  return build(entries);
}

/** quota.Mask: only the entries whose key is in `keys`. */
export function maskList(list: ResourceList, keys: Iterable<string>): ResourceList {
  const wanted = new Set(keys);
  return build(
    sortedKeys(list)
      .filter((key) => wanted.has(key))
      .map((key) => [key, list[key] as Quantity]),
  );
}

/** quota.IsZero: true when every quantity is zero (an empty list is zero). */
export function isZeroList(list: ResourceList): boolean {
  return Object.values(list).every((q) => q.isZero());
}

/** quota.RemoveZeros: drops the zero entries. */
export function removeZeros(list: ResourceList): ResourceList {
  return build(
    sortedKeys(list)
      .filter((key) => !list[key]?.isZero())
      .map((key) => [key, list[key] as Quantity]),
  );
}

/** What `a` holds beyond `b`: the entries of a - b above zero (nothing is owed back for the rest). */
export function excessOf(a: ResourceList, b: ResourceList): ResourceList {
  const difference = subtractLists(a, b);
  return build(
    sortedKeys(difference)
      .filter((key) => (difference[key] as Quantity).sign() > 0)
      .map((key) => [key, difference[key] as Quantity]),
  );
}

/** quota.IsNegative: the keys whose quantity is below zero, sorted. */
export function negativeKeys(list: ResourceList): string[] {
  return sortedKeys(list).filter((key) => (list[key] as Quantity).sign() < 0);
}

/**
 * quota.LessThanOrEqual: for every key present in both lists, a[key] <= b[key]. Keys missing from
 * either side are not checked (an unlimited resource, or one not requested). `exceeded` is sorted.
 */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { ok: boolean; exceeded: string[] } {
  const exceeded = sortedKeys(b).filter((key) => {
    const x = get(a, key);
    return x !== undefined && x.cmp(b[key] as Quantity) > 0;
  });
  return { ok: exceeded.length === 0, exceeded };
}

/**
 * quota.Equals: the same set of keys and equal values (format is ignored). A key missing on one side
 * is NOT treated as zero: `{}` and `{ cpu: 0 }` differ, as in Kubernetes.
 */
export function listsEqual(a: ResourceList, b: ResourceList): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => {
    const y = get(b, key);
    return y !== undefined && (a[key] as Quantity).equals(y);
  });
}

/** The wire form: keys sorted, each value as Kubernetes serializes it (Quantity.toString()). */
export function formatList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(sortedKeys(list).map((key) => [key, (list[key] as Quantity).toString()]));
}

/**
 * The quota admission plugin's prettyPrint: `cpu=4,memory=1Gi`, keys sorted, canonical quantities.
 * `keys` restricts the output to those resources and prints one the list lacks as 0, so a denial
 * message never shows an empty `used:`.
 */
export function formatListInline(list: ResourceList, keys?: Iterable<string>): string {
  const shown = keys === undefined ? Object.keys(list) : [...new Set(keys)];
  return shown
    .sort()
    .map(
      (key) =>
        `${key}=${(Object.hasOwn(list, key) ? (list[key] as Quantity) : Quantity.zero()).toCanonicalString()}`,
    )
    .join(',');
}
