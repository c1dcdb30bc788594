/**
 * Throughput baseline for bench/http-path.ts: a Fastify app with one route answering every
 * request with the same precomputed JSON body of exactly `--bytes` bytes. It shows what Fastify
 * itself costs above bare `node:http` (fixed-body-server.ts) at Replix's response size.
 *
 *   node bench/lib/fastify-fixed-server.ts --bytes 1234 --port 0
 *
 * Prints `{"event":"ready","url":"http://127.0.0.1:PORT"}` on stdout once listening.
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { exitWithParent } from './exit-with-parent.ts';

const { values } = parseArgs({
  options: { bytes: { type: 'string' }, port: { type: 'string', default: '0' } },
});
const bytes = Number(values.bytes);
if (!Number.isInteger(bytes) || bytes < 10) throw new Error(`--bytes must be >= 10, not ${bytes}`);
const body = Buffer.from(`{"pad":"${'x'.repeat(bytes - 10)}"}`);
const app = Fastify({ logger: false });
app.get('/', (_request, reply) => {
  reply.header('content-type', 'application/json').send(body);
});
const shutdown = () => {
  app.close().then(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
exitWithParent(shutdown);
const address = await app.listen({ port: Number(values.port), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ event: 'ready', url: address })}\n`);
