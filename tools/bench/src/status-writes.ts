import { RESOURCE_BINDING, type KarmadaQuota, type Reservation } from '#api';
import { quotasPath } from './bodies.js';
import { CorrectnessError, type BenchContext } from './context.js';
import { apiServerCpuSeconds, createNamespaces, createQuota, inParallel } from './host.js';
import { HttpsJsonClient } from './https-client.js';

/**
 * status-writes: what one KarmadaQuota status write costs the host API server, by how many reservation
 * entries the status lists. Every admission that claims quota and every settle is such a write, so
 * this is the unit the admission scenarios' throughput is bounded by.
 */
export interface StatusWriteRun {
  entries: number;
  writes: number;
  writesPerSec: number;
  /** The API server's own CPU (process_cpu_seconds_total) per write, in ms. */
  apiServerCpuMsPerWrite: number;
  /** One status body as written, in bytes. */
  bodyBytes: number;
}

export interface StatusWriteFigures {
  writers: number;
  runs: StatusWriteRun[];
}

/** Entries per status: a quiet quota, and one with a claim per binding of the end-to-end namespaces. */
export const STATUS_WRITE_ENTRIES = [10, 100] as const;
const WRITERS = 4;
/** Writes per writer before timing starts: the API server's first writes of a quota cost more. */
const WARM_UP_WRITES = 10;

const quotaPath = (namespace: string, name: string) => `${quotasPath(namespace)}/${name}`;

/** The entry of binding `i`; `round` changes its charge so that every write changes the status. */
function entry(i: number, round: number, expirationTime: string): Reservation {
  const charge = { cpu: `${200 + round}m`, memory: '256Mi', pods: '2' };
  return {
    reservedBy: {
      apiVersion: RESOURCE_BINDING.apiVersion,
      kind: RESOURCE_BINDING.kind,
      name: `binding-${i}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    },
    reserved: charge,
    charge,
    expirationTime,
  };
}

/**
 * For each entry count, WRITERS clients each rewrite the status of a quota of their own with
 * compare-and-swap writes (the resourceVersion each write returned), one after another, changing one
 * entry per write. Correctness: every write lands (no conflict: each quota has one writer) and each
 * quota read back holds every entry as last written.
 */
export async function runStatusWrites(ctx: BenchContext): Promise<StatusWriteFigures> {
  const host = ctx.federation.info.host;
  const writesPerWriter = ctx.sizes.statusWritesPerWriter;
  const client = HttpsJsonClient.forApiServer(host, WRITERS);
  const runs: StatusWriteRun[] = [];
  try {
    for (const entries of STATUS_WRITE_ENTRIES) {
      const namespaces = Array.from({ length: WRITERS }, (_, w) => `status-writes-${entries}-${w}`);
      await createNamespaces(host, namespaces);
      await inParallel(namespaces, WRITERS, (namespace) =>
        createQuota(host, namespace, 'team', { cpu: '10k', memory: '100Ti', pods: '100k' }),
      );
      const expirationTime = new Date(Date.now() + 3_600_000).toISOString();
      const write = async (quota: KarmadaQuota): Promise<KarmadaQuota> => {
        const { namespace, name } = quota.metadata as { namespace: string; name: string };
        const res = await client.call('PUT', `${quotaPath(namespace, name)}/status`, JSON.stringify(quota));
        if (res.status !== 200)
          throw new CorrectnessError(
            `status write of ${namespace}/${name} answered HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`,
          );
        return res.body as KarmadaQuota;
      };
      const quotas = await Promise.all(
        namespaces.map(async (namespace) => {
          const res = await client.get(quotaPath(namespace, 'team'));
          const quota = res.body as KarmadaQuota;
          quota.status!.reservations = Array.from({ length: entries }, (_, i) => entry(i, 0, expirationTime));
          return write(quota);
        }),
      );
      ctx.log(
        `status-writes: ${WRITERS} writers x ${writesPerWriter} writes of a status with ${entries} entries`,
      );
      const rewrite = (rounds: number, offset: number) =>
        Promise.all(
          quotas.map(async (first, w) => {
            let quota = first;
            for (let round = offset + 1; round <= offset + rounds; round++) {
              quota.status!.reservations![round % entries] = entry(round % entries, round, expirationTime);
              quota = await write(quota);
            }
            quotas[w] = quota;
          }),
        );
      await rewrite(WARM_UP_WRITES, 0);
      const cpuBefore = await apiServerCpuSeconds(client);
      const started = performance.now();
      await rewrite(writesPerWriter, WARM_UP_WRITES);
      const seconds = (performance.now() - started) / 1000;
      const cpuMs = ((await apiServerCpuSeconds(client)) - cpuBefore) * 1000;
      for (const quota of quotas) {
        const { namespace, name } = quota.metadata as { namespace: string; name: string };
        const stored = (await client.get(quotaPath(namespace, name))).body as KarmadaQuota;
        if (JSON.stringify(stored.status?.reservations) !== JSON.stringify(quota.status?.reservations))
          throw new CorrectnessError(
            `${namespace}/${name}: the status read back differs from the last write`,
          );
      }
      const writes = WRITERS * writesPerWriter;
      runs.push({
        entries,
        writes,
        writesPerSec: writes / seconds,
        apiServerCpuMsPerWrite: cpuMs / writes,
        bodyBytes: Buffer.byteLength(JSON.stringify(quotas[0])),
      });
    }
  } finally {
    client.close();
  }
  return { writers: WRITERS, runs };
}
