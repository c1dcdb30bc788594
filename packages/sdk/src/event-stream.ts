/** One Server-Sent Event: its `id` (when it set one), `event` type and `data`. */
export interface StreamEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/**
 * Reads a `text/event-stream` body to its end, calling `onEvent` for each event and `onRetry`
 * for each `retry:` field (the reconnection delay the server asks for), per the WHATWG
 * event-stream format: lines end in CR, LF or CRLF; `:` starts a comment; an event ends at a
 * blank line; an event without data is not dispatched.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
  onRetry: (ms: number) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let pending = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) onEvent({ id, event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
  };
  for (;;) {
    const { done, value } = await reader.read();
    pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
    // A CR at the very end may be the first half of a CRLF: it waits for the next chunk.
    const lines = pending.split(/\r\n|\n|\r(?!$)/);
    pending = lines.pop() ?? '';
    for (const text of lines) line(text);
    if (done) return;
  }
}
