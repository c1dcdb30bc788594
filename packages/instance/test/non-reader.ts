/**
 * A client that asks for an answer and never reads it (issue 26): a raw connection that posts
 * a query, reads only as far as the answer's head, then stops reading, so the answer's bytes
 * pile up in the socket buffers and the instance. Shared by `slow-readers.int.test.ts` and
 * `bench/hostile.ts`, so it imports nothing from Vitest.
 */
import { connect, type Socket } from 'node:net';

export interface NonReader {
  /** The answer's status; 0 when the connection ended before a head arrived. */
  readonly status: number;
  /** The head's Content-Length (0 without one). */
  readonly contentLength: number;
  readonly retryAfter: string | undefined;
  /** The body bytes that came with the head: the whole of a short error answer. */
  readonly bodyStart: string;
  /**
   * Reads on until the connection ends; resolves with every body byte received, so a total
   * short of `contentLength` means the instance cut the connection.
   */
  drain(timeoutMs?: number): Promise<number>;
  /** Closes the connection from this side. */
  close(): void;
}

const HEAD_END = '\r\n\r\n';

/** Posts `text` to `url`'s `/query` with `key`, reads the answer's head, then stops reading. */
export function startNonReader(
  url: string,
  key: string,
  text: string,
  headTimeoutMs = 30_000,
): Promise<NonReader> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let ended = false;
  const endedPromise = new Promise<void>((resolve) => {
    socket.once('close', () => {
      ended = true;
      resolve();
    });
  });
  socket.on('error', () => {
    // A reset is how a cut connection may end: 'close' follows.
  });
  socket.write(
    `POST /query HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  return new Promise<NonReader>((resolve) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), headTimeoutMs);
    let settled = false;
    const done = (status: number, headText: string, bodyStart: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      const header = (name: string) =>
        new RegExp(`^${name}: *([^\\r\\n]*)`, 'im').exec(headText)?.[1];
      let received = bodyStart.length;
      resolve({
        status,
        contentLength: Number(header('content-length') ?? 0),
        retryAfter: header('retry-after'),
        bodyStart: bodyStart.toString('utf8'),
        async drain(timeoutMs = 30_000) {
          if (!ended) {
            socket.on('data', (chunk: Buffer) => {
              received += chunk.length;
            });
            const cut = setTimeout(() => socket.destroy(), timeoutMs);
            socket.resume();
            await endedPromise;
            clearTimeout(cut);
          }
          return received;
        },
        close: () => socket.destroy(),
      });
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const at = head.indexOf(HEAD_END);
      if (at < 0) return;
      const headText = head.subarray(0, at).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1] ?? 0);
      done(status, headText, head.subarray(at + HEAD_END.length));
    };
    socket.on('data', onData);
    void endedPromise.then(() => done(0, '', Buffer.alloc(0)));
  });
}

/** What a crowd of non-readers saw. */
export interface NonReaderOutcomes {
  /** Answers that came (200) and were then left unread. */
  stalled: number;
  /** Of those, the ones the instance cut: fewer bytes arrived than the answer's length. */
  cut: number;
  /** Of those, the ones that arrived whole after all. */
  whole: number;
  /** 429 `too_many_requests` envelopes with `Retry-After`. */
  refused: number;
  /** Anything else, described (at most 10 kept). */
  other: string[];
}

export interface NonReadersOptions {
  readonly url: string;
  readonly key: string;
  readonly text: string;
  readonly clients: number;
  /** Each client asks again until this many milliseconds have passed. */
  readonly forMs: number;
  /** How long a client leaves an answer unread before it reads what is left of it. */
  readonly unreadMs: number;
}

/**
 * `clients` clients each asking for `text` again and again for `forMs`: an answer that comes
 * is left unread for `unreadMs`, then what is left of it is read (short of its length when the
 * instance cut it); a refusal is honoured (its `Retry-After`) before the next ask.
 */
export async function runNonReaders(options: NonReadersOptions): Promise<NonReaderOutcomes> {
  const outcomes: NonReaderOutcomes = { stalled: 0, cut: 0, whole: 0, refused: 0, other: [] };
  const ends = performance.now() + options.forMs;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function client(): Promise<void> {
    while (performance.now() < ends) {
      const reader = await startNonReader(options.url, options.key, options.text);
      if (reader.status === 200) {
        outcomes.stalled++;
        await sleep(options.unreadMs);
        if ((await reader.drain()) < reader.contentLength) outcomes.cut++;
        else outcomes.whole++;
        continue;
      }
      reader.close();
      const retryAfter = Number(reader.retryAfter);
      if (reader.status === 429 && isTooManyRequests(reader.bodyStart) && retryAfter >= 1) {
        outcomes.refused++;
        await sleep(retryAfter * 1000);
      } else {
        if (outcomes.other.length < 10)
          outcomes.other.push(`${reader.status} ${reader.bodyStart.slice(0, 200)}`);
        await sleep(250);
      }
    }
  }
  await Promise.all(Array.from({ length: options.clients }, client));
  return outcomes;
}

function isTooManyRequests(body: string): boolean {
  try {
    return (JSON.parse(body) as { error?: { code?: unknown } }).error?.code === 'too_many_requests';
  } catch {
    return false;
  }
}
