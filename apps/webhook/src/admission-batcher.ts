import { describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  admitBatch,
  bindingMatchesScopes,
  missingRequestErrors,
  parseQuotaState,
  sumReserved,
  toWireReservations,
  type AdmissionItem,
  type Decision,
  type QuotaState,
  type ReservationEntry,
} from '#quota';
import { formatList } from '#quantity';
import { ConflictError, type QuotaStore } from '#service-kit';

export interface BatcherOptions {
  ttlSeconds: number;
  maxConflictRetries: number;
  now?: () => Date;
}

/** How a batch meets a conflicting status write: how many times it re-reads and how soon. */
export interface CasOptions {
  ttlSeconds: number;
  /** Conflicts tolerated: after each the quotas are read again and the batch re-evaluated. */
  maxConflictRetries: number;
  /** Pause before re-reading after a conflict (0: at once). */
  conflictRetryDelayMs: number;
  now: () => Date;
}

export interface BatchObserver {
  batch(size: number): void;
  conflict(): void;
}

/** A quota decision, or a refusal because the quota could not be checked (fail closed). */
export type AdmissionOutcome = Decision | { allowed: false; unavailable: true; message: string };

/** How the webhook decides and records admissions (ADMISSION_MODE): batched, or one CAS write each. */
export interface AdmissionStrategy {
  /**
   * `answerBy` (epoch ms): the webhook has answered by then, failing closed; nothing is written for
   * the request from then on, and what earlier rounds wrote for it is taken back.
   */
  admit(item: AdmissionItem, binding: ResourceBinding, answerBy: number): Promise<AdmissionOutcome>;
}

/** One admission waiting for its outcome. */
export interface Pending {
  item: AdmissionItem;
  binding: ResourceBinding;
  answerBy: number;
  resolve: (outcome: AdmissionOutcome) => void;
}

const sameBinding = (a: ReservationEntry, b: AdmissionItem) =>
  a.binding.namespace === b.binding.namespace && a.binding.name === b.binding.name;

/**
 * Admission for one namespace at a time, batched: every request that arrives while a batch is in
 * flight joins the next one, which is evaluated in order against a running total (libs/quota) and
 * costs one status write per changed quota. On a 409 the quotas are read again and the still-admitted
 * requests re-evaluated: a denied request stays denied, and a request denied in a later round has
 * the reservations it got in earlier rounds taken back, so a denial never leaves a partial reservation.
 */
export class AdmissionBatcher implements AdmissionStrategy {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<string>();
  private readonly now: () => Date;

  constructor(
    private readonly store: QuotaStore,
    private readonly options: BatcherOptions,
    private readonly observer: BatchObserver = { batch: () => {}, conflict: () => {} },
  ) {
    this.now = options.now ?? (() => new Date());
  }

  admit(item: AdmissionItem, binding: ResourceBinding, answerBy: number): Promise<AdmissionOutcome> {
    const namespace = item.binding.namespace;
    return new Promise((resolve) => {
      const queue = this.queues.get(namespace) ?? [];
      queue.push({ item, binding, answerBy, resolve });
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
          { ...this.options, conflictRetryDelayMs: 0, now: this.now },
          this.observer,
        );
      }
    } finally {
      this.draining.delete(namespace);
      this.queues.delete(namespace);
    }
  }
}

/**
 * Decides `batch` (admissions for one namespace, in order) and writes it with one compare-and-swap
 * status write per changed quota, re-reading and re-evaluating after a conflict (see AdmissionBatcher).
 * Resolves every admission, failing closed when the quotas cannot be read or written; never rejects.
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

async function decideAndWrite(
  store: QuotaStore,
  namespace: string,
  batch: Pending[],
  options: CasOptions,
  observer: BatchObserver,
): Promise<void> {
  // Reservations each request got written in earlier rounds, per quota: what to take back if a
  // later round denies it (`undefined`: it held no reservation before).
  const written = new Map<Pending, Map<string, ReservationEntry | undefined>>();
  // Requests answered no (denied, or past their deadline) after an earlier round wrote for them:
  // every round takes that back, until a round's writes all land.
  const refused: Pending[] = [];
  let live = batch;
  for (let round = 0; round <= options.maxConflictRetries; round++) {
    const quotas = await store.list(namespace);
    // Checked after the read, right before deciding and writing: a request answered already (the
    // controller's deadline) must not have a write started for it, which could land after a newer
    // request for the same binding and was refused to the API server anyway.
    const late = live.filter((p) => Date.now() >= p.answerBy);
    for (const p of late) {
      p.resolve(failClosed('the host API server did not answer in time'));
      refused.push(p);
    }
    live = live.filter((p) => !late.includes(p));
    if (live.length === 0 && !refused.some((p) => written.has(p))) return;
    const parsed = quotas.map((q) => ({ quota: q, ...parseQuotaState(q) }));
    const broken = parsed.filter((p) => p.errors.length > 0);
    if (broken.length > 0) {
      const detail = broken.map((b) => `${b.quota.metadata?.name}: ${b.errors.join('; ')}`).join(' | ');
      for (const p of live) p.resolve(failClosed(`a KarmadaQuota in ${namespace} cannot be read: ${detail}`));
      return;
    }
    const states = parsed.map((p) => p.state);
    const byName = new Map(quotas.map((q) => [q.metadata!.name!, q]));
    const quotaMatches = (quota: KarmadaQuota, p: Pending) => bindingMatchesScopes(quota, p.binding);
    // ResourceQuota's "must specify" rule needs each quota's hard keys: the core applies it.
    const items = live.map((p) => ({
      ...p.item,
      missingRequests: Object.fromEntries(
        quotas.map((q) => {
          const name = q.metadata!.name!;
          return [name, missingRequestErrors(p.binding, Object.keys(q.spec?.hard ?? {}), name)];
        }),
      ),
    }));
    const result = admitBatch(
      states,
      items,
      (quotaName, index) => quotaMatches(byName.get(quotaName)!, live[index]!),
      { now: options.now(), ttlSeconds: options.ttlSeconds },
    );
    const newStates = new Map(result.quotas.map((s) => [s.name, s]));
    const changed = new Set(result.changed);
    const admitted: Pending[] = [];
    live.forEach((p, i) => {
      const decision = result.decisions[i]!;
      if (decision.allowed) {
        admitted.push(p);
        return;
      }
      p.resolve(decision); // final: a later round never turns it into an admit
      refused.push(p);
    });
    for (const p of refused) {
      for (const [quotaName, previous] of written.get(p) ?? []) {
        newStates.set(quotaName, restoreReservation(newStates.get(quotaName)!, p.item, previous));
        changed.add(quotaName);
      }
    }
    const conflict = await writeChanged(store, quotas, states, newStates, changed, admitted, written);
    if (!conflict) {
      for (const p of admitted) p.resolve({ allowed: true });
      return;
    }
    observer.conflict();
    live = admitted;
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

/** Writes every changed quota in order; returns true when one write met a conflict. */
async function writeChanged(
  store: QuotaStore,
  quotas: KarmadaQuota[],
  before: QuotaState[],
  after: Map<string, QuotaState>,
  changed: Set<string>,
  admitted: Pending[],
  written: Map<Pending, Map<string, ReservationEntry | undefined>>,
): Promise<boolean> {
  for (const quota of quotas) {
    const name = quota.metadata!.name!;
    if (!changed.has(name)) continue;
    const state = after.get(name)!;
    try {
      await store.writeStatus({
        ...quota,
        status: {
          ...quota.status,
          reservations: toWireReservations(state.reservations),
          reserved: formatList(sumReserved(state.reservations)),
        },
      });
    } catch (err) {
      if (err instanceof ConflictError) return true;
      throw err;
    }
    const previousState = before.find((s) => s.name === name)!;
    for (const p of admitted) {
      if (p.item.dryRun) continue;
      const perQuota = written.get(p) ?? new Map<string, ReservationEntry | undefined>();
      if (!perQuota.has(name))
        perQuota.set(
          name,
          previousState.reservations.find((r) => sameBinding(r, p.item)),
        );
      written.set(p, perQuota);
    }
  }
  return false;
}

/** Puts a binding's reservation back to what it was before this batch wrote it. */
function restoreReservation(
  state: QuotaState,
  item: AdmissionItem,
  previous: ReservationEntry | undefined,
): QuotaState {
  const others = state.reservations.filter((r) => !sameBinding(r, item));
  return { ...state, reservations: previous ? [...others, previous] : others };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function failClosed(reason: string): AdmissionOutcome {
  return {
    allowed: false,
    unavailable: true,
    message: `karmada-quota could not check the quota, so the request is not admitted (fail closed): ${reason}. Retry; if it persists, check the webhook's logs and the host API server.`,
  };
}
