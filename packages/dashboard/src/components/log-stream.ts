import type { Dispatch, RefObject, SetStateAction } from 'react';
import { useEffect, useRef, useState } from 'react';

/** A page of any of the API's logs (build, infra, instance): LogsResponse. */
export interface LogPage {
  lines: Array<{ message: string; timestamp: number }>;
  nextToken: string | null;
  done: boolean;
}

export interface LogLine {
  key: number;
  message: string;
  timestamp: number;
  /** A line the dashboard wrote (e.g. "new instance"), not the log's. */
  marker?: boolean;
}

/** Lines kept in the page; older ones scroll out. */
const MAX_LINES = 5000;
/** The API's page size: a full page means more is waiting, so ask again at once. */
const FULL_PAGE = 500;

export interface LogStreamOptions {
  load: (token: string | undefined) => Promise<LogPage>;
  /** A new value starts over: no lines, no token (another build, another database). */
  resetKey: string;
  /**
   * A new value reads on from the start of a new stream but keeps the lines shown (the
   * instance log of a new instance: the old byte offset means nothing in its file).
   */
  restartKey?: string | null;
  /** Stop asking once the API says `done` (a finished build writes no more). */
  stopWhenDone: boolean;
  following: boolean;
  intervalMs: number;
}

function appendLines(setLines: Dispatch<SetStateAction<LogLine[]>>, page: LogLine[]): void {
  if (page.length > 0) setLines((previous) => [...previous, ...page].slice(-MAX_LINES));
}

function numbered(nextKey: RefObject<number>, page: LogPage['lines']): LogLine[] {
  return page.map((line) => ({ ...line, key: nextKey.current++ }));
}

/**
 * Tails a paged log: asks with the last nextToken every `intervalMs` while following, at
 * once while pages come back full.
 */
export function useLogStream(options: LogStreamOptions) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [loaded, setLoaded] = useState(false);
  const token = useRef<string | undefined>(undefined);
  const nextKey = useRef(0);
  // Bumped by every reset or restart, so an answer to an older request is dropped.
  const generation = useRef(0);
  const load = useRef(options.load);
  load.current = options.load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on a new resetKey only.
  useEffect(() => {
    generation.current += 1;
    token.current = undefined;
    setLines([]);
    setDone(false);
    setError(null);
    setLoaded(false);
  }, [options.resetKey]);

  const previousRestart = useRef(options.restartKey);
  useEffect(() => {
    const previous = previousRestart.current;
    previousRestart.current = options.restartKey;
    // undefined: not known yet (still loading), so not a change of stream.
    if (previous === options.restartKey || previous === undefined) return;
    generation.current += 1;
    token.current = undefined;
    if (options.restartKey) {
      const marker = `— a new instance started (${options.restartKey.slice(0, 8)}) —`;
      appendLines(setLines, [
        { key: nextKey.current++, message: marker, timestamp: Date.now(), marker: true },
      ]);
    }
  }, [options.restartKey]);

  const { following, stopWhenDone, intervalMs, resetKey } = options;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new resetKey starts a fresh loop.
  useEffect(() => {
    if (!following) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      const mine = generation.current;
      let delay = intervalMs;
      try {
        const page = await load.current(token.current);
        if (stopped) return;
        // An answer from before a restart belongs to the old stream: ask again at once.
        if (mine !== generation.current) delay = 0;
        else {
          appendLines(setLines, numbered(nextKey, page.lines));
          // A null token means nothing to read on from: the next call starts afresh.
          token.current = page.nextToken ?? undefined;
          setDone(page.done);
          setError(null);
          setLoaded(true);
          if (page.done && stopWhenDone) return;
          if (page.lines.length >= FULL_PAGE) delay = 0;
        }
      } catch (caught) {
        if (stopped) return;
        setError(caught);
        setLoaded(true);
      }
      timer = setTimeout(tick, delay);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [following, stopWhenDone, intervalMs, resetKey]);

  return { lines, done, error, loaded };
}
