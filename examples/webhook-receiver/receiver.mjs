// A minimal Replix webhook receiver: Node.js only, no dependencies.
//
//   WEBHOOK_SECRET=<the secret shown when the subscription was created> node receiver.mjs
//
// It listens on PORT (default 8787; 0 picks a free one) and prints one JSON line per event it
// accepts. Put it behind HTTPS (a reverse proxy, or https.createServer with your certificate):
// the control plane only sends to https:// URLs on public addresses.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** Deliveries signed further than this from now are refused (replay protection). */
export const TOLERANCE_SECONDS = 5 * 60;

/**
 * Checks `X-Service-Signature: t=<unix seconds>,v1=<hex>` against the exact bytes received:
 * v1 must be HMAC-SHA256(secret, `${t}.${rawBody}`) and t within the tolerance of now.
 * Returns null when valid, or why not.
 */
export function verifySignature(secret, header, rawBody, nowSeconds = Date.now() / 1000) {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return 'missing or malformed X-Service-Signature';
  const [, t, v1] = match;
  if (Math.abs(nowSeconds - Number(t)) > TOLERANCE_SECONDS) return 'timestamp outside tolerance';
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  const given = Buffer.from(v1, 'hex');
  // Constant time: how much of a guess matches leaks nothing.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return 'signature mismatch';
  }
  return null;
}

/**
 * Event ids already handled: retries repeat the id, so handle each event once. (In memory
 * here; a real receiver keeps them with the work it does.)
 */
const seen = new Set();

export function createReceiver(secret, onEvent = (event) => console.log(JSON.stringify(event))) {
  return createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size > 1024 * 1024) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      // Verify the raw bytes, before parsing: a re-serialized object would not match.
      const raw = Buffer.concat(chunks);
      const problem = verifySignature(secret, request.headers['x-service-signature'], raw);
      if (problem) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: problem }));
        return;
      }
      const id = request.headers['x-service-event-id'];
      if (!seen.has(id)) {
        seen.add(id);
        onEvent({ id, type: request.headers['x-service-event'], payload: JSON.parse(raw) });
      }
      // Answer 2xx quickly (within 10 s); do slow work after answering.
      response.writeHead(204).end();
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!/^[0-9a-f]{64}$/.test(secret ?? '')) {
    console.error('Set WEBHOOK_SECRET to the 64-hex-digit secret of the subscription.');
    process.exit(1);
  }
  const server = createReceiver(secret);
  server.listen(Number(process.env.PORT ?? 8787), process.env.HOST ?? '127.0.0.1', () => {
    const { port } = server.address();
    console.log(JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${port}/` }));
  });
}
