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
 * Per plan, the meta's head up to its first number (`,"meta":{"table":…,"query":…,
 * "pagination":{"count":`), made on the plan's first answer: a cached plan (by shape or text)
 * writes it in one copy. Held as long as the plan, and counted with it (template-bytes.ts).
 */
const heads = new WeakMap<QueryPlan, WordBytes>();

function headOf(plan: QueryPlan): WordBytes {
  let head = heads.get(plan);
  if (head === undefined) {
    head = words(
      `,"meta":{"table":${JSON.stringify(plan.table.name)},"query":${plan.echoJson},"pagination":{"count":`,
    );
    heads.set(plan, head);
  }
  return head;
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
  out.words(headOf(plan));
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
