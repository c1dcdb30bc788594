import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a restart waits for its previous port: a killed process's threads may still be exiting. */
const PREFERRED_PORT_WAIT_MS = 3000;
const RETRY_MS = 100;

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : null;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A port on 127.0.0.1 that is free right now: `preferred` when it is or becomes free within a
 * few seconds (a restarted instance keeps its address; the kernel releases a killed process's
 * sockets only when its last thread has exited, a moment after it stops looking alive), else
 * one the kernel picks. Another process may still take it before the instance binds; the driver
 * retries on EADDRINUSE.
 */
export async function freePort(preferred?: number | null): Promise<number> {
  if (preferred) {
    const deadline = Date.now() + PREFERRED_PORT_WAIT_MS;
    for (;;) {
      const bound = await tryListen(preferred);
      if (bound !== null) return bound;
      if (Date.now() >= deadline) break;
      await sleep(RETRY_MS);
    }
  }
  const bound = await tryListen(0);
  if (bound === null) throw new Error('No free port on 127.0.0.1.');
  return bound;
}
