import type { KarmadaQuota, ResourceBinding } from '#api';
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
import { describeError } from '#service-kit';

export interface BatcherOptions {
  ttlSeconds: number;
  maxConflictRetries: number;
  now?: () => Date;
}

export interface BatchObserver {
  batch(size: number): void;
  conflict(): void;
}

/** A quota decision, or a refusal because the quota could not be checked (fail closed). */
export type AdmissionOutcome = Decision | { allowed: false; unavailable: true; message: string };

interface Pending {
  item: AdmissionItem;
  binding: ResourceBinding;
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
export class AdmissionBatcher {
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

  admit(item: AdmissionItem, binding: ResourceBinding): Promise<AdmissionOutcome> {
    const namespace = item.binding.namespace;
    return new Promise((resolve) => {
      const queue = this.queues.get(namespace) ?? [];
      queue.push({ item, binding, resolve });
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
        try {
          await this.runBatch(namespace, batch);
        } catch (err) {
          const reason = describeError(err);
          for (const p of batch)
            p.resolve(failClosed(`reading or writing the namespace's KarmadaQuotas failed: ${reason}`));
        }
      }
    } finally {
      this.draining.delete(namespace);
      this.queues.delete(namespace);
    }
  }

  private async runBatch(namespace: string, batch: Pending[]): Promise<void> {
    // Reservations each request got written in earlier rounds, per quota: what to take back if a
    // later round denies it (`undefined`: it held no reservation before).
    const written = new Map<Pending, Map<string, ReservationEntry | undefined>>();
    let live = batch;
    for (let round = 0; round <= this.options.maxConflictRetries; round++) {
      const quotas = await this.store.list(namespace);
      const parsed = quotas.map((q) => ({ quota: q, ...parseQuotaState(q) }));
      const broken = parsed.filter((p) => p.errors.length > 0);
      if (broken.length > 0) {
        const detail = broken.map((b) => `${b.quota.metadata?.name}: ${b.errors.join('; ')}`).join(' | ');
        for (const p of live)
          p.resolve(failClosed(`a KarmadaQuota in ${namespace} cannot be read: ${detail}`));
        return;
      }
      const states = parsed.map((p) => p.state);
      const byName = new Map(quotas.map((q) => [q.metadata!.name!, q]));
      const quotaMatches = (quota: KarmadaQuota, p: Pending) => bindingMatchesScopes(quota, p.binding);
      // ResourceQuota semantics: a quota tracking cpu or memory refuses a workload without that request.
      const refusals = new Map<Pending, Decision>();
      for (const p of live) {
        if (p.item.persisted && !grows(p.item)) continue;
        for (const quota of quotas) {
          if (!quotaMatches(quota, p)) continue;
          const missing = missingRequestErrors(p.binding, Object.keys(quota.spec?.hard ?? {}));
          if (missing.length > 0) {
            refusals.set(p, {
              allowed: false,
              quota: quota.metadata!.name!,
              exceeded: [],
              message: missing.join('; '),
            });
            break;
          }
        }
      }
      const evaluated = live.filter((p) => !refusals.has(p));
      const result = admitBatch(
        states,
        evaluated.map((p) => p.item),
        (quotaName, index) => quotaMatches(byName.get(quotaName)!, evaluated[index]!),
        { now: this.now(), ttlSeconds: this.options.ttlSeconds },
      );
      const position = new Map(evaluated.map((p, i) => [p, i]));
      const decisionOf = (p: Pending): Decision => refusals.get(p) ?? result.decisions[position.get(p)!]!;
      const newStates = new Map(result.quotas.map((s) => [s.name, s]));
      const changed = new Set(result.changed);
      const admitted: Pending[] = [];
      live.forEach((p) => {
        const decision = decisionOf(p);
        if (decision.allowed) {
          admitted.push(p);
          return;
        }
        p.resolve(decision); // final: a later round never turns it into an admit
        for (const [quotaName, previous] of written.get(p) ?? []) {
          newStates.set(quotaName, restoreReservation(newStates.get(quotaName)!, p.item, previous));
          changed.add(quotaName);
        }
      });
      const conflict = await this.writeChanged(quotas, states, newStates, changed, admitted, written);
      if (!conflict) {
        for (const p of admitted) p.resolve({ allowed: true });
        return;
      }
      this.observer.conflict();
      live = admitted;
    }
    for (const p of live) {
      p.resolve(
        failClosed(
          `the KarmadaQuotas of ${namespace} kept changing under concurrent writers (${this.options.maxConflictRetries} conflicts in a row)`,
        ),
      );
    }
  }

  /** Writes every changed quota in order; returns true when one write met a conflict. */
  private async writeChanged(
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
        await this.store.writeStatus({
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
}

/** A change that adds replicas (or a new binding): only those must declare tracked requests. */
function grows(item: AdmissionItem): boolean {
  const before = item.oldCharge?.pods;
  const after = item.charge.pods;
  return after !== undefined && (before === undefined || after.cmp(before) > 0);
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

export function failClosed(reason: string): AdmissionOutcome {
  return {
    allowed: false,
    unavailable: true,
    message: `karmada-quota could not check the quota, so the request is not admitted (fail closed): ${reason}. Retry; if it persists, check the webhook's logs and the host API server.`,
  };
}
