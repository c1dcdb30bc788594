import { Buffer } from 'node:buffer';
import { connect, type Socket } from 'node:net';
import type { SourceBackend } from './connector.ts';

/** The protocol a server port speaks, as far as its first bytes tell. */
export type WireProtocol = 'mysql' | 'postgres' | 'unknown';

/** PostgreSQL's SSLRequest: a server of that protocol answers it with one byte, S or N. */
const POSTGRES_SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** How long a MySQL-speaking server takes to greet at most before we ask the PostgreSQL way. */
const GREETING_WAIT_MS = 1_000;

/**
 * A MySQL or MariaDB server's first packet: a 3-byte length, sequence 0, then protocol
 * version 10 (the handshake) or 0xff (an error, such as a host that is not allowed).
 */
function isMysqlGreeting(bytes: Buffer): boolean {
  return bytes.length >= 5 && bytes[3] === 0 && (bytes[4] === 0x0a || bytes[4] === 0xff);
}

function isPostgresAnswer(bytes: Buffer): boolean {
  // S or N to the SSLRequest; E, an error, from servers that refuse it outright.
  return bytes.length >= 1 && (bytes[0] === 0x53 || bytes[0] === 0x4e || bytes[0] === 0x45);
}

/**
 * Which protocol the server at host:port speaks, found in at most `timeoutMs`: a MySQL server
 * greets first; a PostgreSQL server answers an SSLRequest with one byte. `askFirst` sends the
 * SSLRequest at once (a PostgreSQL server is expected, and then the check costs one round
 * trip); otherwise only when no greeting came within a second. Nothing logs in. 'unknown' when
 * the port answers neither way or cannot be reached (the real connection then says why).
 */
export function wireProtocolAt(
  host: string,
  port: number,
  options: { readonly askFirst?: boolean; readonly timeoutMs?: number } = {},
): Promise<WireProtocol> {
  return new Promise((resolve) => {
    let settled = false;
    let asked = false;
    let received = Buffer.alloc(0);
    const socket: Socket = connect({ host, port });
    const finish = (protocol: WireProtocol) => {
      if (settled) return;
      settled = true;
      clearTimeout(greetingTimer);
      clearTimeout(overallTimer);
      socket.destroy();
      resolve(protocol);
    };
    const askPostgres = () => {
      if (settled || asked) return;
      asked = true;
      socket.write(POSTGRES_SSL_REQUEST);
    };
    if (options.askFirst) socket.once('connect', askPostgres);
    const greetingTimer = setTimeout(askPostgres, GREETING_WAIT_MS);
    const overallTimer = setTimeout(() => finish('unknown'), options.timeoutMs ?? 3_000);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // A greeting is checked first: it comes whatever was sent, and its first byte (a length)
      // may be an S or an N.
      if (isMysqlGreeting(received)) finish('mysql');
      else if (asked && isPostgresAnswer(received)) finish('postgres');
      else if (received.length >= 5) finish('unknown');
    });
    socket.on('error', () => finish('unknown'));
    socket.on('close', () => finish('unknown'));
  });
}

const PROTOCOL_OF: Partial<Record<SourceBackend, Exclude<WireProtocol, 'unknown'>>> = {
  mysql: 'mysql',
  postgres: 'postgres',
};

const ENGINE: Record<
  Exclude<WireProtocol, 'unknown'>,
  { name: string; backend: string; port: number }
> = {
  mysql: { name: 'MySQL/MariaDB', backend: 'mysql', port: 3306 },
  postgres: { name: 'PostgreSQL', backend: 'postgres', port: 5432 },
};

/**
 * When the server at the port speaks another engine's protocol than `backend`'s, the sentence
 * that says so and what to change; undefined when it speaks `backend`'s or cannot be told.
 */
export async function protocolMismatch(
  backend: SourceBackend,
  host: string,
  port: number,
): Promise<string | undefined> {
  const expected = PROTOCOL_OF[backend];
  if (!expected) return undefined;
  const spoken = await wireProtocolAt(host, port, { askFirst: expected === 'postgres' });
  if (spoken === 'unknown' || spoken === expected) return undefined;
  const found = ENGINE[spoken];
  const wanted = ENGINE[expected];
  return `The server at that port speaks ${found.name}'s protocol, not ${wanted.name}'s: choose the ${found.backend} backend, or the port of the ${wanted.name} server (usually ${wanted.port}).`;
}
