import { setTimeout as sleep } from 'node:timers/promises';
import { describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  admitBatch,
  bindingMatchesScopes,
  checksChangeOn,
  missingRequestErrors,
  oldChargeHeld,
  isResourceVersion,
  isClusterQuota,
  parseQuotaState,
  quotaName,
  toWireReservations,
  unboundedPodsRefusals,
  memberShares,
  withMemberShares,
  type AdmissionItem,
  type BatchResult,
  type Decision,
  type QuotaState,
  type SelectedNamespace,
} from '#quota';
import { describeFieldError, formatList, type ResourceList } from '#quantity';
import { ConflictError, type QuotaStore } from '#service-kit';
import { failClosed, type BatchObserver, type BindingChange, type Pending } from './admission-strategy.js';

/** Where and how a batch is decided and written: one namespace's quotas in one store. */
export interface CasContext {
  store: QuotaStore;
  namespace: string;
  options: CasOptions;
  observer: BatchObserver;
  /** Given what each round decided, as it will be once written. */
  onDecided?: (projection: Projection) => void;
}

/** How a batch is decided and how it meets a conflicting status write. */
export interface CasOptions {
  /** How long an admitted claim stays pending. */
  ttlSeconds: number;
  /** The longest an admitted change takes to be stored (the Karmada API server's request timeout). */
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
 * failing closed when the quotas cannot be read or written; never rejects. `context.onDecided` is
 * given what each round decided, as it will be once written.
 */
export async function admitWithCas(context: CasContext, batch: Pending[]): Promise<void> {
  try {
    await decideAndWrite(context, batch);
  } catch (err) {
    const reason = describeError(err);
    for (const p of batch)
      p.resolve(failClosed(`reading or writing the namespace's KarmadaQuotas failed: ${reason}`));
  }
}

/** The admission item for one request against these quotas: which of them its old object held in. */
function itemFor(change: BindingChange, { quotas, states }: Projection): AdmissionItem {
  const { item, object, old } = change;
  const names = quotas.map(quotaName);
  // Only a quota that caps a member charges shares per member (member-caps.ts); one that caps
  // members by label weighs every member's, for the members it has not resolved yet.
  const selectsMembers = states.some((state) => state.capsResolvedFor !== undefined);
  const keys = states.flatMap((state) => Object.keys(state.hard));
  const charged = (rb: ResourceBinding, charge: ResourceList) =>
    selectsMembers ? { ...charge, ...memberShares(rb) } : withMemberShares(rb, charge, keys);
  return {
    ...item,
    charge: charged(object, item.charge),
    ...(old
      ? {
          old: {
            charge: charged(old.object, old.charge),
            quotas: oldChargeHeld(old.object)
              ? names.filter((_, i) => bindingMatchesScopes(quotas[i]!, old.object))
              : [],
            ...(isResourceVersion(old.object.metadata?.resourceVersion)
              ? { resourceVersion: old.object.metadata!.resourceVersion }
              : {}),
          },
        }
      : {}),
    unboundedPods: unboundedPodsRefusals(object, old?.object, quotas),
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
 * A namespace's quotas as they will be once what was decided is written: the quota objects (scopes,
 * hard keys) and their states, claims of the admitted changes included.
 */
export interface Projection {
  quotas: readonly KarmadaQuota[];
  states: QuotaState[];
}

/**
 * The namespaces a ClusterKarmadaQuota selects as the store sees them now (QuotaStore
 * selectedNamespaces): a batch knows its usage only once its status counted all of them.
 */
export type SelectionOf = (quota: KarmadaQuota) => readonly SelectedNamespace[] | undefined;

/**
 * Each quota object's decoded state, by the batch it was decoded for: a KarmadaQuota's is the same
 * for every batch; a ClusterKarmadaQuota's usage is known only to a batch whose namespace, and every
 * one it selects, its status counted. A caching store hands out the same objects until they change
 * (CachedQuotaStore), and the object a status write returns is given the state written (the CRD
 * keeps reservations as sent): a batch decodes only what another writer changed.
 */
const decoded = new WeakMap<KarmadaQuota, Map<string, ReturnType<typeof parseQuotaState>>>();

function decodedState(
  quota: KarmadaQuota,
  namespace: string,
  selection: SelectionOf,
): ReturnType<typeof parseQuotaState> {
  const batch = isClusterQuota(quota) ? { namespace, selected: selection(quota) } : undefined;
  const selected = batch?.selected?.map((ns) => `${ns.name}@${ns.labelledAt ?? ''}`).join(',');
  const key = batch ? `${namespace}:${selected ?? '?'}` : '';
  const byBatch = decoded.get(quota) ?? new Map<string, ReturnType<typeof parseQuotaState>>();
  decoded.set(quota, byBatch);
  let state = byBatch.get(key);
  if (state === undefined) {
    state = parseQuotaState(quota, undefined, batch);
    byBatch.set(key, state);
  }
  return state;
}

/** A store's selection, or none known (a ClusterKarmadaQuota's usage then stays unknown). */
export const selectionOf =
  (store: Pick<QuotaStore, 'selectedNamespaces'>): SelectionOf =>
  (quota) =>
    store.selectedNamespaces?.(quota);

/**
 * A namespace's quotas' projection as they are; `unreadable` says why when a status cannot be parsed.
 */
function projectionOf(
  quotas: readonly KarmadaQuota[],
  namespace: string,
  selection: SelectionOf,
): Projection | { unreadable: string } {
  const parsed = quotas.map((q) => ({ quota: q, ...decodedState(q, namespace, selection) }));
  const broken = parsed.filter((p) => p.errors.length > 0);
  if (broken.length > 0)
    return {
      unreadable: broken
        .map((b) => `${quotaName(b.quota)}: ${b.errors.map(describeFieldError).join('; ')}`)
        .join(' | '),
    };
  return { quotas, states: parsed.map((p) => p.state) };
}

/**
 * The changes decided in order against the projection (libs/quota admitBatch). `claimed`: per change,
 * what the admission owner's record lets it rely on (AdmissionItem.claimed), instead of the claims
 * in the statuses.
 */
export function decide(
  { quotas, states }: Projection,
  changes: readonly BindingChange[],
  now: number,
  options: Pick<CasOptions, 'ttlSeconds' | 'landingWindowSeconds'>,
  claimed?: readonly Readonly<Record<string, ResourceList>>[],
): BatchResult {
  const byName = new Map(quotas.map((q) => [quotaName(q), q]));
  return admitBatch(
    states,
    changes.map((change, i) => {
      const item = itemFor(change, { quotas, states });
      return claimed ? { ...item, claimed: claimed[i]! } : item;
    }),
    (quotaName, index) => checksChangeOn(byName.get(quotaName)!, changes[index]!.object),
    {
      now: new Date(now),
      ttlSeconds: options.ttlSeconds,
      landingWindowSeconds: options.landingWindowSeconds,
    },
  );
}

/** The projection of a namespace's quotas as read or cached, if their statuses can be read. */
export function projected(
  quotas: readonly KarmadaQuota[],
  namespace: string,
  selection: SelectionOf,
): Projection | undefined {
  const projection = projectionOf(quotas, namespace, selection);
  return 'unreadable' in projection ? undefined : projection;
}

/**
 * Decides `change` against a projection of what is in flight and waiting before it: its refusal, or
 * undefined when it fits, and the projection then counts its claim too (it is queued, and decided
 * for real in its batch). Sound whatever the projection's age, since a refusal admits nothing; a
 * projection that lags the Karmada API server, or counts a waiting change its batch will refuse,
 * may refuse what the batch would have admitted, as Kubernetes' quota admission may from its
 * informer (the refusal is recorded as a waiting change, requeued when quota frees).
 */
export function refuseOrProject(
  projection: Projection,
  change: BindingChange,
  options: Pick<CasOptions, 'ttlSeconds' | 'landingWindowSeconds' | 'clock'>,
): Decision | undefined {
  const result = decide(projection, [change], options.clock(), options);
  const decision = result.decisions[0]!;
  if (!decision.allowed) return decision;
  projection.states = result.quotas;
  return undefined;
}

/**
 * When the first of these requests is answered anyway: no Karmada API server call for them may
 * outlast it.
 */
const earliestAnswerBy = (pending: readonly Pending[]) => Math.min(...pending.map((p) => p.answerBy));

async function decideAndWrite(context: CasContext, batch: Pending[]): Promise<void> {
  const { store, namespace, options, observer } = context;
  let live = batch;
  for (let attempt = 0; attempt <= options.maxConflictRetries; attempt++) {
    const quotas = await store.list(namespace, { deadline: earliestAnswerBy(live) });
    const now = options.clock();
    // Checked after the read, right before deciding: a request answered already (the controller's
    // deadline) must not have a write started for it.
    for (const p of live) {
      if (now >= p.answerBy) p.resolve(failClosed('the Karmada API server did not answer in time'));
    }
    live = live.filter((p) => now < p.answerBy);
    if (live.length === 0) return;
    const projection = projectionOf(quotas, namespace, selectionOf(store));
    if ('unreadable' in projection) {
      for (const p of live)
        p.resolve(failClosed(`a KarmadaQuota in ${namespace} cannot be read: ${projection.unreadable}`));
      return;
    }
    const result = decide(
      projection,
      live.map((p) => p.change),
      now,
      options,
    );
    context.onDecided?.({ quotas, states: result.quotas });
    const waiting: Pending[] = [];
    live.forEach((p, i) => {
      if (result.awaitsWrite[i]) waiting.push(p);
      else p.resolve(result.decisions[i]!); // a denial is final; an admission needing nothing is too
    });
    if (waiting.length === 0) return;
    const deadline = earliestAnswerBy(waiting);
    const written = await writeChanged(store, quotas, result, deadline, options.clock);
    if (written === 'written') {
      live.forEach((p, i) => {
        if (result.awaitsWrite[i]) p.resolve(result.decisions[i]!); // an admission, with any notes
      });
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
    if (!changed.has(quotaName(quota))) continue;
    if (clock() >= deadline) return 'late';
    const state = result.quotas[i]!;
    try {
      const written = await store.writeStatus(
        {
          ...quota,
          status: {
            ...quota.status,
            reservations: toWireReservations(state.reservations, quota.metadata?.namespace ?? ''),
            reserved: formatList(state.reserved),
            wouldBeDenied: state.wouldBeDenied && [...state.wouldBeDenied],
          },
        },
        { deadline },
      );
      // Its decoded state for other batches (a ClusterKarmadaQuota's) is decoded when asked.
      if (!isClusterQuota(written)) decoded.set(written, new Map([['', { state, errors: [] }]]));
    } catch (err) {
      if (err instanceof ConflictError) return 'conflict';
      throw err;
    }
  }
  return 'written';
}
