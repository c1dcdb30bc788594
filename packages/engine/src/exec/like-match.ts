/**
 * Matches split LIKE patterns against text in at most O(text × pattern) steps. Positions are
 * UTF-16 indexes that never fall inside a surrogate pair, so the text is compared code point by
 * code point, as a `u` RegExp would, while literal runs still use the native `startsWith` and
 * `indexOf`.
 */
import { foldCase, startsWithFolded } from './case-fold.ts';
import type { LikePiece, LikeSegment } from './like-segments.ts';

/** A middle segment ready to search for: skip its leading `_`s, then look for its first text. */
interface MiddleSearch {
  readonly skip: number;
  /** The segment's first literal text, or null when it is all `_`. */
  readonly needle: string | null;
  /** The segment's pieces from the needle on. */
  readonly pieces: readonly LikePiece[];
}

/**
 * A test of whether the whole of a text matches `segments` (see `splitLikePattern`). With
 * `caseInsensitive` (ILIKE), the segments' literals are folded already and the text is folded
 * to match; a literal, a prefix and a suffix compare folded characters without building text.
 */
export function compileSegments(
  segments: readonly LikeSegment[],
  caseInsensitive: boolean,
): (text: string) => boolean {
  const prefix = literalOf(segments[0] as LikeSegment);
  const suffix = literalOf(segments[segments.length - 1] as LikeSegment);
  const startsWith = caseInsensitive ? startsWithFolded : startsWithExactly;
  if (segments.length === 1 && prefix !== null) {
    if (!caseInsensitive) return (text) => text === prefix;
    return (text) => text.length === prefix.length && startsWithFolded(text, prefix, 0);
  }
  if (segments.length === 2 && prefix !== null && suffix !== null) {
    return (text) => {
      const suffixStart = text.length - suffix.length;
      return (
        suffixStart >= prefix.length &&
        startsWith(text, prefix, 0) &&
        startsWith(text, suffix, suffixStart) &&
        !splitsPair(text, prefix.length) &&
        !splitsPair(text, suffixStart)
      );
    };
  }
  const matches = compileGeneral(segments);
  return caseInsensitive ? (text) => matches(foldCase(text)) : matches;
}

function startsWithExactly(text: string, literal: string, at: number): boolean {
  return text.startsWith(literal, at);
}

function compileGeneral(segments: readonly LikeSegment[]): (text: string) => boolean {
  const first = segments[0] as LikeSegment;
  if (segments.length === 1) return (text) => matchAt(text, 0, first.pieces) === text.length;
  const last = segments[segments.length - 1] as LikeSegment;
  const middles = segments.slice(1, -1).filter((segment) => segment.pieces.length > 0);
  const onlyMiddle = middles.length === 1 ? literalOf(middles[0] as LikeSegment) : null;
  if (first.pieces.length === 0 && last.pieces.length === 0 && onlyMiddle !== null) {
    return (text) => contains(text, onlyMiddle);
  }
  const searches = middles.map(searchFor);
  return (text) => {
    let at = matchAt(text, 0, first.pieces);
    // Taking each middle segment's leftmost match leaves the most room for the rest: a later
    // match could do no better, since a `%` follows it.
    for (let i = 0; i < searches.length && at >= 0; i++) {
      at = findFrom(text, at, searches[i] as MiddleSearch);
    }
    if (at < 0) return false;
    // Every match of the last segment spans the same code points, so it can only start here.
    const start = retreat(text, text.length, last.codePoints);
    return start >= at && matchAt(text, start, last.pieces) === text.length;
  };
}

/** The segment's text when it has no `_` ('' when it is empty), else null. */
function literalOf(segment: LikeSegment): string | null {
  if (segment.pieces.length === 0) return '';
  const [only] = segment.pieces;
  return segment.pieces.length === 1 && only?.kind === 'text' ? only.text : null;
}

function searchFor(segment: LikeSegment): MiddleSearch {
  const [head, ...rest] = segment.pieces;
  if (head?.kind !== 'any') return { skip: 0, needle: head?.text ?? null, pieces: segment.pieces };
  const [needle] = rest;
  return { skip: head.count, needle: needle?.kind === 'text' ? needle.text : null, pieces: rest };
}

function contains(text: string, needle: string): boolean {
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    if (!splitsPair(text, at) && !splitsPair(text, at + needle.length)) return true;
  }
  return false;
}

/** Where `pieces` end when they start at `at`, or -1 when they do not match there. */
function matchAt(text: string, at: number, pieces: readonly LikePiece[]): number {
  let end = at;
  for (const piece of pieces) {
    if (piece.kind === 'any') {
      end = advance(text, end, piece.count);
      if (end < 0) return -1;
    } else {
      if (!text.startsWith(piece.text, end)) return -1;
      end += piece.text.length;
      if (splitsPair(text, end)) return -1;
    }
  }
  return end;
}

/** The end of the leftmost match of `search` that starts at or after `from`, or -1. */
function findFrom(text: string, from: number, search: MiddleSearch): number {
  const earliest = advance(text, from, search.skip);
  if (earliest < 0 || search.needle === null) return earliest;
  for (let at = text.indexOf(search.needle, earliest); at >= 0; ) {
    if (!splitsPair(text, at)) {
      const end = matchAt(text, at, search.pieces);
      if (end >= 0) return end;
    }
    at = text.indexOf(search.needle, at + 1);
  }
  return -1;
}

/** The index `count` code points after `at`, or -1 past the end. */
function advance(text: string, at: number, count: number): number {
  let index = at;
  for (let i = 0; i < count; i++) {
    if (index >= text.length) return -1;
    index += isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return index;
}

/** The index `count` code points before `at`, or -1 past the start. */
function retreat(text: string, at: number, count: number): number {
  let index = at;
  for (let i = 0; i < count; i++) {
    if (index <= 0) return -1;
    index -= isLow(text.charCodeAt(index - 1)) && isHigh(text.charCodeAt(index - 2)) ? 2 : 1;
  }
  return index;
}

/** Whether `index` falls between the two halves of a surrogate pair. */
function splitsPair(text: string, index: number): boolean {
  return isLow(text.charCodeAt(index)) && isHigh(text.charCodeAt(index - 1));
}

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
