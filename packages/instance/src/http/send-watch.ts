/**
 * Cuts connections whose sends make no progress: a client that asks for an answer (or a live
 * query's events) and never reads would otherwise keep its bytes in the instance for as long as
 * it stays connected. One timer per thread looks at every watched socket; a socket with bytes
 * waiting that the network has taken none of for `timeoutMs` is destroyed (not ended: an end
 * would wait behind the bytes nobody reads), which frees everything its response held.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A connection cut because its send stalled, for the owner's log line and metric. */
export interface StalledSend {
  /** What was being sent: `query answer`, `live query`. */
  readonly what: string;
  /** The id of the key the client used (never the key itself). */
  readonly keyId: string;
  /** Bytes waiting in the socket's buffer when it was cut. */
  readonly waitingBytes: number;
}

export interface SendWatchOptions {
  /** How long a socket with bytes waiting may go without the network taking any of them. */
  readonly timeoutMs: number;
  /** Called after each connection the watch destroyed. */
  readonly onStalled: (stalled: StalledSend) => void;
}

export interface WatchedSendOptions {
  readonly what: string;
  readonly keyId: string;
  /** Told at each look that found progress: bytes the network took since the watch began. */
  readonly onProgress?: (sentBytes: number) => void;
}

/** A socket being watched; `stop()` once its response is done (idempotent). */
export interface WatchedSend {
  stop(): void;
}

interface Entry {
  readonly socket: Socket;
  readonly options: WatchedSendOptions;
  readonly startSent: number;
  sent: number;
  unwritten: number;
  lastProgressAt: number;
}

/** Looks at the watched sockets a few times per timeout, and at most once a second. */
const LOOKS_PER_TIMEOUT = 5;
const MAX_LOOK_INTERVAL_MS = 1000;

/**
 * Bytes the network took from `socket`, in whole writes: `bytesWritten` counts what is still
 * buffered as written, and `writableLength` is that buffer, the writes libuv is busy with
 * included.
 */
function sentBytes(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}

/**
 * Bytes of the writes in progress that libuv has yet to hand to the kernel. Node exposes it
 * only on the socket's handle; it shows progress inside one big write (a stream's buffered
 * chunks go out as one), which `sentBytes` sees only once the write completes.
 */
function unwrittenBytes(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: unknown } })._handle;
  return typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
}

export class SendWatch {
  readonly #options: SendWatchOptions;
  readonly #intervalMs: number;
  readonly #entries = new Set<Entry>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: SendWatchOptions) {
    if (!(options.timeoutMs > 0)) throw new RangeError('timeoutMs must be above 0.');
    this.#options = options;
    this.#intervalMs = Math.min(
      MAX_LOOK_INTERVAL_MS,
      Math.max(1, Math.floor(options.timeoutMs / LOOKS_PER_TIMEOUT)),
    );
  }

  /** Sockets watched now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Watches `socket` until `stop()`; call it before the response's first byte is written. */
  watch(socket: Socket, options: WatchedSendOptions): WatchedSend {
    const sent = sentBytes(socket);
    const entry: Entry = {
      socket,
      options,
      startSent: sent,
      sent,
      unwritten: unwrittenBytes(socket),
      lastProgressAt: performance.now(),
    };
    this.#entries.add(entry);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.look(), this.#intervalMs);
      this.#timer.unref();
    }
    return { stop: () => this.#remove(entry) };
  }

  /** One look at every watched socket (the timer's; exported for tests that drive time). */
  look(now = performance.now()): void {
    if (this.#entries.size === 0) {
      // Stopped here, not at each removal: a busy thread keeps one timer, not one per answer.
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    for (const entry of this.#entries) {
      const { socket } = entry;
      if (socket.destroyed) {
        this.#remove(entry);
        continue;
      }
      const sent = sentBytes(socket);
      const unwritten = unwrittenBytes(socket);
      if (sent !== entry.sent || unwritten !== entry.unwritten) {
        entry.lastProgressAt = now;
        entry.unwritten = unwritten;
        if (sent !== entry.sent) {
          entry.sent = sent;
          entry.options.onProgress?.(sent - entry.startSent);
        }
      } else if (socket.writableLength === 0) {
        // Nothing waiting (a live query between events): idle, not stalled.
        entry.lastProgressAt = now;
      } else if (now - entry.lastProgressAt >= this.#options.timeoutMs) {
        this.#remove(entry);
        const waitingBytes = socket.writableLength;
        socket.destroy();
        this.#options.onStalled({
          what: entry.options.what,
          keyId: entry.options.keyId,
          waitingBytes,
        });
      }
    }
  }

  #remove(entry: Entry): void {
    this.#entries.delete(entry);
  }

  /** Stops watching everything (the server is closing). */
  close(): void {
    this.#entries.clear();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
