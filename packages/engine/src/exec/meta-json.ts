import type { QueryResult } from './execute.ts';
import type { JsonWriter } from './json-writer.ts';
import type { QueryPlan } from './plan.ts';

/** What identifies the snapshot a response was served from (`meta.snapshot`, `meta.version`). */
export interface ResponseMeta {
  readonly version: string;
  readonly swapCount: number;
  readonly ageMs: number;
}

const ascii = (text: string) => Buffer.from(text, 'latin1');
const TABLE = ascii(',"meta":{"table":');
const QUERY = ascii(',"query":');
const COUNT = ascii(',"pagination":{"count":');
const TOTAL = ascii(',"total_matched":');
const HAS_MORE = ascii(',"has_more":');
const LIMIT = ascii(',"limit":');
const CURSOR = ascii(',"next_cursor":');
const TIMING = ascii('},"timing_ms":');
const SWAPS = ascii(',"snapshot":{"swap_count":');
const AGE = ascii(',"age_ms":');
const VERSION = ascii('},"version":');
const END = ascii('}}');
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

/** The JSON of the few texts every answer repeats (table names, the version), made once. */
const quoted = new Map<string, Buffer>();
const MAX_QUOTED = 1024;

function quotedBytes(text: string): Buffer {
  let bytes = quoted.get(text);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(text), 'utf8');
    if (quoted.size >= MAX_QUOTED) quoted.clear();
    quoted.set(text, bytes);
  }
  return bytes;
}

/**
 * Writes the success envelope's `meta` (docs/instance-api.md) after `data`, and closes the
 * envelope: fixed texts as bytes made once, numbers as digits, `meta.query` as the plan made it.
 */
export function writeMeta(
  out: JsonWriter,
  plan: QueryPlan,
  result: QueryResult,
  timingMs: number,
  meta: ResponseMeta,
): void {
  out.bytes(TABLE);
  out.bytes(quotedBytes(plan.table.name));
  out.bytes(QUERY);
  out.write(plan.echoJson);
  out.bytes(COUNT);
  out.number(result.count);
  out.bytes(TOTAL);
  out.number(result.totalMatched);
  out.bytes(HAS_MORE);
  out.bytes(result.hasMore ? TRUE : FALSE);
  out.bytes(LIMIT);
  if (result.limit === null) out.bytes(NULL);
  else out.number(result.limit);
  if (result.nextCursor !== undefined) {
    out.bytes(CURSOR);
    out.write(JSON.stringify(result.nextCursor));
  }
  out.bytes(TIMING);
  out.number(timingMs);
  out.bytes(SWAPS);
  out.number(meta.swapCount);
  out.bytes(AGE);
  out.number(Math.round(meta.ageMs));
  out.bytes(VERSION);
  out.bytes(quotedBytes(meta.version));
  out.bytes(END);
}
