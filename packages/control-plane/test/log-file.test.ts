import { describe, expect, it } from 'vitest';
import { parseLogLine } from '../src/adapters/drivers/log-file.ts';

describe('instance log lines as people read them', () => {
  const now = 1_900_000_000_000;

  it('reads a pino line with its own time and message, and the cause of an error', () => {
    expect(parseLogLine('{"level":30,"time":1764079387120,"msg":"snapshot loaded"}', now)).toEqual({
      message: 'snapshot loaded',
      timestamp: 1764079387120,
    });
    expect(
      parseLogLine('{"level":50,"time":5,"msg":"poll failed","err":{"message":"timeout"}}', now),
    ).toEqual({ message: 'poll failed: timeout', timestamp: 5 });
  });

  it('reads the ready line as words, at the time the instance became ready', () => {
    const line = JSON.stringify({
      event: 'ready',
      url: 'http://127.0.0.1:35423',
      apiKey: 'rxk_0123456789abcdef.secret',
      time: 1764079387120,
    });
    expect(parseLogLine(line, now)).toEqual({
      message: 'ready at http://127.0.0.1:35423',
      timestamp: 1764079387120,
    });
  });

  it('takes anything else as it is, at the time it was read', () => {
    expect(parseLogLine('Error: something', now)).toEqual({
      message: 'Error: something',
      timestamp: now,
    });
    expect(parseLogLine('{"event":"other"}', now)).toEqual({
      message: '{"event":"other"}',
      timestamp: now,
    });
  });
});
