import {
  classForVersion,
  decodeClassMemo,
  encodeClassMemo,
  rememberClass,
  type ClassMemo,
  type ReadClass,
} from './template-class-memo.js';

describe('classForVersion: the class of the template version a binding names', () => {
  const memo: ClassMemo = [
    ['100', 'low'],
    ['120', ''],
  ];
  const now: ReadClass = { resourceVersion: '130', priorityClassName: 'high' };
  it.each<[string, ClassMemo | undefined, string | undefined, ReadClass, string]>([
    ['an older version remembered: its class', memo, '100', now, 'low'],
    ['an older version remembered without a class: none', memo, '120', now, ''],
    ['an older version nobody read: the class read', memo, '110', now, 'high'],
    ['an older version, memo unknown (Redis down): the class read', undefined, '100', now, 'high'],
    ['the version read: its class, whatever the memo says', [['130', 'low']], '130', now, 'high'],
    ['a later version than read (a cache behind): the class read', memo, '140', now, 'high'],
    ['no version named: the class read', memo, undefined, now, 'high'],
    [
      'a version read without resourceVersion: the class read',
      memo,
      '100',
      { priorityClassName: 'high' },
      'high',
    ],
    [
      'versions that are not revisions cannot be ordered: the class read',
      [['x', 'low']],
      'x',
      { resourceVersion: 'y', priorityClassName: 'high' },
      'high',
    ],
  ])('%s', (_name, given, version, current, expected) => {
    expect(classForVersion(given, version, current)).toBe(expected);
  });
});

describe('rememberClass: the few latest versions', () => {
  it.each<[string, ClassMemo, string, string, ClassMemo | undefined]>([
    ['into an empty memo', [], '100', 'low', [['100', 'low']]],
    ['a version remembered already: nothing to write', [['100', 'low']], '100', 'low', undefined],
    [
      'an older version read late: in order',
      [['120', 'high']],
      '100',
      'low',
      [
        ['100', 'low'],
        ['120', 'high'],
      ],
    ],
    [
      'past 4 versions: the highest kept, compared as numbers',
      [
        ['98', 'a'],
        ['99', 'b'],
        ['100', 'c'],
        ['101', 'd'],
      ],
      '1000',
      'e',
      [
        ['99', 'b'],
        ['100', 'c'],
        ['101', 'd'],
        ['1000', 'e'],
      ],
    ],
    [
      'past 4 versions, an older one read late: dropped itself, nothing to write',
      [
        ['99', 'b'],
        ['100', 'c'],
        ['101', 'd'],
        ['102', 'e'],
      ],
      '50',
      'a',
      undefined,
    ],
    [
      'past 4 versions, one not a revision: the latest added kept',
      [
        ['b', 'b'],
        ['100', 'c'],
        ['a', 'd'],
        ['7', 'e'],
      ],
      '1',
      'f',
      [
        ['100', 'c'],
        ['a', 'd'],
        ['7', 'e'],
        ['1', 'f'],
      ],
    ],
  ])('%s', (_name, memo, version, priorityClassName, expected) => {
    expect(rememberClass(memo, version, priorityClassName)).toEqual(expected);
  });
});

describe('the memo as stored', () => {
  it('decodes what it encodes', () => {
    const memo: ClassMemo = [
      ['100', 'low'],
      ['120', ''],
    ];
    expect(decodeClassMemo(encodeClassMemo(memo))).toEqual(memo);
  });
  it.each([
    ['not JSON', '{', 'not JSON'],
    ['an object', '{"100":"low"}', 'must be a list'],
    ['a pair without a version', '[["","low"]]', 'must be a list'],
    ['a class that is not a string', '[["100",1]]', 'must be a list'],
  ])('%s is an error', (_name, raw, message) => {
    expect(decodeClassMemo(raw)).toEqual({ error: expect.stringContaining(message) });
  });
});
