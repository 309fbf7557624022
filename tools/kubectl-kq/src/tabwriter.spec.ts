import { appendRow, columnWidths, DESCRIBE_LAYOUT, GET_LAYOUT, tabwrite } from './tabwriter.js';

// Every expected output is what Go's text/tabwriter printed for the same input and settings.
describe('tabwrite', () => {
  it.each([
    {
      case: 'kubectl describe quota (the Kubernetes docs example)',
      layout: DESCRIBE_LAYOUT,
      input: [
        'Name:\tcompute-resources',
        'Namespace:\tmyspace',
        'Resource\tUsed\tHard',
        '--------\t----\t----',
        'limits.cpu\t0\t2',
        'requests.nvidia.com/gpu\t0\t4',
        '',
      ],
      output: [
        'Name:                    compute-resources',
        'Namespace:               myspace',
        'Resource                 Used  Hard',
        '--------                 ----  ----',
        'limits.cpu               0     2',
        'requests.nvidia.com/gpu  0     4',
        '',
      ],
    },
    {
      case: 'a section title without a tab starts a new alignment; `Title:\\t<none>` joins the one above',
      layout: DESCRIBE_LAYOUT,
      input: [
        'Name:\tx',
        'Resource\tUsed\tReserved\tHard',
        'cpu\t1\t2\t3',
        'Clusters:',
        '  Cluster\tState\tLast Sync\tcpu',
        '  member1\tReady\t5s\t400m',
        'Reservations:\t<none>',
        'Conditions:\t<none>',
        '',
      ],
      output: [
        'Name:     x',
        'Resource  Used  Reserved  Hard',
        'cpu       1     2         3',
        'Clusters:',
        '  Cluster      State  Last Sync  cpu',
        '  member1      Ready  5s         400m',
        'Reservations:  <none>',
        'Conditions:    <none>',
        '',
      ],
    },
    {
      case: 'kubectl get: three spaces between columns, columns at least 6 wide',
      layout: GET_LAYOUT,
      input: ['NAME\tUSED\tAGE', 'a\t5%\t3m', 'longer-name\t100%\t2d', ''],
      output: ['NAME          USED   AGE', 'a             5%     3m', 'longer-name   100%   2d', ''],
    },
    {
      case: 'trailing tabs pad, the last cell never does, an empty line ends every column',
      layout: DESCRIBE_LAYOUT,
      input: ['a\tb\t', 'ccc\t\td', '', 'x\ty', ''],
      output: ['a    b  ', 'ccc     d', '', 'x  y', ''],
    },
    {
      case: 'widths count characters, not UTF-16 units',
      layout: { minWidth: 0, padding: 1 },
      input: ['äö\tx', 'abc\ty', ''],
      output: ['äö  x', 'abc y', ''],
    },
    {
      case: 'nested blocks and empty leading cells',
      layout: { minWidth: 3, padding: 1 },
      input: ['a', 'b\tc\td', 'e', '\tf\tg', ''],
      output: ['a', 'b  c  d', 'e', '   f  g', ''],
    },
  ])('$case', ({ layout, input, output }) => {
    expect(tabwrite(input.join('\n'), layout).split('\n')).toEqual(output);
  });
});

describe('appendRow: a watch line under a printed table', () => {
  const printed = [
    ['NAME', 'USED', 'AGE'],
    ['team', '28%', '3m'],
  ];

  it.each([
    {
      case: 'a row that fits keeps the table aligned',
      cells: ['team', '30%', '3m'],
      line: 'team   30%    3m',
    },
    {
      case: 'a longer cell widens its column',
      cells: ['a-longer-name', '5%', '1s'],
      line: 'a-longer-name   5%     1s',
    },
    {
      case: 'the last cell is never padded',
      cells: ['b', '1%', 'a long last cell'],
      line: 'b      1%     a long last cell',
    },
  ])('$case', ({ cells, line }) => {
    const widths = columnWidths(printed, GET_LAYOUT);
    expect(tabwrite(printed.map((c) => c.join('\t')).join('\n'), GET_LAYOUT).split('\n')[1]).toBe(
      'team   28%    3m',
    );
    expect(appendRow(cells, widths, GET_LAYOUT).line).toBe(line);
  });

  it('remembers a widened column for the rows after it', () => {
    const first = appendRow(['a-longer-name', '5%', '1s'], columnWidths(printed, GET_LAYOUT), GET_LAYOUT);
    expect(appendRow(['team', '28%', '3m'], first.widths, GET_LAYOUT).line).toBe('team            28%    3m');
  });
});
