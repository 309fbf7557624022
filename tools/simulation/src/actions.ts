import fc from 'fast-check';
import { BINDINGS, CPU_LIMITS, MAX_CLOCK_SKEW_MS, MAX_REPLICAS, QUOTAS, type Action } from './simulation.js';

const binding = fc.nat({ max: BINDINGS.length - 1 });
const replicas = fc.nat({ max: MAX_REPLICAS });

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
      fault: fc.constantFrom('answer lost' as const, 'retry conflicts' as const, 'not applied' as const),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('land' as const), i: fc.nat({ max: 7 }) }) },
  { weight: 3, arbitrary: fc.constant({ t: 'reconcile' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'publish' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant('pods' as const), b: binding, n: fc.integer({ min: 1, max: 6 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('evict' as const), b: binding, n: fc.integer({ min: 1, max: 6 }) }),
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
      edit: fc.constantFrom('scope' as const, 'cpu' as const, 'pods' as const),
      cpu: fc.constantFrom(...CPU_LIMITS),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('sync' as const), n: fc.integer({ min: 1, max: 4 }) }),
  },
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
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('requeue' as const),
      i: fc.nat({ max: 3 }),
      replica: fc.nat({ max: 1 }),
    }),
  },
);

export const actionsArbitrary = fc.array(actionArbitrary, { minLength: 1, maxLength: 400, size: 'max' });

/** One line per action, for a failure report that can be pasted back as a regression trace. */
export const describeActions = (actions: readonly Action[]): string =>
  `[\n${actions.map((a) => `  ${JSON.stringify(a)},`).join('\n')}\n]`;
