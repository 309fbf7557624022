import type { QuotaStore } from '#service-kit';
import {
  NO_OBSERVER,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BatchObserver,
  type BindingChange,
  type Pending,
} from './admission-strategy.js';
import {
  admitWithCas,
  projected,
  refuseOrProject,
  selectionOf,
  type CasOptions,
  type Projection,
} from './cas-round.js';

export type BatcherOptions = Omit<CasOptions, 'conflictRetryDelayMs'>;

/**
 * Admission for one namespace at a time, batched: every request that arrives while a batch is in
 * flight joins the next one, which is decided in order against a running total (libs/quota) and
 * costs one status write per changed quota (cas-round.ts). A request that arrives while a batch is
 * in flight is first decided against a projection (the batch in flight as decided, or before it is,
 * the quotas a caching store holds: CachedQuotaStore; plus the requests queued since, as if
 * admitted): if that refuses it, it is refused at once instead of waiting for the write,
 * unless a change of the same binding is waiting or in flight (it may write the claim this one
 * would rely on).
 */
export class AdmissionBatcher implements AdmissionStrategy {
  private readonly queues = new Map<string, Pending[]>();
  /** The batch being decided and written, per namespace with one. */
  private readonly inFlight = new Map<string, Pending[]>();
  /** Per namespace with a batch in flight: its quotas once that batch and the queue behind it are written. */
  private readonly projections = new Map<string, Projection>();

  constructor(
    private readonly store: QuotaStore,
    private readonly options: BatcherOptions,
    private readonly observer: BatchObserver = NO_OBSERVER,
  ) {}

  admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome> {
    const namespace = change.item.binding.namespace;
    const refusal = this.refusedOnArrival(change);
    if (refusal) {
      this.observer.refusedOnArrival();
      return Promise.resolve(refusal);
    }
    return new Promise((resolve) => {
      const queue = this.queues.get(namespace) ?? [];
      queue.push({ change, answerBy, resolve });
      this.queues.set(namespace, queue);
      if (!this.inFlight.has(namespace)) void this.drain(namespace);
    });
  }

  /** The refusal of a change arriving while its namespace has a batch in flight, if the projection refuses it. */
  private refusedOnArrival(change: BindingChange): AdmissionOutcome | undefined {
    const { namespace, name } = change.item.binding;
    const flying = this.inFlight.get(namespace);
    if (flying === undefined) return undefined; // decided at once anyway
    const sameBinding = (p: Pending) => p.change.item.binding.name === name;
    if (flying.some(sameBinding) || this.queues.get(namespace)?.some(sameBinding)) return undefined;
    let projection = this.projections.get(namespace);
    if (projection === undefined) {
      const cached = this.store.cached?.(namespace);
      projection = cached && projected(cached, namespace, selectionOf(this.store));
      if (projection === undefined) return undefined;
      this.projections.set(namespace, projection);
    }
    return refuseOrProject(projection, change, this.options);
  }

  private async drain(namespace: string): Promise<void> {
    try {
      for (;;) {
        const batch = this.queues.get(namespace)?.splice(0) ?? [];
        if (batch.length === 0) break;
        this.inFlight.set(namespace, batch);
        this.projections.delete(namespace);
        this.observer.batch(batch.length);
        await admitWithCas(
          {
            store: this.store,
            namespace,
            options: { ...this.options, conflictRetryDelayMs: 0 },
            observer: this.observer,
            // Requests queued before it was decided are not in it: they may be refused later, never wrongly.
            onDecided: (projection) => this.projections.set(namespace, projection),
          },
          batch,
        );
      }
    } finally {
      this.inFlight.delete(namespace);
      this.projections.delete(namespace);
      this.queues.delete(namespace);
    }
  }
}
