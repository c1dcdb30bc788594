import { Buffer } from 'node:buffer';
/**
 * The `readLogs` token of the Kubernetes driver. Logs come from several sources (each pod's
 * log, and the instance's events as infra lines), so the token holds, per source, the
 * timestamp of the last line returned and how many lines had exactly that timestamp (lines
 * can share one). The next read asks each source for its lines since that time (the API
 * rounds to whole seconds, so it asks a little more) and drops what the token has seen. It is
 * base64url JSON; a token that does not decode is treated as none.
 */
export type LogPositions = Record<string, { readonly time: string; readonly seen: number }>;

/** One line from one source, its timestamp as the API gave it (RFC 3339, nanoseconds). */
export interface SourcedLine {
  readonly source: string;
  readonly time: string;
  readonly message: string;
}

const MAX_TOKEN_CHARS = 16_384;

export function encodeLogToken(positions: LogPositions): string {
  return Buffer.from(JSON.stringify(positions), 'utf8').toString('base64url');
}

export function decodeLogToken(token: string | undefined): LogPositions | null {
  if (token === undefined || token.length > MAX_TOKEN_CHARS) return null;
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const positions: LogPositions = {};
    for (const [source, position] of Object.entries(value)) {
      const { time, seen } = (position ?? {}) as { time?: unknown; seen?: unknown };
      if (typeof time !== 'string' || Number.isNaN(Date.parse(time))) continue;
      if (!Number.isInteger(seen) || (seen as number) < 0) continue;
      positions[source] = { time, seen: seen as number };
    }
    return positions;
  } catch {
    return null;
  }
}

/**
 * Compares RFC 3339 timestamps to the nanosecond: Date.parse stops at milliseconds, so the
 * fraction is compared as text once both are padded.
 */
export function compareTimes(a: string, b: string): number {
  const [aSeconds, aFraction] = splitTime(a);
  const [bSeconds, bFraction] = splitTime(b);
  if (aSeconds !== bSeconds) return aSeconds - bSeconds;
  return aFraction < bFraction ? -1 : aFraction > bFraction ? 1 : 0;
}

function splitTime(time: string): [number, string] {
  const match = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(time);
  const whole = match ? `${match[1]}${match[3]}` : time;
  return [Math.floor(Date.parse(whole) / 1000), (match?.[2] ?? '').padEnd(9, '0')];
}

/** Splits a log read with `timestamps=true` into lines; lines without a timestamp are dropped. */
export function parseTimestampedLog(source: string, text: string): SourcedLine[] {
  const lines: SourcedLine[] = [];
  for (const raw of text.split('\n')) {
    const space = raw.indexOf(' ');
    if (space <= 0) continue;
    const time = raw.slice(0, space);
    if (Number.isNaN(Date.parse(time))) continue;
    lines.push({ source, time, message: raw.slice(space + 1).replace(/\r$/, '') });
  }
  return lines;
}

/** The lines of one source after its position (the token's), in order. */
export function linesAfter(
  lines: readonly SourcedLine[],
  position: { time: string; seen: number } | undefined,
): SourcedLine[] {
  if (!position) return [...lines];
  let sameTime = 0;
  return lines.filter((line) => {
    const order = compareTimes(line.time, position.time);
    if (order < 0) return false;
    if (order > 0) return true;
    sameTime += 1;
    return sameTime > position.seen;
  });
}

/** The positions after `returned` lines were handed out, starting from `positions`. */
export function advance(positions: LogPositions, returned: readonly SourcedLine[]): LogPositions {
  const next: Record<string, { time: string; seen: number }> = { ...positions };
  for (const line of returned) {
    const current = next[line.source];
    if (current && compareTimes(line.time, current.time) === 0) {
      next[line.source] = { time: current.time, seen: current.seen + 1 };
    } else {
      next[line.source] = { time: line.time, seen: 1 };
    }
  }
  return next;
}

/** Whole seconds to ask the API for, to be sure to get every line after `time`. */
export function sinceSecondsOf(time: string, now = Date.now()): number {
  return Math.max(1, Math.ceil((now - Date.parse(time)) / 1000) + 1);
}
