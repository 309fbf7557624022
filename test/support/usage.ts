import type { Redis } from 'ioredis';
import { decodeSnapshot, usageKey, type ClusterNamespaceSnapshot } from '#usage';

/** What the aggregator published for a namespace in a member cluster, or undefined when nothing. */
export async function publishedUsage(
  redis: Redis,
  namespace: string,
  cluster: string,
): Promise<ClusterNamespaceSnapshot | undefined> {
  const raw = await redis.get(usageKey(namespace, cluster));
  if (raw === null) return undefined;
  const decoded = decodeSnapshot(raw);
  if (!decoded.ok) throw new Error(decoded.error);
  return decoded.value;
}
