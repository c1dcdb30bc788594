import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One answer of the scripted server: a refusal before any stream (status, Retry-After and the
 * error envelope), a stream that writes its events then ends (or stays open, `open: true`),
 * or a connection destroyed before any answer.
 */
export type ScriptedAnswer =
  | { readonly status: number; readonly code: string; readonly retryAfter?: string }
  | { readonly events: readonly string[]; readonly open?: boolean }
  | { readonly destroy: true };

export interface ProtocolServer {
  readonly url: string;
  /** Each request's `Last-Event-ID`, in order. */
  readonly lastEventIds: (string | undefined)[];
  /** The answers to the next requests, in order; a request past them gets a stream that stays open with nothing in it. */
  answer(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

const ITEMS_SCHEMA = JSON.stringify({
  tables: [
    {
      name: 'items',
      columns: [
        { name: 'id', type: 'int', nullable: false, sourceType: 'int', primaryKey: true },
        { name: 'name', type: 'string', nullable: false, sourceType: 'varchar(40)' },
      ],
      relations: [],
    },
  ],
});

/**
 * A local server speaking the live-query side of the instance API and its transient-error
 * protocol as scripted, for the SDK's unit tests: each `GET /query` gets the next answer
 * (`GET /schema` the schema of the `items` its result events hold).
 */
export async function startProtocolServer(): Promise<ProtocolServer> {
  const script: ScriptedAnswer[] = [];
  const lastEventIds: (string | undefined)[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    if (request.url === '/schema') {
      // What the client reads for exact numbers: the table the result events are of.
      response.writeHead(200, { 'content-type': 'application/json' }).end(ITEMS_SCHEMA);
      return;
    }
    const header = request.headers['last-event-id'];
    lastEventIds.push(typeof header === 'string' ? header : undefined);
    request.resume();
    const answer = script.shift() ?? { events: [], open: true };
    if ('destroy' in answer) {
      request.socket.destroy();
      return;
    }
    if ('status' in answer) {
      const body = JSON.stringify({
        error: { code: answer.code, message: `scripted ${answer.code}` },
      });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
      response.writeHead(answer.status, headers).end(body);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    response.write('retry: 1000\n\n');
    for (const event of answer.events) response.write(event);
    if (answer.open) {
      open.add(response);
      response.on('close', () => open.delete(response));
    } else {
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lastEventIds,
    answer: (...answers) => script.push(...answers),
    close: () =>
      new Promise((resolve) => {
        for (const response of open) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A result event as an instance writes it: `id: <generation>.<boot>` and the envelope. */
export function resultEvent(generation: number, boot: string, names: readonly string[]): string {
  const data = names.map((name, index) => ({ id: index + 1, name }));
  const meta = {
    table: 'items',
    query: {},
    pagination: { count: data.length, total_matched: data.length, has_more: false, limit: 1000 },
    // Different on every evaluation: a resend of the same result differs here only.
    timing_ms: generation / 1000,
    snapshot: { swap_count: generation, age_ms: generation },
    version: 'test',
  };
  return `id: ${generation}.${boot}\ndata: ${JSON.stringify({ data, meta })}\n\n`;
}

/** The protocol's retry event: `retry:` with the delay, then `event: query-retry`. */
export function retryEvent(ms: number, code = 'service_unavailable'): string {
  const data = JSON.stringify({ error: { code, message: `scripted ${code}` } });
  return `retry: ${ms}\nevent: query-retry\ndata: ${data}\n\n`;
}

/** A `query-error` event with the error envelope of `code`. */
export function errorEvent(code: string): string {
  const data = JSON.stringify({ error: { code, message: `scripted ${code}` } });
  return `event: query-error\ndata: ${data}\n\n`;
}
