import fc from 'fast-check';
import {
  BINDINGS,
  CPU_LIMITS,
  MAX_CLOCK_SKEW_MS,
  MAX_REPLICAS,
  MEMBERS,
  QUOTAS,
  type Action,
} from './model.js';

const binding = fc.nat({ max: BINDINGS.length - 1 });
const replicas = fc.nat({ max: MAX_REPLICAS });
const member = fc.nat({ max: MEMBERS.length - 1 });
/** One member or both (Placement), Divided mostly. */
const spread = fc.nat({ max: MEMBERS.length });
const duplicated = fc.constantFrom(false, false, true);

/**
 * Random actions, weighted so that host operations complete often (progress) while clients, members,
 * the reconciler and time keep interleaving with them.
 */
export const actionArbitrary: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('create' as const),
      b: binding,
      replicas,
      high: fc.boolean(),
      replica: fc.nat({ max: 1 }),
      dryRun: fc.constantFrom(false, false, false, false, true),
      spread,
      duplicated,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('update' as const),
      b: binding,
      replicas,
      high: fc.boolean(),
      replica: fc.nat({ max: 1 }),
      spread,
      duplicated,
      unscheduled: fc.constantFrom(false, false, true),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('delete' as const), b: binding, graceful: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('finalize' as const), b: binding }) },
  { weight: 20, arbitrary: fc.record({ t: fc.constant('complete' as const), i: fc.nat({ max: 7 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('fault' as const),
      i: fc.nat({ max: 7 }),
      fault: fc.constantFrom(
        'answer lost' as const,
        'retry conflicts' as const,
        'not applied' as const,
        'as of its start' as const,
      ),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('land' as const), i: fc.nat({ max: 7 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('statusWrite' as const), b: binding }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('override' as const),
      b: binding,
      m: member,
      replicas: fc.integer({ min: -1, max: MAX_REPLICAS }),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ t: 'reconcile' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'publish' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('pods' as const),
      b: binding,
      n: fc.integer({ min: 1, max: 6 }),
      m: member,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('evict' as const),
      b: binding,
      n: fc.integer({ min: 1, max: 6 }),
      m: member,
    }),
  },
  { weight: 3, arbitrary: fc.constant({ t: 'deliver' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('skew' as const),
      who: fc.nat({ max: 2 }),
      ms: fc.integer({ min: -MAX_CLOCK_SKEW_MS / 2, max: MAX_CLOCK_SKEW_MS / 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('edit' as const),
      q: fc.nat({ max: QUOTAS.length - 1 }),
      edit: fc.constantFrom(
        'scope' as const,
        'cpu' as const,
        'pods' as const,
        'existence' as const,
        'enforcement' as const,
        'cap' as const,
      ),
      cpu: fc.constantFrom(...CPU_LIMITS),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('sync' as const), n: fc.integer({ min: 1, max: 4 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('outside' as const),
      m: member,
      b: binding,
      n: fc.nat({ max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('member' as const),
      m: member,
      event: fc.constantFrom(
        'Ready' as const,
        'Ready' as const,
        'Stale' as const,
        'Unreachable' as const,
        'removed' as const,
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'redis-loss' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('tick' as const),
      ms: fc.oneof(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1_000, max: 70_000 }),
        fc.constantFrom(121_000),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('createKind' as const),
      b: binding,
      kind: fc.constantFrom('Job' as const, 'Job' as const, 'DaemonSet' as const),
      replicas,
      high: fc.boolean(),
      replica: fc.nat({ max: 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('surge' as const), i: binding, n: fc.integer({ min: 1, max: 2 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constantFrom('jobFinishes' as const, 'jobRecreated' as const, 'jobRunsAgain' as const),
      i: binding,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('requeue' as const),
      i: fc.nat({ max: 3 }),
      replica: fc.nat({ max: 1 }),
    }),
  },
  // Karmada's own back-off: the writer of a refused write sends it again, with no requeue.
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('retry' as const), b: binding, replica: fc.nat({ max: 1 }) }),
  },
  // A webhook replica tells Redis what it refused and admitted, in any order with the other's.
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('waitingFlush' as const), replica: fc.nat({ max: 1 }) }),
  },
  // A namespace enters or leaves the ClusterKarmadaQuota's selector; the webhook replicas' and the
  // reconciler's ('sync') namespace watches learn it later; the reconciler counts the cluster quota.
  { weight: 1, arbitrary: fc.record({ t: fc.constant('label' as const), ns: fc.nat({ max: 1 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('labelDeliver' as const), replica: fc.nat({ max: 1 }) }),
  },
  { weight: 3, arbitrary: fc.constant({ t: 'reconcileCluster' as const }) },
  // Pods on their way out finish (their grace period ends), some at a time.
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('terminate' as const),
      i: fc.nat({ max: 3 }),
      n: fc.integer({ min: 1, max: 6 }),
    }),
  },
);

export const actionsArbitrary = fc.array(actionArbitrary, { minLength: 1, maxLength: 400, size: 'max' });

/** One line per action, for a failure report that can be pasted back as a regression trace. */
export const describeActions = (actions: readonly unknown[]): string =>
  `[\n${actions.map((a) => `  ${JSON.stringify(a)},`).join('\n')}\n]`;
