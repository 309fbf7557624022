import type { ResourceBinding } from '#api';
import { Quantity, type FieldError } from '#quantity';
import { countedResource, quotaRequests } from '#usage';
import { bindingCharge } from './charge.js';
import { STANDARD_QUOTA_RESOURCES } from './resource-names.js';
import { validateClusterKarmadaQuota, validateKarmadaQuota } from './validation.js';

const kq = (spec: unknown): unknown => ({
  apiVersion: 'quota.karmada.io/v1alpha1',
  kind: 'KarmadaQuota',
  metadata: { name: 'team-a', namespace: 'team-a' },
  spec,
});

const errorsFor = (hard: Record<string, unknown>): FieldError[] => validateKarmadaQuota(kq({ hard }));

describe('validateKarmadaQuota: accepted', () => {
  it('the spec example', () => {
    expect(
      validateKarmadaQuota(
        kq({
          hard: { cpu: '100', memory: '200Gi', pods: '500', 'count/deployments.apps': '20', services: '10' },
          scopeSelector: {
            matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
          },
        }),
      ),
    ).toEqual([]);
  });

  it.each(STANDARD_QUOTA_RESOURCES.map((name) => [name]))('standard name %s', (name) => {
    expect(errorsFor({ [name]: '10' })).toEqual([]);
  });

  it.each([
    ['hugepages-2Mi', '1Gi'],
    ['requests.hugepages-1Gi', '4Gi'],
    ['example.com/gpu', '4'],
    ['nvidia.com/gpu', 8],
    ['requests.nvidia.com/gpu', '2'],
    ['count/deployments.apps', '20'],
    ['count/services', '5'],
    ['count/flinkdeployments.flink.apache.org', '3'],
    ['count/ingresses.networking.k8s.io', 0],
    ['cpu', '1500m'],
    ['cpu', 2.5],
    ['memory', '1.5Gi'],
    ['pods', '0'],
    ['pods', 10],
    ['pods', '1k'],
    ['example.com/Some_Thing.v2', '1'],
  ])('%s: %j', (name, value) => {
    expect(errorsFor({ [name]: value })).toEqual([]);
  });

  it.each([
    ['an empty hard', { hard: {} }],
    ['an empty scopeSelector', { hard: { cpu: '1' }, scopeSelector: {} }],
    ['empty matchExpressions', { hard: { cpu: '1' }, scopeSelector: { matchExpressions: [] } }],
    [
      'every operator used correctly',
      {
        hard: { cpu: '1' },
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'PriorityClass', operator: 'In', values: ['a'] },
            { scopeName: 'PriorityClass', operator: 'NotIn', values: ['b', 'c'] },
            { scopeName: 'PriorityClass', operator: 'Exists' },
            { scopeName: 'PriorityClass', operator: 'DoesNotExist', values: [] },
          ],
        },
      },
    ],
  ])('%s', (_name, spec) => {
    expect(validateKarmadaQuota(kq(spec))).toEqual([]);
  });
});

describe('validateKarmadaQuota: rejected resource names', () => {
  it.each<[string, string]>([
    [
      'limits.cpu',
      'limits.cpu is not supported: a ResourceBinding carries only resource requests, so limits cannot be enforced; use requests.cpu or cpu',
    ],
    [
      'limits.memory',
      'limits.memory is not supported: a ResourceBinding carries only resource requests, so limits cannot be enforced; use requests.memory or memory',
    ],
    [
      'limits.ephemeral-storage',
      'limits.ephemeral-storage is not supported: a ResourceBinding carries only resource requests, so limits cannot be enforced; use requests.ephemeral-storage or ephemeral-storage',
    ],
    [
      'limits.nvidia.com/gpu',
      'limits.nvidia.com/gpu is not supported: a ResourceBinding carries only resource requests, so limits cannot be enforced; use requests.nvidia.com/gpu or nvidia.com/gpu',
    ],
    [
      'services.nodeports',
      "services.nodeports is not supported: a ResourceBinding does not carry a Service's type, so node ports " +
        'and load balancers cannot be charged at admission; limit services (or count/services) here, and ' +
        'services.nodeports with a ResourceQuota in each member cluster',
    ],
    ['services.loadbalancers', 'services.loadbalancers is not supported: a ResourceBinding does not carry'],
    [
      'requests.storage',
      'requests.storage is not supported: a ResourceBinding does not carry the persistent volume claims of its ' +
        'workload, nor their sizes, so the storage they request cannot be charged at admission; limit the ' +
        'number of claims with persistentvolumeclaims (or count/persistentvolumeclaims) here, and ' +
        'requests.storage with a ResourceQuota in each member cluster',
    ],
    ['storage', 'storage is not supported: a ResourceBinding does not carry the persistent volume claims'],
    [
      'count/pods',
      "count/pods is not supported: a workload's pods are charged and observed under pods, which counts the " +
        'pods that have not finished; use pods',
    ],
    [
      'kubernetes.io/batch-cpu',
      'kubernetes.io/batch-cpu is not supported: no ResourceBinding is charged for it, so it cannot be ' +
        'enforced; use an extended resource (a name outside kubernetes.io) or an object count, e.g. ' +
        'example.com/gpu, requests.example.com/gpu, hugepages-2Mi or count/deployments.apps',
    ],
    [
      'requests.example.kubernetes.io/x',
      'requests.example.kubernetes.io/x is not supported: no ResourceBinding',
    ],
    ['requests.count/deployments', 'requests.count/deployments is not supported: no ResourceBinding'],
    [
      'gpu',
      'gpu is not a standard quota resource: use one of configmaps, cpu, ephemeral-storage, memory, persistentvolumeclaims, ' +
        'pods, replicationcontrollers, requests.cpu, requests.ephemeral-storage, requests.memory, ' +
        'resourcequotas, secrets, services, hugepages-<size>, ' +
        'requests.hugepages-<size>, or a fully qualified name such as example.com/gpu, requests.example.com/gpu, ' +
        'hugepages-2Mi or count/deployments.apps',
    ],
    ['requests.gpu', 'requests.gpu is not a standard quota resource: use one of'],
    [
      'hugepages-lots',
      'hugepages-lots must name a huge page size as hugepages-<size>, e.g. hugepages-2Mi or hugepages-1Gi',
    ],
    ['requests.hugepages-0', 'requests.hugepages-0 must name a huge page size as hugepages-<size>'],
    [
      'count/Deployments.apps',
      'count/Deployments.apps must name an API resource as count/<resource>.<group> (count/<resource> for the core group), in lowercase plural form, e.g. count/deployments.apps or count/services',
    ],
    [
      'gold.storageclass.storage.k8s.io/requests.storage',
      'gold.storageclass.storage.k8s.io/requests.storage is not supported: storage requested per storage ' +
        'class is not tracked; a ResourceBinding does not carry the persistent volume claims of its workload, ' +
        'nor their sizes, so the storage they request cannot be charged at admission; limit the number of ' +
        'claims with persistentvolumeclaims (or count/persistentvolumeclaims) here, and ' +
        'gold.storageclass.storage.k8s.io/requests.storage with a ResourceQuota in each member cluster',
    ],
    [
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims is not supported: storage requested per storage class',
    ],
    ['a/b/c', 'a resource name may contain at most one "/"'],
    ['Example.com/gpu', 'the prefix "Example.com" must be a DNS subdomain'],
    ['/gpu', 'the prefix before "/" must not be empty'],
    ['example.com/', 'the name must not be empty'],
    [
      'bad name!',
      'the name "bad name!" must consist of letters, digits, "-", "_" or ".", and start and end with a letter or digit',
    ],
    [`example.com/${'x'.repeat(64)}`, 'the name after the prefix must be at most 63 characters'],
  ])('%s', (name, message) => {
    const errors = errorsFor({ [name]: '1' });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe(`spec.hard[${name}]`);
    expect(errors[0]?.value).toBe(name);
    expect(errors[0]?.message.startsWith(message)).toBe(true);
  });
});

describe('every accepted key is enforced: charged to a binding and observed in the members', () => {
  const requests = {
    cpu: '1',
    memory: '1Gi',
    'ephemeral-storage': '1Gi',
    'hugepages-2Mi': '2Mi',
    'example.com/gpu': '1',
  };
  const bindingOf = (apiVersion: string, kind: string): ResourceBinding =>
    ({
      spec: {
        resource: { apiVersion, kind, namespace: 'team-a', name: 'x' },
        replicas: 1,
        replicaRequirements: { resourceRequest: requests },
      },
    }) as unknown as ResourceBinding;
  const bindings = [
    bindingOf('apps/v1', 'Deployment'),
    bindingOf('example.com/v1', 'Widget'),
    ...[
      'ConfigMap',
      'PersistentVolumeClaim',
      'ReplicationController',
      'ResourceQuota',
      'Secret',
      'Service',
    ].map((kind) => bindingOf('v1', kind)),
  ];
  const charged = new Set(bindings.flatMap((rb) => Object.keys(bindingCharge(rb).charge)));
  const podRequests = Object.fromEntries(
    Object.entries(requests).map(([name, q]) => [name, Quantity.parse(q)]),
  );
  const observedPerPod = new Set(Object.keys(quotaRequests(podRequests)));

  it.each(
    [
      ...STANDARD_QUOTA_RESOURCES,
      'hugepages-2Mi',
      'requests.hugepages-2Mi',
      'example.com/gpu',
      'requests.example.com/gpu',
      'count/deployments.apps',
      'count/services',
      'count/widgets.example.com',
    ].map((key) => [key]),
  )('%s', (key) => {
    expect(errorsFor({ [key]: '1' })).toEqual([]);
    expect(charged).toContain(key);
    expect(observedPerPod.has(key) || countedResource(key) !== undefined).toBe(true);
  });
});

describe('validateKarmadaQuota: rejected values', () => {
  it.each<[string, unknown, string]>([
    ['cpu', 'lots', 'invalid quantity "lots"'],
    ['memory', '1 Gi', 'invalid quantity "1 Gi"'],
    ['cpu', true, 'must be a quantity string or number, got boolean'],
    ['cpu', '-1', 'must be greater than or equal to 0, got -1'],
    ['pods', -3, 'must be greater than or equal to 0, got -3'],
    [
      'pods',
      '1500m',
      'must be a whole number: pods is counted in whole units, so 1500m cannot be enforced; use e.g. "2"',
    ],
    ['services', 2.5, 'must be a whole number: services is counted in whole units'],
    ['secrets', '0.5', 'must be a whole number'],
    [
      'count/deployments.apps',
      '1.5',
      'must be a whole number: count/deployments.apps is counted in whole units',
    ],
    ['nvidia.com/gpu', '500m', 'must be a whole number: nvidia.com/gpu is counted in whole units'],
    [
      'requests.nvidia.com/gpu',
      '1.5',
      'must be a whole number: requests.nvidia.com/gpu is counted in whole units',
    ],
  ])('%s: %j', (name, value, message) => {
    const errors = errorsFor({ [name]: value });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe(`spec.hard[${name}]`);
    expect(errors[0]?.value).toEqual(value);
    expect(errors[0]?.message.startsWith(message)).toBe(true);
  });

  it('invalid quantities say what a valid one looks like', () => {
    expect(errorsFor({ cpu: 'lots' })[0]?.message).toMatch(/; use a quantity such as "2", "500m" or "1Gi"$/);
  });

  it('reports every bad key, name and value errors together, in key order', () => {
    expect(errorsFor({ 'limits.cpu': 'x', pods: '0.5', cpu: '1' }).map((e) => e.field)).toEqual([
      'spec.hard[limits.cpu]',
      'spec.hard[limits.cpu]',
      'spec.hard[pods]',
    ]);
  });
});

describe('validateKarmadaQuota: object shape', () => {
  it.each<[string, unknown, FieldError[]]>([
    [
      'not an object',
      'quota',
      [{ field: '<root>', message: 'must be a KarmadaQuota object, got string', value: 'quota' }],
    ],
    ['null', null, [{ field: '<root>', message: 'must be a KarmadaQuota object, got null', value: null }]],
    [
      'no spec',
      { metadata: {} },
      [{ field: 'spec', message: 'Required value: a KarmadaQuota needs spec.hard' }],
    ],
    [
      'spec not an object',
      kq([1]),
      [{ field: 'spec', message: 'must be an object with hard and scopeSelector, got array', value: [1] }],
    ],
    [
      'no hard',
      kq({}),
      [{ field: 'spec.hard', message: 'Required value: set the limits, e.g. {cpu: "100", memory: 200Gi}' }],
    ],
    [
      'hard not an object',
      kq({ hard: 'cpu=1' }),
      [
        {
          field: 'spec.hard',
          message: 'must be an object mapping resource names to quantities, e.g. {cpu: "100"}; got string',
          value: 'cpu=1',
        },
      ],
    ],
    [
      'spec.scopes (ResourceQuota field) is not silently ignored',
      kq({ hard: {}, scopes: ['BestEffort'] }),
      [
        {
          field: 'spec.scopes',
          message:
            'Forbidden: KarmadaQuota has no spec.scopes; use spec.scopeSelector.matchExpressions with scopeName PriorityClass',
          value: ['BestEffort'],
        },
      ],
    ],
    ['enforcement Warn', kq({ hard: {}, enforcement: 'Warn' }), []],
    ['enforcement DryRun', kq({ hard: {}, enforcement: 'DryRun' }), []],
    [
      'an enforcement of another spelling',
      kq({ hard: {}, enforcement: 'warn' }),
      [
        {
          field: 'spec.enforcement',
          message: 'Unsupported value: supported values: "Deny", "Warn", "DryRun"',
          value: 'warn',
        },
      ],
    ],
  ])('%s', (_name, obj, expected) => {
    expect(validateKarmadaQuota(obj)).toEqual(expected);
  });
});

describe('validateKarmadaQuota: scopeSelector', () => {
  const withExpressions = (matchExpressions: unknown): FieldError[] =>
    validateKarmadaQuota(kq({ hard: { cpu: '1' }, scopeSelector: { matchExpressions } }));
  const path = 'spec.scopeSelector.matchExpressions[0]';

  it.each<[string, unknown, string, string]>([
    [
      'Terminating',
      [{ scopeName: 'Terminating', operator: 'Exists' }],
      `${path}.scopeName`,
      "scope Terminating is not supported: a ResourceBinding does not carry the pods' activeDeadlineSeconds, so it " +
        'cannot be judged at admission; the only supported scope is "PriorityClass" (matched against the workload\'s priorityClassName)',
    ],
    [
      'BestEffort',
      [{ scopeName: 'BestEffort', operator: 'Exists' }],
      `${path}.scopeName`,
      "scope BestEffort is not supported: a ResourceBinding does not carry the pods' limits, so their QoS class is unknown",
    ],
    [
      'NotBestEffort',
      [{ scopeName: 'NotBestEffort', operator: 'Exists' }],
      `${path}.scopeName`,
      'scope NotBestEffort is not supported',
    ],
    [
      'NotTerminating',
      [{ scopeName: 'NotTerminating', operator: 'Exists' }],
      `${path}.scopeName`,
      'scope NotTerminating is not supported',
    ],
    [
      'CrossNamespacePodAffinity',
      [{ scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' }],
      `${path}.scopeName`,
      "scope CrossNamespacePodAffinity is not supported: a ResourceBinding does not carry the pods' affinity terms",
    ],
    [
      'unknown scope',
      [{ scopeName: 'Color', operator: 'Exists' }],
      `${path}.scopeName`,
      'unknown scope "Color"; the only supported scope is "PriorityClass"',
    ],
    [
      'missing scopeName',
      [{ operator: 'Exists' }],
      `${path}.scopeName`,
      'Required value: use "PriorityClass"',
    ],
    [
      'missing operator',
      [{ scopeName: 'PriorityClass' }],
      `${path}.operator`,
      'Required value: use one of "In", "NotIn", "Exists", "DoesNotExist"',
    ],
    [
      'unknown operator',
      [{ scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] }],
      `${path}.operator`,
      'Unsupported value "Gt": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
    ],
    [
      'In without values',
      [{ scopeName: 'PriorityClass', operator: 'In' }],
      `${path}.values`,
      'Required value: operator In needs at least one priority class name, e.g. [high]',
    ],
    [
      'NotIn with empty values',
      [{ scopeName: 'PriorityClass', operator: 'NotIn', values: [] }],
      `${path}.values`,
      'Required value: operator NotIn needs at least one priority class name',
    ],
    [
      'In with an empty name',
      [{ scopeName: 'PriorityClass', operator: 'In', values: ['high', ''] }],
      `${path}.values[1]`,
      'must be a non-empty priority class name',
    ],
    [
      'Exists with values',
      [{ scopeName: 'PriorityClass', operator: 'Exists', values: ['high'] }],
      `${path}.values`,
      'Forbidden: operator Exists takes no values; remove values or use In/NotIn',
    ],
    [
      'DoesNotExist with values',
      [{ scopeName: 'PriorityClass', operator: 'DoesNotExist', values: ['high'] }],
      `${path}.values`,
      'Forbidden: operator DoesNotExist takes no values',
    ],
    [
      'an expression that is not an object',
      ['PriorityClass'],
      path,
      'must be an object {scopeName, operator, values}',
    ],
    [
      'matchExpressions not a list',
      { scopeName: 'PriorityClass' },
      'spec.scopeSelector.matchExpressions',
      'must be a list of {scopeName, operator, values}, got object',
    ],
  ])('%s', (_name, expressions, field, message) => {
    const errors = withExpressions(expressions);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe(field);
    expect(errors[0]?.message.startsWith(message)).toBe(true);
  });

  it('scopeSelector not an object', () => {
    expect(validateKarmadaQuota(kq({ hard: {}, scopeSelector: 'PriorityClass' }))).toEqual([
      {
        field: 'spec.scopeSelector',
        message: 'must be an object with matchExpressions, got string',
        value: 'PriorityClass',
      },
    ]);
  });

  it('reports each bad expression at its index', () => {
    const errors = withExpressions([
      { scopeName: 'PriorityClass', operator: 'In', values: ['a'] },
      { scopeName: 'BestEffort', operator: 'Exists' },
      { scopeName: 'PriorityClass', operator: 'Exists', values: ['x'] },
    ]);
    expect(errors.map((e) => e.field)).toEqual([
      'spec.scopeSelector.matchExpressions[1].scopeName',
      'spec.scopeSelector.matchExpressions[2].values',
    ]);
  });
});

describe('validateKarmadaQuota: an update may not change the scope (review 3, new 4)', () => {
  const quota = (scopeSelector?: unknown, hard: Record<string, string> = { cpu: '4' }) => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'KarmadaQuota',
    metadata: { name: 'q', namespace: 'team-a' },
    spec: { hard, ...(scopeSelector === undefined ? {} : { scopeSelector }) },
  });
  const high = { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] };
  const highOrLow = {
    matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high', 'low'] }],
  };
  it.each<[string, unknown, unknown, boolean]>([
    ['the same scope, hard raised', quota(high, { cpu: '8' }), quota(high), true],
    ['no scope either way', quota(undefined, { cpu: '8' }), quota(), true],
    ['an empty selector is no scope', quota({ matchExpressions: [] }), quota(), true],
    ['a scope widened', quota(highOrLow), quota(high), false],
    ['a scope added', quota(high), quota(), false],
    ['a scope removed', quota(), quota(high), false],
  ])('%s', (_name, updated, stored, valid) => {
    const errors = validateKarmadaQuota(updated, stored);
    expect(errors.map((e) => e.field)).toEqual(valid ? [] : ['spec.scopeSelector']);
    if (!valid) expect(errors[0]!.message).toContain('field is immutable');
    // A create has no stored object: any valid scope.
    expect(validateKarmadaQuota(updated)).toEqual([]);
  });
});

describe('validateClusterKarmadaQuota', () => {
  const team = { matchLabels: { 'quota.example.com/group': 'analytics' } };
  const ckq = (spec: unknown, metadata: Record<string, unknown> = { name: 'analytics' }): unknown => ({
    apiVersion: 'quota.karmada.io/v1alpha1',
    kind: 'ClusterKarmadaQuota',
    metadata,
    spec,
  });

  it.each<[string, unknown]>([
    ['a matchLabels selector', { hard: { cpu: '100' }, namespaceSelector: team }],
    ['{} (every namespace)', { hard: { cpu: '100' }, namespaceSelector: {} }],
    [
      'every operator used correctly',
      {
        hard: { cpu: '100' },
        namespaceSelector: {
          matchLabels: { tier: 'batch' },
          matchExpressions: [
            { key: 'team', operator: 'In', values: ['a', 'b'] },
            { key: 'env', operator: 'NotIn', values: ['dev'] },
            { key: 'quota.example.com/group', operator: 'Exists' },
            { key: 'legacy', operator: 'DoesNotExist', values: [] },
          ],
        },
      },
    ],
    [
      'the whole shared spec',
      {
        hard: { cpu: '100', memory: '200Gi', 'count/deployments.apps': '20' },
        enforcement: 'Warn',
        clusters: [
          { name: 'member1', hard: { cpu: '60' } },
          { labelSelector: {}, hard: { cpu: '80' } },
        ],
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
        namespaceSelector: team,
      },
    ],
  ])('accepts %s', (_name, spec) => {
    expect(validateClusterKarmadaQuota(ckq(spec))).toEqual([]);
  });

  it.each<[string, unknown, FieldError[]]>([
    [
      'not an object',
      'quota',
      [{ field: '<root>', message: 'must be a ClusterKarmadaQuota object, got string', value: 'quota' }],
    ],
    [
      'no spec',
      { metadata: { name: 'q' } },
      [
        {
          field: 'spec',
          message: 'Required value: a ClusterKarmadaQuota needs spec.hard and spec.namespaceSelector',
        },
      ],
    ],
    [
      'no namespaceSelector',
      ckq({ hard: { cpu: '1' } }),
      [
        {
          field: 'spec.namespaceSelector',
          message:
            'Required value: the namespaces the quota spans, by their labels, e.g. {matchLabels: {team: a}}; {} selects every namespace',
        },
      ],
    ],
    [
      'a null namespaceSelector',
      ckq({ hard: { cpu: '1' }, namespaceSelector: null }),
      [
        expect.objectContaining({
          field: 'spec.namespaceSelector',
          message: expect.stringMatching(/^Required value/),
        }),
      ],
    ],
    [
      'a namespaceSelector that is a string',
      ckq({ hard: { cpu: '1' }, namespaceSelector: 'team=a' }),
      [
        {
          field: 'spec.namespaceSelector',
          message: 'must be a label selector object, got string',
          value: 'team=a',
        },
      ],
    ],
    [
      'matchLabels with a non-string value',
      ckq({ hard: { cpu: '1' }, namespaceSelector: { matchLabels: { team: 1 } } }),
      [
        {
          field: 'spec.namespaceSelector.matchLabels',
          message: 'must map label keys to strings',
          value: { team: 1 },
        },
      ],
    ],
    [
      'matchExpressions not a list',
      ckq({ hard: { cpu: '1' }, namespaceSelector: { matchExpressions: { key: 'team' } } }),
      [
        {
          field: 'spec.namespaceSelector.matchExpressions',
          message: 'must be a list',
          value: { key: 'team' },
        },
      ],
    ],
    [
      'an expression without a key',
      ckq({ hard: { cpu: '1' }, namespaceSelector: { matchExpressions: [{ operator: 'Exists' }] } }),
      [{ field: 'spec.namespaceSelector.matchExpressions[0].key', message: 'Required value: the label key' }],
    ],
    [
      'In without values',
      ckq({ hard: { cpu: '1' }, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } }),
      [
        {
          field: 'spec.namespaceSelector.matchExpressions[0].values',
          message: 'Required value: In needs label values',
          value: undefined,
        },
      ],
    ],
    [
      'Exists with values',
      ckq({
        hard: { cpu: '1' },
        namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] },
      }),
      [
        {
          field: 'spec.namespaceSelector.matchExpressions[0].values',
          message: 'must be empty for Exists',
          value: ['a'],
        },
      ],
    ],
    [
      'an operator of another spelling',
      ckq({ hard: { cpu: '1' }, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'in' }] } }),
      [
        {
          field: 'spec.namespaceSelector.matchExpressions[0].operator',
          message: 'Unsupported value: supported values: "In", "NotIn", "Exists", "DoesNotExist"',
          value: 'in',
        },
      ],
    ],
    [
      'a namespace',
      ckq({ hard: { cpu: '1' }, namespaceSelector: team }, { name: 'q', namespace: 'team-a' }),
      [
        {
          field: 'metadata.namespace',
          message:
            'Forbidden: a ClusterKarmadaQuota is cluster-scoped: remove the namespace, and select the namespaces it spans with spec.namespaceSelector (or use a KarmadaQuota for one namespace)',
          value: 'team-a',
        },
      ],
    ],
    [
      'an empty namespace (none)',
      ckq({ hard: { cpu: '1' }, namespaceSelector: team }, { name: 'q', namespace: '' }),
      [],
    ],
    [
      'spec.scopes, named for its kind',
      ckq({ hard: {}, scopes: ['BestEffort'], namespaceSelector: {} }),
      [
        {
          field: 'spec.scopes',
          message:
            'Forbidden: ClusterKarmadaQuota has no spec.scopes; use spec.scopeSelector.matchExpressions with scopeName PriorityClass',
          value: ['BestEffort'],
        },
      ],
    ],
    [
      'a namespace, a bad limit and no selector: all reported, the namespace first',
      ckq({ hard: { 'limits.cpu': '1' } }, { name: 'q', namespace: 'team-a' }),
      [
        expect.objectContaining({ field: 'metadata.namespace' }),
        expect.objectContaining({ field: 'spec.hard[limits.cpu]' }),
        expect.objectContaining({ field: 'spec.namespaceSelector' }),
      ],
    ],
  ])('rejects %s', (_name, obj, expected) => {
    expect(validateClusterKarmadaQuota(obj)).toEqual(expected);
  });

  // Every rule validateKarmadaQuota applies to the spec they share: the same errors, the kind aside.
  it.each<[string, Record<string, unknown>]>([
    ['a key not enforced', { hard: { 'limits.cpu': '1', 'requests.storage': '1Gi' } }],
    ['bad values', { hard: { cpu: 'lots', pods: '1500m', memory: '-1' } }],
    ['no hard', {}],
    ['hard not an object', { hard: 'cpu=1' }],
    ['a bad enforcement', { hard: {}, enforcement: 'warn' }],
    [
      'bad member caps',
      {
        hard: { cpu: '1' },
        clusters: [
          { name: 'member1', labelSelector: {}, hard: {} },
          { name: 'Member_2', hard: { cpu: 'x' } },
          { labelSelector: { matchExpressions: [{ key: 'zone', operator: 'In' }] }, hard: {} },
        ],
      },
    ],
    [
      'a bad scope selector',
      {
        hard: { cpu: '1' },
        scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'Exists' }] },
      },
    ],
  ])("applies KarmadaQuota's rules to the shared spec: %s", (_name, spec) => {
    const expected = validateKarmadaQuota({ metadata: { name: 'q', namespace: 'team-a' }, spec });
    expect(expected).not.toEqual([]);
    expect(validateClusterKarmadaQuota(ckq({ ...spec, namespaceSelector: {} }))).toEqual(expected);
  });

  it.each<[string, unknown, unknown, string[]]>([
    ['a namespaceSelector changed', { matchLabels: { team: 'b' } }, undefined, []],
    [
      'the scope changed',
      team,
      { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists' }] },
      ['spec.scopeSelector'],
    ],
  ])('on an update: %s', (_name, namespaceSelector, scopeSelector, fields) => {
    const stored = ckq({ hard: { cpu: '1' }, namespaceSelector: team });
    const updated = ckq({
      hard: { cpu: '2' },
      namespaceSelector,
      ...(scopeSelector === undefined ? {} : { scopeSelector }),
    });
    expect(validateClusterKarmadaQuota(updated, stored).map((e) => e.field)).toEqual(fields);
  });
});
