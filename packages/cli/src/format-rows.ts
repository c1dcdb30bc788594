import { RawNumber } from './json-text.ts';

/** A cell as the terminal shows it: scalars as text, nested objects and arrays as compact JSON. */
export function formatCell(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return escapeControls(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return compactJson(value);
}

/** Compact JSON that keeps RawNumber digits (JSON.stringify would need JSON.rawJSON). */
function compactJson(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(compactJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${compactJson(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Line breaks and other control characters would break the table's alignment. */
function escapeControls(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are the point
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

function isNumeric(value: unknown): boolean {
  return typeof value === 'number' || value instanceof RawNumber;
}

/** Width in terminal columns, counting code points (not UTF-16 units). */
function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Rows as an aligned text table: a header, a rule, then one line per row. Columns come in the
 * order the rows carry their keys (the query's selection order), joined over all rows; numbers
 * are right-aligned. No rows gives `(no rows)`.
 */
export function formatRows(rows: readonly Record<string, unknown>[]): string {
  if (rows.length === 0) return '(no rows)';
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const cells = rows.map((row) => columns.map((c) => (c in row ? formatCell(row[c]) : '')));
  const rightAligned = columns.map((c) =>
    rows.every((row) => !(c in row) || row[c] === null || isNumeric(row[c])),
  );
  const widths = columns.map((c, i) =>
    Math.max(width(c), ...cells.map((line) => width(line[i] as string))),
  );
  const pad = (text: string, i: number) => {
    const fill = ' '.repeat((widths[i] as number) - width(text));
    return rightAligned[i] ? fill + text : text + fill;
  };
  const lines = [
    columns.map(pad).join('  '),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map((line) => line.map(pad).join('  ')),
  ];
  return lines.map((line) => line.trimEnd()).join('\n');
}

/** The part of the success envelope's meta the summary line reads. */
export interface QueryMeta {
  pagination?: { count?: number; total_matched?: number; next_cursor?: string };
  timing_ms?: number;
  snapshot?: { swap_count?: number; age_ms?: number };
}

/** `N rows of M matched · X ms · snapshot swap S, age A ms[ · next cursor: C]`. */
export function formatSummary(meta: QueryMeta): string {
  const count = meta.pagination?.count ?? 0;
  const parts = [
    `${count} ${count === 1 ? 'row' : 'rows'} of ${meta.pagination?.total_matched ?? '?'} matched`,
    `${meta.timing_ms === undefined ? '?' : Math.round(meta.timing_ms * 1000) / 1000} ms`,
    `snapshot swap ${meta.snapshot?.swap_count ?? '?'}, age ${meta.snapshot?.age_ms ?? '?'} ms`,
  ];
  if (meta.pagination?.next_cursor !== undefined) {
    parts.push(`next cursor: ${meta.pagination.next_cursor}`);
  }
  return parts.join(' · ');
}
