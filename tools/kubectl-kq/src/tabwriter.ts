/** Go's text/tabwriter settings kubectl uses, so our output lines up exactly as kubectl's does. */
export interface TabwriterOptions {
  /** Smallest column width, padding included. */
  minWidth: number;
  /** Spaces added to the widest cell of a column. */
  padding: number;
}

/** `kubectl describe` (describe.tabbedString): tabwriter.NewWriter(out, 0, 8, 2, ' ', 0). */
export const DESCRIBE_LAYOUT: TabwriterOptions = { minWidth: 0, padding: 2 };
/** `kubectl get` (printers.GetNewTabWriter): tabwriter.NewWriter(out, 6, 4, 3, ' ', RememberWidths). */
export const GET_LAYOUT: TabwriterOptions = { minWidth: 6, padding: 3 };

/**
 * Aligns tab-separated text as Go's tabwriter does with a space pad character: a cell is the text
 * before a tab; the text after a line's last tab is not part of any column. A column's width is set
 * by the run of consecutive lines that have a cell in it (a column block), so a line with fewer
 * cells, like a section title, starts a new alignment below it.
 */
export function tabwrite(text: string, options: TabwriterOptions): string {
  const lines = text.split('\n').map((line) => line.split('\t'));
  const out: string[] = [];
  const widths: number[] = [];

  const writeLines = (from: number, to: number) => {
    for (const cells of lines.slice(from, to)) {
      out.push(
        cells
          .map((cell, j) => (j < widths.length ? cell + ' '.repeat(widths[j]! - runes(cell)) : cell))
          .join(''),
      );
    }
  };
  const format = (line0: number, line1: number) => {
    const column = widths.length;
    let start = line0;
    for (let line = line0; line < line1; line++) {
      if (column >= lines[line]!.length - 1) continue;
      writeLines(start, line);
      start = line;
      let width = options.minWidth;
      for (; line < line1 && column < lines[line]!.length - 1; line++) {
        width = Math.max(width, runes(lines[line]![column]!) + options.padding);
      }
      widths.push(width);
      format(start, line);
      widths.pop();
      start = line;
    }
    writeLines(start, line1);
  };
  format(0, lines.length);
  return out.join('\n');
}

/**
 * One more line under a table already printed (`kubectl get --watch`, whose tabwriter remembers
 * widths): each column keeps at least the width it had, and widens for a longer cell. Returns the
 * line and the widths to pass with the next one; start from `columnWidths` of the printed lines.
 */
export function appendRow(
  cells: string[],
  widths: number[],
  options: TabwriterOptions,
): { line: string; widths: number[] } {
  const next = cells.slice(0, -1).map((cell, i) => Math.max(widths[i] ?? 0, runes(cell) + options.padding));
  const line = cells
    .map((cell, i) => (i < next.length ? cell + ' '.repeat(next[i]! - runes(cell)) : cell))
    .join('');
  return { line, widths: next };
}

/** The widths tabwrite gives the columns of lines that all have the same cells. */
export function columnWidths(lines: string[][], options: TabwriterOptions): number[] {
  const columns = Math.max(0, ...lines.map((cells) => cells.length - 1));
  return Array.from({ length: columns }, (_, i) =>
    Math.max(options.minWidth, ...lines.map((cells) => runes(cells[i] ?? '') + options.padding)),
  );
}

const runes = (cell: string) => [...cell].length; // as Go counts them
