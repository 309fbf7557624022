/**
 * The admission owner's protocol (design C) searched on its own, before it joins the full simulation
 * (docs/development/simulation.md, "The owner protocol"): two webhook processes on clocks of their own
 * rates take the Lease and decide increases from memory through the product's OwnerAdmission,
 * crash, hand over and pause; either may be replaced by a webhook of a batched mode (a rolling switch
 * of mode), which decides behind the product's BatchedFence with claims written to the status; the
 * API server stores what was admitted within its deadline or never; the reconciler counts with the
 * real computeQuotaStatus and stamps its list's version. After every action: LIMIT (what is stored
 * fits the quota) and EXCLUSION (one owner at most may decide).
 */
import fc from 'fast-check';
import type { KarmadaQuota, ResourceBinding } from '#api';
import type { ResourceList } from '#quantity';
import { bindingCharge, computeQuotaStatus } from '#quota';
import {
  AdmissionLease,
  asksNothing,
  BatchedFence,
  bindingChange,
  CasPerAdmission,
  OwnerAdmission,
  type AdmissionLeaseState,
  type AdmissionStrategy,
  type LeaseApi,
} from '#accounting';
import { ConflictError, type QuotaStore } from '#service-kit';

const NAMESPACE = 'team-a';
const QUOTA = 'compute';
const HARD_CPU = 10;
const NAMES = ['b1', 'b2', 'b3'] as const;
/** Lease duration and renew deadline, as the chart sets them (client-go's 15 s and 10 s). */
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
/** kube-apiserver stores an admitted change within 34 s of receiving it or never. */
const STORED_WITHIN_MS = 34_000;
/** The API server waits this long for the webhook's answer, then fails the request. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** The owner's landing window (its own clock): stored within, or never, whatever its clock's rate. */
const LANDING_WINDOW_MS = 60_000;
/** Clock rates differ by at most this fraction from real time (lease assumption: < D/R overall). */
const MAX_DRIFT = 0.1;

export type OwnerAction =
  /** `twice`: Karmada's detector sends a second create of the name right after the first (a new uid). */
  | { t: 'create'; name: number; cpu: number; to: number; twice: boolean }
  | { t: 'update'; name: number; cpu: number; to: number }
  | { t: 'delete'; name: number }
  /** Karmada's controllers write the binding's status: a new resourceVersion, the same charge. */
  | { t: 'statusWrite'; name: number }
  /** `fault`: of the Lease write a raise of the owner's budget makes while deciding, if it makes one. */
  | { t: 'decide'; request: number; fault?: LeaseFault }
  /**
   * A forwarded decision arrives again (duplicated or retried): the owner decides the same change once
   * more, its answer to the first request standing.
   */
  | { t: 'again'; request: number }
  | { t: 'answer'; request: number }
  | { t: 'land'; request: number }
  | { t: 'lease'; process: number; fault: LeaseFault }
  /** The process's watch of the Lease delivers its current version, or (`stale`) the one before it. */
  | { t: 'watchLease'; process: number; stale: boolean }
  | { t: 'count' }
  /** The reconciler stops (a crash loop, a leader change) or starts again: no count meanwhile. */
  | { t: 'reconciler'; running: boolean }
  | { t: 'deliverBindings'; process: number; events: number }
  | { t: 'deliverQuota'; process: number }
  | { t: 'sweep'; process: number }
  | { t: 'crash'; process: number }
  | { t: 'release'; process: number }
  /** The process is replaced by one of the other mode (a step of a rolling switch; an owner hands over first). */
  | { t: 'switch'; process: number }
  | { t: 'drift'; process: number; rate: number }
  | { t: 'tick'; ms: number };

/** What the runs did, summed over runs: a spec asserts the search reached where the protocol can break. */
export const ownerExercised = {
  admitted: 0,
  refused: 0,
  stored: 0,
  notStored: 0,
  acquired: 0,
  acquiredAfterCrash: 0,
  handedOver: 0,
  answeredTooLate: 0,
  refusedAfterTakeover: 0,
  /** Takeovers after a crash whose predecessor's budgets (or ghosts) are charged. */
  budgetsCharged: 0,
  settled: 0,
  decidedAgain: 0,
  /** Processes replaced by one of the other mode, and decisions a batched webhook made. */
  switched: 0,
  batchedAdmitted: 0,
  fenced: 0,
  /** Versions of the Lease an owner-mode process's watch delivered (the current one or the one before). */
  leaseWatched: 0,
};

export interface OwnerViolation {
  invariant: 'LIMIT' | 'EXCLUSION';
  step: number;
  message: string;
  trace: string[];
}

interface Stored {
  uid: string;
  cpu: number;
  resourceVersion: string;
}

type HostEvent = { name: string; uid: string; resourceVersion: string; deleted: boolean };

/** A create or an update on its way through the API server. */
interface Request {
  name: string;
  uid: string;
  cpu: number;
  old?: Stored;
  to: number;
  sentAt: number;
  /** 'decided': allowed by the owner, the answer not sent yet. */
  state: 'sent' | 'decided' | 'allowed' | 'done';
}

interface Process {
  identity: string;
  mode: 'owner' | 'batched';
  /** In a batched mode: the fence, and the CAS admission behind it (claims in the status). */
  fence?: BatchedFence;
  batched?: AdmissionStrategy;
  rate: number;
  /** Real time and monotonic reading when the rate last changed. */
  since: { real: number; mono: number };
  lease: AdmissionLease;
  /** The product's owner (OwnerAdmission), over this process's Lease, quota watch and clock. */
  admission: OwnerAdmission;
  /** How many host events its binding watch delivered. */
  delivered: number;
  /** The quota's status as its watch shows it. */
  quota?: KarmadaQuota;
}

/**
 * A fault of a Lease write: applied with its answer lost, never applied (a 503), or delayed in the API
 * server past the client's timeout and applied (compare-and-swap as it then stands) just before the
 * next Lease write, after that writer's read.
 */
export type LeaseFault = 'none' | 'answer lost' | 'not applied' | 'late';

/** The Lease object on the Karmada API server: compare-and-swap on its resourceVersion. */
class HostLease implements LeaseApi {
  lease?: AdmissionLeaseState;
  /** The version before the current one: a watch may still deliver it. */
  previous?: AdmissionLeaseState;
  /** The fault of the next write. */
  fault: LeaseFault = 'none';
  /** A delayed write, applied before the next write. */
  private late?: () => void;
  constructor(private readonly nextVersion: () => string) {}

  async read(): Promise<AdmissionLeaseState | undefined> {
    return this.lease && structuredClone(this.lease);
  }

  async write(next: Omit<AdmissionLeaseState, 'resourceVersion'>, expected: string | undefined) {
    this.applyLate();
    const fault = this.fault;
    this.fault = 'none';
    if (fault === 'not applied') throw new Error('the API server answered 503');
    const apply = () => {
      if (this.lease?.resourceVersion !== expected) throw new ConflictError('the Lease changed');
      this.previous = this.lease;
      this.lease = { ...structuredClone(next), resourceVersion: this.nextVersion() };
    };
    if (fault === 'late') {
      this.late = apply;
      throw new Error('timed out');
    }
    apply();
    if (fault === 'answer lost') throw new Error('the answer was lost');
    return structuredClone(this.lease!);
  }

  private applyLate(): void {
    const late = this.late;
    this.late = undefined;
    try {
      late?.();
    } catch {
      // a conflict: the delayed write is not applied
    }
  }
}

const binding = (
  name: string,
  cpu: number,
  metadata: { uid?: string; resourceVersion?: string } = {},
): ResourceBinding => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  metadata: { name, namespace: NAMESPACE, ...metadata },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas: cpu,
    clusters: [{ name: 'member1', replicas: cpu }],
    replicaRequirements: { resourceRequest: { cpu: '1' } },
  },
});

const chargeOf = (cpu: number): ResourceList => bindingCharge(binding('x', cpu)).charge;

class OwnerWorld {
  now = 0;
  private version = 1;
  private uids = 0;
  private restarts = 0;
  readonly stored = new Map<string, Stored>();
  readonly events: HostEvent[] = [];
  readonly requests: Request[] = [];
  readonly host = new HostLease(() => this.nextVersion());
  private reconcilerRunning = true;
  /** An owner asked the reconciler for a count (a restamp job): the next count is written even if quiet. */
  private countRequested = false;
  quota: KarmadaQuota = {
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: QUOTA, namespace: NAMESPACE, generation: 1 },
    spec: { hard: { cpu: String(HARD_CPU) } },
  };
  readonly processes: Process[];
  constructor(readonly trace: string[]) {
    this.processes = [this.start(0, 1, 'owner'), this.start(1, 1, 'owner')];
    // Installed and counted: the status stamps the (empty) list, and both watches show it.
    this.count();
    for (const p of this.processes) p.quota = structuredClone(this.quota);
  }

  /**
   * The reconciler's count: a consistent list, the real status computation, and its write when the
   * status changed, or when an owner asked for a count (a quiet quota keeps its old stamp otherwise).
   */
  private count(): boolean {
    const list = [...this.stored.entries()].map(([name, s]) =>
      binding(name, s.cpu, { uid: s.uid, resourceVersion: s.resourceVersion }),
    );
    const result = computeQuotaStatus({
      quota: this.quota,
      bindings: list,
      bindingsVersion: String(this.version),
      clusters: [],
      now: new Date(this.now),
      restamp: this.countRequested,
    });
    if (!result.changed) return false;
    this.countRequested = false;
    this.quota = {
      ...this.quota,
      metadata: { ...this.quota.metadata, resourceVersion: this.nextVersion() },
      status: result.status,
    };
    return true;
  }

  private nextVersion(): string {
    return String(++this.version);
  }

  private start(index: number, rate: number, mode: Process['mode']): Process {
    const identity = `webhook-${index}.${this.restarts++}`;
    const process: Process = {
      identity,
      mode,
      rate,
      since: { real: this.now, mono: 0 },
      delivered: 0,
    } as Process;
    process.lease = new AdmissionLease(
      this.host,
      { identity, address: `${identity}:8443`, durationMs: LEASE_MS, renewDeadlineMs: RENEW_DEADLINE_MS },
      () => this.mono(process),
    );
    // Until its quota watch has delivered, a process knows no quota (as the product's before it lists).
    const watched = () => (process.quota ? [process.quota] : undefined);
    process.admission = new OwnerAdmission(
      process.lease,
      { watchedIn: watched, allWatched: watched, selection: () => undefined },
      {
        consistentVersion: async () => String(this.version),
        requestCount: async () => {
          this.countRequested = true;
        },
      },
      {
        ttlSeconds: 120,
        landingWindowSeconds: LANDING_WINDOW_MS / 1000,
        clock: () => this.now,
        monotonic: () => this.mono(process),
      },
    );
    if (mode === 'batched') {
      process.fence = new BatchedFence(
        this.host,
        { consistentVersion: async () => String(this.version) },
        { durationMs: LEASE_MS, renewDeadlineMs: RENEW_DEADLINE_MS, landingWindowMs: LANDING_WINDOW_MS },
        () => this.mono(process),
      );
      process.batched = process.fence.fenced(
        new CasPerAdmission(this.quotaStore, {
          ttlSeconds: 120,
          landingWindowSeconds: LANDING_WINDOW_MS / 1000,
          clock: () => this.now,
        }),
        watched,
      );
    }
    return process;
  }

  /** The quota on the API server, as a batched webhook reads and writes it: compare-and-swap. */
  private readonly quotaStore: QuotaStore = {
    list: async () => [structuredClone(this.quota)],
    writeStatus: async (quota) => {
      if (quota.metadata?.resourceVersion !== this.quota.metadata?.resourceVersion)
        throw new ConflictError('the quota changed');
      this.quota = {
        ...this.quota,
        metadata: { ...this.quota.metadata, resourceVersion: this.nextVersion() },
        status: structuredClone(quota.status),
      };
      return structuredClone(this.quota);
    },
  };

  private mono(p: Process): number {
    return p.since.mono + (this.now - p.since.real) * p.rate;
  }

  private store(name: string, next: Stored | undefined): void {
    const version = this.nextVersion();
    const old = this.stored.get(name);
    if (next === undefined) {
      this.stored.delete(name);
      this.events.push({ name, uid: old!.uid, resourceVersion: version, deleted: true });
    } else {
      this.stored.set(name, { ...next, resourceVersion: version });
      this.events.push({ name, uid: next.uid, resourceVersion: version, deleted: false });
    }
  }

  /** The decision on one request by the process's OwnerAdmission; a change asking nothing is admitted by any. */
  private async decide(p: Process, r: Request): Promise<boolean> {
    const old =
      r.old && binding(r.name, r.old.cpu, { uid: r.old.uid, resourceVersion: r.old.resourceVersion });
    const object = binding(r.name, r.cpu, { uid: r.uid });
    const change = bindingChange({ namespace: NAMESPACE, name: r.name }, object, chargeOf(r.cpu), false, old);
    if (asksNothing(change)) return true;
    const outcome = await (p.batched ?? p.admission).admit(change, r.sentAt + WEBHOOK_TIMEOUT_MS);
    if (p.batched !== undefined) {
      if (outcome.allowed) ownerExercised.batchedAdmitted++;
      else if ('unavailable' in outcome) ownerExercised.fenced++;
    }
    if (
      !outcome.allowed &&
      outcome.message.includes('took over from the batched webhooks or from an owner that did not hand over')
    )
      ownerExercised.refusedAfterTakeover++;
    return outcome.allowed;
  }

  async apply(action: OwnerAction): Promise<void> {
    const log = (line: string) => this.trace.push(`t=${this.now} ${line}`);
    switch (action.t) {
      case 'create': {
        const name = NAMES[action.name % NAMES.length]!;
        for (let sent = 0; sent < (action.twice ? 2 : 1); sent++) {
          const uid = `uid-${++this.uids}`;
          this.requests.push({
            name,
            uid,
            cpu: action.cpu,
            to: action.to % 2,
            sentAt: this.now,
            state: 'sent',
          });
          log(`create ${name} (${uid}) cpu=${action.cpu} sent to process ${action.to % 2}`);
        }
        break;
      }
      case 'update': {
        const name = NAMES[action.name % NAMES.length]!;
        const old = this.stored.get(name);
        if (old === undefined) break;
        this.requests.push({
          name,
          uid: old.uid,
          cpu: action.cpu,
          old: { ...old },
          to: action.to % 2,
          sentAt: this.now,
          state: 'sent',
        });
        log(
          `update ${name} cpu ${old.cpu}->${action.cpu} at ${old.resourceVersion} sent to process ${action.to % 2}`,
        );
        break;
      }
      case 'delete': {
        const name = NAMES[action.name % NAMES.length]!;
        if (!this.stored.has(name)) break;
        this.store(name, undefined);
        log(`delete ${name}`);
        break;
      }
      case 'statusWrite': {
        const name = NAMES[action.name % NAMES.length]!;
        const current = this.stored.get(name);
        if (current === undefined) break;
        this.store(name, current);
        log(`Karmada writes ${name}'s status`);
        break;
      }
      case 'decide': {
        const r = this.open('sent', action.request);
        if (r === undefined) break;
        // An owner-mode process that does not own the Lease forwards the decision to the one that does.
        const [called, other] = [this.processes[r.to]!, this.processes[1 - r.to]!];
        if (called.mode === 'owner' && !called.lease.owns() && other.mode === 'owner' && other.lease.owns())
          r.to = 1 - r.to;
        const p = this.processes[r.to]!;
        this.host.fault = action.fault ?? 'none';
        const allowed = await this.decide(p, r);
        this.host.fault = 'none';
        r.state = allowed ? 'decided' : 'done';
        ownerExercised[allowed ? 'admitted' : 'refused']++;
        log(`${p.identity} ${allowed ? 'admits' : 'refuses'} ${r.name} (${r.uid}) cpu=${r.cpu}`);
        break;
      }
      case 'again': {
        const admitted = this.requests.filter((q) => q.state === 'decided' || q.state === 'allowed');
        const r = admitted[action.request % Math.max(1, admitted.length)];
        const p = this.processes.find((q) => q.mode === 'owner' && q.lease.owns());
        if (r === undefined || p === undefined) break;
        const allowed = await this.decide(p, r);
        ownerExercised.decidedAgain++;
        log(`${p.identity} ${allowed ? 'admits' : 'refuses'} ${r.name} (${r.uid}) cpu=${r.cpu} again`);
        break;
      }
      case 'answer': {
        const r = this.open('decided', action.request);
        if (r === undefined) break;
        const p = this.processes[r.to]!;
        // Not checked again as it is sent: a forwarded decision travels back to the replica the API
        // server called while the owner may lose the Lease; the landing window covers it.
        const ok = this.now - r.sentAt <= WEBHOOK_TIMEOUT_MS;
        r.state = ok ? 'allowed' : 'done';
        if (!ok) ownerExercised.answeredTooLate++;
        log(`${p.identity} answers ${r.name} (${r.uid}): ${ok ? 'allowed' : 'too late or not owner'}`);
        break;
      }
      case 'land': {
        const r = this.open('allowed', action.request);
        if (r === undefined) break;
        r.state = 'done';
        const current = this.stored.get(r.name);
        if (this.now - r.sentAt > STORED_WITHIN_MS) {
          ownerExercised.notStored++;
          log(`${r.name} (${r.uid}) not stored: past the API server's deadline`);
        } else if (
          r.old === undefined ? current !== undefined : current?.resourceVersion !== r.old.resourceVersion
        ) {
          ownerExercised.notStored++;
          log(`${r.name} (${r.uid}) not stored: ${r.old ? 'conflict' : 'AlreadyExists'}`);
        } else {
          this.store(r.name, { uid: r.uid, cpu: r.cpu, resourceVersion: '' });
          ownerExercised.stored++;
          log(`${r.name} (${r.uid}) stored cpu=${r.cpu}`);
        }
        break;
      }
      case 'lease': {
        const p = this.processes[action.process % 2]!;
        if (p.fence !== undefined) {
          this.host.fault = action.fault;
          const view = await p.fence.step();
          this.host.fault = 'none';
          // It asks for counts of quotas behind its mark, as AdmissionFence does.
          if (p.fence.awaitingCount(p.quota ? [p.quota] : []).length > 0) this.countRequested = true;
          log(`${p.identity} (batched) reads the Lease: ${view.mode}`);
          break;
        }
        const carries = () =>
          p.admission.refusesAfterTakeover || Object.keys(p.lease.carried()?.ghosts ?? {}).length > 0;
        const unsettled = p.lease.owns() && carries();
        const heldBefore = this.host.lease?.holder ?? '';
        const budgetsBefore = Object.keys(this.host.lease?.record.budgets ?? {}).length > 0;
        this.host.fault = action.fault;
        const step = await p.admission.tick();
        this.host.fault = 'none';
        if (step === 'acquired') {
          ownerExercised.acquired++;
          if (heldBefore !== '' && heldBefore !== p.identity) {
            ownerExercised.acquiredAfterCrash++;
            if (budgetsBefore) ownerExercised.budgetsCharged++;
          }
        } else if (unsettled && p.lease.owns() && !carries()) ownerExercised.settled++;
        log(`${p.identity} lease: ${step}${action.fault === 'none' ? '' : ` (a write ${action.fault})`}`);
        break;
      }
      case 'watchLease': {
        const p = this.processes[action.process % 2]!;
        const version = action.stale ? this.host.previous : this.host.lease;
        if (p.fence !== undefined || version === undefined) break; // batched webhooks only read it
        p.admission.leaseObserved(structuredClone(version));
        ownerExercised.leaseWatched++;
        log(
          `${p.identity}'s watch shows the Lease at ${version.resourceVersion} (held by ${version.holder || 'none'})`,
        );
        break;
      }
      case 'reconciler':
        this.reconcilerRunning = action.running;
        log(`reconciler ${action.running ? 'starts' : 'stops'}`);
        break;
      case 'count': {
        if (!this.reconcilerRunning) break;
        if (!this.count()) break; // a quiet quota: nothing to write
        const status = this.quota.status!;
        log(
          `reconciler counts reserved=${JSON.stringify(status.reserved)} at ${status.observedBindingsVersion}`,
        );
        break;
      }
      case 'deliverBindings': {
        const p = this.processes[action.process % 2]!;
        const upTo = Math.min(this.events.length, p.delivered + action.events);
        for (; p.delivered < upTo; p.delivered++) {
          const e = this.events[p.delivered]!;
          p.admission.bindingObserved(binding(e.name, 0, e), e.deleted);
        }
        break;
      }
      case 'deliverQuota': {
        const p = this.processes[action.process % 2]!;
        p.quota = structuredClone(this.quota);
        p.admission.quotaObserved(p.quota);
        break;
      }
      case 'sweep':
        await this.processes[action.process % 2]!.admission.sweep();
        break;
      case 'crash': {
        const i = action.process % 2;
        this.restart(i);
        log(`process ${i} crashes and restarts as ${this.processes[i]!.identity}`);
        break;
      }
      case 'release': {
        const i = action.process % 2;
        const p = this.processes[i]!;
        if (p.lease.carried() === undefined) break; // it holds no Lease to hand over
        await this.handOver(p);
        this.restart(i);
        break;
      }
      case 'switch': {
        const i = action.process % 2;
        const p = this.processes[i]!;
        if (p.lease.carried() !== undefined) await this.handOver(p);
        const mode = p.mode === 'owner' ? 'batched' : 'owner';
        this.restart(i, mode);
        ownerExercised.switched++;
        log(`${p.identity} is replaced by ${this.processes[i]!.identity}, a webhook in ${mode} mode`);
        break;
      }
      case 'drift': {
        const p = this.processes[action.process % 2]!;
        p.since = { real: this.now, mono: this.mono(p) };
        p.rate = action.rate;
        break;
      }
      case 'tick':
        this.now += action.ms;
        break;
    }
  }

  /** A graceful stop of an owner holding the Lease: it hands over what is in flight. */
  private async handOver(p: Process): Promise<void> {
    const claims = p.admission.claimsInFlight;
    const released = await p.admission.release();
    if (released) ownerExercised.handedOver++;
    this.trace.push(
      `t=${this.now} ${p.identity} ${released ? 'hands the Lease over' : 'could not hand over'} (${claims} claims)`,
    );
  }

  /** Process `i` starts again (a new identity, nothing in memory); what it had not answered fails. */
  private restart(i: number, mode = this.processes[i]!.mode): void {
    for (const r of this.requests)
      if (r.to === i && (r.state === 'sent' || r.state === 'decided')) r.state = 'done';
    this.processes[i] = this.start(i, this.processes[i]!.rate, mode);
  }

  private open(state: Request['state'], index: number): Request | undefined {
    const open = this.requests.filter((r) => r.state === state);
    return open.length === 0 ? undefined : open[index % open.length];
  }

  check(step: number): OwnerViolation | undefined {
    const total = [...this.stored.values()].reduce((sum, s) => sum + s.cpu, 0);
    if (total > HARD_CPU)
      return { invariant: 'LIMIT', step, message: `${total} cpu stored of ${HARD_CPU}`, trace: this.trace };
    const owners = this.processes.filter((p) => p.mode === 'owner' && p.lease.owns());
    if (owners.length > 1)
      return {
        invariant: 'EXCLUSION',
        step,
        message: `${owners.map((p) => p.identity).join(' and ')} may both decide`,
        trace: this.trace,
      };
    return undefined;
  }
}

/** Runs the actions, checking after each; the first violation, or undefined. */
export async function simulateOwner(
  actions: readonly OwnerAction[],
  options: { trace?: string[] } = {},
): Promise<OwnerViolation | undefined> {
  const world = new OwnerWorld(options.trace ?? []);
  for (const [step, action] of actions.entries()) {
    await world.apply(action);
    const violation = world.check(step);
    if (violation) return violation;
  }
  return undefined;
}

const processIndex = fc.nat({ max: 1 });
const request = fc.nat({ max: 7 });
const leaseFault = fc.constantFrom<LeaseFault>(
  'none',
  'none',
  'none',
  'none',
  'none',
  'answer lost',
  'not applied',
  'late',
);

/** Random actions: clients, the processes' decisions and Leases, landings, counts, watches and time. */
const ownerActions = [
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('create' as const),
      name: fc.nat({ max: 2 }),
      cpu: fc.integer({ min: 1, max: 6 }),
      to: processIndex,
      twice: fc.constantFrom(false, false, false, true),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('update' as const),
      name: fc.nat({ max: 2 }),
      cpu: fc.integer({ min: 0, max: 8 }),
      to: processIndex,
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('delete' as const), name: fc.nat({ max: 2 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('statusWrite' as const), name: fc.nat({ max: 2 }) }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant('decide' as const), request, fault: leaseFault }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('again' as const), request }) },
  { weight: 12, arbitrary: fc.record({ t: fc.constant('answer' as const), request }) },
  { weight: 12, arbitrary: fc.record({ t: fc.constant('land' as const), request }) },
  {
    weight: 16,
    arbitrary: fc.record({
      t: fc.constant('lease' as const),
      process: processIndex,
      fault: leaseFault,
    }),
  },

  { weight: 3, arbitrary: fc.record({ t: fc.constant('count' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('reconciler' as const), running: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('deliverBindings' as const),
      process: processIndex,
      events: fc.constantFrom(1, 1, 2),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('deliverQuota' as const), process: processIndex }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('sweep' as const), process: processIndex }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('crash' as const), process: processIndex }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), process: processIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('drift' as const),
      process: processIndex,
      rate: fc.constantFrom(1 - MAX_DRIFT, 1, 1 + MAX_DRIFT),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('tick' as const),
      ms: fc.constantFrom(500, 1_000, 2_000, 5_000),
    }),
  },
  // Everything stands still this long: Leases expire, requests pass their deadlines.
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.constantFrom(12_000, 30_000, 70_000) }),
  },
] as const;
const runOf = (actions: fc.Arbitrary<OwnerAction>): fc.Arbitrary<OwnerAction[]> =>
  fc.array(actions, { minLength: 20, maxLength: 300, size: 'max' });

/** Owner-mode processes only. */
export const ownerActionsArbitrary = runOf(fc.oneof(...ownerActions));

/**
 * The same, with processes replaced by webhooks of the other mode (the fence between the modes), and
 * owners' watches of the Lease delivering versions between their rounds (`npm run sim` searches this).
 */
export const switchingActionsArbitrary = runOf(
  fc.oneof(
    ...ownerActions,
    {
      weight: 3,
      arbitrary: fc.record({ t: fc.constant('switch' as const), process: processIndex }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant('watchLease' as const),
        process: processIndex,
        stale: fc.boolean(),
      }),
    },
  ),
);

/** The seed of the owner protocol's hunt `npm test` runs. */
export const OWNER_HUNT_SEED = 20261130;

/** The seeded search, stopped at the first violation: how many runs it takes to find a bug. */
export async function huntOwner(
  numRuns: number,
  seed = OWNER_HUNT_SEED,
  arbitrary: fc.Arbitrary<OwnerAction[]> = ownerActionsArbitrary,
) {
  let runs = 0;
  let found: OwnerViolation | undefined;
  await fc.check(
    fc.asyncProperty(arbitrary, async (actions) => {
      runs++;
      found = await simulateOwner(actions);
      return found === undefined;
    }),
    { seed, numRuns, endOnFailure: true },
  );
  return found === undefined
    ? { runs }
    : { runs, violation: { invariant: found.invariant, step: found.step, message: found.message } };
}
