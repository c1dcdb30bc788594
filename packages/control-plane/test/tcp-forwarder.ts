import { connect, createServer, type Socket } from 'node:net';

/** A loopback TCP forwarder to a server, that a test closes to make that server unreachable. */
export interface TcpForwarder {
  readonly port: number;
  /** Stops listening and cuts every forwarded connection: the port then refuses. */
  close(): Promise<void>;
}

export async function startTcpForwarder(targetPort: number): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('No port.');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
