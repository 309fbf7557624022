import type { QuotaStore } from '#service-kit';
import {
  NO_OBSERVER,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BatchObserver,
  type BindingChange,
  type Pending,
} from './admission-strategy.js';
import { admitWithCas, type CasOptions } from './cas-round.js';

export type BatcherOptions = Omit<CasOptions, 'conflictRetryDelayMs'>;

/**
 * Admission for one namespace at a time, batched: every request that arrives while a batch is in
 * flight joins the next one, which is decided in order against a running total (libs/quota) and
 * costs one status write per changed quota (cas-round.ts).
 */
export class AdmissionBatcher implements AdmissionStrategy {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<string>();

  constructor(
    private readonly store: QuotaStore,
    private readonly options: BatcherOptions,
    private readonly observer: BatchObserver = NO_OBSERVER,
  ) {}

  admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome> {
    const namespace = change.item.binding.namespace;
    return new Promise((resolve) => {
      const queue = this.queues.get(namespace) ?? [];
      queue.push({ change, answerBy, resolve });
      this.queues.set(namespace, queue);
      if (!this.draining.has(namespace)) void this.drain(namespace);
    });
  }

  private async drain(namespace: string): Promise<void> {
    this.draining.add(namespace);
    try {
      for (;;) {
        const batch = this.queues.get(namespace)?.splice(0) ?? [];
        if (batch.length === 0) break;
        this.observer.batch(batch.length);
        await admitWithCas(
          this.store,
          namespace,
          batch,
          { ...this.options, conflictRetryDelayMs: 0 },
          this.observer,
        );
      }
    } finally {
      this.draining.delete(namespace);
      this.queues.delete(namespace);
    }
  }
}
