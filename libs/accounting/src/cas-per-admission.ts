import type { QuotaStore } from '#service-kit';
import {
  NO_OBSERVER,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BatchObserver,
  type BindingChange,
} from './admission-strategy.js';
import { admitWithCas, type CasOptions } from './cas-round.js';

/** The simple design retries a conflicting status write 5 times, 10 ms apart, then gives up. */
export const CAS_PER_ADMISSION_RETRIES = 5;
export const CAS_PER_ADMISSION_RETRY_DELAY_MS = 10;

/**
 * The simple design, kept to measure what batching gains (`ADMISSION_MODE=cas-per-admission`,
 * `npm run bench`): every admission on its own reads the namespace's quotas and writes its own
 * compare-and-swap status update, concurrently with the others. The same rules as the batcher (a
 * batch of one); a request that still meets a conflict after CAS_PER_ADMISSION_RETRIES retries fails
 * closed.
 */
export class CasPerAdmission implements AdmissionStrategy {
  constructor(
    private readonly store: QuotaStore,
    private readonly options: Omit<CasOptions, 'maxConflictRetries' | 'conflictRetryDelayMs'>,
    private readonly observer: BatchObserver = NO_OBSERVER,
  ) {}

  admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome> {
    this.observer.batch(1);
    return new Promise((resolve) => {
      void admitWithCas(
        {
          store: this.store,
          namespace: change.item.binding.namespace,
          options: {
            ...this.options,
            maxConflictRetries: CAS_PER_ADMISSION_RETRIES,
            conflictRetryDelayMs: CAS_PER_ADMISSION_RETRY_DELAY_MS,
          },
          observer: this.observer,
        },
        [{ change, answerBy, resolve }],
      );
    });
  }
}
