/**
 * The host API server as the accounting simulation models it: KarmadaQuotas and ResourceBindings with
 * resourceVersions and compare-and-swap, every read and write an operation that completes only when
 * the simulation says so (its linearization point), so any interleaving of the services can be tried.
 */
import { sameJson, type KarmadaQuota, type ResourceBinding } from '#api';
import { isClusterQuota, limitsNamespace, type SelectedNamespace } from '#quota';
import { ConflictError, type QuotaStore } from '#service-kit';
import type { BindingList } from '#accounting';

export const NAMESPACE = 'team-a';
/** The namespaces in play: NAMESPACE (the KarmadaQuotas') and a second one, selected by the ClusterKarmadaQuota only. */
export const NAMESPACES = [NAMESPACE, 'team-b'] as const;
/** The label the ClusterKarmadaQuota selects namespaces by; both namespaces carry it at the start. */
export const CLUSTER_LABELS = { 'sim.karmada-quota/shared': 'yes' };

export type HostChange =
  | { kind: 'quota'; object: KarmadaQuota }
  | { kind: 'quota-deleted'; name: string }
  | { kind: 'binding'; object: ResourceBinding }
  | { kind: 'binding-deleted'; name: string; uid: string };

/**
 * A fault of one host operation. 'answer lost': the host applied it but the caller saw an error (a 5xx
 * after the write reached etcd, a cut connection, an abort at the deadline: its store gave up).
 * 'retry conflicts': the host applied a status write whose answer was lost, and the store's retry met
 * the write's own new resourceVersion (409), as KubeQuotaStore's retries do; a read's retry just reads
 * again. 'not applied': the host refused it (a 5xx before etcd), the caller saw an error. 'as of
 * its start': a list answers what was stored when it was asked, not when it answers (an API server's
 * list is consistent at some point in between); other operations complete as they would.
 */
export type HostFault = 'answer lost' | 'retry conflicts' | 'not applied' | 'as of its start';

/** A host operation waiting for the simulation to complete it. */
export interface PendingOperation {
  /** Who asked and what, for traces. */
  label: string;
  complete: (fault?: HostFault) => void;
}

export class ModelHost {
  private version = 1;
  readonly quotas = new Map<string, KarmadaQuota>();
  readonly bindings = new Map<string, ResourceBinding>();
  readonly pending: PendingOperation[] = [];
  /** Quota changes as a watch would report them, in order (`deleted`: the quota is gone). */
  readonly quotaEvents: { quota: KarmadaQuota; deleted: boolean }[] = [];
  /** Every change of quotas and bindings in order, as the reconciler's two watches report them. */
  readonly changes: HostChange[] = [];
  writes = 0;
  conflicts = 0;

  nextVersion(): string {
    return String(this.version++);
  }

  putQuota(quota: KarmadaQuota): void {
    const stored = structuredClone(quota);
    stored.metadata = { ...stored.metadata, resourceVersion: this.nextVersion() };
    this.quotas.set(stored.metadata.name!, stored);
    this.quotaEvents.push({ quota: structuredClone(stored), deleted: false });
    this.changes.push({ kind: 'quota', object: structuredClone(stored) });
  }

  /** An admin deletes a quota (it has no finalizer: gone at once). */
  deleteQuota(name: string): void {
    const quota = this.quotas.get(name)!;
    this.quotas.delete(name);
    this.quotaEvents.push({ quota: structuredClone(quota), deleted: true });
    this.changes.push({ kind: 'quota-deleted', name });
  }

  /** The quota as stored, or the API server's 404 (the product gives the call up as failed). */
  private storedQuota(name: string): KarmadaQuota {
    const quota = this.quotas.get(name);
    if (quota === undefined) throw new Error(`HTTP 404: karmadaquotas "${name}" not found`);
    return quota;
  }

  /**
   * The API server persists a binding (create or update), keeping `metadata.generation` as it does:
   * 1 at create, one more at each change of the spec.
   */
  storeBinding(object: ResourceBinding): void {
    const stored = this.bindings.get(object.metadata!.name!);
    const same = stored !== undefined && stored.metadata?.uid === object.metadata?.uid;
    const generation = !same
      ? 1
      : (stored.metadata?.generation ?? 1) + (sameJson(stored.spec, object.spec) ? 0 : 1);
    const binding = { ...object, metadata: { ...object.metadata, generation } };
    this.bindings.set(binding.metadata.name!, binding);
    this.changes.push({ kind: 'binding', object: structuredClone(binding) });
  }

  deleteBinding(name: string): void {
    const uid = this.bindings.get(name)?.metadata?.uid ?? '';
    this.bindings.delete(name);
    this.changes.push({ kind: 'binding-deleted', name, uid });
  }

  /**
   * An operation that runs against the host state when completed; a write can conflict on a retry.
   * A read given `atStart` (its answer as of when it was asked) answers that under 'as of its start'.
   */
  operation<T>(label: string, run: () => T, write = false, atStart?: T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        label,
        complete: (fault) => {
          try {
            if (fault === 'not applied') throw new Error(`the host refused "${label}"`);
            const result = fault === 'as of its start' && atStart !== undefined ? atStart : run();
            if (fault === 'answer lost') throw new Error(`the host's answer to "${label}" was lost`);
            if (fault === 'retry conflicts' && write)
              throw new ConflictError(
                `"${label}" was retried after its answer was lost: it met its own write`,
              );
            resolve(result);
          } catch (err) {
            reject(err as Error);
          }
        },
      });
    });
  }

  /**
   * Completes the pending operation at `index` (modulo the number pending), with `fault` if given;
   * its label, or undefined if none is pending.
   */
  completeOne(index: number, fault?: HostFault): string | undefined {
    if (this.pending.length === 0) return undefined;
    const [op] = this.pending.splice(index % this.pending.length, 1);
    op!.complete(fault);
    return op!.label;
  }

  listQuotas(who: string): Promise<KarmadaQuota[]> {
    const list = () => [...this.quotas.values()].map((q) => structuredClone(q));
    return this.operation(`${who} lists quotas`, list, false, list());
  }

  getQuota(who: string, name: string): Promise<KarmadaQuota> {
    return this.operation(`${who} reads quota ${name}`, () => structuredClone(this.storedQuota(name)));
  }

  /** A status write (compare-and-swap); `applied` runs when the host stores it. */
  writeQuotaStatus(who: string, quota: KarmadaQuota, applied?: () => void): Promise<KarmadaQuota> {
    const name = quota.metadata!.name!;
    const reserving = (quota.status?.reservations ?? []).map(
      (r) =>
        `${r.reservedBy.name}${r.operation ? ` (${r.operation})` : ''} ` +
        (Object.entries(r.reserved)
          .map(([key, amount]) => `${key}=${amount}`)
          .join(',') || 'nothing'),
    );
    return this.operation(
      `${who} writes quota ${name} reserving [${reserving.join('; ')}]`,
      () => {
        const current = this.storedQuota(name);
        if (current.metadata?.resourceVersion !== quota.metadata?.resourceVersion) {
          this.conflicts++;
          throw new ConflictError(`KarmadaQuota ${name} changed meanwhile`);
        }
        this.writes++;
        this.putQuota({ ...current, status: structuredClone(quota.status) });
        applied?.();
        return structuredClone(this.quotas.get(name)!);
      },
      true,
    );
  }

  /** Every binding, with the list's resourceVersion: the latest version given out when it is taken. */
  listBindings(who: string): Promise<BindingList> {
    const list = () => ({
      items: [...this.bindings.values()].map((b) => structuredClone(b)),
      resourceVersion: String(this.version - 1),
    });
    return this.operation(`${who} lists bindings`, list, false, list());
  }

  /**
   * A QuotaStore over this host for one service: a namespace's list holds its KarmadaQuotas and the
   * ClusterKarmadaQuotas selecting it by the service's view of its labels when the list is asked
   * (`seen`: the namespace as the view shows it when selected; KubeQuotaStore.list with its
   * NamespaceSelection, from the service's namespace watch).
   */
  quotaStore(
    who: string,
    seen: (namespace: string) => SelectedNamespace | undefined = () => undefined,
  ): QuotaStore {
    return {
      list: async (namespace) => {
        const selected = seen(namespace) !== undefined;
        const quotas = await this.listQuotas(who);
        const labels = selected ? CLUSTER_LABELS : {};
        return quotas.filter((q) =>
          isClusterQuota(q)
            ? limitsNamespace(q, namespace, labels)
            : (q.metadata?.namespace ?? namespace) === namespace,
        );
      },
      writeStatus: (quota) => this.writeQuotaStatus(who, quota),
      // The model's one ClusterKarmadaQuota selects by the label `seen` tells of.
      selectedNamespaces: () => NAMESPACES.flatMap((ns) => seen(ns) ?? []),
    };
  }
}
