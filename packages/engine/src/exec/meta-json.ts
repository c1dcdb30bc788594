import { Buffer } from 'node:buffer';
import type { QueryResult } from './execute.ts';
import { type JsonWriter, type WordBytes, wordBytes } from './json-writer.ts';
import type { QueryPlan } from './plan.ts';

/** What identifies the snapshot a response was served from (`meta.snapshot`, `meta.version`). */
export interface ResponseMeta {
  readonly version: string;
  readonly swapCount: number;
  readonly ageMs: number;
}

/** Fixed texts as words (`JsonWriter.words`): copied 4 bytes at a time. */
const words = (text: string): WordBytes => wordBytes(Buffer.from(text, 'utf8'));
/** `{"data":`, which every answer starts with. */
export const DATA_OPEN = words('{"data":');
const TOTAL = words(',"total_matched":');
const HAS_MORE_TRUE = words(',"has_more":true,"limit":');
const HAS_MORE_FALSE = words(',"has_more":false,"limit":');
const CURSOR = words(',"next_cursor":');
const TIMING = words('},"timing_ms":');
const SWAPS = words(',"snapshot":{"swap_count":');
const AGE = words(',"age_ms":');
const NULL = words('null');

/**
 * The meta's head, `,"meta":{"table":<name>,"query":<echo>,"pagination":{"count":`. A plan the
 * engine keeps for its text (asked again: `keepMetaHead`) has its head made once as words and
 * written in one copy. Any other is written in three parts: the table's part, made once per
 * name, then the echo as it is, then the pagination's. Most plans answer once (a PK lookup of a
 * new id is a new text, a new plan), and building their head as words cost more than writing
 * the echo: 2.2 of a random lookup's 7.6 µs.
 */
const keptHeads = new WeakMap<QueryPlan, WordBytes>();
const tableHeads = new Map<string, WordBytes>();
const MAX_TABLE_HEADS = 256;
const PAGINATION = words(',"pagination":{"count":');

/** Makes `plan`'s head once, for the answers it will give again (held as long as the plan). */
export function keepMetaHead(plan: QueryPlan): void {
  if (keptHeads.has(plan)) return;
  keptHeads.set(
    plan,
    words(`${tableHeadText(plan.table.name)}${plan.echoJson},"pagination":{"count":`),
  );
}

function tableHeadText(table: string): string {
  return `,"meta":{"table":${JSON.stringify(table)},"query":`;
}

function tableHeadOf(table: string): WordBytes {
  let head = tableHeads.get(table);
  if (head === undefined) {
    head = words(tableHeadText(table));
    if (tableHeads.size >= MAX_TABLE_HEADS) tableHeads.clear();
    tableHeads.set(table, head);
  }
  return head;
}

/** Writes `plan`'s meta head (see `keepMetaHead`). */
function writeHead(out: JsonWriter, plan: QueryPlan): void {
  const kept = keptHeads.get(plan);
  if (kept !== undefined) {
    out.words(kept);
    return;
  }
  out.words(tableHeadOf(plan.table.name));
  out.write(plan.echoJson);
  out.words(PAGINATION);
}

/** The meta's tail after `age_ms` for an instance's version (`},"version":"…"}}`), made once. */
const tails = new Map<string, WordBytes>();
const MAX_TAILS = 16;

function tailOf(version: string): WordBytes {
  let tail = tails.get(version);
  if (tail === undefined) {
    tail = words(`},"version":${JSON.stringify(version)}}}`);
    if (tails.size >= MAX_TAILS) tails.clear();
    tails.set(version, tail);
  }
  return tail;
}

/**
 * Writes the success envelope's `meta` (docs/instance-api.md) after `data`, and closes the
 * envelope: fixed texts as words made once (the plan's part once per plan), numbers as digits.
 */
export function writeMeta(
  out: JsonWriter,
  plan: QueryPlan,
  result: QueryResult,
  timingMs: number,
  meta: ResponseMeta,
): void {
  writeHead(out, plan);
  out.number(result.count);
  out.words(TOTAL);
  out.number(result.totalMatched);
  out.words(result.hasMore ? HAS_MORE_TRUE : HAS_MORE_FALSE);
  if (result.limit === null) out.words(NULL);
  else out.number(result.limit);
  if (result.nextCursor !== undefined) {
    out.words(CURSOR);
    out.write(JSON.stringify(result.nextCursor));
  }
  out.words(TIMING);
  out.number(timingMs);
  out.words(SWAPS);
  out.number(meta.swapCount);
  out.words(AGE);
  out.number(Math.round(meta.ageMs));
  out.words(tailOf(meta.version));
}
