/**
 * The unrouted server (run as `node --input-type=module -e <program> <host> <port>`; Node
 * built-ins only): answers every request 503 with the spec's envelope and the message the
 * namespace's ConfigMap holds for the request's `Host` (a generic one for an unknown host). A
 * `Host` that is not a DNS name never becomes a path.
 */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import process from 'node:process';

const [host, port] = process.argv.slice(1);
const dir = process.env.REPLIX_UNROUTED_DIR;
const fallback = 'The database is not serving queries right now.';
const DNS_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

createServer(async (request, response) => {
  request.resume();
  let message = fallback;
  const name = String(request.headers.host ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '');
  if (name.length <= 253 && DNS_NAME.test(name)) {
    try {
      const text = (await readFile(`${dir}/${name}`, 'utf8')).trim();
      if (text) message = text.slice(0, 1000);
    } catch {}
  }
  const body = JSON.stringify({ error: { code: 'service_unavailable', message } });
  response.writeHead(503, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'retry-after': '5',
  });
  response.end(body);
}).listen(Number(port), host);
