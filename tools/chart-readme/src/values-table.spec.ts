import { type ChartSchema, tableCells, valueRows, valuesTable, withValuesTable } from './values-table.js';
import { VALUES_TABLE_END, VALUES_TABLE_START } from './values-table.js';

const schema: ChartSchema = {
  $defs: { port: { type: 'integer' }, resources: { type: 'object', properties: { limits: {} } } },
  properties: {
    logLevel: { type: 'string', enum: ['log', 'debug'], description: 'LOG_LEVEL' },
    web: {
      type: 'object',
      description: 'the web',
      properties: {
        port: { $ref: '#/$defs/port', description: 'PORT' },
        resources: { $ref: '#/$defs/resources', description: 'requests | limits' },
        issuerRef: { type: 'object', description: 'an issuer', properties: { name: { type: 'string' } } },
        size: { type: ['integer', 'string'], description: 'n or n%' },
      },
    },
  },
};

describe('valueRows', () => {
  test.each([
    ['an enum shows its choices', 'logLevel', 'string: log, debug', '`debug`'],
    ['a shared definition gives its type and is one row', 'web.port', 'integer', '`8080`'],
    [
      'an object from a definition is one row, whatever its members',
      'web.resources',
      'object',
      '`{"limits":{"cpu":1}}`',
    ],
    ['a group whose default is empty is one row', 'web.issuerRef', 'object', '`{}`'],
    ['a value missing from values.yaml', 'web.size', 'integer or string', '(unset)'],
  ])('%s', (_case, value, type, defaultText) => {
    const rows = valueRows(schema, {
      logLevel: 'debug',
      web: { port: 8080, resources: { limits: { cpu: 1 } }, issuerRef: {} },
    });
    expect(rows.find((r) => r.value === value)).toMatchObject({ type, default: defaultText });
  });

  test('an empty string default reads as two quotes; rows keep the schema order', () => {
    const rows = valueRows(
      { properties: { a: { type: 'string', description: 'A' }, b: { type: 'string', description: 'B' } } },
      { b: 'x', a: '' },
    );
    expect(rows.map((r) => [r.value, r.default])).toEqual([
      ['a', "`''`"],
      ['b', '`x`'],
    ]);
  });

  test.each([
    ['a value without a description', { properties: { a: { type: 'string' } } }, 'a has no description'],
    [
      'a $ref to a missing definition',
      { properties: { a: { $ref: '#/$defs/nope', description: 'A' } } },
      '#/$defs/nope is not one of its $defs',
    ],
  ])('refuses %s', (_case, bad, message) => {
    expect(() => valueRows(bad as ChartSchema, {})).toThrow(message);
  });
});

describe('the README table', () => {
  const rows = valueRows(schema, { logLevel: 'log', web: { port: 1, resources: {}, issuerRef: {} } });
  const readme = `# x\n\n${VALUES_TABLE_START}\nold\n${VALUES_TABLE_END}\n\nafter\n`;

  test('is written between the markers and read back cell by cell, pipes escaped', () => {
    const written = withValuesTable(readme, valuesTable(rows));
    expect(written).toMatch(/^# x\n/);
    expect(written).toMatch(/after\n$/);
    expect(written).not.toContain('old');
    const cells = tableCells(written, VALUES_TABLE_START, VALUES_TABLE_END);
    expect(cells).toHaveLength(rows.length);
    expect(cells.find((c) => c[0] === '`web.resources`')?.[3]).toBe('requests \\| limits');
  });

  test('a README without the markers is refused', () => {
    expect(() => withValuesTable('# x\n', valuesTable(rows))).toThrow('lacks the markers');
  });
});
