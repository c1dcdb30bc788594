import process from 'node:process';
import { Writable } from 'node:stream';
import { serviceLogger } from '@replix/runtime/logger';
import type { Logger } from 'pino';

const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/**
 * One log record as a person reads it in a terminal: `replix: warn: <message>: <error message>`,
 * never the JSON record or a stack trace.
 */
export function terminalLine(record: string): string {
  let parsed: { level?: number; msg?: string; err?: { message?: string } };
  try {
    parsed = JSON.parse(record);
  } catch {
    return `replix: ${record.trim()}\n`;
  }
  const level = LEVEL_NAMES[parsed.level ?? 30] ?? 'info';
  const because = parsed.err?.message ? `: ${parsed.err.message}` : '';
  return `replix: ${level}: ${parsed.msg ?? ''}${because}\n`;
}

/** A logger for commands that own the terminal (`replix start`): readable lines on stderr. */
export function terminalLogger(level: string): Logger {
  const lines = new Writable({
    write(chunk, _encoding, callback) {
      for (const record of String(chunk).split('\n').filter(Boolean))
        process.stderr.write(terminalLine(record));
      callback();
    },
  });
  return serviceLogger('replix-control-plane', level, lines);
}
