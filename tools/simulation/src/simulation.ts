/**
 * A deterministic simulation of the accounting (docs/development/simulation.md): the real admission
 * core and reconcile loop (#accounting) of two webhook replicas and a reconciler, Karmada-like clients
 * and two members, against a model of the Karmada API server (model-host.ts). A run is a list of
 * actions (model.ts) that chooses the interleaving; every invariant is checked after every action
 * against an independent recount. This file applies the actions and ends a run; each part of the
 * federation has its own file (webhooks.ts, reconciler.ts, karmada.ts, members.ts, ...).
 */
import type { AdmissionBatcher, CachedQuotaStore } from '#accounting';
import { isClusterQuota } from '#quota';
import {
  BINDINGS,
  exercised,
  flush,
  limitedKeys,
  MAX_CLOCK_SKEW_MS,
  MEMBERS,
  milli,
  perReplica,
  REQUEUE_ROUNDS,
  TIMING,
  type Action,
  type Violation,
} from './model.js';
import { NAMESPACE } from './model-host.js';
import { kindOf } from './kinds-model.js';
import { REQUEUE_INTERVAL_MS } from './waiting-model.js';
import { Invariants } from './invariants.js';
import {
  create,
  createKind,
  deleteBinding,
  finalize,
  land,
  landOne,
  resend,
  retry,
  update,
  writeStatus,
} from './karmada.js';
import { loseRedis, memberEvent, publish, runHandMade, runPods, terminate } from './members.js';
import { edit, label } from './quota-edits.js';
import {
  bindingsIn,
  clustersIn,
  reconcile,
  reconcileCluster,
  startClusterReconcile,
  startReconcile,
  syncReconcilerCache,
  syncReconcilerLabels,
} from './reconciler.js';
import { override, unadmitted } from './unadmitted.js';
import { deliverLabel, deliverQuotaEvent, timedOut, webhookReplicas } from './webhooks.js';

export class Simulation extends Invariants {
  readonly cache: CachedQuotaStore;
  readonly replicas: AdmissionBatcher[];

  constructor(clusterQuota = false) {
    super(clusterQuota);
    const webhooks = webhookReplicas(this);
    this.cache = webhooks.cache;
    this.replicas = webhooks.replicas;
  }

  private async apply(action: Action): Promise<void> {
    exercised.actions[action.t] = (exercised.actions[action.t] ?? 0) + 1;
    switch (action.t) {
      case 'create':
        return create(this, action);
      case 'createKind':
        return createKind(this, action);
      case 'update':
        return update(this, action);
      case 'delete':
        return deleteBinding(this, action);
      case 'finalize':
        return finalize(this, action);
      case 'statusWrite':
        return writeStatus(this, action);
      case 'land':
        return landOne(this, action.i);
      case 'complete': {
        const label = this.host.completeOne(action.i);
        if (label) this.log(`host: ${label}`);
        return;
      }
      case 'fault': {
        const label = this.host.completeOne(action.i, action.fault);
        if (label === undefined) return;
        exercised.hostFaults++;
        this.log(`host: ${label}; ${action.fault}`);
        return;
      }
      case 'reconcile':
        return startReconcile(this);
      case 'reconcileCluster':
        return startClusterReconcile(this);
      case 'sync':
        syncReconcilerCache(this, action.n);
        syncReconcilerLabels(this, action.n);
        return;
      case 'publish':
        return publish(this);
      case 'pods':
      case 'evict':
        return runPods(this, action);
      case 'outside':
        return runHandMade(this, action);
      case 'terminate':
        return terminate(this, action);
      case 'member':
        return memberEvent(this, action.m % MEMBERS.length, action.event);
      case 'redis-loss':
        return loseRedis(this);
      case 'surge':
      case 'jobFinishes':
      case 'jobRecreated':
      case 'jobRunsAgain':
        return unadmitted(this, action);
      case 'override':
        return override(this, action);
      case 'edit':
        return edit(this, action);
      case 'label':
        return label(this, action);
      case 'deliver':
        return deliverQuotaEvent(this);
      case 'labelDeliver':
        return deliverLabel(this, action.replica % this.replicas.length);
      case 'requeue': {
        const [poke] = this.pokes.splice(action.i % Math.max(1, this.pokes.length), 1);
        if (poke !== undefined) resend(this, poke, action.replica % this.replicas.length);
        return;
      }
      case 'retry':
        return retry(this, BINDINGS[action.b % BINDINGS.length]!.name, action.replica % this.replicas.length);
      case 'waitingFlush':
        this.waiting.flush(this.now, action.replica % this.replicas.length);
        this.log(`webhook-${action.replica % this.replicas.length} flushes its waiting records`);
        return;
      case 'skew':
        this.offsets[action.who % this.offsets.length] = action.ms;
        this.log(
          `clock of ${['webhook-0', 'webhook-1', 'the reconciler'][action.who % 3]} set ${action.ms} ms off`,
        );
        return;
      case 'tick':
        this.now += action.ms;
        this.waiting.flush(this.now); // past every replica's flush delay
        for (const req of this.requests) {
          if (req.answer === undefined && this.now >= req.answerBy) {
            timedOut(this, req);
            exercised.failedClosed++;
            this.log(`request ${req.id} timed out (fail closed)`);
          }
        }
        return;
    }
  }

  /** Runs the actions, checking after each; then drains, settles and checks the exact recount. */
  async run(
    actions: readonly Action[],
    options: { countedAtStart?: boolean } = {},
  ): Promise<Violation | undefined> {
    if (options.countedAtStart ?? true) {
      // The quotas' usage is counted before the clients start (a run without it covers new quotas).
      publish(this);
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
    const done = reconcile(this);
    await flush();
    await this.drain();
    await done;
    if (this.clusterQuota) {
      const cluster = reconcileCluster(this);
      await flush();
      await this.drain();
      await cluster;
    }
    this.reconciles--;
  }

  private async settle(step: number): Promise<Violation | undefined> {
    this.log('-- settle: everything lands or times out, claims expire, pods catch up');
    await this.drain();
    for (const req of this.requests) {
      if (req.answer === undefined) timedOut(this, req);
      if (req.answer === 'allowed' && !req.done && !req.dryRun) {
        req.done = true;
        land(this, req);
      }
    }
    // Claims were written on clocks up to the skew ahead: past every expiration on every clock.
    this.offsets.fill(0);
    this.now += (TIMING.ttlSeconds + 1) * 1000 + MAX_CLOCK_SKEW_MS;
    // And past the grace period of every pod on its way out.
    if (this.terminating.length > 0) {
      this.terminating.length = 0;
      this.log('every pod on its way out is gone');
    }
    // Every member's watch recovers.
    this.memberStates.fill('Ready');
    publish(this);
    // Every namespace watch delivers the labels as they are.
    for (const replica of [0, 1])
      while (this.labelsDelivered[replica]! < this.labelEvents.length)
        await this.apply({ t: 'labelDeliver', replica });
    syncReconcilerLabels(this, Number.POSITIVE_INFINITY);
    for (let round = 0; round < 3; round++) {
      // The reconciler's watches catch up in the end: then a skip must be right, not merely safe.
      if (this.reconcilerCache) syncReconcilerCache(this, Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    const found = this.check(step);
    if (found) return found;
    // EXACT before the final DETECTED: a status that is not the recount is reported as that.
    for (const q of this.specs) {
      if (!this.host.quotas.has(q.name)) continue;
      const status = this.host.quotas.get(q.name)!.status;
      for (const key of limitedKeys(q)) {
        // used: every pod a quota selects on every member, hand-made ones of a selected name included;
        // reserved: what each selected binding's pods on its own members leave of its charge (a stored
        // binding is its own record: the status lists no entry for it, only the sum).
        const selected = this.inScope(q);
        let expectedUsed = 0;
        let expectedReserved = 0;
        BINDINGS.forEach(({ name }, b) => {
          if (!this.inNamespaces(q, name)) return;
          const rb = selected.find((x) => x.metadata!.name === name);
          if (q.highOnly && rb === undefined) return;
          const on = rb === undefined ? MEMBERS.map(() => 0) : this.podsOf(rb);
          // Hand-made Deployments pass for a binding of the name only if it is a Deployment's too.
          const sameKind = rb === undefined || kindOf(rb) === 'Deployment';
          const split = rb === undefined ? undefined : this.sharesNow(rb);
          if (split !== undefined) expectedReserved += split.rest[key];
          MEMBERS.forEach((member, m) => {
            const handMade = this.outside[m]![b]!;
            const each = perReplica(name, key, m);
            expectedUsed += (on[m]! + (q.highOnly && !sameKind ? 0 : handMade)) * each;
            const share = split?.on.get(member);
            if (share !== undefined)
              expectedReserved += Math.max(0, share[key] - (on[m]! + (sameKind ? handMade : 0)) * each);
          });
        });
        const used = milli(status?.used?.[key], key);
        const reserved = milli(status?.reserved?.[key], key);
        const claims = status?.reservations ?? [];
        if (used !== expectedUsed || reserved !== expectedReserved || claims.length > 0) {
          return this.violation(
            'EXACT',
            step,
            `quota ${q.name} after settling: used ${key}=${used} reserved=${reserved}, recount used=${expectedUsed} reserved=${expectedReserved}; claims left ${JSON.stringify(claims)}`,
          );
        }
      }
    }
    // DETECTED of the KarmadaQuotas (the ClusterKarmadaQuota's is not modelled yet).
    const bindings = bindingsIn([...this.host.bindings.values()], [NAMESPACE]).map((rb) =>
      this.classified(this.overridden(rb)),
    );
    for (const quota of this.host.quotas.values())
      if (!isClusterQuota(quota))
        this.checkDetected(
          quota,
          quota.status ?? {},
          bindings,
          this.published ? clustersIn(this, [NAMESPACE]) : [],
        );
    if (this.misdetected !== undefined) return this.violation('DETECTED', step, this.misdetected);
    return this.settleWaiting(step);
  }

  /**
   * Requeue to the end: Karmada re-sends what each requeue poked and the API server stores what is
   * admitted, time passes the requeue interval, the reconciler reconciles and requeues; REQUEUE_ROUNDS
   * times; then LIVENESS (Invariants.liveness).
   */
  private async settleWaiting(step: number): Promise<Violation | undefined> {
    for (let round = 0; ; round++) {
      for (const poke of this.pokes.splice(0)) resend(this, poke, 0);
      await flush();
      await this.drain();
      this.waiting.flush(this.now);
      for (const req of this.requests) {
        if (req.answer === 'allowed' && !req.done && !req.dryRun) {
          req.done = true;
          land(this, req);
        }
      }
      if (round === REQUEUE_ROUNDS || this.waiting.records.size === 0) break;
      this.now += REQUEUE_INTERVAL_MS + 1_000;
      // The members publish what runs after the writes stored (the independent recount's view).
      publish(this);
      if (this.reconcilerCache) syncReconcilerCache(this, Number.POSITIVE_INFINITY);
      await this.reconcileToEnd();
    }
    return this.check(step) ?? this.liveness(step);
  }
}

/** Runs one simulation of `actions`. */
export async function simulate(
  actions: readonly Action[],
  options: { countedAtStart?: boolean; trace?: string[]; clusterQuota?: boolean } = {},
): Promise<Violation | undefined> {
  const simulation = new Simulation(options.clusterQuota ?? true);
  const violation = await simulation.run(actions, options);
  options.trace?.push(...simulation.trace);
  return violation;
}
