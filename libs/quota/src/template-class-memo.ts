/**
 * The priority classes of a template's latest versions read, kept so that the old object of a
 * binding UPDATE is judged with the class of the template version it names, not the one the
 * template has now (docs/concepts/scopes.md#karmadas-feature-gate). Pure: the services keep the memo
 * in Redis (libs/usage snapshot-layout.ts templateClassKey) and do only its I/O.
 */
import { isLaterVersion, isResourceVersion } from './state.js';

/** Template versions remembered per template: a binding names one of the last few. */
export const CLASS_MEMO_VERSIONS = 4;

/** resourceVersion -> priority class ('' for none), in the order kept (oldest first). */
export type ClassMemo = readonly (readonly [resourceVersion: string, priorityClassName: string])[];

/** The template version read: its resourceVersion and the class of its pods ('' for none). */
export interface ReadClass {
  resourceVersion?: string;
  priorityClassName: string;
}

/**
 * Does a binding naming `resourceVersion` of its template name an older version than the one read
 * (`current`)? Only then can the memo tell another class.
 */
export function namesOlderVersion(resourceVersion: string | undefined, current: ReadClass): boolean {
  return isLaterVersion(current.resourceVersion, resourceVersion);
}

/**
 * The class to judge a binding with that names `resourceVersion` of its template: the memo's for
 * that version when the binding names an older one than read; otherwise, and when no service read
 * that version (or the memo is unknown), the class read.
 */
export function classForVersion(
  memo: ClassMemo | undefined,
  resourceVersion: string | undefined,
  current: ReadClass,
): string {
  if (!namesOlderVersion(resourceVersion, current)) return current.priorityClassName;
  const remembered = memo?.find(([version]) => version === resourceVersion);
  return remembered ? remembered[1] : current.priorityClassName;
}

/**
 * The memo with this version's class added, at most CLASS_MEMO_VERSIONS kept: the highest versions
 * when every one reads as a revision (isResourceVersion), else the latest added. Undefined when the
 * version is remembered already (a version's class never changes) or older than every one kept:
 * nothing to write.
 */
export function rememberClass(
  memo: ClassMemo,
  resourceVersion: string,
  priorityClassName: string,
): ClassMemo | undefined {
  if (memo.some(([version]) => version === resourceVersion)) return undefined;
  const added: ClassMemo = [...memo, [resourceVersion, priorityClassName]];
  const comparable = added.every(([version]) => isResourceVersion(version));
  const ordered = comparable
    ? [...added].sort(([a], [b]) => (isLaterVersion(a, b) ? 1 : isLaterVersion(b, a) ? -1 : 0))
    : added;
  const kept = ordered.slice(-CLASS_MEMO_VERSIONS);
  return kept.some(([version]) => version === resourceVersion) ? kept : undefined;
}

export function encodeClassMemo(memo: ClassMemo): string {
  return JSON.stringify(memo);
}

/** The memo as stored (JSON pairs); an error naming what is wrong with it. */
export function decodeClassMemo(raw: string): ClassMemo | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return { error: `template class memo is not JSON: ${(err as Error).message}` };
  }
  const isPair = (p: unknown): p is [string, string] =>
    Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && p[0] !== '' && typeof p[1] === 'string';
  if (!Array.isArray(parsed) || !parsed.every(isPair))
    return {
      error: `template class memo must be a list of [resourceVersion, priorityClassName], got ${raw.slice(0, 80)}`,
    };
  return parsed;
}
