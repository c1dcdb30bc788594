/**
 * Which of a live query's result events reach the app, across reconnects. An event id is
 * `<generation>.<boot id>`: within one boot of an instance a higher generation is a newer
 * snapshot, so an event of the same boot is handed over only when it is newer than the last
 * one. Across boots (a restart, a deploy: the new instance sends its current result, whose id
 * says nothing about the old one's) an event is handed over only when its content differs from
 * the last one handed over, compared as the instance compares results: the envelope before
 * `timing_ms` (which, like `meta.snapshot` after it, changes on every swap).
 */
export class LiveResultOrder {
  #lastEventId: string | undefined;
  #boot: string | undefined;
  #generation = -1;
  #content: string | undefined;

  /** The id to resume from (`Last-Event-ID`): the newest event seen, handed over or not. */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** Whether the event is one to hand over; an event not older than the last one is noted. */
  accept(id: string | undefined, body: string): boolean {
    const parsed = /^(\d{1,15})\.(.+)$/s.exec(id ?? '');
    if (parsed) {
      const generation = Number(parsed[1]);
      if (parsed[2] === this.#boot && generation <= this.#generation) return false;
      this.#boot = parsed[2];
      this.#generation = generation;
      this.#lastEventId = id;
    } else if (id !== undefined) {
      this.#lastEventId = id;
    }
    const content = comparedContent(body);
    if (content === this.#content) return false;
    this.#content = content;
    return true;
  }
}

function comparedContent(body: string): string {
  const end = body.lastIndexOf(',"timing_ms":');
  return end < 0 ? body : body.slice(0, end);
}
