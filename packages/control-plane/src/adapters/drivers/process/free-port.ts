import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a restart waits for its previous port: a killed process's threads may still be exiting. */
const PREFERRED_PORT_WAIT_MS = 3000;
const RETRY_MS = 100;

/** Whether a listener without `reusePort` could take `port` on 127.0.0.1 now: nothing holds it. */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

/**
 * Whether `port` on 127.0.0.1 is free now or becomes free within a few seconds (the kernel
 * releases a killed process's sockets only when its last thread has exited, a moment after it
 * stops looking alive). Another process may still take it before the instance binds it: the
 * instance then exits with EADDRINUSE and the driver starts it on port 0.
 */
export async function portFreesUp(port: number): Promise<boolean> {
  const deadline = Date.now() + PREFERRED_PORT_WAIT_MS;
  for (;;) {
    if (await canListen(port)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(RETRY_MS);
  }
}
