import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy answers instead of forwarding: status, headers and a body. */
export interface Refusal {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body: string;
}

export interface RefusingProxy {
  readonly url: string;
  /** Requests received, refused or forwarded (but `/schema`'s). */
  readonly requests: { method: string; url: string; ifNoneMatch: string | undefined }[];
  /** The answers to give next, one per request, before forwarding again. */
  refuse(...refusals: Refusal[]): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server in front of an instance: it answers the refusals it is given (a 503 as
 * the endpoint router or a loading instance sends it), and forwards every other request. The
 * client's read of `/schema` (for exact numbers) is forwarded, never counted nor refused.
 */
export async function startRefusingProxy(target: string): Promise<RefusingProxy> {
  const pending: Refusal[] = [];
  const requests: RefusingProxy['requests'] = [];
  const forward = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') {
        headers.set(name, value);
      }
    }
    const answer = await fetch(new URL(request.url ?? '/', target), {
      method: request.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.arrayBuffer());
    const out: Record<string, string> = {};
    for (const name of ['content-type', 'etag', 'x-service-version', 'retry-after']) {
      const value = answer.headers.get(name);
      if (value !== null) out[name] = value;
    }
    response.writeHead(answer.status, out).end(body);
  };
  const server = createServer((request, response) => {
    if (request.url === '/schema') {
      forward(request, response).catch(() => response.destroy());
      return;
    }
    requests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      ifNoneMatch: request.headers['if-none-match'],
    });
    const refusal = pending.shift();
    if (refusal) {
      request.resume();
      response
        .writeHead(refusal.status, { 'content-type': 'application/json', ...refusal.headers })
        .end(refusal.body);
      return;
    }
    forward(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    refuse: (...refusals) => pending.push(...refusals),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
