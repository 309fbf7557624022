import type { ResourceBinding } from '#api';
import type { AdmissionItem } from '#quota';
import type { QuotaStore } from '#service-kit';
import {
  admitWithCas,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BatchObserver,
} from './admission-batcher.js';

/** The simple design retries a conflicting status write 5 times, 10 ms apart, then gives up. */
export const CAS_PER_ADMISSION_RETRIES = 5;
export const CAS_PER_ADMISSION_RETRY_DELAY_MS = 10;

/**
 * The simple design, kept to measure what batching gains (`ADMISSION_MODE=cas-per-admission`,
 * `npm run bench`): every admission on its own reads the namespace's quotas and writes its own
 * compare-and-swap status update, concurrently with the others. The same rules and the same
 * rollback of a later-round denial as the batcher (a batch of one); a request that still meets a
 * conflict after CAS_PER_ADMISSION_RETRIES retries fails closed.
 */
export class CasPerAdmission implements AdmissionStrategy {
  constructor(
    private readonly store: QuotaStore,
    private readonly options: { ttlSeconds: number; now?: () => Date },
    private readonly observer: BatchObserver = { batch: () => {}, conflict: () => {} },
  ) {}

  admit(item: AdmissionItem, binding: ResourceBinding, answerBy: number): Promise<AdmissionOutcome> {
    this.observer.batch(1);
    return new Promise((resolve) => {
      void admitWithCas(
        this.store,
        item.binding.namespace,
        [{ item, binding, answerBy, resolve }],
        {
          ttlSeconds: this.options.ttlSeconds,
          maxConflictRetries: CAS_PER_ADMISSION_RETRIES,
          conflictRetryDelayMs: CAS_PER_ADMISSION_RETRY_DELAY_MS,
          now: this.options.now ?? (() => new Date()),
        },
        this.observer,
      );
    });
  }
}
