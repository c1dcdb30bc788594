import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCertificates } from '../../testkit/src/tls-certificates.ts';

/** A request the receiver got: headers and the exact body bytes. */
export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert bodies field by field
  readonly body: any;
  readonly at: number;
}

/** How the receiver answers one request: a status, or no answer at all until closed. */
export type Answer = number | 'hang';

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a certificate of a throwaway CA (the
 * control plane trusts it through REPLIX_WEBHOOKS_CA_FILE). It records every request and
 * answers from a script (`answers`, then `fallback`).
 */
export class TestReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly caFile: string;
  answers: Answer[] = [];
  fallback: Answer = 200;
  /** Called with each request as it arrives (before the answer). */
  onRequest: ((request: ReceivedWebhook) => void) | undefined;
  readonly #server: Server;
  readonly #dir: string;
  readonly #hanging = new Set<() => void>();

  private constructor(server: Server, dir: string, caFile: string) {
    this.#server = server;
    this.#dir = dir;
    this.caFile = caFile;
  }

  static async start(): Promise<TestReceiver> {
    const dir = mkdtempSync(join(tmpdir(), 'replix-webhook-receiver-'));
    const certificates = createTestCertificates(dir, undefined);
    const server = createServer({
      cert: readFileSync(certificates.certFile),
      key: readFileSync(certificates.keyFile),
    });
    const receiver = new TestReceiver(server, dir, certificates.caFile);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {}
        const received = {
          path: request.url ?? '',
          headers: request.headers,
          raw,
          body,
          at: Date.now(),
        };
        receiver.received.push(received);
        receiver.onRequest?.(received);
        const answer = receiver.answers.shift() ?? receiver.fallback;
        if (answer === 'hang') {
          receiver.#hanging.add(() => response.destroy());
          return;
        }
        response.writeHead(answer, answer >= 300 && answer < 400 ? { location: '/elsewhere' } : {});
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path = '/hooks'): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** Requests with this event id header. */
  withEventId(eventId: string): ReceivedWebhook[] {
    return this.received.filter((request) => request.headers['x-service-event-id'] === eventId);
  }

  async close(): Promise<void> {
    for (const release of this.#hanging) release();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/**
 * Verifies `X-Service-Signature` the way spec §6 tells a receiver to: an implementation of
 * its own, not the control plane's signing code. True when v1 is the HMAC-SHA256 (keyed with
 * the secret text) of `<t>.<raw body>` and t is within `toleranceSeconds` of now.
 */
export function signatureValid(
  secret: string,
  request: ReceivedWebhook,
  toleranceSeconds = 300,
): boolean {
  const header = String(request.headers['x-service-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const [, t, v1] = match as unknown as [string, string, string];
  if (Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.from(`${t}.${request.raw}`, 'utf8'))
    .digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
