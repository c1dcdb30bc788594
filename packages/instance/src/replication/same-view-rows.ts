import { Buffer } from 'node:buffer';
import { type CompiledTable, forEachRowKeyed, type Generation } from '@replix/engine';

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(b);
  return a === b;
}

/**
 * Whether `generation` serves exactly `rows` for `view`, in the same order (a view re-read
 * unchanged usually comes back in the same order). A refresh that finds them equal swaps
 * nothing, so the ETags of every table stay valid. A false "different" only costs a swap.
 */
export function sameViewRows(
  generation: Generation,
  view: CompiledTable,
  rows: readonly (readonly unknown[])[],
): boolean {
  if (generation.rowCounts()[view.name] !== rows.length) return false;
  let index = 0;
  let same = true;
  forEachRowKeyed(generation, view.name, [], (_key, row) => {
    const fresh = rows[index++];
    if (!same || !fresh) return;
    same = row.length === fresh.length && row.every((value, i) => sameValue(value, fresh[i]));
  });
  return same && index === rows.length;
}
