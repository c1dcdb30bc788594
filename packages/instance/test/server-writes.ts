/**
 * Counts the writes an in-process HTTP server makes on its connections: each `_write` or
 * `_writev` of a server socket is one write request to libuv, which it makes as one syscall
 * when the kernel takes it all (a small answer on loopback always is). Client sockets (fetch's,
 * a raw `net` client's) have no `server` and are not counted.
 */
import { connect, Socket } from 'node:net';

type WriteMethod = (this: Socket, ...args: unknown[]) => void;

export interface ServerWriteCounter {
  /** Writes of server sockets since the counter started. */
  readonly count: number;
  /** Puts the socket methods back. */
  stop(): void;
}

export function countServerWrites(): ServerWriteCounter {
  const prototype = Socket.prototype as unknown as Record<'_write' | '_writev', WriteMethod>;
  const originals = { _write: prototype._write, _writev: prototype._writev };
  let count = 0;
  for (const name of ['_write', '_writev'] as const) {
    const original = originals[name];
    prototype[name] = function counted(this: Socket, ...args: unknown[]) {
      if ((this as { server?: unknown }).server) count++;
      return original.apply(this, args);
    };
  }
  return {
    get count() {
      return count;
    },
    stop() {
      Object.assign(prototype, originals);
    },
  };
}

/** One HTTP/1.1 exchange over a fresh connection: the response's head and body as text. */
export function rawExchange(url: string, request: string): Promise<{ head: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let received = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.destroy();
      resolve({ head, body: received.subarray(end + 4, end + 4 + length).toString('utf8') });
    });
    socket.on('error', reject);
  });
}
