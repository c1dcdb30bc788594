/**
 * Throughput baseline 2: the ceiling of Node's HTTP stack on this machine. A bare `node:http`
 * server answering every request with the same precomputed JSON body of exactly `--bytes`
 * bytes, so the only work left is HTTP itself at the response size Replix produces.
 *
 *   node bench/lib/fixed-body-server.ts --bytes 1234 --port 0
 *
 * Prints `{"event":"ready","url":"http://127.0.0.1:PORT"}` on stdout once listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { exitWithParent } from './exit-with-parent.ts';

/** Valid JSON of exactly `bytes` bytes (ASCII): an object padded with a string when it fits. */
function fixedJsonBody(bytes: number): Buffer {
  if (!Number.isInteger(bytes) || bytes < 1) throw new Error(`--bytes must be >= 1, not ${bytes}`);
  const empty = '{"pad":""}';
  if (bytes >= empty.length) return Buffer.from(`{"pad":"${'x'.repeat(bytes - empty.length)}"}`);
  if (bytes >= 2) return Buffer.from(`"${'x'.repeat(bytes - 2)}"`);
  return Buffer.from('0');
}

const { values } = parseArgs({
  options: { bytes: { type: 'string' }, port: { type: 'string', default: '0' } },
});
const body = fixedJsonBody(Number(values.bytes));
const headers = { 'content-type': 'application/json', 'content-length': body.length };
const server = createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});
const shutdown = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
exitWithParent(shutdown);
server.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ event: 'ready', url: `http://127.0.0.1:${port}` })}\n`);
});
