/** One line a container wrote, with the time the kubelet read it. */
export interface LogLine {
  readonly time: string;
  readonly line: string;
  /** The container; undefined for lines a test appended, which belong to every container. */
  readonly container?: string;
}

/** Lines kept per pod: a chatty pod drops its oldest, as the kubelet's log rotation does. */
export const MAX_LINES_PER_POD = 20_000;

/** The lines each pod's containers wrote, as `/pods/<name>/log` returns them. */
export class PodLogs {
  readonly #lines = new Map<string, LogLine[]>();

  append(namespace: string, pod: string, line: string, time = new Date(), container?: string) {
    const key = `${namespace}/${pod}`;
    const lines = this.#lines.get(key) ?? [];
    this.#lines.set(key, lines);
    lines.push({ time: time.toISOString(), line, ...(container ? { container } : {}) });
    if (lines.length > MAX_LINES_PER_POD) lines.splice(0, lines.length - MAX_LINES_PER_POD);
  }

  /** The pod's lines of `container` (and those of no container), oldest first. */
  lines(namespace: string, pod: string, container?: string): readonly LogLine[] {
    const lines = this.#lines.get(`${namespace}/${pod}`) ?? [];
    if (container === undefined) return lines;
    return lines.filter((line) => line.container === undefined || line.container === container);
  }

  /** Forgets a deleted pod's lines. */
  forget(namespace: string, pod: string): void {
    this.#lines.delete(`${namespace}/${pod}`);
  }
}
