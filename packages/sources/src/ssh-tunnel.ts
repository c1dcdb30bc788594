import { createServer, type Server, type Socket } from 'node:net';
import type ssh2 from 'ssh2';
import type { ConnectConfig } from 'ssh2';
import { SourceError } from './errors.ts';

/**
 * ssh2, loaded by the first tunnel: most sources have none, and loading it costs every process
 * some 17 MB (its poly1305 is WebAssembly with a 16 MB memory). It is CommonJS: its default
 * export is the one import Node's ESM loader always resolves.
 */
async function loadSsh2(): Promise<typeof ssh2> {
  return (await import('ssh2')).default;
}

/** The SSH server (bastion) to tunnel through, and who logs in to it with which key. */
export interface SshTunnelOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** An OpenSSH or PEM private key, unencrypted. */
  readonly privateKey: string;
  /** Milliseconds to wait for the SSH handshake (default 10 s). */
  readonly readyTimeout?: number | undefined;
}

/** Where the tunnel leads, as the SSH server sees it (often a private address). */
export interface SshTunnelTarget {
  readonly host: string;
  readonly port: number;
}

/** A local end of the tunnel: connect to `host:port` to reach the target. */
export interface SshTunnel {
  readonly host: string;
  readonly port: number;
  /** Closes the listener, every forwarded connection and the SSH session. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The tunnel could not be opened or broke: `source_auth_failed` when the SSH server refused
 * the key, `source_unreachable` otherwise. Messages name neither host nor user.
 */
export class SshTunnelError extends SourceError {
  constructor(code: 'source_unreachable' | 'source_auth_failed', message: string) {
    super(code, message);
    this.name = 'SshTunnelError';
  }
}

function tunnelError(error: unknown): SshTunnelError {
  const level = (error as { level?: unknown }).level;
  if (level === 'client-authentication') {
    return new SshTunnelError(
      'source_auth_failed',
      'The SSH server refused the tunnel user or private key.',
    );
  }
  if (level === 'client-timeout') {
    return new SshTunnelError('source_unreachable', 'The SSH server did not answer in time.');
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return new SshTunnelError(
      'source_unreachable',
      `Could not connect to the SSH server (${code}).`,
    );
  }
  if (
    error instanceof Error &&
    /private key|privateKey|Unsupported key format/i.test(error.message)
  ) {
    return new SshTunnelError('source_auth_failed', 'The SSH private key could not be read.');
  }
  return new SshTunnelError('source_unreachable', 'The SSH tunnel could not be opened.');
}

async function connect(options: SshTunnelOptions): Promise<ssh2.Client> {
  const { Client } = await loadSsh2();
  return new Promise((resolve, reject) => {
    const client = new Client();
    const config: ConnectConfig = {
      host: options.host,
      port: options.port,
      username: options.user,
      privateKey: options.privateKey,
      readyTimeout: options.readyTimeout ?? 10_000,
      keepaliveInterval: 15_000,
    };
    const fail = (error: unknown) => {
      client.end();
      reject(tunnelError(error));
    };
    client.once('ready', () => {
      client.off('error', fail);
      // A later failure ends the session; forwarded sockets see it as a closed connection.
      client.on('error', () => {});
      resolve(client);
    });
    client.once('error', fail);
    try {
      client.connect(config);
    } catch (error) {
      // ssh2 throws synchronously on a key it cannot parse.
      fail(error);
    }
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/**
 * Opens an SSH session and a local TCP listener on 127.0.0.1 (a free port); each connection to
 * it is forwarded through the session to `target` (`direct-tcpip`, like `ssh -L`). The SSH
 * server's host key is not pinned: the session is encrypted, but a machine posing as the
 * bastion is not detected (docs/control-plane/connections.md).
 */
export async function openSshTunnel(
  options: SshTunnelOptions,
  target: SshTunnelTarget,
): Promise<SshTunnel> {
  const client = await connect(options);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    client.forwardOut(
      '127.0.0.1',
      socket.remotePort ?? 0,
      target.host,
      target.port,
      (error, stream) => {
        if (error) {
          socket.destroy();
          return;
        }
        stream.on('error', () => socket.destroy());
        socket.on('close', () => stream.destroy());
        stream.on('close', () => socket.destroy());
        socket.pipe(stream).pipe(socket);
      },
    );
  });
  let port: number;
  try {
    port = await listen(server);
  } catch (error) {
    client.end();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    host: '127.0.0.1',
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        client.end();
      });
      return closed;
    },
  };
}
