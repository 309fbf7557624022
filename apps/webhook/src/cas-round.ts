import { describeError, type KarmadaQuota } from '#api';
import {
  admitBatch,
  bindingMatchesScopes,
  missingRequestErrors,
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type AdmissionItem,
  type BatchResult,
  type Decision,
} from '#quota';
import { formatList } from '#quantity';
import { ConflictError, type QuotaStore } from '#service-kit';
import { failClosed, type BatchObserver, type BindingChange, type Pending } from './admission-strategy.js';

/** How a batch is decided and how it meets a conflicting status write. */
export interface CasOptions {
  /** How long an admitted claim stays pending. */
  ttlSeconds: number;
  /** The longest an admitted change takes to be stored (the host API server's request timeout). */
  landingWindowSeconds: number;
  /** Conflicts tolerated: after each the quotas are read again and the batch decided again. */
  maxConflictRetries: number;
  /** Pause before re-reading after a conflict (0: at once). */
  conflictRetryDelayMs: number;
  /** Epoch ms: deadlines and claim expirations both come from it. */
  clock: () => number;
}

/**
 * Decides `batch` (admissions for one namespace, in order) against the namespace's quotas and writes
 * the result with one compare-and-swap status write per changed quota (libs/quota admission.ts says
 * what is decided). Items that need no write (denied, or asking nothing of any quota) are answered as
 * soon as they are decided. On a conflict, or when a request's deadline comes before a write is
 * started, the quotas are read again and the remaining items decided again: a denial is final, and
 * what an earlier round wrote for an item stays as a claim that lapses at its expiration (never less
 * than what was admitted: nothing is ever restored from an older copy). Resolves every admission,
 * failing closed when the quotas cannot be read or written; never rejects.
 */
export async function admitWithCas(
  store: QuotaStore,
  namespace: string,
  batch: Pending[],
  options: CasOptions,
  observer: BatchObserver,
): Promise<void> {
  try {
    await decideAndWrite(store, namespace, batch, options, observer);
  } catch (err) {
    const reason = describeError(err);
    for (const p of batch)
      p.resolve(failClosed(`reading or writing the namespace's KarmadaQuotas failed: ${reason}`));
  }
}

/** The admission item for one request against these quotas: which of them its old object held in. */
function itemFor(change: BindingChange, quotas: readonly KarmadaQuota[]): AdmissionItem {
  const { item, object, old } = change;
  const names = quotas.map((q) => q.metadata!.name!);
  return {
    ...item,
    ...(old
      ? {
          old: {
            charge: old.charge,
            quotas: names.filter((_, i) => bindingMatchesScopes(quotas[i]!, old.object)),
          },
        }
      : {}),
    // ResourceQuota's "must specify" rule needs each quota's hard keys: the core applies it.
    missingRequests: Object.fromEntries(
      quotas.map((q, i) => [
        names[i],
        missingRequestErrors(object, Object.keys(q.spec?.hard ?? {}), names[i]!),
      ]),
    ),
  };
}

/**
 * The changes decided in order against these quotas (libs/quota admitBatch); `unreadable` says why
 * when a quota's status cannot be parsed.
 */
function decide(
  quotas: readonly KarmadaQuota[],
  changes: readonly BindingChange[],
  now: number,
  options: Pick<CasOptions, 'ttlSeconds' | 'landingWindowSeconds'>,
): { result: BatchResult } | { unreadable: string } {
  const parsed = quotas.map((q) => ({ quota: q, ...parseQuotaState(q) }));
  const broken = parsed.filter((p) => p.errors.length > 0);
  if (broken.length > 0)
    return { unreadable: broken.map((b) => `${b.quota.metadata?.name}: ${b.errors.join('; ')}`).join(' | ') };
  const byName = new Map(quotas.map((q) => [q.metadata!.name!, q]));
  const result = admitBatch(
    parsed.map((p) => p.state),
    changes.map((change) => itemFor(change, quotas)),
    (quotaName, index) => bindingMatchesScopes(byName.get(quotaName)!, changes[index]!.object),
    {
      now: new Date(now),
      ttlSeconds: options.ttlSeconds,
      landingWindowSeconds: options.landingWindowSeconds,
    },
  );
  return { result };
}

/**
 * The refusal of `change` by quotas already at hand (the watch-fed cache), for a request that would
 * otherwise wait for the batch in flight to be written: undefined when they do not refuse it (it is
 * then decided in the next batch, as usual). Sound whatever the list's age, since a refusal admits
 * nothing: the batch in flight only adds claims, so what does not fit now would not fit after it
 * either; a list that lags the host may refuse what a fresh read would admit, as Kubernetes' quota
 * admission may from its informer (and the refusal is recorded as a waiting change, requeued when
 * quota frees).
 */
export function refusalFrom(
  quotas: readonly KarmadaQuota[],
  change: BindingChange,
  options: Pick<CasOptions, 'ttlSeconds' | 'landingWindowSeconds' | 'clock'>,
): Decision | undefined {
  const decided = decide(quotas, [change], options.clock(), options);
  if ('unreadable' in decided) return undefined; // the batch fails closed, saying why
  const decision = decided.result.decisions[0]!;
  return decision.allowed ? undefined : decision;
}

async function decideAndWrite(
  store: QuotaStore,
  namespace: string,
  batch: Pending[],
  options: CasOptions,
  observer: BatchObserver,
): Promise<void> {
  let live = batch;
  for (let round = 0; round <= options.maxConflictRetries; round++) {
    const quotas = await store.list(namespace);
    const now = options.clock();
    // Checked after the read, right before deciding: a request answered already (the controller's
    // deadline) must not have a write started for it.
    for (const p of live) {
      if (now >= p.answerBy) p.resolve(failClosed('the host API server did not answer in time'));
    }
    live = live.filter((p) => now < p.answerBy);
    if (live.length === 0) return;
    const decided = decide(
      quotas,
      live.map((p) => p.change),
      now,
      options,
    );
    if ('unreadable' in decided) {
      for (const p of live)
        p.resolve(failClosed(`a KarmadaQuota in ${namespace} cannot be read: ${decided.unreadable}`));
      return;
    }
    const { result } = decided;
    const waiting: Pending[] = [];
    live.forEach((p, i) => {
      if (result.awaitsWrite[i]) waiting.push(p);
      else p.resolve(result.decisions[i]!); // a denial is final; an admission needing nothing is too
    });
    if (waiting.length === 0) return;
    const deadline = Math.min(...waiting.map((p) => p.answerBy));
    const written = await writeChanged(store, quotas, result, deadline, options.clock);
    if (written === 'written') {
      for (const p of waiting) p.resolve({ allowed: true });
      return;
    }
    if (written === 'conflict') observer.conflict();
    live = waiting;
    if (options.conflictRetryDelayMs > 0) await sleep(options.conflictRetryDelayMs);
  }
  for (const p of live) {
    p.resolve(
      failClosed(
        `the KarmadaQuotas of ${namespace} kept changing under concurrent writers (${options.maxConflictRetries} conflicts in a row)`,
      ),
    );
  }
}

/**
 * Writes every changed quota in order, none once `deadline` has passed: 'conflict' when a write met a
 * newer resourceVersion, 'late' when the deadline stopped it, 'written' when all landed.
 */
async function writeChanged(
  store: QuotaStore,
  quotas: readonly KarmadaQuota[],
  result: BatchResult,
  deadline: number,
  clock: () => number,
): Promise<'written' | 'conflict' | 'late'> {
  const changed = new Set(result.changed);
  for (const [i, quota] of quotas.entries()) {
    if (!changed.has(quota.metadata!.name!)) continue;
    if (clock() >= deadline) return 'late';
    const state = result.quotas[i]!;
    try {
      await store.writeStatus(
        {
          ...quota,
          status: {
            ...quota.status,
            reservations: toWireReservations(state.reservations),
            reserved: formatList(sumReserved(state.reservations)),
          },
        },
        { deadline },
      );
    } catch (err) {
      if (err instanceof ConflictError) return 'conflict';
      throw err;
    }
  }
  return 'written';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
