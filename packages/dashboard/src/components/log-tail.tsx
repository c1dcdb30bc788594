import type { ReactNode } from 'react';
import { useLayoutEffect, useRef, useState } from 'react';
import { formatDateTime, formatTimeOfDay } from './date-time.ts';
import { TextField } from './fields.tsx';
import { type LogLine, type LogStreamOptions, useLogStream } from './log-stream.ts';
import { ErrorNotice } from './page.tsx';

/** How close to the bottom (px) still counts as "at the end", so auto-scroll stays on. */
const BOTTOM_SLACK = 24;

/**
 * A live log: follows new lines (pause and resume), filters them, and keeps scrolling to the
 * newest line until the reader scrolls up.
 */
export function LogTail(
  props: Omit<LogStreamOptions, 'following' | 'intervalMs' | 'stopWhenDone'> & {
    title: string;
    /** What the log is of, under the title. */
    subtitle?: ReactNode;
    /** Shown while the log has no line. */
    empty: ReactNode;
    /** Said when the stream is done and no more lines will come. */
    doneText?: string;
    stopWhenDone?: boolean;
    intervalMs?: number;
  },
) {
  const [following, setFollowing] = useState(true);
  const [filter, setFilter] = useState('');
  const stream = useLogStream({
    load: props.load,
    resetKey: props.resetKey,
    restartKey: props.restartKey,
    stopWhenDone: props.stopWhenDone ?? false,
    following,
    intervalMs: props.intervalMs ?? 2000,
  });
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [atEnd, setAtEnd] = useState(true);

  const needle = filter.trim().toLowerCase();
  const shown = needle
    ? stream.lines.filter((line) => line.message.toLowerCase().includes(needle))
    : stream.lines;

  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll again whenever lines change.
  useLayoutEffect(() => {
    const element = box.current;
    if (element && stick.current) element.scrollTop = element.scrollHeight;
  }, [shown.length, stream.lines]);

  const finished = stream.done && props.stopWhenDone;
  const state = finished
    ? (props.doneText ?? 'Complete.')
    : following
      ? stream.done
        ? 'Up to date; watching for new lines.'
        : 'Following new lines.'
      : 'Paused: new lines are not fetched.';

  return (
    <section className="panel ops-log-tail" aria-label={props.title}>
      <div className="ops-log-toolbar">
        <h2>{props.title}</h2>
        <span className="muted ops-small" role="status">
          {state}
        </span>
        <div className="row ops-log-controls">
          <TextField
            label="Filter lines"
            type="search"
            value={filter}
            placeholder="text to look for"
            onChange={(event) => setFilter(event.target.value)}
          />
          {!finished && (
            <button
              type="button"
              className="button button-small"
              aria-pressed={!following}
              onClick={() => setFollowing((value) => !value)}
            >
              {following ? 'Pause following' : 'Resume following'}
            </button>
          )}
        </div>
      </div>
      {props.subtitle && <div className="muted">{props.subtitle}</div>}
      {stream.error !== null && <ErrorNotice error={stream.error} title="Could not read the log" />}
      {!stream.loaded && <p className="muted">Loading the log…</p>}
      {stream.loaded && stream.lines.length === 0 && <div className="empty">{props.empty}</div>}
      {stream.lines.length > 0 && (
        <>
          {/* role=log, but not live: a busy log would drown a screen reader. */}
          <div
            ref={box}
            className="log ops-log"
            role="log"
            aria-live="off"
            aria-label={`${props.title} lines`}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable box must be reachable by keyboard.
            tabIndex={0}
            onScroll={(event) => {
              const element = event.currentTarget;
              const end =
                element.scrollHeight - element.scrollTop - element.clientHeight < BOTTOM_SLACK;
              stick.current = end;
              setAtEnd(end);
            }}
          >
            {shown.map((line) => (
              <LogRow key={line.key} line={line} />
            ))}
            {shown.length === 0 && <p className="ops-log-none">No line matches “{filter}”.</p>}
          </div>
          <div className="row ops-small muted">
            <span>
              {needle
                ? `${shown.length} of ${stream.lines.length} lines match`
                : `${stream.lines.length} lines`}
            </span>
            {!atEnd && (
              <button
                type="button"
                className="button button-small"
                onClick={() => {
                  const element = box.current;
                  if (!element) return;
                  stick.current = true;
                  setAtEnd(true);
                  element.scrollTop = element.scrollHeight;
                }}
              >
                Jump to newest
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}

function LogRow(props: { line: LogLine }) {
  const { line } = props;
  const date = new Date(line.timestamp);
  return (
    <div className={line.marker ? 'ops-log-line ops-log-marker' : 'ops-log-line'}>
      <time dateTime={date.toISOString()} title={formatDateTime(date)}>
        {formatTimeOfDay(date)}
      </time>
      <span>{line.message}</span>
    </div>
  );
}
