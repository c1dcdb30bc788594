import { expect, test } from 'vitest';
import { terminalLine } from '../src/terminal-log.ts';

test('a warning with an error reads as one line: level, message and the error message, no stack', () => {
  const record = JSON.stringify({
    level: 40,
    time: 1,
    service: 'replix-control-plane',
    msg: 'deploy failed',
    err: { type: 'Error', message: 'the source refused the login', stack: 'Error: …\n    at x' },
  });
  expect(terminalLine(record)).toBe('replix: warn: deploy failed: the source refused the login\n');
});

test('a record without an error is its level and message; a line that is not JSON passes through', () => {
  expect(terminalLine(JSON.stringify({ level: 50, msg: 'store unreachable' }))).toBe(
    'replix: error: store unreachable\n',
  );
  expect(terminalLine('plain text\n')).toBe('replix: plain text\n');
});
