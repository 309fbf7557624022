/**
 * The invariants the simulation checks after every action and at the end (docs/development/simulation.md):
 * LIMIT, ACCOUNTED, RUNS, DETECTED and LIVENESS, against the model's own recount (model-state.ts).
 */
import type { KarmadaQuota, KarmadaQuotaStatus, ResourceBinding } from '#api';
import { ABANDONED_AFTER_MS, specChanged, STARVING_AFTER_MS, type ObservedCluster } from '#quota';
import {
  BINDINGS,
  charge,
  exercised,
  judgedOverrides,
  CAPPED,
  CLUSTER_QUOTA_NAME,
  limitedKeys,
  milli,
  REQUEUE_ROUNDS,
  shares,
  type Key,
  type QuotaSpec,
  type Violation,
} from './model.js';
import { detectionProblem, expectedBeyondCharge } from './kinds-model.js';
import { ModelState } from './model-state.js';

export abstract class Invariants extends ModelState {
  /** DETECTED: `status`, computed for `quota` from `bindings` and `clusters`, names who runs beyond its charge. */
  checkDetected(
    quota: KarmadaQuota,
    status: KarmadaQuotaStatus,
    bindings: readonly ResourceBinding[],
    clusters: readonly ObservedCluster[],
  ): void {
    exercised.detectionsChecked++;
    const expected = expectedBeyondCharge(
      quota,
      status,
      bindings,
      clusters,
      // With the overrides the reconciler judged each binding with, when it listed them.
      (rb) => charge(rb, judgedOverrides(rb)),
      (rb) => shares(rb, judgedOverrides(rb)),
    );
    if (expected.length > 0) exercised.detectionsBeyond++;
    const problem = detectionProblem(
      status,
      expected,
      BINDINGS.map((b) => b.name),
    );
    if (problem !== undefined) this.misdetected ??= `quota ${quota.metadata!.name}: ${problem}`;
  }

  protected check(step: number): Violation | undefined {
    exercised.violationsChecked++;
    if (this.misdetected !== undefined) return this.violation('DETECTED', step, this.misdetected);
    if (this.unboundedStored !== undefined) return this.violation('LIMIT', step, this.unboundedStored);
    for (const q of this.specs) {
      const stored = this.host.quotas.get(q.name);
      if (stored === undefined) continue; // deleted: it limits nothing
      const status = stored.status;
      const ceiling = this.ceilings.get(q.name)!;
      for (const key of limitedKeys(q)) {
        const charged = this.charged(q, key);
        if (key === CAPPED && charged > 0) exercised.memberCapChecked++;
        // Warn and DryRun admit what Deny refuses: no LIMIT then, the rest holds in every mode. Back
        // to Deny is an edit that may leave the quota over (edit(), quota-edits.ts).
        if (q.enforcement !== undefined && charged > q.hard[key]!) exercised.overWhileNotEnforced++;
        if (q.enforcement === undefined && charged > ceiling[key]) {
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
        if (q.enforcement === undefined)
          ceiling[key] = Math.max(q.hard[key]!, Math.min(ceiling[key], this.held(q, key)));
        const counted = status?.observedGeneration === stored.metadata?.generation;
        if (!counted || status?.used === undefined || !(key in status.used)) continue;
        const accounted = milli(status.used[key], key) + milli(status.reserved?.[key], key);
        // A ClusterKarmadaQuota's count covers the namespaces its status lists (status.namespaces[])
        // of those LIMIT counts: a namespace entered since is not counted yet (its increases wait).
        const found = q.cluster ? this.accountedFor(q, key, status) : undefined;
        if (found !== undefined) {
          if (found.accounted) continue;
          return this.violation('ACCOUNTED', step, found.message);
        }
        const outside = this.outsideCounted.get(q.name)?.[key] ?? 0;
        if (outside > 0) exercised.outsideCounted++;
        if (accounted < charged + outside) {
          return this.violation(
            'ACCOUNTED',
            step,
            `quota ${q.name}: used+reserved ${key}=${accounted} < stored charges ${charged}${
              outside > 0 ? ` + usage outside the federation it counted ${outside}` : ''
            } (${JSON.stringify(status.reservations)})`,
          );
        }
        // Every admitted change that can still land is covered too: per name, the larger of the stored
        // binding's charge and the charge of each such change (a claim retired too early fails here).
        const covered = this.coveredInFlight(q, key);
        if (accounted < covered.total + outside) {
          return this.violation(
            'ACCOUNTED',
            step,
            `quota ${q.name}: used+reserved ${key}=${accounted} < ${covered.total}${
              outside > 0 ? ` + ${outside}` : ''
            }, the stored charges with the changes in flight that can still land (${covered.landable.join(', ')}) (${JSON.stringify(status.reservations)})`,
          );
        }
      }
    }
    return this.checkRuns(step);
  }

  /**
   * ACCOUNTED of a ClusterKarmadaQuota on `key`: as a KarmadaQuota's, over the namespaces its status
   * counted that LIMIT counts. Undefined when there is nothing to say (a message when it fails).
   */
  private accountedFor(
    q: QuotaSpec,
    key: Key,
    status: KarmadaQuotaStatus,
  ): { accounted: true } | { accounted: false; message: string } {
    const listed = new Set((status.namespaces ?? []).map((n) => n.namespace));
    this.countIn = this.limitNamespaces.filter((ns) => listed.has(ns));
    try {
      const accounted = milli(status.used?.[key], key) + milli(status.reserved?.[key], key);
      const outside = this.outsideCounted.get(q.name)?.[key] ?? 0;
      const charged = this.charged(q, key);
      const covered = this.coveredInFlight(q, key);
      if (accounted >= charged + outside && accounted >= covered.total + outside) return { accounted: true };
      return {
        accounted: false,
        message: `quota ${q.name} (namespaces ${this.countIn.join(', ')}): used+reserved ${key}=${accounted} < stored charges ${charged} or ${covered.total} with the changes in flight that can still land (${covered.landable.join(', ')}) + usage outside the federation it counted ${outside} (${JSON.stringify(status.reservations)})`,
      };
    } finally {
      this.countIn = undefined;
    }
  }

  /**
   * RUNS: under Deny, what the members are given (given: the pods they run that the quota counts, on
   * their way out or not, and what each binding's charge lets it start yet) never exceeds hard, but by
   * what the docs' causes add (runsCeilings: an edit, a change decided before it, what no admission
   * decides), until a recount has counted it; then the ceiling follows the members down to hard.
   */
  protected checkRuns(step: number): Violation | undefined {
    for (const q of this.specs) {
      if (!this.host.quotas.has(q.name) || q.enforcement !== undefined) continue;
      const ceiling = this.runsCeilings.get(q.name)!;
      for (const key of limitedKeys(q)) {
        exercised.runsChecked++;
        const given = this.given(q, key);
        if (given.terminating > 0) exercised.runsTerminating++;
        const pending = this.runsAllowance(q, key);
        if (given.total > ceiling[key] + pending) {
          const hard = q.hard[key]!;
          const causes = [
            ...(ceiling[key] > hard ? [`${ceiling[key] - hard} left by an edit or counted causes`] : []),
            ...(pending > 0 ? [`${pending} not counted yet`] : []),
          ];
          return this.violation(
            'RUNS',
            step,
            `quota ${q.name}: the members are given ${key}=${given.total} > hard ${hard}${
              causes.length > 0 ? ` + ${causes.join(' + ')}` : ''
            }: running ${given.running}, terminating ${given.terminating}, still to start [${given.toStart.join(', ')}]`,
          );
        }
        if (this.awaitingRecount.has(q.name)) continue;
        ceiling[key] = Math.max(
          q.hard[key]!,
          Math.min(ceiling[key], this.given(q, key, true).total - pending),
        );
      }
    }
    return undefined;
  }

  /**
   * LIVENESS after the requeue rounds: a waiting change that asks no more than its quota has free, by
   * the independent recount, is a violation, unless a starving change ahead of it on that quota that
   * could fit once enough frees holds the room (STARVING_AFTER_MS, by design).
   */
  protected liveness(step: number): Violation | undefined {
    const live = this.waiting.live(
      this.forServices([...this.host.bindings.values()], [...this.host.quotas.values()]),
      this.now,
    );
    // What the binding would hold in the quota once admitted is within its hard limit: as judged
    // when it was refused (its overrides then: the record keeps that charge; a policy changed since
    // is seen only when its write comes again).
    const couldFit = (write: ResourceBinding, q: QuotaSpec) =>
      limitedKeys(q).every((key) => charge(write, judgedOverrides(write))[key] <= q.hard[key]!);
    for (const record of live) {
      if (this.waiting.inverted.has(record.binding)) {
        exercised.waitingInverted++;
        continue; // replicas flushed out of order: put right by Karmada's own retry (waiting-model.ts)
      }
      if (this.waiting.superseded.has(record.binding)) continue; // Karmada wants what no room lets in
      // The ClusterKarmadaQuota's are requeued by namespace reconciles the model does not run for it.
      if (record.quota === CLUSTER_QUOTA_NAME) continue;
      const q = this.specs.find((x) => x.name === record.quota)!;
      // A deleted quota limits nothing; a key it no longer limits asks nothing of it.
      const asked = this.host.quotas.has(q.name)
        ? Object.entries(record.requested).filter(([key]) => limitedKeys(q).includes(key as Key))
        : [];
      // Stored already by another write of the same spec: the wait is over, and a record still
      // shown waiting after the settle rounds would stay until Karmada's retries stop (20 minutes).
      const stored = this.host.bindings.get(record.binding);
      const write = this.waiting.wantedWrite(record)!;
      if (
        stored !== undefined &&
        stored.metadata?.uid === record.uid &&
        // The same spec names the same template version, so the same class (high).
        !specChanged(write, stored)
      )
        return this.violation(
          'LIVENESS',
          step,
          `${record.binding} still waits on quota ${record.quota} after ${REQUEUE_ROUNDS} requeue rounds, though its binding is stored with the spec it asks (${write.spec?.replicas} replicas${this.high(write) ? ' high' : ''}), refused last at ${record.lastRefusedAt}`,
        );
      if (!asked.every(([key, amount]) => milli(amount, key) <= this.free(q, key as Key))) continue;
      // More than hard once admitted, on a key it was not refused on (a limit lowered since): it can
      // never fit, whatever frees.
      if (this.host.quotas.has(q.name) && !couldFit(write, q)) continue;
      const heldBack = live.some(
        (other) =>
          other !== record &&
          other.quota === record.quota &&
          ((other.priority ?? 0) > (record.priority ?? 0) ||
            ((other.priority ?? 0) === (record.priority ?? 0) &&
              // Oldest first; of the same second, by name (the product's order).
              (other.since < record.since ||
                (other.since === record.since && other.binding < record.binding)))) &&
          this.now - Date.parse(other.since) >= STARVING_AFTER_MS &&
          // A record replicas flushed out of order, or one a later write superseded (the product still
          // holds it), holds what it says it needs, not what Karmada wants.
          (this.waiting.inverted.has(other.binding) || this.waiting.superseded.has(other.binding)
            ? Object.entries(other.needs ?? other.requested).every(
                ([key, amount]) =>
                  !limitedKeys(q).includes(key as Key) || milli(amount, key) <= q.hard[key as Key]!,
              )
            : couldFit(this.waiting.wantedWrite(other)!, q)),
      );
      if (heldBack) continue;
      return this.violation(
        'LIVENESS',
        step,
        `${record.binding} still waits on quota ${record.quota} since ${record.since} after ${REQUEUE_ROUNDS} requeue rounds, asking ${JSON.stringify(record.requested)} of free ${JSON.stringify(Object.fromEntries(limitedKeys(q).map((key) => [key, this.free(q, key)])))}; waiting: ${JSON.stringify(live.map((r) => [r.binding, r.quota, r.requested, r.since, r.requeuedAt ?? null]))}`,
      );
    }
    return this.unkept(step, live);
  }

  /**
   * A change whose last answer was a refusal over a limit or for usage not counted must still wait
   * (a live record) until it is stored, its binding is deleted or re-created, or Karmada has stopped
   * retrying it (ABANDONED_AFTER_MS): by the simulation's own reading of the answers, so a refusal
   * the product never records, or forgets too early, is a LIVENESS violation too.
   */
  protected unkept(step: number, live: readonly { binding: string }[]): Violation | undefined {
    for (const [name, answer] of this.lastAnswer) {
      if (!answer.waits || live.some((r) => r.binding === name)) continue;
      if (this.waiting.inverted.has(name)) continue; // as above
      if (this.now - answer.at > ABANDONED_AFTER_MS) continue;
      const stored = this.host.bindings.get(name);
      const wanted = answer.write;
      if (
        wanted.metadata?.resourceVersion === undefined
          ? stored !== undefined
          : stored?.metadata?.uid !== wanted.metadata.uid
      )
        continue; // created since, or deleted or re-created: Karmada wants something else now
      if (
        stored &&
        stored.spec?.replicas === wanted.spec?.replicas &&
        this.high(stored) === this.high(wanted)
      )
        continue;
      return this.violation(
        'LIVENESS',
        step,
        `${name}'s change to ${wanted.spec?.replicas} replicas${this.high(wanted) ? ' high' : ''}, refused at t+${(answer.at - Date.parse('2026-11-23T00:00:00Z')) / 1000}s, is neither stored nor waiting`,
      );
    }
    return undefined;
  }
}
