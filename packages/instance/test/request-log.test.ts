import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { expect, test } from 'vitest';
import { logRequest } from '../src/http/request-log.ts';

async function appLoggingTo(lines: Array<Record<string, unknown>>) {
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  const app = Fastify({
    loggerInstance: pino({ level: 'info' }, sink),
    disableRequestLogging: true,
  });
  app.addHook('onResponse', logRequest);
  app.get('/health/detail', () => ({ status: 'ok' }));
  app.get('/query', () => ({ data: [] }));
  app.get('/broken', () => {
    throw new Error('boom');
  });
  await app.ready();
  return app;
}

test('a request is one info line with method, path, status and duration; never the query string', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const app = await appLoggingTo(lines);
  await app.inject({ method: 'GET', url: '/query?q=orders%20%7B%20id%20%7D&key=secret' });
  await app.close();
  const requestLines = lines.filter((line) => line.path !== undefined);
  expect(requestLines).toHaveLength(1);
  expect(requestLines[0]).toMatchObject({ level: 30, method: 'GET', path: '/query', status: 200 });
  expect(requestLines[0]!.msg).toMatch(/^GET \/query 200 [\d.]+ ms$/);
  expect(JSON.stringify(lines)).not.toContain('secret');
  expect(lines.some((line) => line.msg === 'incoming request')).toBe(false);
});

test('health checks are not logged at info; server errors are logged at warn', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const app = await appLoggingTo(lines);
  await app.inject({ method: 'GET', url: '/health/detail' });
  await app.inject({ method: 'GET', url: '/broken' });
  await app.close();
  expect(lines.some((line) => line.path === '/health/detail')).toBe(false);
  expect(lines.find((line) => line.path === '/broken')).toMatchObject({ level: 40, status: 500 });
});

test("a Kubernetes kubelet's probes are not logged at all, other clients' health checks at debug", async () => {
  const lines: Array<Record<string, unknown>> = [];
  const app = await appLoggingTo(lines);
  app.log.level = 'debug';
  await app.inject({
    method: 'GET',
    url: '/health/detail',
    headers: { 'user-agent': 'kube-probe/1.32' },
  });
  await app.inject({ method: 'GET', url: '/query', headers: { 'user-agent': 'kube-probe/1.32' } });
  await app.inject({ method: 'GET', url: '/health/detail', headers: { 'user-agent': 'curl/8' } });
  await app.close();
  expect(lines.filter((line) => line.path !== undefined)).toEqual([
    expect.objectContaining({ level: 20, path: '/health/detail' }),
  ]);
});
