import { Buffer } from 'node:buffer';
import { open, stat } from 'node:fs/promises';
import type { LogChunk } from './driver.ts';

/** Lines returned by a first read (no token). */
export const TAIL_LINES = 200;
/** At most this much is read per call, so one poll never loads a huge log. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * One log line: pino JSON gives its own `time` and `msg`; `replix serve`'s ready line
 * (`{"event":"ready","url":…,"time":…}`) reads "ready at <url>" at the time it became ready;
 * anything else is taken as it is, at `now` (when it was read: it carries no time of its own).
 */
export function parseLogLine(line: string, now: number): { message: string; timestamp: number } {
  if (line.startsWith('{')) {
    try {
      const parsed = JSON.parse(line) as {
        time?: unknown;
        msg?: unknown;
        err?: unknown;
        event?: unknown;
        url?: unknown;
      };
      const timestamp = typeof parsed.time === 'number' ? parsed.time : now;
      if (typeof parsed.msg === 'string') {
        const cause = (parsed.err as { message?: unknown } | undefined)?.message;
        return {
          message: typeof cause === 'string' ? `${parsed.msg}: ${cause}` : parsed.msg,
          timestamp,
        };
      }
      // Never the keys a standalone serve may print: only the address.
      if (parsed.event === 'ready' && typeof parsed.url === 'string') {
        return { message: `ready at ${parsed.url}`, timestamp };
      }
    } catch {}
  }
  return { message: line, timestamp: now };
}

async function readRange(path: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(end - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Reads complete lines of an append-only log from byte offset `token` on; without a token, the
 * last TAIL_LINES lines. The next token is the offset after the last complete line, so a line
 * still being written is returned whole by the next call. A token past the end (the log was
 * replaced) starts over from the beginning.
 */
export async function readLogChunk(path: string, token: string | undefined): Promise<LogChunk> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return { lines: [], nextToken: '0' };
  }
  const parsedToken = token === undefined ? Number.NaN : Number(token);
  const tail = !Number.isSafeInteger(parsedToken) || parsedToken < 0;
  let start = tail ? Math.max(0, size - MAX_READ_BYTES) : parsedToken;
  if (start > size) start = 0;
  const end = Math.min(size, start + MAX_READ_BYTES);
  const bytes = await readRange(path, start, end);
  const lastNewline = bytes.lastIndexOf(0x0a);
  if (lastNewline < 0) return { lines: [], nextToken: String(start) };
  let text = bytes.subarray(0, lastNewline).toString('utf8');
  // A tail read may begin mid-line; drop that partial first line.
  if (tail && start > 0) text = text.slice(text.indexOf('\n') + 1);
  let lines = text.split('\n').filter((line) => line.length > 0);
  if (tail) lines = lines.slice(-TAIL_LINES);
  const now = Date.now();
  return {
    lines: lines.map((line) => parseLogLine(line, now)),
    nextToken: String(start + lastNewline + 1),
  };
}

/** The last `count` lines of a log as text (for error messages when an instance fails to start). */
export async function lastLogLines(path: string, count: number): Promise<string[]> {
  const { lines } = await readLogChunk(path, undefined);
  return lines.slice(-count).map((line) => line.message);
}
