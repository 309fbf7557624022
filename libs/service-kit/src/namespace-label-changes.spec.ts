import type { V1Namespace } from '@kubernetes/client-node';
import { NamespaceLabelChanges } from './dependencies.js';

const ns = (labels?: Record<string, string>): V1Namespace => ({ metadata: { name: 'team-a', labels } });

describe('NamespaceLabelChanges', () => {
  it.each<[string, [V1Namespace, boolean][], (string | undefined)[]]>([
    ['a namespace first seen changes what selects it', [[ns({ team: 'a' }), false]], ['team-a']],
    [
      'an update that keeps its labels does not',
      [
        [ns({ team: 'a' }), false],
        [ns({ team: 'a' }), false],
      ],
      ['team-a', undefined],
    ],
    [
      'a label changed, added or removed does',
      [
        [ns({ team: 'a' }), false],
        [ns({ team: 'b' }), false],
        [ns(), false],
      ],
      ['team-a', 'team-a', 'team-a'],
    ],
    [
      'a deletion does, and the namespace created again is new',
      [
        [ns({ team: 'a' }), false],
        [ns({ team: 'a' }), true],
        [ns({ team: 'a' }), false],
      ],
      ['team-a', 'team-a', 'team-a'],
    ],
    ['a nameless object is ignored', [[{ metadata: {} }, false]], [undefined]],
  ])('%s', (_, events, want) => {
    const changes = new NamespaceLabelChanges();
    expect(events.map(([namespace, deleted]) => changes.changed(namespace, deleted))).toEqual(want);
  });
});
