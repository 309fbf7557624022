import type { Component, KarmadaQuota, ResourceBinding, ScopedResourceSelectorRequirement } from '#api';
import { bindingMatchesScopes, isScoped } from './scopes.js';

function quota(matchExpressions?: unknown[], selector?: unknown): KarmadaQuota {
  const spec: Record<string, unknown> = { hard: { cpu: '10' } };
  if (selector !== undefined) spec['scopeSelector'] = selector;
  else if (matchExpressions !== undefined) spec['scopeSelector'] = { matchExpressions };
  return { metadata: { name: 'q', namespace: 'ns' }, spec } as unknown as KarmadaQuota;
}

function binding(priorityClassName?: string, components?: Component[]): ResourceBinding {
  return {
    metadata: { name: 'b', namespace: 'ns' },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      replicas: 1,
      replicaRequirements: {
        resourceRequest: { cpu: '1' },
        ...(priorityClassName ? { priorityClassName } : {}),
      },
      ...(components ? { components } : {}),
    },
  };
}

const pc = (
  operator: ScopedResourceSelectorRequirement['operator'],
  values?: string[],
): ScopedResourceSelectorRequirement => ({
  scopeName: 'PriorityClass',
  operator,
  ...(values ? { values } : {}),
});

describe('bindingMatchesScopes: PriorityClass operators (ResourceQuota semantics)', () => {
  // [operator, values, binding's class, matches]
  it.each<[ScopedResourceSelectorRequirement['operator'], string[] | undefined, string | undefined, boolean]>(
    [
      ['In', ['high'], 'high', true],
      ['In', ['high', 'mid'], 'mid', true],
      ['In', ['high'], 'low', false],
      ['In', ['high'], undefined, false],
      ['NotIn', ['high'], 'high', false],
      ['NotIn', ['high'], 'low', true],
      ['NotIn', ['high'], undefined, true],
      ['Exists', undefined, 'high', true],
      ['Exists', undefined, undefined, false],
      ['DoesNotExist', undefined, 'high', false],
      ['DoesNotExist', undefined, undefined, true],
    ],
  )('%s %j, binding class %s -> %s', (operator, values, className, expected) => {
    expect(bindingMatchesScopes(quota([pc(operator, values)]), binding(className))).toBe(expected);
  });
});

describe('isScoped: the quota selects only some bindings', () => {
  const high = { scopeName: 'PriorityClass', operator: 'In', values: ['high'] };
  it.each<[string, KarmadaQuota, boolean]>([
    ['no selector', quota(), false],
    ['a selector without expressions', quota(undefined, {}), false],
    ['matchExpressions null', quota(undefined, { matchExpressions: null }), false],
    ['no expressions', quota([]), false],
    ['one expression', quota([high]), true],
    // A malformed selector selects no binding (bindingMatchesScopes): the quota is scoped.
    ['a selector that is not an object', quota(undefined, 'high'), true],
    ['a selector that is a list', quota(undefined, [high]), true],
    ['matchExpressions that is not a list', quota(undefined, { matchExpressions: high }), true],
  ])('%s: %s', (_what, q, scoped) => {
    expect(isScoped(q)).toBe(scoped);
  });
});

describe('bindingMatchesScopes: selectors', () => {
  it.each<[string, KarmadaQuota, string | undefined, boolean]>([
    ['no selector matches all', quota(), 'high', true],
    ['no selector matches a binding without class', quota(), undefined, true],
    ['empty matchExpressions matches all', quota([]), undefined, true],
    ['selector without matchExpressions matches all', quota(undefined, {}), 'x', true],
    ['expressions are ANDed: both hold', quota([pc('Exists'), pc('NotIn', ['low'])]), 'high', true],
    ['expressions are ANDed: one fails', quota([pc('Exists'), pc('NotIn', ['high'])]), 'high', false],
    [
      'unsupported scope never matches',
      quota([{ scopeName: 'BestEffort', operator: 'Exists' }]),
      'high',
      false,
    ],
    [
      'unknown operator never matches',
      quota([{ scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] }]),
      'high',
      false,
    ],
    ['In without values never matches', quota([pc('In', [])]), 'high', false],
    ['malformed expression never matches', quota(['PriorityClass']), 'high', false],
    ['malformed matchExpressions never matches', quota(undefined, { matchExpressions: 'x' }), 'high', false],
    // The same answer isScoped gives: a malformed selector is scoped, so it selects none.
    ['a selector that is not an object never matches', quota(undefined, 'high'), 'high', false],
    ['a selector that is a list never matches', quota(undefined, [pc('Exists')]), 'high', false],
  ])('%s', (_name, q, className, expected) => {
    expect(bindingMatchesScopes(q, binding(className))).toBe(expected);
  });

  it('a binding without replicaRequirements has no priority class', () => {
    const rb: ResourceBinding = { spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', name: 'c' } } };
    expect(bindingMatchesScopes(quota([pc('DoesNotExist')]), rb)).toBe(true);
    expect(bindingMatchesScopes(quota([pc('In', ['high'])]), rb)).toBe(false);
  });

  describe('components', () => {
    const components: Component[] = [
      { name: 'jm', replicas: 1, replicaRequirements: { priorityClassName: 'high' } },
      { name: 'tm', replicas: 2 },
    ];
    it.each<[string, ScopedResourceSelectorRequirement[], string | undefined, boolean]>([
      ['any component in the class matches', [pc('In', ['high'])], undefined, true],
      ['a component without class inherits the top-level one', [pc('In', ['low'])], 'low', true],
      ['no component in the class', [pc('In', ['low'])], undefined, false],
      ['DoesNotExist matches the classless component', [pc('DoesNotExist')], undefined, true],
      ['DoesNotExist with inherited class: no component classless', [pc('DoesNotExist')], 'low', false],
      [
        'the whole selector must hold for one component',
        [pc('In', ['high']), pc('DoesNotExist')],
        undefined,
        false,
      ],
    ])('%s', (_name, expressions, topLevel, expected) => {
      expect(bindingMatchesScopes(quota(expressions), binding(topLevel, components))).toBe(expected);
    });
  });
});
