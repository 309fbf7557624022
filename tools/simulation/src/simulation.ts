/**
 * A deterministic simulation of the accounting (docs/concepts/accounting.md): the real admission core and CAS
 * rounds of two webhook replicas (one behind the watch-fed cache), the real reconcile loop (first looking
 * at its own informer cache, which lags the host as the actions choose), Karmada-like
 * clients and a member cluster, all against a model host (model-host.ts). A run is a list of actions;
 * every host operation completes only when an action says so, so the actions choose the interleaving.
 * Each process (the two webhook replicas, the reconciler) has a clock of its own ('skew'), the
 * pairwise difference within the bound the docs state; the API server stores an admitted change
 * within LANDING_LIMIT_MS of receiving it, or never.
 * An admin may edit a quota's spec at any step ('edit': its scope widened or narrowed, its cpu limit
 * raised or lowered, its pods key removed or added again).
 * After every action the invariants are checked against an independent recount:
 * - LIMIT: the stored bindings' charges never exceed a quota's hard limit (nothing was over-admitted).
 *   An edit may leave a quota over (docs/concepts/accounting.md, "Quota edits"): from then on its
 *   charges may not grow while over (the ceiling follows them down to hard), except by a change
 *   admitted from a view older than the edit (started before it, or sent to the cached replica before
 *   its watch delivered the edit), which the docs name: when one is stored, the ceiling rises by
 *   what it adds to the quota, and until a recount that listed the bindings after it, admissions
 *   may rely on a count without it, as Kubernetes' quota admission may until its controller recounts;
 * - ACCOUNTED: once a quota's usage is counted for its current spec, used + reserved covers every
 *   stored binding's charge (the accounting never under-counts, which is what makes the next
 *   admission safe); not checked while such a stored change awaits its recount.
 * At the end everything is drained, time passes every claim's expiration, and after a reconcile
 * used + reserved must EQUAL the recount, and each reservation max(0, charge - observed) (EXACT).
 * Refusals over a limit or "status unknown" wait as the webhook records them, and the reconciler's
 * requeues are re-sent by Karmada when a 'requeue' delivers them (waiting-model.ts); at the end, a
 * waiting change that fits must be admitted within REQUEUE_ROUNDS settle rounds (LIVENESS).
 */
import type { KarmadaQuota, ResourceBinding } from '#api';
import { bindingCharge, type ObservedCluster } from '#quota';
import { parseResourceList } from '#quantity';
import { AdmissionBatcher } from '../../../apps/webhook/src/admission-batcher.js';
import { asksNothing, bindingChange, NO_OBSERVER } from '../../../apps/webhook/src/admission-strategy.js';
import { CachedQuotaStore } from '../../../apps/webhook/src/cached-quota-store.js';
import { reconcileQuotas, statusesCurrentIn } from '../../../apps/reconciler/src/reconcile-loop.js';
import { ModelHost, NAMESPACE, type HostFault } from './model-host.js';
import { REQUEUE_INTERVAL_MS, WaitingModel, type Poke } from './waiting-model.js';
import { STARVING_AFTER_MS } from '../../../libs/quota/src/waiting.js';

/** Binding names the clients use, each with its cpu request per replica (millicores). */
export const BINDINGS = [
  { name: 'b0', cpuMilli: 500 },
  { name: 'b1', cpuMilli: 1000 },
  { name: 'b2', cpuMilli: 1500 },
  { name: 'b3', cpuMilli: 700 },
  { name: 'b4', cpuMilli: 300 },
] as const;

/** A quota's spec as the simulation edits it: cpu in millicores; no pods limit when `pods` is absent. */
export interface QuotaSpec {
  name: string;
  hard: { cpu: number; pods?: number };
  highOnly: boolean;
}

/** The quotas at the start: one for the namespace, one scoped to the `high` priority class. */
export const QUOTAS: readonly QuotaSpec[] = [
  { name: 'all', hard: { cpu: 10_000, pods: 12 }, highOnly: false },
  { name: 'high', hard: { cpu: 4_000 }, highOnly: true },
];

/** The cpu limits an edit may set (millicores). */
export const CPU_LIMITS = [2_000, 4_000, 7_000, 10_000] as const;

type Key = 'cpu' | 'pods';

export const TIMING = { ttlSeconds: 120, landingWindowSeconds: 60 };
/** The longest an admitted change takes to be stored: kube-apiserver caps a write's context at 34 s. */
export const LANDING_LIMIT_MS = 34_000;
/**
 * How far apart the processes' clocks may be (docs/concepts/accounting.md, "Clocks"): the landing
 * window less the landing limit. Each process's clock is off real time by at most half of it.
 */
export const MAX_CLOCK_SKEW_MS = TIMING.landingWindowSeconds * 1000 - LANDING_LIMIT_MS;
const DEADLINE_MS = 5_000;
export const MAX_REPLICAS = 6;
/**
 * Settle rounds (re-send, reconcile, requeue) a waiting change that fits gets before LIVENESS. A
 * requeue counts what each change it picks asks as taken, so a change behind one that then takes
 * nothing (refused by another quota, or no longer in the quota's scope) waits a round; but each round
 * the first change in requeue order that fits is re-sent and admitted or refused (it leaves the
 * changes that fit), and there is at most one waiting change per binding. Measured: 1 round is enough
 * for 2000 runs of seed 20261127, none is not.
 */
export const REQUEUE_ROUNDS = BINDINGS.length;

export type Action =
  | { t: 'create'; b: number; replicas: number; high: boolean; replica: number; dryRun: boolean }
  | { t: 'update'; b: number; replicas: number; high: boolean; replica: number }
  /** With `graceful`, a finalizer holds the binding: it is only marked deleting until 'finalize'. */
  | { t: 'delete'; b: number; graceful?: boolean }
  | { t: 'finalize'; b: number }
  | { t: 'complete'; i: number }
  /** Pending host operation `i` completes with a fault (model-host.ts says what each means). */
  | { t: 'fault'; i: number; fault: HostFault }
  | { t: 'land'; i: number }
  | { t: 'reconcile' }
  | { t: 'publish' }
  | { t: 'pods'; b: number; n: number }
  | { t: 'evict'; b: number; n: number }
  | { t: 'deliver' }
  | { t: 'sync'; n: number }
  | { t: 'tick'; ms: number }
  /**
   * An admin edits quota `q`: 'scope' widens a scoped quota to every binding or narrows an unscoped
   * one to `high`; 'cpu' sets its cpu limit to `cpu`; 'pods' removes its pods key, or adds it back.
   */
  | { t: 'edit'; q: number; edit: 'scope' | 'cpu' | 'pods'; cpu: number }
  /** Process `who`'s clock (webhook-0, webhook-1, the reconciler) is set `ms` off real time. */
  | { t: 'skew'; who: number; ms: number }
  /** Karmada reacts to pending requeue `i` (a reconciler's poke): it re-sends the refused write. */
  | { t: 'requeue'; i: number; replica: number };

interface Request {
  id: number;
  label: string;
  object: ResourceBinding;
  /** For an UPDATE: the stored resourceVersion it was admitted against. */
  oldVersion?: string;
  startedAt: number;
  answerBy: number;
  dryRun: boolean;
  answer?: 'allowed' | 'refused';
  done: boolean;
  /** Per quota, whether it was decided from a view older than the quota's last edit (see LIMIT). */
  beforeEdit: Set<string>;
}

export interface Violation {
  invariant: 'LIMIT' | 'ACCOUNTED' | 'EXACT' | 'ERROR' | 'LIVENESS';
  message: string;
  step: number;
  trace: string[];
}

/** What a stored binding must be counted for: nothing once it is being deleted. */
const charge = (rb: ResourceBinding): Record<Key, number> => {
  if (rb.metadata?.deletionTimestamp) return { cpu: 0, pods: 0 };
  const replicas = rb.spec?.replicas ?? 0;
  const cpu = Number.parseInt(String(rb.spec?.replicaRequirements?.resourceRequest?.['cpu'] ?? '0m'), 10);
  return { cpu: cpu * replicas, pods: replicas };
};

const isHigh = (rb: ResourceBinding): boolean => rb.spec?.replicaRequirements?.priorityClassName === 'high';

const milli = (value: unknown, key: string): number => {
  const parsed = parseResourceList({ [key]: value ?? '0' }, key).list[key];
  return parsed === undefined ? 0 : Number(key === 'cpu' ? parsed.milliValue() : parsed.value());
};

/** The KarmadaQuota spec of a simulated quota. */
const specOf = (q: QuotaSpec): KarmadaQuota['spec'] => ({
  hard: {
    cpu: `${q.hard.cpu}m`,
    ...(q.hard.pods === undefined ? {} : { pods: String(q.hard.pods) }),
  },
  ...(q.highOnly
    ? {
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
      }
    : {}),
});

const limitedKeys = (q: QuotaSpec): Key[] => (q.hard.pods === undefined ? ['cpu'] : ['cpu', 'pods']);

function bindingObject(
  b: number,
  uid: string,
  replicas: number,
  high: boolean,
  version: string,
  deletionTimestamp?: Date,
): ResourceBinding {
  const { name, cpuMilli } = BINDINGS[b]!;
  return {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: 'ResourceBinding',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid,
      resourceVersion: version,
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NAMESPACE },
      replicas,
      replicaRequirements: {
        resourceRequest: { cpu: `${cpuMilli}m` },
        ...(high ? { priorityClassName: 'high' } : {}),
      },
      placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } },
      clusters: replicas > 0 ? [{ name: 'member1', replicas }] : [],
    },
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** What the runs exercised, summed over every simulation in the process (a test that cannot fail is no test). */
export const exercised = {
  allowed: 0,
  denied: 0,
  failedClosed: 0,
  stored: 0,
  notStored: 0,
  quotaWrites: 0,
  conflicts: 0,
  /** Host operations completed with a fault: not applied, or applied with the answer lost. */
  hostFaults: 0,
  /** Requests a replica refused as they arrived, from the projection of the batch in flight. */
  refusedOnArrival: 0,
  /** Reconciles the reconciler's cache let it skip, and ones its cache sent to the host. */
  reconcilesSkipped: 0,
  reconcilesFromCacheToHost: 0,
  /** Changes of a binding being deleted that were stored (answered at once: it holds nothing). */
  storedWhileDeleting: 0,
  /** Refusals while a quota's usage was not counted for its spec (a new quota, or after an edit). */
  statusUnknown: 0,
  violationsChecked: 0,
  /** Refusals recorded as waiting changes, requeues the reconciler made, and writes Karmada re-sent. */
  waitingRecorded: 0,
  requeued: 0,
  requeueResent: 0,
  /** Actions applied, by kind (one that found nothing to act on included). */
  actions: {} as Partial<Record<Action['t'], number>>,
};

export class Simulation {
  readonly host = new ModelHost();
  /** Real time. */
  now = Date.parse('2026-11-23T00:00:00Z');
  /** How far each process's clock is off real time: webhook-0, webhook-1, the reconciler. */
  private readonly offsets = [0, 0, 0];
  private readonly clockOf = (process: number) => () => this.now + this.offsets[process]!;
  private readonly cache: CachedQuotaStore;
  private readonly replicas: AdmissionBatcher[];
  private readonly requests: Request[] = [];
  private nextId = 0;
  private delivered = 0;
  /** Pods running per binding name (uid they belong to, replicas). */
  private readonly pods = new Map<string, { uid: string; replicas: number }>();
  private published: ObservedCluster[] | undefined;
  /**
   * The bindings whose deletion the reconciler has recorded: as in production, only those its binding
   * watch (the cache below) has delivered, so a deletion is known later than the host shows it.
   */
  private readonly deletedUids = new Set<string>();
  /**
   * The reconciler's informer cache: off (every reconcile reads the host) until the first 'sync'
   * lists the host, then fed the host's changes in order, `n` per 'sync', so it lags as it pleases.
   */
  private reconcilerCache?: { quotas: Map<string, KarmadaQuota>; bindings: Map<string, ResourceBinding> };
  private reconcilerCacheAt = 0;
  private reconciles = 0;
  readonly trace: string[] = [];
  private failure?: Error;
  /** The quotas' specs as edited so far. */
  private readonly specs: QuotaSpec[] = QUOTAS.map((q) => ({ ...q, hard: { ...q.hard } }));
  /** Per quota and key, what its stored charges may reach (LIMIT): hard, or more while an edit left it over. */
  private readonly ceilings = new Map<string, Record<Key, number>>();
  /** Per quota, the index in host.quotaEvents of its last edit (-1: never edited). */
  private readonly lastEdit = new Map<string, number>();
  /**
   * Per quota, the latest change stored from a view older than its edit, by a number that grows with
   * each one (`staleLandings`), until a reconcile started after it has written the quota's count.
   */
  private readonly awaitingRecount = new Map<string, number>();
  private staleLandings = 0;
  /** The webhook's waiting records, and the requeues Karmada has not reacted to yet. */
  private readonly waiting = new WaitingModel();
  private readonly pokes: Poke[] = [];

  constructor() {
    for (const q of this.specs) {
      this.host.putQuota({
        apiVersion: 'quota.karmada.io/v1alpha1',
        kind: 'KarmadaQuota',
        metadata: { name: q.name, namespace: NAMESPACE, uid: `quota-${q.name}`, generation: 1 },
        spec: specOf(q),
      } as KarmadaQuota);
      this.ceilings.set(q.name, { cpu: q.hard.cpu, pods: q.hard.pods ?? Number.POSITIVE_INFINITY });
      this.lastEdit.set(q.name, -1);
    }
    const options = (replica: number) => ({
      ...TIMING,
      maxConflictRetries: 10,
      clock: this.clockOf(replica),
    });
    this.cache = new CachedQuotaStore(this.host.quotaStore('webhook-1'));
    this.cache.setWatching(true);
    this.delivered = this.host.quotaEvents.length;
    const observer = { ...NO_OBSERVER, refusedOnArrival: () => void exercised.refusedOnArrival++ };
    this.replicas = [
      new AdmissionBatcher(this.host.quotaStore('webhook-0'), options(0), observer),
      new AdmissionBatcher(this.cache, options(1), observer),
    ];
  }

  private log(line: string): void {
    this.trace.push(`t+${((this.now - Date.parse('2026-11-23T00:00:00Z')) / 1000).toFixed(3)}s ${line}`);
  }

  private request(
    label: string,
    object: ResourceBinding,
    replica: number,
    dryRun: boolean,
    old?: ResourceBinding,
  ): void {
    const req: Request = {
      id: this.nextId++,
      label,
      object,
      ...(old ? { oldVersion: old.metadata!.resourceVersion! } : {}),
      startedAt: this.now,
      answerBy: this.now + DEADLINE_MS,
      dryRun,
      done: false,
      // The cached replica decides from its list until its watch delivers an edit.
      beforeEdit: new Set(
        replica === 1
          ? this.specs.filter((q) => this.lastEdit.get(q.name)! >= this.delivered).map((q) => q.name)
          : [],
      ),
    };
    this.requests.push(req);
    const change = bindingChange(
      { namespace: NAMESPACE, name: object.metadata!.name! },
      object,
      bindingCharge(object).charge,
      dryRun,
      old,
    );
    if (asksNothing(change)) {
      req.answer = 'allowed';
      if (!dryRun) this.waiting.admitted(object, old);
      this.log(`request ${req.id} ${label}: allowed at once (asks nothing)`);
      return;
    }
    this.log(`request ${req.id} ${label} sent to webhook-${replica}`);
    // The replica's own deadline, on its own clock.
    this.replicas[replica]!.admit(change, req.answerBy + this.offsets[replica]!).then(
      (outcome) => {
        if (req.answer !== undefined) return;
        req.answer = outcome.allowed && this.now < req.answerBy ? 'allowed' : 'refused';
        if (req.answer === 'allowed') exercised.allowed++;
        else if ('unavailable' in outcome) exercised.failedClosed++;
        else exercised.denied++;
        if (!outcome.allowed && outcome.message.startsWith('status unknown')) exercised.statusUnknown++;
        this.log(`request ${req.id} answered ${req.answer}${outcome.allowed ? '' : `: ${outcome.message}`}`);
        if (dryRun) return;
        if (req.answer === 'allowed') this.waiting.admitted(object, old);
        else if (!outcome.allowed && 'quota' in outcome)
          if (this.waiting.refused(object, old, outcome, this.clockOf(replica)()))
            exercised.waitingRecorded++;
      },
      (err: unknown) => (this.failure = err as Error),
    );
  }

  private versionOf(b: number): ResourceBinding | undefined {
    return this.host.bindings.get(BINDINGS[b]!.name);
  }

  /** The binding is gone from the host, and its pods from the member. */
  private remove(stored: ResourceBinding): void {
    this.host.deleteBinding(stored.metadata!.name!);
    this.pods.delete(stored.metadata!.name!);
    this.log(`DELETE ${stored.metadata!.name} (${stored.metadata!.uid})`);
  }

  private async apply(action: Action): Promise<void> {
    exercised.actions[action.t] = (exercised.actions[action.t] ?? 0) + 1;
    switch (action.t) {
      case 'create': {
        const uid = `uid-${this.nextId}`;
        const rb = bindingObject(action.b, uid, action.replicas, action.high, '');
        this.request(
          `CREATE ${BINDINGS[action.b]!.name} (${uid}) replicas=${action.replicas}${action.high ? ' high' : ''}${action.dryRun ? ' dry-run' : ''}`,
          rb,
          action.replica,
          action.dryRun,
        );
        break;
      }
      case 'update': {
        const old = this.versionOf(action.b);
        if (old === undefined) return;
        // A binding being deleted can still be updated; the API server keeps its deletionTimestamp.
        const rb = bindingObject(
          action.b,
          old.metadata!.uid!,
          action.replicas,
          action.high,
          old.metadata!.resourceVersion!,
          old.metadata?.deletionTimestamp,
        );
        this.request(
          `UPDATE ${old.metadata!.name} ${old.spec!.replicas}->${action.replicas}${action.high ? ' high' : ''}`,
          rb,
          action.replica,
          false,
          old,
        );
        break;
      }
      case 'delete': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || stored.metadata?.deletionTimestamp) return;
        if (action.graceful) {
          // Its pods run on until the finalizer is done; the binding holds nothing from now on.
          this.host.storeBinding({
            ...stored,
            metadata: {
              ...stored.metadata,
              resourceVersion: this.host.nextVersion(),
              deletionTimestamp: new Date(this.now),
            },
          });
          this.log(`DELETE ${stored.metadata!.name} (${stored.metadata!.uid}): being deleted (finalizer)`);
          break;
        }
        this.remove(stored);
        break;
      }
      case 'finalize': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || !stored.metadata?.deletionTimestamp) return;
        this.remove(stored);
        break;
      }
      case 'complete': {
        const label = this.host.completeOne(action.i);
        if (label) this.log(`host: ${label}`);
        break;
      }
      case 'fault': {
        const label = this.host.completeOne(action.i, action.fault);
        if (label === undefined) return;
        exercised.hostFaults++;
        this.log(`host: ${label}; ${action.fault}`);
        break;
      }
      case 'land': {
        const open = this.requests.filter((r) => r.answer === 'allowed' && !r.done && !r.dryRun);
        if (open.length === 0) return;
        const req = open[action.i % open.length]!;
        req.done = true;
        this.land(req);
        break;
      }
      case 'reconcile': {
        if (this.published === undefined || this.reconciles >= 2) return;
        this.reconciles++;
        this.log('reconciler starts');
        void this.reconcile().then(
          () => this.reconciles--,
          (err: unknown) => {
            this.reconciles--;
            this.log(`reconciler gave up: ${(err as Error).message}`);
          },
        );
        break;
      }
      case 'publish':
        this.published = [this.observed()];
        this.log(
          `member publishes ${JSON.stringify([...this.pods.entries()].map(([n, p]) => `${n}=${p.replicas}`))}`,
        );
        break;
      case 'pods':
      case 'evict': {
        const stored = this.versionOf(action.b);
        if (stored === undefined || (action.t === 'pods' && stored.metadata?.deletionTimestamp)) return;
        const name = stored.metadata!.name!;
        const current = this.pods.get(name);
        const running = current !== undefined && current.uid === stored.metadata!.uid ? current.replicas : 0;
        const target = stored.spec!.replicas ?? 0;
        const replicas =
          action.t === 'pods' ? Math.min(target, running + action.n) : Math.max(0, running - action.n);
        this.pods.set(name, { uid: stored.metadata!.uid!, replicas });
        this.log(`member: ${name} runs ${replicas} pods`);
        break;
      }
      case 'deliver': {
        const event = this.host.quotaEvents[this.delivered];
        if (event === undefined) return;
        this.delivered++;
        this.cache.observed(event, false);
        break;
      }
      case 'sync':
        this.syncReconcilerCache(action.n);
        break;
      case 'edit':
        this.edit(action);
        break;
      case 'skew':
        this.offsets[action.who % this.offsets.length] = action.ms;
        this.log(
          `clock of ${['webhook-0', 'webhook-1', 'the reconciler'][action.who % 3]} set ${action.ms} ms off`,
        );
        break;
      case 'requeue': {
        const [poke] = this.pokes.splice(action.i % Math.max(1, this.pokes.length), 1);
        if (poke !== undefined) this.resend(poke, action.replica % this.replicas.length);
        break;
      }
      case 'tick':
        this.now += action.ms;
        for (const req of this.requests) {
          if (req.answer === undefined && this.now >= req.answerBy) {
            req.answer = 'refused';
            exercised.failedClosed++;
            this.log(`request ${req.id} timed out (fail closed)`);
          }
        }
        break;
    }
  }

  /** An admin's edit of a quota's spec: a new generation, stored at once (see LIMIT). */
  private edit(action: Extract<Action, { t: 'edit' }>): void {
    const q = this.specs[action.q % this.specs.length]!;
    if (action.edit === 'scope') q.highOnly = !q.highOnly;
    else if (action.edit === 'cpu') q.hard.cpu = action.cpu;
    else if (q.hard.pods === undefined) q.hard.pods = 12;
    else delete q.hard.pods;
    const current = this.host.quotas.get(q.name)!;
    this.host.putQuota({
      ...current,
      metadata: { ...current.metadata, generation: (current.metadata?.generation ?? 1) + 1 },
      spec: specOf(q),
    });
    this.lastEdit.set(q.name, this.host.quotaEvents.length - 1);
    // Every request not yet stored was decided, or may be, from the spec before this edit.
    for (const req of this.requests) if (!req.done) req.beforeEdit.add(q.name);
    const ceiling = { cpu: q.hard.cpu, pods: q.hard.pods ?? Number.POSITIVE_INFINITY };
    for (const key of limitedKeys(q)) ceiling[key] = Math.max(ceiling[key], this.charged(q, key));
    this.ceilings.set(q.name, ceiling);
    this.log(`EDIT quota ${q.name}: ${JSON.stringify(specOf(q))}`);
  }

  private syncReconcilerCache(n: number): void {
    if (this.reconcilerCache === undefined) {
      this.reconcilerCache = {
        quotas: new Map([...this.host.quotas].map(([k, q]) => [k, structuredClone(q)])),
        bindings: new Map([...this.host.bindings].map(([k, b]) => [k, structuredClone(b)])),
      };
      this.reconcilerCacheAt = this.host.changes.length;
      this.log('reconciler cache lists the host');
      return;
    }
    const cache = this.reconcilerCache;
    for (const change of this.host.changes.slice(this.reconcilerCacheAt, this.reconcilerCacheAt + n)) {
      if (change.kind === 'quota') cache.quotas.set(change.object.metadata!.name!, change.object);
      else if (change.kind === 'binding') cache.bindings.set(change.object.metadata!.name!, change.object);
      else {
        cache.bindings.delete(change.name);
        this.deletedUids.add(change.uid);
      }
      this.reconcilerCacheAt++;
    }
    this.log(`reconciler cache at change ${this.reconcilerCacheAt} of ${this.host.changes.length}`);
  }

  /** The API server stores an admitted change, if it still can (within its request timeout, CAS). */
  private land(req: Request): void {
    const name = req.object.metadata!.name!;
    const stored = this.host.bindings.get(name);
    if (this.now > req.startedAt + LANDING_LIMIT_MS) {
      this.log(`request ${req.id} abandoned: the API server's request timeout passed`);
      return;
    }
    if (
      req.oldVersion === undefined
        ? stored !== undefined
        : stored?.metadata?.resourceVersion !== req.oldVersion
    ) {
      exercised.notStored++;
      this.log(
        `request ${req.id} not stored: ${req.oldVersion === undefined ? 'AlreadyExists' : 'Conflict'}`,
      );
      return;
    }
    const chargedBefore = Object.fromEntries(
      this.specs.map((q) => [q.name, { cpu: this.charged(q, 'cpu'), pods: this.charged(q, 'pods') }]),
    );
    const object = structuredClone(req.object);
    object.metadata!.resourceVersion = this.host.nextVersion();
    this.host.storeBinding(object);
    const pods = this.pods.get(name);
    if (pods && (pods.uid !== object.metadata!.uid || pods.replicas > (object.spec!.replicas ?? 0)))
      this.pods.set(name, {
        uid: object.metadata!.uid!,
        replicas: pods.uid === object.metadata!.uid ? (object.spec!.replicas ?? 0) : 0,
      });
    for (const q of this.specs) {
      if (!req.beforeEdit.has(q.name)) continue;
      const ceiling = this.ceilings.get(q.name)!;
      for (const key of limitedKeys(q))
        ceiling[key] += Math.max(0, this.charged(q, key) - chargedBefore[q.name]![key]);
      this.awaitingRecount.set(q.name, ++this.staleLandings);
    }
    exercised.stored++;
    if (object.metadata?.deletionTimestamp) exercised.storedWhileDeleting++;
    this.log(`request ${req.id} stored: ${req.label}`);
  }

  private observed(): ObservedCluster {
    return {
      name: 'member1',
      state: 'Ready',
      lastSyncTime: new Date(this.now).toISOString(),
      used: {},
      workloads: [...this.pods.entries()]
        .filter(([, p]) => p.replicas > 0)
        .map(([name, p]) => {
          const b = BINDINGS.find((x) => x.name === name)!;
          return {
            kind: 'Deployment',
            name,
            used: { cpu: `${b.cpuMilli * p.replicas}m`, pods: String(p.replicas) },
          };
        }),
    };
  }

  private async reconcile(): Promise<void> {
    const landingsSeen = this.staleLandings;
    const clusters = this.published!.map((c) => ({
      ...c,
      used: Object.fromEntries(
        ['cpu', 'pods'].map((k) => [
          k,
          `${c.workloads.reduce((sum, w) => sum + milli((w.used as Record<string, string>)[k], k), 0)}${k === 'cpu' ? 'm' : ''}`,
        ]),
      ),
    }));
    const input = {
      clusters,
      deletedBindingUids: new Set(this.deletedUids),
      timing: TIMING,
      maxConflictRetries: 10,
      waiting: this.waiting.read(),
    };
    const cache = this.reconcilerCache;
    if (
      cache &&
      statusesCurrentIn(
        { quotas: [...cache.quotas.values()], bindings: [...cache.bindings.values()] },
        input,
        this.clockOf(2)(),
      )
    ) {
      exercised.reconcilesSkipped++;
      this.log('reconciler: its cache shows every status current, nothing read or written');
      return;
    }
    if (cache) exercised.reconcilesFromCacheToHost++;
    const quotas = await this.host.listQuotas('reconciler');
    const outcome = await reconcileQuotas(
      {
        getQuota: (_ns, name) => this.host.getQuota('reconciler', name),
        listBindings: () => this.host.listBindings('reconciler'),
        writeStatus: (quota) => this.host.writeQuotaStatus('reconciler', quota),
        clock: this.clockOf(2),
      },
      NAMESPACE,
      quotas,
      input,
      async () => {},
      () => {},
    );
    // Its binding list started after these landings: the statuses it wrote or found current count them.
    for (const name of outcome.statuses.keys())
      if ((this.awaitingRecount.get(name) ?? Infinity) <= landingsSeen) this.awaitingRecount.delete(name);
    for (const poke of this.waiting.settle(outcome.waiting, outcome.statuses, this.clockOf(2)())) {
      exercised.requeued++;
      this.pokes.push(poke);
      this.log(`reconciler requeues ${poke.record.binding} (waiting on ${poke.record.quota})`);
    }
  }

  /**
   * Karmada's reaction to a requeue: the detector or scheduler writes again what it wants, against the
   * binding as stored now; nothing when the binding was created, deleted or re-created meanwhile.
   */
  private resend(poke: Poke, replica: number): void {
    const name = poke.record.binding;
    const b = BINDINGS.findIndex((x) => x.name === name);
    const stored = this.versionOf(b);
    const replicas = poke.write.spec?.replicas ?? 0;
    const high = isHigh(poke.write);
    if (poke.record.uid === undefined ? stored !== undefined : stored?.metadata?.uid !== poke.record.uid) {
      this.log(`requeue of ${name}: nothing to re-send, the binding changed meanwhile`);
      return;
    }
    exercised.requeueResent++;
    if (stored === undefined) {
      const uid = `uid-${this.nextId}`;
      const rb = bindingObject(b, uid, replicas, high, '');
      this.request(
        `REQUEUED CREATE ${name} (${uid}) replicas=${replicas}${high ? ' high' : ''}`,
        rb,
        replica,
        false,
      );
      return;
    }
    const rb = bindingObject(
      b,
      stored.metadata!.uid!,
      replicas,
      high,
      stored.metadata!.resourceVersion!,
      stored.metadata?.deletionTimestamp,
    );
    const label = `REQUEUED UPDATE ${name} ${stored.spec!.replicas}->${replicas}${high ? ' high' : ''}`;
    this.request(label, rb, replica, false, stored);
  }

  /** The stored bindings a quota selects, by an independent recount. */
  private inScope(quota: QuotaSpec): ResourceBinding[] {
    return [...this.host.bindings.values()].filter((b) => !quota.highOnly || isHigh(b));
  }

  /** What the stored bindings a quota selects are charged on `key`. */
  private charged(quota: QuotaSpec, key: Key): number {
    return this.inScope(quota).reduce((sum, b) => sum + charge(b)[key], 0);
  }

  private check(step: number): Violation | undefined {
    exercised.violationsChecked++;
    for (const q of this.specs) {
      const stored = this.host.quotas.get(q.name)!;
      const status = stored.status;
      const ceiling = this.ceilings.get(q.name)!;
      for (const key of limitedKeys(q)) {
        const charged = this.charged(q, key);
        if (charged > ceiling[key]) {
          const hard = q.hard[key]!;
          return this.violation(
            'LIMIT',
            step,
            `quota ${q.name}: stored bindings charge ${key}=${charged} > ${
              ceiling[key] === hard
                ? `hard ${hard}`
                : `${ceiling[key]}, what they were when an edit left it over hard ${hard}`
            }`,
          );
        }
        if (this.awaitingRecount.has(q.name)) continue;
        // While over after an edit, the ceiling follows the charges down, never below hard.
        ceiling[key] = Math.max(q.hard[key]!, Math.min(ceiling[key], charged));
        const counted = status?.observedGeneration === stored.metadata?.generation;
        if (!counted || status?.used === undefined || !(key in status.used)) continue;
        const accounted = milli(status.used[key], key) + milli(status.reserved?.[key], key);
        if (accounted < charged) {
          return this.violation(
            'ACCOUNTED',
            step,
            `quota ${q.name}: used+reserved ${key}=${accounted} < stored charges ${charged} (${JSON.stringify(status.reservations)})`,
          );
        }
      }
    }
    return undefined;
  }

  private violation(invariant: Violation['invariant'], step: number, message: string): Violation {
    return { invariant, message, step, trace: [...this.trace] };
  }

  /** Runs the actions, checking after each; then drains, settles and checks the exact recount. */
  async run(
    actions: readonly Action[],
    options: { countedAtStart?: boolean } = {},
  ): Promise<Violation | undefined> {
    if (options.countedAtStart ?? true) {
      // The quotas' usage is counted before the clients start (a run without it covers new quotas).
      this.published = [this.observed()];
      await this.reconcileToEnd();
    }
    for (const [step, action] of actions.entries()) {
      await this.apply(action);
      await flush();
      if (this.failure) return this.violation('ERROR', step, this.failure.stack ?? String(this.failure));
      const found = this.check(step);
      if (found) return found;
    }
    const settled = await this.settle(actions.length);
    exercised.quotaWrites += this.host.writes;
    exercised.conflicts += this.host.conflicts;
    return settled;
  }

  private async drain(): Promise<void> {
    for (let guard = 0; guard < 10_000 && this.host.pending.length > 0; guard++) {
      const label = this.host.completeOne(0);
      if (label) this.log(`host: ${label}`);
      await flush();
    }
  }

  /** One reconcile with every host operation completed in order. */
  private async reconcileToEnd(): Promise<void> {
    this.reconciles++;
    const done = this.reconcile();
    await flush();
    await this.drain();
    await done;
    this.reconciles--;
  }

  private async settle(step: number): Promise<Violation | undefined> {
    this.log('-- settle: everything lands or times out, claims expire, pods catch up');
    await this.drain();
    for (const req of this.requests) {
      if (req.answer === undefined) req.answer = 'refused';
      if (req.answer === 'allowed' && !req.done && !req.dryRun) {
        req.done = true;
        this.land(req);
      }
    }
    // Claims were written on clocks up to the skew ahead: past every expiration on every clock.
    this.offsets.fill(0);
    this.now += (TIMING.ttlSeconds + 1) * 1000 + MAX_CLOCK_SKEW_MS;
    this.published = [this.observed()];
    for (let round = 0; round < 3; round++) {
      // The reconciler's watches catch up in the end: then a skip must be right, not merely safe.
      if (this.reconcilerCache) this.syncReconcilerCache(Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    const found = this.check(step);
    if (found) return found;
    for (const q of this.specs) {
      const status = this.host.quotas.get(q.name)!.status;
      for (const key of limitedKeys(q)) {
        let expectedUsed = 0;
        let expectedReserved = 0;
        for (const b of this.inScope(q)) {
          const pods = this.pods.get(b.metadata!.name!);
          const running = pods !== undefined && pods.uid === b.metadata!.uid ? pods.replicas : 0;
          const perReplica = key === 'cpu' ? BINDINGS.find((x) => x.name === b.metadata!.name)!.cpuMilli : 1;
          expectedUsed += running * perReplica;
          expectedReserved += Math.max(0, charge(b)[key] - running * perReplica);
        }
        const used = milli(status?.used?.[key], key);
        const reserved = milli(status?.reserved?.[key], key);
        if (used !== expectedUsed || reserved !== expectedReserved) {
          return this.violation(
            'EXACT',
            step,
            `quota ${q.name} after settling: used ${key}=${used} reserved=${reserved}, recount used=${expectedUsed} reserved=${expectedReserved} (${JSON.stringify(status?.reservations)})`,
          );
        }
      }
    }
    return this.settleWaiting(step);
  }

  /**
   * Requeue to the end: Karmada re-sends what each requeue poked and the API server stores what is
   * admitted, time passes the requeue interval, the reconciler reconciles and requeues; REQUEUE_ROUNDS
   * times. Then a waiting change that asks no more than its quota has free, by the independent recount,
   * is a LIVENESS violation, unless a starving change ahead of it on that quota that could fit once
   * enough frees holds the room (STARVING_AFTER_MS, by design).
   */
  private async settleWaiting(step: number): Promise<Violation | undefined> {
    for (let round = 0; ; round++) {
      for (const poke of this.pokes.splice(0)) this.resend(poke, 0);
      await flush();
      await this.drain();
      for (const req of this.requests) {
        if (req.answer === 'allowed' && !req.done && !req.dryRun) {
          req.done = true;
          this.land(req);
        }
      }
      if (round === REQUEUE_ROUNDS || this.waiting.records.size === 0) break;
      this.now += REQUEUE_INTERVAL_MS + 1_000;
      if (this.reconcilerCache) this.syncReconcilerCache(Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    const found = this.check(step);
    if (found) return found;
    const live = this.waiting.live([...this.host.bindings.values()], this.now);
    // What the binding would hold in the quota once admitted is within its hard limit.
    const couldFit = (write: ResourceBinding, q: QuotaSpec) =>
      limitedKeys(q).every((key) => charge(write)[key] <= q.hard[key]!);
    for (const record of live) {
      const q = this.specs.find((x) => x.name === record.quota)!;
      const asked = Object.entries(record.requested);
      // A key the quota no longer limits has no room in the product's eyes (a key free lacks counts
      // as 0): such a change waits for Karmada's own back-off retry (not modelled).
      if (asked.some(([key]) => !limitedKeys(q).includes(key as Key))) continue;
      if (!asked.every(([key, amount]) => milli(amount, key) <= this.free(q, key as Key))) continue;
      // Stored already by another write of the same spec, admitted before this refusal was recorded:
      // the wait is over, though the record stays until it settles (re-sent, it asks nothing).
      const stored = this.host.bindings.get(record.binding);
      const write = this.waiting.wantedWrite(record.binding)!;
      if (stored && stored.spec?.replicas === write.spec?.replicas && isHigh(stored) === isHigh(write))
        continue;
      const heldBack = live.some(
        (other) =>
          other !== record &&
          other.quota === record.quota &&
          ((other.priority ?? 0) > (record.priority ?? 0) ||
            ((other.priority ?? 0) === (record.priority ?? 0) && other.since < record.since)) &&
          this.now - Date.parse(other.since) >= STARVING_AFTER_MS &&
          couldFit(this.waiting.wantedWrite(other.binding)!, q),
      );
      if (heldBack) continue;
      return this.violation(
        'LIVENESS',
        step,
        `${record.binding} still waits on quota ${record.quota} since ${record.since} after ${REQUEUE_ROUNDS} requeue rounds, asking ${JSON.stringify(record.requested)} of free ${JSON.stringify(Object.fromEntries(limitedKeys(q).map((key) => [key, this.free(q, key)])))}; waiting: ${JSON.stringify(live.map((r) => [r.binding, r.quota, r.requested, r.since, r.requeuedAt ?? null]))}`,
      );
    }
    return undefined;
  }

  /**
   * What a quota has free on `key` by an independent recount: hard less what the stored bindings it
   * selects hold, each its charge or its pods still running if more (a binding being deleted charges
   * nothing, but its pods count until its finalizer is done).
   */
  private free(q: QuotaSpec, key: Key): number {
    const held = (rb: ResourceBinding): number => {
      const pods = this.pods.get(rb.metadata!.name!);
      const running = pods !== undefined && pods.uid === rb.metadata!.uid ? pods.replicas : 0;
      const perReplica = key === 'cpu' ? BINDINGS.find((x) => x.name === rb.metadata!.name)!.cpuMilli : 1;
      return Math.max(charge(rb)[key], running * perReplica);
    };
    return q.hard[key]! - this.inScope(q).reduce((sum, rb) => sum + held(rb), 0);
  }
}

/** Runs one simulation of `actions`. */
export async function simulate(
  actions: readonly Action[],
  options: { countedAtStart?: boolean; trace?: string[] } = {},
): Promise<Violation | undefined> {
  const simulation = new Simulation();
  const violation = await simulation.run(actions, options);
  options.trace?.push(...simulation.trace);
  return violation;
}
