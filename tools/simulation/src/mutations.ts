/**
 * Planted bugs (mutations) for the simulation, checked by mutations.spec.ts: each named regression
 * trace (regressions.ts) carries the mutation that undoes its fix and must fail under it, and each
 * PLANTED bug must be found by the seeded hunt `npm test` runs within a stated number of runs.
 *
 * A mutation is a list of exact text edits of product sources. It is applied to a copy in memory while
 * esbuild bundles the simulation (plus mutant-main.ts, which replays traces or hunts) into a temporary
 * directory; the sources in the checkout are never touched. Each edit's `from` must occur exactly once
 * in its file, or the bundle fails saying the patch no longer applies: a change to the code under test
 * that moves a fix must move its mutation too.
 */
import type { Violation } from './model.js';

export interface Edit {
  /** Path from the repository root. */
  file: string;
  /** Exact source text, found exactly once in the file. */
  from: string;
  to: string;
}

export interface Mutation {
  /** The bug the edits put back, in a few words. */
  bug: string;
  edits: Edit[];
}

/** A bug the seeded hunt must find: the invariant it breaks, within `runs` runs of `npm test`'s seed. */
export interface PlantedBug extends Mutation {
  invariant: Violation['invariant'];
  runs: number;
  /**
   * Hunted without the second namespace's ClusterKarmadaQuota, as when it was planted: the cluster
   * quota's tighter limit refuses much of what these bugs need to show.
   */
  withoutClusterQuota?: true;
}

/** `source` with the edit applied; throws when its text does not occur exactly once. */
export function applyEdit(source: string, edit: Edit, bug: string): string {
  const at = source.indexOf(edit.from);
  const again = at < 0 ? -1 : source.indexOf(edit.from, at + 1);
  if (at < 0 || again >= 0) {
    throw new Error(
      `the patch for "${bug}" no longer applies: ${edit.file} contains its text ` +
        `${at < 0 ? 'nowhere' : 'more than once'}; update the mutation to the code as it is now:\n${edit.from}`,
    );
  }
  return source.slice(0, at) + edit.to + source.slice(at + edit.from.length);
}

/**
 * One planted bug per invariant the simulation checks (invariants.ts), each of which the seeded hunt
 * `npm test` runs must find, breaking that invariant, within `runs` runs (measured, with room for
 * changes of the model: the hunt stops at the first violation, so a bound costs nothing while met).
 */
export const PLANTED: readonly PlantedBug[] = [
  // Not planted: a change weighed on the quota's keys only, never on a member a cap by label has not
  // resolved (admission.ts `withUnresolvedMembers` -> `quota.hardKeys`). The hunt at npm test's seed
  // does not find it within 5,000 runs, with or without the ClusterKarmadaQuota (it was counted found
  // while the open cluster-quota bug stopped the hunt first); the named trace "a move onto a member a
  // cap by label has not resolved is refused" fails with it (regressions.ts).
  {
    bug: 'admission charges no member its share (member caps never checked)',
    invariant: 'LIMIT',
    runs: 100,
    withoutClusterQuota: true,
    edits: [
      {
        file: 'libs/accounting/src/cas-round.ts',
        from: '    charge: charged(object, item.charge),\n',
        to: '',
      },
    ],
  },
  {
    bug: 'a move between members with the same total asks nothing (answered without the caps)',
    invariant: 'ACCOUNTED',
    runs: 3000,
    withoutClusterQuota: true,
    edits: [
      {
        file: 'libs/accounting/src/admission-strategy.ts',
        from: '    increasesNothing(memberShares(change.object), memberShares(old.object), holdAlike)',
        to: '    increasesNothing({}, memberShares(old.object), holdAlike)',
      },
    ],
  },
  {
    bug: 'admission forgets the running total of reservations (only used + increase must fit)',
    invariant: 'LIMIT',
    runs: 100,
    edits: [
      { file: 'libs/quota/src/admission.ts', from: '          .add(get(p.quota.total, key))\n', to: '' },
    ],
  },
  {
    bug: 'a claim whose status write failed is answered as written',
    invariant: 'ACCOUNTED',
    runs: 300,
    edits: [
      {
        file: 'libs/accounting/src/cas-round.ts',
        from: "      if (err instanceof ConflictError) return 'conflict';\n      throw err;\n",
        to: "      if (err instanceof ConflictError) return 'conflict';\n",
      },
    ],
  },
  {
    bug: 'a claim retires once its object is stored at the version its update was decided against (one step early)',
    invariant: 'ACCOUNTED',
    runs: 1000,
    edits: [
      {
        file: 'libs/quota/src/reservations.ts',
        from: '  return isLaterVersion(rb.metadata?.resourceVersion, entry.resourceVersion);',
        to: '  return !isLaterVersion(entry.resourceVersion, rb.metadata?.resourceVersion);',
      },
    ],
  },
  {
    bug: 'a quota counts the pods of workloads in used, not those on their way out',
    invariant: 'RUNS',
    runs: 6000,
    withoutClusterQuota: true,
    edits: [
      {
        file: 'libs/quota/src/status.ts',
        from: '    if (!scoped) return view.used;\n',
        to: '    if (!scoped) return [...view.workloads.values()].reduce((sum, u) => addLists(sum, u), {});\n',
      },
      {
        file: 'libs/quota/src/status.ts',
        from: '    for (const [key, used] of view.terminating) if (inScope.has(key)) total = addLists(total, used);\n',
        to: '',
      },
    ],
  },
  {
    bug: "pods on their way out are published apart but read as their workload's (they net its binding's charge)",
    invariant: 'DETECTED',
    runs: 200,
    edits: [
      {
        file: 'libs/quota/src/cluster-usage.ts',
        from: "const into = item['terminating'] === true ? terminating : workloads;",
        to: 'const into = workloads;',
      },
    ],
  },
  {
    bug: 'the reconciler skips whenever it has a cache, never writing',
    invariant: 'EXACT',
    runs: 50,
    edits: [
      {
        file: 'libs/accounting/src/reconcile-loop.ts',
        from: 'return !changed && !(status.waiting ?? []).some((w) => names.has(w.binding));',
        to: 'return true;',
      },
    ],
  },
  {
    bug: 'a change the batch in flight leaves no room for is rejected with an error instead of refused',
    invariant: 'ERROR',
    runs: 50,
    edits: [
      {
        file: 'libs/accounting/src/admission-batcher.ts',
        from: 'return Promise.resolve(refusal);',
        to: 'return Promise.reject(new Error(refusal.message));',
      },
    ],
  },
  {
    bug: 'no workload is ever found running beyond its charge (RunningBeyondCharge always False)',
    invariant: 'DETECTED',
    runs: 50,
    edits: [
      {
        file: 'libs/quota/src/beyond-charge.ts',
        from: 'return found.sort((a, b) => compareNames(a.binding, b.binding));',
        to: 'return [];',
      },
    ],
  },
  // Not planted: a namespace's label change leaving the cached list as it was (cached-quota-store.ts
  // `namespaceChanged` does nothing). Found by ACCOUNTED in run 899 while that invariant judged a
  // namespace's entry at once; since ACCOUNTED waits for a recount started after an entry (the model's
  // own fix, regressions.ts), the hunt does not find it within 8,000 runs at npm test's seed.
  // Not planted: a batch knowing a ClusterKarmadaQuota's usage whatever namespaces its status counted
  // (state.ts countsAll -> `counted.size >= 0`). The hunt does not find it within 5,000 runs at the
  // seed npm test uses; the named traces "a namespace entering with usage ..." and "a reconciler's view
  // lagging ..." fail with it (regressions.ts), and mutations.spec checks that they do.
  {
    bug: 'the reconciler keeps every ClusterKarmadaQuota claim in a namespace it does not count, lapsed ones too',
    invariant: 'EXACT',
    runs: 50,
    edits: [
      {
        file: 'libs/quota/src/status.ts',
        from: '    ...pendingElsewhere(parsed.state.reservations, parts, hardKeys, now),\n',
        to: '    ...parsed.state.reservations.filter((entry) => !parts.some((part) => part.namespace === entry.binding.namespace)),\n',
      },
    ],
  },
  {
    bug: 'a starving change that can never fit (over hard) holds the room it asks',
    invariant: 'LIVENESS',
    runs: 1500,
    edits: [
      {
        file: 'libs/quota/src/waiting.ts',
        from: 'const starving = canEverFit && now.getTime()',
        to: 'const starving = now.getTime()',
      },
    ],
  },
];

/** A bug the owner protocol's seeded hunt (owner-protocol.ts) must find within `runs` runs. */
export interface OwnerPlantedBug extends Mutation {
  invariant: 'LIMIT' | 'EXCLUSION';
  runs: number;
  /** Found by the hunt with switches of mode (switchingActionsArbitrary): a bug of the fence. */
  switching?: true;
}

/**
 * The admission owner's planted bugs, each found by the seeded hunt of owner-protocol.spec.ts within
 * its runs (measured at its seed: 2,281, 1,390, 298, 42, 702 (with switches of mode) and 17,057
 * runs). Not planted, since that hunt does not find them within 20,000 runs: an owner taking the
 * batched modes' mark without waiting for their claims (found once in 13,381 runs at another seed,
 * not in 30,000 at this one; batched-fence and owner-admission table tests fail with it), a batched
 * webhook keeping the end of an owner's tenure across a second owner's (batched-fence.spec.ts); an
 * update decided by any other version of its object than the one it was decided against, not only a
 * later one (owner-claims.ts outcomeOf; found once in 4,590 runs before duplicated decisions were
 * modelled, not in 4 x 20,000 since); the sweep deciding attempts younger than the landing window
 * (owner-claims.ts decideByRead); a re-review raising nothing that does not join its record, so its
 * window does not start anew (owner-ledger.ts admitted). Their table tests fail with them.
 */
export const OWNER_PLANTED: readonly OwnerPlantedBug[] = [
  {
    bug: "a record retired before the quota's count holds its outcomes",
    invariant: 'LIMIT',
    runs: 3000,
    edits: [
      {
        file: 'libs/quota/src/owner-claims.ts',
        from: 'isAtOrAfterVersion(counted, a.decidedAt)',
        to: 'true',
      },
    ],
  },
  {
    bug: "a successor that takes over an unrenewed Lease does not charge its predecessor's budgets",
    invariant: 'LIMIT',
    runs: 3000,
    edits: [
      {
        file: 'libs/accounting/src/admission-lease.ts',
        from: 'ghosts: addWireLists(lease?.record.ghosts ?? {}, budgets ?? {}),',
        to: 'ghosts: lease?.record.ghosts ?? {},',
      },
    ],
  },
  {
    bug: 'a budget written after use',
    invariant: 'LIMIT',
    runs: 1500,
    edits: [
      {
        file: 'libs/accounting/src/owner-admission.ts',
        from: 'ledger === undefined || ledger.withinBudget)',
        to: 'ledger === undefined || true)',
      },
    ],
  },
  {
    bug: 'an owner deciding after its renew deadline',
    invariant: 'EXCLUSION',
    runs: 50,
    edits: [
      {
        file: 'libs/accounting/src/admission-lease.ts',
        from: 'this.clock() < this.tenure.renewedAt + this.options.renewDeadlineMs',
        to: 'true',
      },
    ],
  },
  {
    bug: 'a batched webhook deciding beside the owner (the fence undone)',
    invariant: 'LIMIT',
    runs: 2000,
    switching: true,
    edits: [
      {
        file: 'libs/accounting/src/batched-fence.ts',
        from: 'const refused = this.refusal(quotas);',
        to: 'const refused = undefined;',
      },
    ],
  },
  {
    bug: "a new version of the Lease (a read's or its watch's) counted from an older one's sighting",
    invariant: 'EXCLUSION',
    runs: 500,
    switching: true,
    edits: [
      {
        file: 'libs/accounting/src/admission-lease.ts',
        from: 'this.seen = { resourceVersion: lease.resourceVersion, at: now };',
        to: 'this.seen = { resourceVersion: lease.resourceVersion, at: this.seen?.at ?? now };',
      },
    ],
  },
  {
    bug: "a predecessor's ghosts settled on tenure alone, by a count older than the window",
    invariant: 'LIMIT',
    runs: 30000,
    edits: [
      {
        file: 'libs/accounting/src/owner-ledger.ts',
        from: 'isAtOrAfterVersion(countedVersion, from)',
        to: 'true',
      },
    ],
  },
];
