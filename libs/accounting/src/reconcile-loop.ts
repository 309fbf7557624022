import {
  isJsonObject,
  type KarmadaQuota,
  type KarmadaQuotaStatus,
  type ResourceBinding,
  type WaitingChangeStatus,
} from '#api';
import { parseResourceList } from '#quantity';
import {
  bySince,
  computeQuotaStatus,
  heldForRoom,
  heldWaitingStatus,
  liveWaiting,
  quotaName,
  waitingStatus,
  type ClaimTiming,
  type HeldBinding,
  type MemberLabels,
  type ObservedCluster,
  type QuotaStatusResult,
  type WaitingChange,
} from '#quota';
import { ConflictError } from '#service-kit';
import { isClusterName } from '#usage';

/** A namespace's ResourceBindings as one list answered them, with the list's resourceVersion. */
export interface BindingList {
  items: readonly ResourceBinding[];
  resourceVersion?: string | undefined;
}

/** What one reconcile reads and writes on the Karmada API server, and its clock. */
export interface ReconcileAccess {
  getQuota(namespace: string, name: string): Promise<KarmadaQuota>;
  listBindings(namespace: string): Promise<BindingList>;
  /** Compare-and-swap on resourceVersion; throws ConflictError when the quota changed. */
  writeStatus(quota: KarmadaQuota): Promise<KarmadaQuota>;
  /** Epoch ms. */
  clock(): number;
}

export interface ReconcileInput {
  clusters: ObservedCluster[];
  deletedBindingUids: ReadonlySet<string>;
  timing: ClaimTiming;
  maxConflictRetries: number;
  /** The namespace's recorded waiting changes (libs/quota waiting.ts). */
  waiting: readonly WaitingChange[];
  /** Each member cluster's labels, for caps that select members by label; absent while unknown. */
  members?: MemberLabels;
  /** A count on request: a status is written even if only its stamp moves (computeQuotaStatus). */
  restamp?: boolean;
}

/** A namespace's quotas and bindings as the reconciler's informers hold them: possibly behind the Karmada API server. */
export interface CachedView {
  quotas: readonly KarmadaQuota[];
  bindings: readonly ResourceBinding[];
}

/**
 * Whether the cached objects show every quota's status current, with the usage and deletions just
 * read: then the reconcile writes nothing and reads nothing more from the Karmada API server.
 * Skipping is safe however far the cache lags: a skip writes nothing, and every status it leaves
 * was written from fresh reads. Whatever would make a status wrong shows in the cached view: a
 * claim lapsing is judged by the clock (the computed status drops it, so it differs), usage and
 * deletions come from Redis, and a binding change queues another reconcile once the cache holds it.
 * Waiting changes, and bindings Karmada's scheduler holds back for want of room, may need a requeue
 * that no status change shows, so a namespace with any is always reconciled. A count on request
 * (`restamp`) always is too: it needs a list made after the request, which no cache can show.
 */
export function statusesCurrentIn(view: CachedView, input: ReconcileInput, now: number): boolean {
  if (input.waiting.length > 0 || input.restamp === true) return false;
  const held = heldBindings(view.bindings, input);
  const names = new Set(held.map((h) => h.name));
  const list = { items: view.bindings };
  return view.quotas.every((quota) => {
    const { changed, status } = statusOf(quota, list, held, input, now, []);
    return !changed && !(status.waiting ?? []).some((w) => names.has(w.binding));
  });
}

/** The bindings Karmada's scheduler holds back for want of room (libs/quota estimate.ts). */
function heldBindings(bindings: readonly ResourceBinding[], input: ReconcileInput): HeldBinding[] {
  return bindings.flatMap((rb) => heldForRoom(rb, input.members) ?? []);
}

/**
 * The status the rules compute for `quota` from these bindings and the input read for it. Its
 * `waiting` lists the recorded refusals and the `held` bindings the quota's caps leave too little
 * room (heldWaitingStatus), weighed against the status computed here, not the stored one (which may
 * be of an older spec), oldest first.
 */
function statusOf(
  quota: KarmadaQuota,
  list: BindingList,
  held: readonly HeldBinding[],
  input: ReconcileInput,
  now: number,
  waiting: readonly WaitingChange[],
): QuotaStatusResult {
  const compute = (listed: WaitingChangeStatus[]) =>
    computeQuotaStatus({
      quota,
      bindings: list.items,
      ...(list.resourceVersion !== undefined ? { bindingsVersion: list.resourceVersion } : {}),
      clusters: input.clusters,
      now: new Date(now),
      deletedBindingUids: input.deletedBindingUids,
      timing: input.timing,
      waiting: listed,
      ...(input.members ? { members: input.members } : {}),
      ...(input.restamp === true ? { restamp: true } : {}),
    });
  const refused = waitingStatus(quota.metadata?.name ?? '', waiting);
  const result = compute(refused);
  const listed = new Set(refused.map((w) => w.binding));
  const counted = { ...quota, status: result.status };
  const waitingForRoom = held.flatMap((binding) =>
    listed.has(binding.name) ? [] : (heldWaitingStatus(binding, counted) ?? []),
  );
  if (waitingForRoom.length === 0) return result;
  return compute([...refused, ...waitingForRoom].sort(bySince));
}

export interface ReconcileOutcome {
  quotas: number;
  written: number;
  conflicts: number;
  /** Each quota's status as computed (written or already current), by name. */
  statuses: Map<string, KarmadaQuotaStatus>;
  /** The waiting changes still wanted, and the bindings whose records to forget. */
  waiting: { live: WaitingChange[]; forget: WaitingChange[] };
}

/**
 * Computes and writes the status of each of `quotas` (just read from the Karmada API server) from
 * the namespace's bindings and the observed usage. The bindings are listed after the quotas were
 * read, and claims are judged expired as of the list's start: every change admitted on a claim that
 * lapsed before then is in the list (docs/concepts/accounting.md). On a conflict the quota is read
 * again, the bindings listed again after it, and the status computed again, so claims the webhook
 * added meanwhile are never dropped.
 * `written` is called after each successful write (Events); `warn` with each quota's input problems.
 */
export async function reconcileQuotas(
  access: ReconcileAccess,
  namespace: string,
  quotas: readonly KarmadaQuota[],
  input: ReconcileInput,
  written: (quota: KarmadaQuota, result: QuotaStatusResult) => Promise<void>,
  warn: (message: string) => void,
): Promise<ReconcileOutcome> {
  let now = access.clock();
  let bindings = await access.listBindings(namespace);
  let held = heldBindings(bindings.items, input);
  const outcome: ReconcileOutcome = {
    quotas: quotas.length,
    written: 0,
    conflicts: 0,
    statuses: new Map(),
    waiting: liveWaiting(input.waiting, bindings.items, new Date(now)),
  };
  for (let quota of quotas) {
    for (let attempt = 0; ; attempt++) {
      const result = statusOf(quota, bindings, held, input, now, outcome.waiting.live);
      if (result.errors.length > 0) warn(`${namespace}/${quota.metadata?.name}: ${result.errors.join('; ')}`);
      outcome.statuses.set(quota.metadata?.name ?? '', result.status);
      if (!result.changed) break;
      try {
        await access.writeStatus({ ...quota, status: result.status });
        outcome.written++;
        await written(quota, result);
        break;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        outcome.conflicts++;
        if (attempt >= input.maxConflictRetries) {
          throw new Error(
            `KarmadaQuota ${namespace}/${quota.metadata?.name} kept changing (${attempt + 1} conflicts)`,
            { cause: err },
          );
        }
        quota = await access.getQuota(namespace, quota.metadata!.name!);
        now = access.clock();
        bindings = await access.listBindings(namespace);
        held = heldBindings(bindings.items, input);
        outcome.waiting = liveWaiting(input.waiting, bindings.items, new Date(now));
      }
    }
  }
  return outcome;
}

/**
 * The clusters whose usage of the namespace the quotas' statuses count (non-zero `used`): if Redis
 * no longer has it, their usage is unknown rather than zero (see clusterUsageVerdict).
 */
export function countedClusters(quotas: readonly KarmadaQuota[]): string[] {
  const counted = new Set<string>();
  for (const quota of quotas) {
    for (const slice of Array.isArray(quota.status?.clusters) ? quota.status.clusters : []) {
      if (!isJsonObject(slice) || typeof slice.name !== 'string') continue;
      const used = parseResourceList(slice.used, 'used').list;
      if (Object.values(used).some((amount) => !amount.isZero())) counted.add(slice.name);
    }
  }
  return [...counted].filter(isClusterName); // else not a cluster the aggregator could have published
}

/** A namespace a ClusterKarmadaQuota's reconcile counts, with its resourceVersion as the reconciler saw it. */
export interface CountedNamespace {
  name: string;
  resourceVersion?: string | undefined;
}

/** What one ClusterKarmadaQuota's reconcile reads and writes on the Karmada API server, and its clock. */
export interface ClusterQuotaAccess {
  /** The quota as stored now; undefined once it is deleted. */
  getQuota(): Promise<KarmadaQuota | undefined>;
  /** The namespaces its selector picks, each with its resourceVersion as seen (written with its count). */
  selectedNamespaces(quota: KarmadaQuota): CountedNamespace[];
  /** One namespace, read after the quota: its bindings (listed then) and what Redis holds for it. */
  readNamespace(
    namespace: string,
    quota: KarmadaQuota,
  ): Promise<{ bindings: BindingList; input: ReconcileInput }>;
  writeStatus(quota: KarmadaQuota): Promise<KarmadaQuota>;
  clock(): number;
}

export interface ClusterQuotaOutcome {
  written: boolean;
  conflicts: number;
  /** The status as computed; undefined when the quota is gone. */
  status?: KarmadaQuotaStatus;
}

/**
 * Computes and writes one ClusterKarmadaQuota's status from the namespaces it selects
 * (docs/concepts/cluster-quotas.md), as reconcileQuotas does a namespace's quotas: each namespace's
 * bindings are listed after the quota was read, and a conflict reads it all again. Its waiting
 * changes are the namespaces' records naming it, each binding named with its namespace.
 * `restamp`: a count on request, written even if only its stamp moves (computeQuotaStatus).
 */
export async function reconcileClusterQuota(
  access: ClusterQuotaAccess,
  maxConflictRetries: number,
  written: (quota: KarmadaQuota, result: QuotaStatusResult) => Promise<void>,
  warn: (message: string) => void,
  { restamp = false }: { restamp?: boolean } = {},
): Promise<ClusterQuotaOutcome> {
  for (let conflicts = 0; ; conflicts++) {
    const quota = await access.getQuota();
    if (quota === undefined) return { written: false, conflicts };
    const now = access.clock();
    const selected = access.selectedNamespaces(quota);
    const namespaces = selected.map((ns) => ns.name);
    const read = await Promise.all(namespaces.map((ns) => access.readNamespace(ns, quota)));
    const name = quotaName(quota);
    const waiting = read
      .flatMap(({ bindings, input }, i) =>
        waitingStatus(name, liveWaiting(input.waiting, bindings.items, new Date(now)).live).map((w) => ({
          ...w,
          binding: `${namespaces[i]}/${w.binding}`,
        })),
      )
      .sort(bySince);
    const first = read[0]?.input;
    const compute = (listed: WaitingChangeStatus[]) =>
      computeQuotaStatus({
        quota,
        now: new Date(now),
        namespaces: read.map(({ bindings, input }, i) => ({
          namespace: namespaces[i]!,
          ...(selected[i]!.resourceVersion !== undefined
            ? { resourceVersion: selected[i]!.resourceVersion }
            : {}),
          bindings: bindings.items,
          ...(bindings.resourceVersion !== undefined ? { bindingsVersion: bindings.resourceVersion } : {}),
          clusters: input.clusters,
          deletedBindingUids: input.deletedBindingUids,
        })),
        ...(first ? { timing: first.timing } : {}),
        waiting: listed,
        ...(first?.members ? { members: first.members } : {}),
        restamp,
      });
    const refused = compute(waiting);
    // Bindings Karmada's scheduler holds back for want of room under its caps, as statusOf lists them.
    const listed = new Set(waiting.map((w) => w.binding));
    const counted = { ...quota, status: refused.status };
    const held = read.flatMap(({ bindings, input }, i) =>
      heldBindings(bindings.items, input).flatMap(
        (binding) => heldWaitingStatus(binding, counted, namespaces[i]!) ?? [],
      ),
    );
    const forRoom = held.filter((entry) => !listed.has(entry.binding));
    const result = forRoom.length === 0 ? refused : compute([...waiting, ...forRoom].sort(bySince));
    if (result.errors.length > 0) warn(`${name}: ${result.errors.join('; ')}`);
    if (!result.changed) return { written: false, conflicts, status: result.status };
    try {
      await access.writeStatus({ ...quota, status: result.status });
      await written(quota, result);
      return { written: true, conflicts, status: result.status };
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      if (conflicts >= maxConflictRetries)
        throw new Error(`${name} kept changing (${conflicts + 1} conflicts)`, { cause: err });
    }
  }
}
