import {
  applyOrder,
  decodeObjects,
  deleteOrder,
  describeObject,
  staleObjects,
  type KarmadaApiServerObject,
} from './objects.js';

const object = (kind: string, name: string, namespace?: string): KarmadaApiServerObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

describe('decodeObjects', () => {
  it('skips empty documents and keeps the rest in order', () => {
    const role = object('ClusterRole', 'a');
    expect(decodeObjects([{ name: 'x.yaml', documents: [null, role, undefined] }])).toEqual([role]);
  });

  it.each([
    ['no kind', { apiVersion: 'v1', metadata: { name: 'a' } }],
    ['no apiVersion', { kind: 'Role', metadata: { name: 'a' } }],
    ['no name', { apiVersion: 'v1', kind: 'Role', metadata: {} }],
    ['a string', 'kind: Role'],
  ])('names the file and document of one with %s', (_, doc) => {
    expect(() => decodeObjects([{ name: 'setup.yaml', documents: [object('Role', 'ok'), doc] }])).toThrow(
      'setup.yaml, document 2: not a Kubernetes object',
    );
  });
});

describe('applyOrder and deleteOrder', () => {
  const rendered = [
    object('ValidatingWebhookConfiguration', 'hook'),
    object('ClusterRoleBinding', 'b'),
    object('ClusterRole', 'r2'),
    object('CustomResourceDefinition', 'crd'),
    object('ClusterRole', 'r1'),
    object('ServiceAccount', 'sa', 'karmada-system'),
  ];

  it('applies definitions and identities before what refers to them, else as rendered', () => {
    expect(applyOrder(rendered).map((o) => o.metadata.name)).toEqual(['crd', 'sa', 'r2', 'r1', 'b', 'hook']);
  });

  it('deletes in the reverse order: the webhook registration first, the CRD last', () => {
    expect(deleteOrder(rendered).map((o) => o.metadata.name)).toEqual(['hook', 'b', 'r1', 'r2', 'sa', 'crd']);
  });

  it('puts a kind it does not know after the known ones', () => {
    expect(applyOrder([object('ConfigMap', 'c'), object('Role', 'r')]).map((o) => o.kind)).toEqual([
      'Role',
      'ConfigMap',
    ]);
  });
});

describe('staleObjects', () => {
  it('finds what was labelled earlier and is no longer rendered, by kind, namespace and name', () => {
    const applied = [object('Role', 'secrets', 'a'), object('ClusterRole', 'view')];
    const found = [
      object('Role', 'secrets', 'a'),
      object('Role', 'secrets', 'b'),
      object('ClusterRole', 'view'),
      object('ClusterRoleBinding', 'view'),
    ];
    expect(staleObjects(applied, found).map(describeObject)).toEqual([
      'Role b/secrets',
      'ClusterRoleBinding view',
    ]);
  });

  it('finds nothing when everything found is still rendered', () => {
    const applied = [object('Role', 'r', 'a')];
    expect(staleObjects(applied, applied)).toEqual([]);
  });
});
