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
  const length = (cell: string) => [...cell].length; // runes, as Go counts them

  const writeLines = (from: number, to: number) => {
    for (const cells of lines.slice(from, to)) {
      out.push(
        cells
          .map((cell, j) => (j < widths.length ? cell + ' '.repeat(widths[j]! - length(cell)) : cell))
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
        width = Math.max(width, length(lines[line]![column]!) + options.padding);
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
