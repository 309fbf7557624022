import * as k8s from '@kubernetes/client-node';
import { describeError, isApiStatus, WORKLOAD_USAGE } from '#api';
import { recordedObservations, USAGE_RECORD_NAME, type WorkloadObservations } from '#quota-view';

/** A record changes at most every USAGE_RECORD_SECONDS; the live streams ask for it at each refresh. */
const KEEP_MS = 2_000;
/** A Karmada API server that does not answer leaves the split out rather than hold the page. */
const READ_TIMEOUT_MS = 2_000;

/** The record as got: the object (undefined when there is none), or why it could not be got. */
type Got = { record: unknown } | { problem: string };

/**
 * Each namespace's usage record (the reconciler writes it; libs/quota-view usage-record.ts), got
 * from the Karmada API server when asked and kept for a moment: the workloads' observed/reserved
 * split without the console reading Redis. A record that cannot be got says why instead.
 */
export class UsageRecords {
  private readonly objects: k8s.CustomObjectsApi;
  private readonly kept = new Map<string, { at: number; got: Promise<Got> }>();

  constructor(karmada: k8s.KubeConfig) {
    this.objects = karmada.makeApiClient(k8s.CustomObjectsApi);
  }

  async observations(namespace: string, now: Date): Promise<WorkloadObservations> {
    const got = await this.get(namespace);
    return 'problem' in got ? got : recordedObservations(got.record, now);
  }

  private get(namespace: string): Promise<Got> {
    const now = Date.now();
    for (const [key, entry] of this.kept) if (now - entry.at >= KEEP_MS) this.kept.delete(key);
    const kept = this.kept.get(namespace);
    if (kept) return kept.got;
    const { group, version, plural, kind } = WORKLOAD_USAGE;
    const request = this.objects.getNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name: USAGE_RECORD_NAME,
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${READ_TIMEOUT_MS / 1000} s`)),
        READ_TIMEOUT_MS,
      );
    });
    const got = Promise.race([request, timeout])
      .finally(() => clearTimeout(timer))
      .then(
        (record: unknown): Got => ({ record }),
        (err: unknown): Got =>
          isApiStatus(err, 404)
            ? { record: undefined }
            : {
                problem:
                  `${kind} ${USAGE_RECORD_NAME} could not be read (the console needs get on ${plural}.${group} ` +
                  `in the Karmada API server): ${describeError(err)}`,
              },
      );
    this.kept.set(namespace, { at: now, got });
    return got;
  }
}
