/** One Server-Sent Event as a client sees it (comments and `retry:` left out). */
export interface ServerSentEvent {
  readonly id: string | undefined;
  /** `message` when the event names none. */
  readonly event: string;
  readonly data: string;
}

/**
 * Reads the events of a `text/event-stream` response as they arrive: `next` waits for the
 * next one (null after `ms` without one, or when the stream has ended).
 */
export class EventStreamReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #events: ServerSentEvent[] = [];
  #buffer = '';
  #pending: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | undefined;
  ended = false;
  /** Comment lines seen (heartbeats). */
  comments = 0;

  constructor(response: Response) {
    if (!response.body) throw new Error('the response has no body');
    this.#reader = response.body.getReader();
  }

  async next(ms = 10_000): Promise<ServerSentEvent | null> {
    const deadline = Date.now() + ms;
    while (this.#events.length === 0 && !this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      this.#pending ??= this.#reader.read();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const result = await Promise.race([
        this.#pending,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), left);
        }),
      ]);
      clearTimeout(timer);
      if (result === 'timeout') return null;
      this.#pending = undefined;
      if (result.done) this.ended = true;
      else this.#take(this.#decoder.decode(result.value, { stream: true }));
    }
    return this.#events.shift() ?? null;
  }

  /** Stops reading; the server sees the connection close. */
  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }

  #take(text: string): void {
    this.#buffer += text;
    for (;;) {
      const blank = /\r?\n\r?\n/.exec(this.#buffer);
      if (!blank) return;
      const block = this.#buffer.slice(0, blank.index);
      this.#buffer = this.#buffer.slice(blank.index + blank[0].length);
      let id: string | undefined;
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) {
          this.comments += 1;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length > 0) this.#events.push({ id, event, data: data.join('\n') });
    }
  }
}
