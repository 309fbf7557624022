import { createHash } from 'node:crypto';
import type { KarmadaQuota } from '#api';

/** Who a bearer token belongs to, as the Karmada API server's TokenReview says. */
export interface Caller {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** Namespaces whose KarmadaQuotas a caller may get: every one, or those listed. */
export type NamespaceAccess = 'all' | ReadonlySet<string>;

const HOW_TO_SEND =
  'send a Kubernetes bearer token of the Karmada API server as "Authorization: Bearer <token>" (e.g. from kubectl create token)';

/** The token of an `Authorization: Bearer <token>` header, or why there is none. */
export function bearerToken(header: string | undefined): { token: string } | { problem: string } {
  if (!header?.trim()) return { problem: `no bearer token: ${HOW_TO_SEND}` };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  if (!match) return { problem: `the Authorization header is not a bearer token: ${HOW_TO_SEND}` };
  return { token: match[1]! };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Cache key of a token: its hash, so no cache ever holds a credential. */
export const tokenKey = (token: string): string => sha256(token);

/** Cache key of a caller's access: the same user with other groups or extras is someone else. */
export function subjectKey(caller: Caller): string {
  const extra = Object.keys(caller.extra)
    .sort()
    .map((key) => [key, [...caller.extra[key]!].sort()]);
  return sha256(JSON.stringify([caller.username, caller.uid, [...caller.groups].sort(), extra]));
}

/** Every namespace that holds a KarmadaQuota, sorted. */
export function namespacesOf(quotas: readonly KarmadaQuota[]): string[] {
  return [...new Set(quotas.map((q) => q.metadata?.namespace ?? ''))].filter(Boolean).sort();
}

/** The quotas in namespaces the caller may read, sorted by namespace and name. */
export function visibleQuotas(quotas: readonly KarmadaQuota[], access: NamespaceAccess): KarmadaQuota[] {
  const mayRead = (namespace: string | undefined) =>
    !!namespace && (access === 'all' || access.has(namespace));
  const key = (q: KarmadaQuota) => `${q.metadata?.namespace}/${q.metadata?.name}`;
  return quotas.filter((q) => mayRead(q.metadata?.namespace)).sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

/** `work` over every item with at most `limit` running at once; results in the items' order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
