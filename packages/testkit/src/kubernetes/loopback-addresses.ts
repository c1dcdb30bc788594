import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Addresses from a /16 of the loopback network (all of 127.0.0.0/8 reaches this machine on
 * Linux), handed out at random so that two fakes in two test processes rarely pick the same.
 */
export class LoopbackAddresses {
  readonly #prefix: string;
  readonly #used = new Set<string>();

  /** `prefix`: the first two octets, `127.77`. */
  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  take(): string {
    for (;;) {
      // .0 and .255 in the last octet are avoided: some tools treat them as network/broadcast.
      const address = `${this.#prefix}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
      if (this.#used.has(address)) continue;
      this.#used.add(address);
      return address;
    }
  }

  release(address: string): void {
    this.#used.delete(address);
  }
}

/**
 * An address whose `ports` are free: another process on the machine (another test's fake)
 * may hold one of them on an address it drew too. An address found busy stays taken.
 */
export async function claimAddress(
  addresses: Pick<LoopbackAddresses, 'take'>,
  ports: readonly number[],
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const address = addresses.take();
    const free = await Promise.all(ports.map((port) => isFree(address, port)));
    if (free.every(Boolean) || attempt >= 20) return address;
  }
}

function isFree(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, address, () => server.close(() => resolve(true)));
  });
}
