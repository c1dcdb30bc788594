import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SendWatch, type StalledSend } from '../src/http/send-watch.ts';

const TIMEOUT_MS = 60_000;
/**
 * 24 MiB in 64 KiB writes, as a piped answer goes: more than loopback's socket buffers take,
 * so some of it waits in the sender (progress shows as whole writes complete).
 */
const CHUNK = Buffer.alloc(64 * 1024, 97);
const CHUNKS = 384;
const BIG_BYTES = CHUNK.length * CHUNKS;

function writeBig(socket: Socket): void {
  for (let i = 0; i < CHUNKS; i++) socket.write(CHUNK);
}

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) server.close();
});

/** A connected pair: the server's side (which sends) and a client's side, paused. */
async function pair(): Promise<{ sender: Socket; reader: Socket }> {
  const server = createServer();
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  const accepted = once(server, 'connection');
  const reader = connect(address.port, '127.0.0.1');
  reader.pause();
  const [sender] = (await accepted) as [Socket];
  sockets.push(sender, reader);
  return { sender, reader };
}

/** Waits until the network has taken what it will of a paused reader's bytes. */
async function untilSettled(socket: Socket): Promise<void> {
  let last = -1;
  for (;;) {
    const sent = socket.bytesWritten - socket.writableLength;
    if (sent === last) return;
    last = sent;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Reads at least `bytes` from a paused socket, then pauses it again. */
async function readSome(reader: Socket, bytes: number): Promise<void> {
  let read = 0;
  reader.resume();
  while (read < bytes) {
    const [chunk] = (await once(reader, 'data')) as [Buffer];
    read += chunk.length;
  }
  reader.pause();
}

function watchWith(stalled: StalledSend[]): SendWatch {
  return new SendWatch({ timeoutMs: TIMEOUT_MS, onStalled: (send) => stalled.push(send) });
}

describe('SendWatch', () => {
  it('destroys a socket whose waiting bytes go untaken for the timeout, and says so once', async () => {
    const { sender } = await pair();
    const stalled: StalledSend[] = [];
    const watch = watchWith(stalled);
    writeBig(sender);
    await untilSettled(sender);
    const before = performance.now();
    watch.watch(sender, { what: 'query answer', keyId: 'k1' });
    const now = performance.now();
    watch.look(now);
    watch.look(before + TIMEOUT_MS - 1);
    expect(sender.destroyed).toBe(false);
    watch.look(now + TIMEOUT_MS);
    expect(sender.destroyed).toBe(true);
    expect(stalled).toHaveLength(1);
    expect(stalled[0]).toMatchObject({ what: 'query answer', keyId: 'k1' });
    expect(stalled[0]!.waitingBytes).toBeGreaterThan(0);
    expect(watch.size).toBe(0);
    watch.look(now + 2 * TIMEOUT_MS);
    expect(stalled).toHaveLength(1);
    watch.close();
  });

  it('keeps a socket whose reader reads, however slowly, and reports the bytes sent', async () => {
    const { sender, reader } = await pair();
    const stalled: StalledSend[] = [];
    const progress: number[] = [];
    const watch = watchWith(stalled);
    watch.watch(sender, {
      what: 'query answer',
      keyId: 'k1',
      onProgress: (sent) => progress.push(sent),
    });
    writeBig(sender);
    await untilSettled(sender);
    let now = performance.now();
    watch.look(now);
    for (let step = 0; step < 3; step++) {
      // The reader takes some (4 MiB) between two looks a whole timeout apart.
      await readSome(reader, 4 * 1024 * 1024);
      await untilSettled(sender);
      now += TIMEOUT_MS;
      watch.look(now);
      expect(sender.destroyed).toBe(false);
    }
    expect(stalled).toEqual([]);
    // Sent bytes show as whole writes complete (a stream's buffered chunks go out as one).
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.at(-1)).toBeGreaterThan(0);
    expect(progress.at(-1)).toBeLessThanOrEqual(BIG_BYTES);
    watch.close();
  });

  it('never cuts a socket with nothing waiting, nor one no longer watched', async () => {
    const idle = await pair();
    const stalled: StalledSend[] = [];
    const watch = watchWith(stalled);
    watch.watch(idle.sender, { what: 'live query', keyId: 'k2' });
    const now = performance.now();
    watch.look(now);
    watch.look(now + 10 * TIMEOUT_MS);
    expect(idle.sender.destroyed).toBe(false);

    const stopped = await pair();
    const watched = watch.watch(stopped.sender, { what: 'query answer', keyId: 'k3' });
    writeBig(stopped.sender);
    await untilSettled(stopped.sender);
    watched.stop();
    watched.stop();
    watch.look(now + 20 * TIMEOUT_MS);
    expect(stopped.sender.destroyed).toBe(false);
    expect(stalled).toEqual([]);
    expect(watch.size).toBe(1);
    watch.close();
    expect(watch.size).toBe(0);
  });

  it('forgets a socket destroyed by someone else', async () => {
    const { sender } = await pair();
    const watch = watchWith([]);
    watch.watch(sender, { what: 'query answer', keyId: 'k1' });
    sender.destroy();
    watch.look();
    expect(watch.size).toBe(0);
    watch.close();
  });

  it('refuses a timeout that is not above 0', () => {
    expect(() => new SendWatch({ timeoutMs: 0, onStalled: () => {} })).toThrow(RangeError);
  });
});
