import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, test } from 'vitest';
import { LazyChildLogger } from '../src/http/lazy-child-logger.ts';

function loggerWritingTo(lines: Array<Record<string, unknown>>) {
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  const parent = pino({ level: 'info', base: null, timestamp: false }, sink);
  let made = 0;
  const child = parent.child.bind(parent);
  parent.child = ((...args: Parameters<typeof child>) => {
    made += 1;
    return child(...args);
  }) as typeof parent.child;
  return { parent, made: () => made };
}

test('writes the lines the real child would, with its bindings and its own level', () => {
  const lines: Array<Record<string, unknown>> = [];
  const { parent } = loggerWritingTo(lines);
  const lazy = new LazyChildLogger(parent, { reqId: 'req-1' }, { level: 'warn' });
  const real = parent.child({ reqId: 'req-1' }, { level: 'warn' });
  for (const log of [lazy, real]) {
    log.info('not at warn');
    log.warn({ path: '/query' }, 'slow');
    log.error('failed');
  }
  expect(lines).toHaveLength(4);
  expect(lines.slice(0, 2)).toEqual(lines.slice(2));
  expect(lines[0]).toEqual({ level: 40, reqId: 'req-1', path: '/query', msg: 'slow' });
  expect(lazy.level).toBe('warn');
  expect(lazy.isLevelEnabled('info')).toBe(false);
  expect(lazy.isLevelEnabled('error')).toBe(true);
});

test('makes no pino child until a line of an enabled level is written', () => {
  const lines: Array<Record<string, unknown>> = [];
  const { parent, made } = loggerWritingTo(lines);
  const lazy = new LazyChildLogger(parent, { reqId: 'req-2' }, {});
  lazy.debug('below the level');
  expect(lazy.level).toBe('info');
  expect(made()).toBe(0);
  lazy.info('hello');
  lazy.info('again');
  expect(made()).toBe(1);
  expect(lines).toEqual([
    { level: 30, reqId: 'req-2', msg: 'hello' },
    { level: 30, reqId: 'req-2', msg: 'again' },
  ]);
});

test('a level set on it applies to the lines after', () => {
  const lines: Array<Record<string, unknown>> = [];
  const { parent } = loggerWritingTo(lines);
  const lazy = new LazyChildLogger(parent, { reqId: 'req-3' }, { level: 'warn' });
  lazy.level = 'debug';
  lazy.debug('now written');
  expect(lines).toEqual([{ level: 20, reqId: 'req-3', msg: 'now written' }]);
});
