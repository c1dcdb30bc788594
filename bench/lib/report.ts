/**
 * Numbers print with a precision that suits their size, so ratios (0.042), times (812.5) and
 * counts (12034) all stay readable in one column; pre-format a value as a string to override.
 */
function formatCell(value: string | number): string {
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

/**
 * Prints rows as an aligned text table on stdout: columns in order of first appearance, numbers
 * right-aligned, text left-aligned, a blank cell for a key a row lacks.
 */
export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  const columns: string[] = [];
  for (const row of rows)
    for (const key of Object.keys(row)) {
      if (!columns.includes(key)) columns.push(key);
    }
  const cells = rows.map((row) =>
    columns.map((column) => {
      const value = row[column];
      return value === undefined ? '' : formatCell(value);
    }),
  );
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => line[i]!.length)),
  );
  const numeric = columns.map((column) => rows.some((row) => typeof row[column] === 'number'));
  const align = (text: string, i: number) =>
    numeric[i] ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
  const lines = [
    title,
    columns.map(align).join('  ').trimEnd(),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...cells.map((line) => line.map(align).join('  ').trimEnd()),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n`);
}
