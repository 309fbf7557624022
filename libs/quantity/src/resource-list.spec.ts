import {
  excessOf,
  Quantity,
  addLists,
  formatList,
  formatListInline,
  isZeroList,
  lessThanOrEqual,
  listsEqual,
  maskList,
  maxLists,
  negativeKeys,
  parseResourceList,
  removeZeros,
  subtractLists,
  type Format,
  type ResourceList,
} from './index.js';

/** Builds a ResourceList from wire strings (throws on a bad one: test input only). */
function rl(wire: Record<string, string>): ResourceList {
  return Object.fromEntries(Object.entries(wire).map(([k, v]) => [k, Quantity.parse(v)]));
}

type Wire = Record<string, string>;

describe('parseResourceList', () => {
  test('parses every entry and reports no errors for a valid list', () => {
    const { list, errors } = parseResourceList(
      { cpu: '500m', memory: '1Gi', pods: '10', 'requests.nvidia.com/gpu': '2' },
      'spec.hard',
    );
    expect(errors).toEqual([]);
    expect(formatList(list)).toEqual({
      cpu: '500m',
      memory: '1Gi',
      pods: '10',
      'requests.nvidia.com/gpu': '2',
    });
    expect(list['memory']?.value()).toBe(1073741824n);
  });

  test.each([
    [{ cpu: ' 1 ' }, '1', 'DecimalSI'], // Go's UnmarshalJSON trims whitespace
    [{ cpu: '\t2Gi\n' }, '2Gi', 'BinarySI'],
    [{ cpu: 2 }, '2', 'DecimalSI'],
    [{ cpu: 0.5 }, '500m', 'DecimalSI'],
    [{ cpu: -1 }, '-1', 'DecimalSI'],
    [{ cpu: 2.5e-7 }, '250e-9', 'DecimalExponent'], // String(2.5e-7) is "2.5e-7"
    [{ cpu: 1e-7 }, '100e-9', 'DecimalExponent'], // String(1e-7) is "1e-7"
    [{ cpu: Number.MAX_SAFE_INTEGER }, '9007199254740991', 'DecimalSI'],
    [{ cpu: 12345678901234567890n }, '12345678901234567890', 'DecimalSI'],
    [{ cpu: null }, '0', 'DecimalSI'], // Go's UnmarshalJSON("null") leaves a zero Quantity
  ] as [Record<string, unknown>, string, Format][])('%p decodes to %s', (raw, str, format) => {
    const { list, errors } = parseResourceList(raw, 'spec.hard');
    expect(errors).toEqual([]);
    expect(list['cpu']?.toString()).toBe(str);
    expect(list['cpu']?.format).toBe(format);
  });

  test.each([
    ['12xy', 'invalid quantity "12xy": unknown suffix "xy"'],
    ['', 'invalid quantity "": empty string'],
    ['1 Gi', 'invalid quantity "1 Gi": must not contain whitespace'],
    ['1gi', 'invalid quantity "1gi": unknown suffix "gi"'],
    ['Pi', 'invalid quantity "Pi": has no digits before its suffix'],
  ])('a bad quantity string %j is a field error', (value, message) => {
    const { list, errors } = parseResourceList({ cpu: '1', memory: value }, 'spec.hard');
    expect(formatList(list)).toEqual({ cpu: '1' });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe('spec.hard[memory]');
    expect(errors[0]?.value).toBe(value);
    expect(errors[0]?.message.startsWith(message)).toBe(true);
  });

  test.each([
    [Number.NaN, 'must be a finite number, got NaN'],
    [Number.POSITIVE_INFINITY, 'must be a finite number, got Infinity'],
    [Number.NEGATIVE_INFINITY, 'must be a finite number, got -Infinity'],
    [2 ** 53, "number 9007199254740992 is beyond JavaScript's exact integer range; send it as a string"],
    [1e300, "number 1e+300 is beyond JavaScript's exact integer range; send it as a string"],
    [1e21, "number 1e+21 is beyond JavaScript's exact integer range; send it as a string"],
    [
      -(2 ** 60),
      "number -1152921504606847000 is beyond JavaScript's exact integer range; send it as a string",
    ],
    [true, 'must be a quantity string or number, got boolean'],
    [{ value: '1' }, 'must be a quantity string or number, got object'],
    [['1'], 'must be a quantity string or number, got object'],
    [undefined, 'must be a quantity string or number, got undefined'],
  ])('the wire value %p is a field error', (value, message) => {
    const { list, errors } = parseResourceList({ cpu: value }, 'spec.hard');
    expect(list).toEqual({});
    expect(errors).toEqual([{ field: 'spec.hard[cpu]', message, value }]);
  });

  test.each([
    ['a string', 'cpu=1', 'string'],
    ['a number', 5, 'number'],
    ['an array', [{ cpu: '1' }], 'array'],
    ['a boolean', false, 'boolean'],
  ])('%s instead of an object is one error at the path', (_name, raw, kind) => {
    expect(parseResourceList(raw, 'status.used')).toEqual({
      list: {},
      errors: [
        {
          field: 'status.used',
          message: `must be an object mapping resource names to quantities, got ${kind}`,
          value: raw,
        },
      ],
    });
  });

  test.each([null, undefined])('%p is an empty list without errors', (raw) => {
    expect(parseResourceList(raw, 'spec.hard')).toEqual({ list: {}, errors: [] });
  });

  test('reports every bad entry, sorted by resource name', () => {
    const { list, errors } = parseResourceList({ pods: 'x', cpu: '1', memory: '1Q' }, 'spec.hard');
    expect(formatList(list)).toEqual({ cpu: '1' });
    expect(errors.map((e) => e.field)).toEqual(['spec.hard[memory]', 'spec.hard[pods]']);
  });

  test('a "__proto__" resource is stored as data and pollutes nothing', () => {
    const raw: unknown = JSON.parse('{"__proto__": "3", "cpu": "1"}');
    const { list, errors } = parseResourceList(raw, 'spec.hard');
    expect(errors).toEqual([]);
    expect(Object.keys(list).sort()).toEqual(['__proto__', 'cpu']);
    expect(Object.getPrototypeOf(list)).toBe(Object.prototype);
    expect(formatList(list)).toEqual(JSON.parse('{"__proto__": "3", "cpu": "1"}'));
    expect(formatListInline(list)).toBe('__proto__=3,cpu=1');
    expect(({} as Record<string, unknown>)['cpu']).toBeUndefined();
  });

  test('keeps the kept-input strings Kubernetes would print', () => {
    expect(formatList(parseResourceList({ cpu: '+1', memory: '1.5Gi' }, 'x').list)).toEqual({
      cpu: '+1',
      memory: '1536Mi',
    });
  });
});

describe('addLists (quota.Add)', () => {
  test.each([
    ['noKeys', {}, {}, {}],
    ['toEmpty', { cpu: '100m' }, {}, { cpu: '100m' }],
    ['fromEmpty', {}, { cpu: '100m' }, { cpu: '100m' }],
    ['matching', { cpu: '100m' }, { cpu: '100m' }, { cpu: '200m' }],
    [
      'mixed keys and formats',
      { cpu: '1', memory: '1Gi', pods: '3' },
      { cpu: '500m', memory: '512Mi', services: '2' },
      { cpu: '1500m', memory: '1536Mi', pods: '3', services: '2' },
    ],
    [
      'binary plus decimal keeps the left format',
      { memory: '1Gi' },
      { memory: '1' },
      { memory: '1073741825' },
    ],
    ['a zero left side takes the right format', { memory: '0' }, { memory: '1Gi' }, { memory: '1Gi' }],
    ['beyond int64', { cpu: '9223372036854775807' }, { cpu: '1' }, { cpu: '9223372036854775808' }],
  ] as [string, Wire, Wire, Wire][])('%s', (_name, a, b, expected) => {
    const result = addLists(rl(a), rl(b));
    expect(formatList(result)).toEqual(expected);
    expect(listsEqual(result, rl(expected))).toBe(true);
  });

  test('does not modify its arguments', () => {
    const a = rl({ cpu: '1' });
    const b = rl({ cpu: '2', memory: '1Gi' });
    addLists(a, b);
    expect(formatList(a)).toEqual({ cpu: '1' });
    expect(formatList(b)).toEqual({ cpu: '2', memory: '1Gi' });
  });
});

describe('subtractLists (quota.Subtract)', () => {
  test.each([
    ['noKeys', {}, {}, {}],
    ['value-empty', { cpu: '100m' }, {}, { cpu: '100m' }],
    ['empty-value', {}, { cpu: '100m' }, { cpu: '-100m' }],
    ['value-value', { cpu: '200m' }, { cpu: '100m' }, { cpu: '100m' }],
    ['to zero', { memory: '1Gi' }, { memory: '1024Mi' }, { memory: '0' }],
    ['negative result', { cpu: '1' }, { cpu: '1500m' }, { cpu: '-500m' }],
    ['binary minus binary', { memory: '2Gi' }, { memory: '512Mi' }, { memory: '1536Mi' }],
  ] as [string, Wire, Wire, Wire][])('%s', (_name, a, b, expected) => {
    expect(formatList(subtractLists(rl(a), rl(b)))).toEqual(expected);
  });
});

describe('maxLists (quota.Max)', () => {
  test.each([
    ['noKeys', {}, {}, {}],
    ['toEmpty', { cpu: '100m' }, {}, { cpu: '100m' }],
    ['fromEmpty', {}, { cpu: '100m' }, { cpu: '100m' }],
    ['matching', { cpu: '100m' }, { cpu: '150m' }, { cpu: '150m' }],
    ['matching(reverse)', { cpu: '150m' }, { cpu: '100m' }, { cpu: '150m' }],
    ['matching-equal', { cpu: '100m' }, { cpu: '100m' }, { cpu: '100m' }],
    ['a tie takes b (and its format)', { memory: '1024' }, { memory: '1Ki' }, { memory: '1Ki' }],
    ['a tie takes b, reversed', { memory: '1Ki' }, { memory: '1024' }, { memory: '1024' }],
    [
      'per key',
      { cpu: '2', memory: '1Gi', pods: '1' },
      { cpu: '3', memory: '1G', services: '4' },
      { cpu: '3', memory: '1Gi', pods: '1', services: '4' },
    ],
    ['negative values', { cpu: '-1' }, { cpu: '-2' }, { cpu: '-1' }],
  ] as [string, Wire, Wire, Wire][])('%s', (_name, a, b, expected) => {
    expect(formatList(maxLists(rl(a), rl(b)))).toEqual(expected);
  });
});

describe('maskList (quota.Mask)', () => {
  const list = rl({ cpu: '1', memory: '1Gi', pods: '3' });

  test.each([
    [['cpu'], { cpu: '1' }],
    [['cpu', 'pods'], { cpu: '1', pods: '3' }],
    [['storage'], {}],
    [[], {}],
    [['pods', 'memory', 'cpu', 'cpu'], { cpu: '1', memory: '1Gi', pods: '3' }],
  ] as [string[], Wire][])('keys %j', (keys, expected) => {
    expect(formatList(maskList(list, keys))).toEqual(expected);
  });

  test('accepts any iterable of keys', () => {
    expect(formatList(maskList(list, new Set(['memory'])))).toEqual({ memory: '1Gi' });
    expect(formatList(maskList(list, new Map([['pods', 1]]).keys()))).toEqual({ pods: '3' });
  });

  test('keeps the same quantity objects', () => {
    expect(maskList(list, ['cpu'])['cpu']).toBe(list['cpu']);
  });
});

describe('isZeroList, removeZeros, negativeKeys', () => {
  test.each([
    ['empty', {}, true],
    ['zero', { cpu: '0', memory: '0' }, true],
    ['zero forms', { cpu: '0m', memory: '0Gi', pods: '-0' }, true],
    ['non-zero', { cpu: '200m', memory: '1Gi' }, false],
    ['one non-zero', { cpu: '0', memory: '1n' }, false],
    ['negative', { cpu: '-1n' }, false],
  ] as [string, Wire, boolean][])('isZeroList: %s', (_name, list, expected) => {
    expect(isZeroList(rl(list))).toBe(expected);
  });

  test.each([
    ['empty', {}, {}],
    ['all-zeros', { cpu: '0', memory: '0' }, {}],
    ['some-zeros', { cpu: '0', memory: '0', storage: '100Gi' }, { storage: '100Gi' }],
    ['non-zero', { cpu: '200m', memory: '1Gi' }, { cpu: '200m', memory: '1Gi' }],
  ] as [string, Wire, Wire][])('removeZeros: %s', (_name, list, expected) => {
    expect(formatList(removeZeros(rl(list)))).toEqual(expected);
  });

  test.each([
    ['empty', {}, []],
    ['some-negative', { cpu: '-10', memory: '0' }, ['cpu']],
    ['all-negative', { memory: '-1Gi', cpu: '-200m' }, ['cpu', 'memory']],
    ['tiny', { pods: '-0.0000000001', cpu: '1' }, ['pods']],
  ] as [string, Wire, string[]][])('negativeKeys: %s', (_name, list, expected) => {
    expect(negativeKeys(rl(list))).toEqual(expected);
  });
});

describe('lessThanOrEqual (quota.LessThanOrEqual)', () => {
  test.each([
    ['isEmpty', {}, {}, true, []],
    ['isEqual', { cpu: '100m' }, { cpu: '100m' }, true, []],
    ['isLessThan', { cpu: '100m' }, { cpu: '200m' }, true, []],
    ['isGreaterThan', { cpu: '200m' }, { cpu: '100m' }, false, ['cpu']],
    ['equal across formats', { memory: '1Gi' }, { memory: '1073741824' }, true, []],
    ['1Gi is more than 1G', { memory: '1Gi' }, { memory: '1G' }, false, ['memory']],
    ['by a nano', { cpu: '1000000001n' }, { cpu: '1' }, false, ['cpu']],
    ['a key only in a is not limited', { cpu: '100', pods: '5' }, { pods: '5' }, true, []],
    ['a key only in b is not requested', { cpu: '1' }, { cpu: '1', pods: '0' }, true, []],
    [
      'several exceeded, sorted',
      { pods: '11', cpu: '3', memory: '2Gi', services: '1' },
      { services: '1', memory: '1Gi', pods: '10', cpu: '2' },
      false,
      ['cpu', 'memory', 'pods'],
    ],
    ['beyond int64', { cpu: '18446744073709551616' }, { cpu: '9223372036854775807' }, false, ['cpu']],
  ] as [string, Wire, Wire, boolean, string[]][])('%s', (_name, a, b, ok, exceeded) => {
    expect(lessThanOrEqual(rl(a), rl(b))).toEqual({ ok, exceeded });
  });
});

describe('listsEqual (quota.Equals)', () => {
  test.each([
    ['isEqual', {}, {}, true],
    ['isEqualWithKeys', { cpu: '100m', memory: '1Gi' }, { cpu: '100m', memory: '1Gi' }, true],
    ['isNotEqualSameKeys', { cpu: '200m', memory: '1Gi' }, { cpu: '100m', memory: '1Gi' }, false],
    ['isNotEqualDiffKeys', { cpu: '100m', memory: '1Gi' }, { cpu: '100m', memory: '1Gi', pods: '1' }, false],
    ['formats do not matter', { cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1073741824' }, true],
    ['a missing key is not zero', {}, { cpu: '0' }, false],
    ['a missing key is not zero, reversed', { cpu: '0' }, {}, false],
    ['same size, different keys', { cpu: '0' }, { pods: '0' }, false],
  ] as [string, Wire, Wire, boolean][])('%s', (_name, a, b, expected) => {
    expect(listsEqual(rl(a), rl(b))).toBe(expected);
    expect(listsEqual(rl(b), rl(a))).toBe(expected);
  });
});

describe('formatList and formatListInline', () => {
  const list = rl({
    memory: '1024Mi',
    cpu: '4',
    pods: '10',
    'count/deployments.apps': '2',
    'limits.cpu': '1.5',
  });

  test('formatList gives sorted keys and Kubernetes strings', () => {
    const wire = formatList(list);
    expect(wire).toEqual({
      'count/deployments.apps': '2',
      cpu: '4',
      'limits.cpu': '1500m',
      memory: '1Gi',
      pods: '10',
    });
    expect(Object.keys(wire)).toEqual(['count/deployments.apps', 'cpu', 'limits.cpu', 'memory', 'pods']);
    expect(JSON.stringify(list)).toBe(
      '{"memory":"1Gi","cpu":"4","pods":"10","count/deployments.apps":"2","limits.cpu":"1500m"}',
    );
  });

  test.each([
    [undefined, 'count/deployments.apps=2,cpu=4,limits.cpu=1500m,memory=1Gi,pods=10'],
    [['cpu', 'memory'], 'cpu=4,memory=1Gi'],
    [['memory', 'cpu'], 'cpu=4,memory=1Gi'],
    [['pods', 'storage'], 'pods=10,storage=0'],
    [[], ''],
  ] as [string[] | undefined, string][])('formatListInline with keys %j', (keys, expected) => {
    expect(formatListInline(list, keys)).toBe(expected);
  });

  test('formatListInline prints canonical quantities, not the kept input', () => {
    expect(formatListInline(rl({ cpu: '+1', memory: '1.G' }))).toBe('cpu=1,memory=1G');
  });

  test('an empty list formats as {} and ""', () => {
    expect(formatList({})).toEqual({});
    expect(formatListInline({})).toBe('');
  });

  test('reproduces a quota admission denial fragment', () => {
    // "exceeded quota: q, requested: %s, used: %s, limited: %s" uses prettyPrint of masked lists
    const requested = rl({ 'requests.cpu': '500m', 'requests.memory': '128Mi', pods: '1' });
    const used = rl({ 'requests.cpu': '3700m', 'requests.memory': '1Gi', pods: '3' });
    const hard = rl({ 'requests.cpu': '4', 'requests.memory': '2Gi', pods: '10' });
    const { ok, exceeded } = lessThanOrEqual(addLists(used, requested), hard);
    expect(ok).toBe(false);
    expect(exceeded).toEqual(['requests.cpu']);
    expect(
      `requested: ${formatListInline(requested, exceeded)}, used: ${formatListInline(used, exceeded)}, ` +
        `limited: ${formatListInline(hard, exceeded)}`,
    ).toBe('requested: requests.cpu=500m, used: requests.cpu=3700m, limited: requests.cpu=4');
  });
});

describe('key order and odd resource names through every operation', () => {
  test('combined lists hold their keys sorted, whatever order their operands hold them in', () => {
    const a = rl({ pods: '1', cpu: '1' });
    const b = rl({ memory: '1', apple: '2', cpu: '1' });
    for (const combined of [addLists(a, b), subtractLists(a, b), maxLists(a, b), addLists(b, a)])
      expect(Object.keys(combined)).toEqual(['apple', 'cpu', 'memory', 'pods']);
  });

  test('integer-like names sort by code unit, as Go does, though JavaScript lists them numerically', () => {
    const list = rl({ '9': '-1', '10': '-2', cpu: '-3' });
    expect(Object.keys(list)).toEqual(['9', '10', 'cpu']);
    expect(negativeKeys(list)).toEqual(['10', '9', 'cpu']);
    expect(lessThanOrEqual(list, rl({ '9': '-5', '10': '-5' })).exceeded).toEqual(['10', '9']);
  });

  test('a "__proto__" resource stays data through add, subtract, max, mask and removeZeros', () => {
    const raw: unknown = JSON.parse('{"__proto__": "3", "cpu": "1"}');
    const list = parseResourceList(raw, 'x').list;
    const zero = parseResourceList(JSON.parse('{"__proto__": "0"}'), 'x').list;
    const results = [
      addLists(list, list),
      subtractLists(list, rl({ cpu: '1' })),
      maxLists(rl({ cpu: '2' }), list),
      maskList(list, ['__proto__']),
      removeZeros(addLists(list, zero)),
    ];
    expect(Object.hasOwn(maskList(list, ['cpu']), '__proto__')).toBe(false);
    expect(Object.hasOwn(removeZeros(addLists(zero, rl({ cpu: '1' }))), '__proto__')).toBe(false);
    for (const result of results) {
      expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      expect(Object.hasOwn(result, '__proto__')).toBe(true);
    }
    expect(results.map((r) => formatListInline(r))).toEqual([
      '__proto__=6,cpu=2',
      '__proto__=3,cpu=0',
      '__proto__=3,cpu=2',
      '__proto__=3',
      '__proto__=3,cpu=1',
    ]);
  });
});

describe('excessOf', () => {
  test.each([
    ['empty', {}, {}, {}],
    [
      'zeros and negatives dropped',
      { cpu: '1', memory: '1Gi', pods: '3' },
      { cpu: '2', memory: '1Gi', pods: '1' },
      { pods: '2' },
    ],
    ['a key only in a kept', { cpu: '500m', memory: '1Gi' }, { cpu: '500m' }, { memory: '1Gi' }],
    ['a key only in b dropped', {}, { cpu: '1m' }, {}],
    [
      'formats of the difference',
      { memory: '2Gi', cpu: '1500m' },
      { memory: '1Gi', cpu: '1' },
      { cpu: '500m', memory: '1Gi' },
    ],
  ] as [string, Wire, Wire, Wire][])('%s', (_name, a, b, expected) => {
    const result = excessOf(rl(a), rl(b));
    expect(formatList(result)).toEqual(expected);
    expect(Object.keys(result)).toEqual(Object.keys(expected).sort());
  });

  test('a "__proto__" resource stays data', () => {
    const result = excessOf(parseResourceList(JSON.parse('{"__proto__": "3", "cpu": "-1"}'), 'x').list, {});
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(formatListInline(result)).toBe('__proto__=3');
  });
});
