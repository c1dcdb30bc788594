/** Durations in words: snapshot ages, sync intervals, build times. */

/** "12 s", "4 min 3 s", "2 h 5 min": for ages and durations in seconds. */
export function formatSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const [big, small, bigUnit, smallUnit] =
    whole < 3600
      ? [Math.floor(whole / 60), whole % 60, 'min', 's']
      : [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), 'h', 'min'];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

interface TimedBuild {
  readonly startedAt: string | null | undefined;
  readonly finishedAt?: string | null | undefined;
  readonly buildDurationSeconds?: number | null | undefined;
}

/**
 * How long a finished build took: "0.4 s" for a fast one (from its start and finish times,
 * which carry milliseconds; `buildDurationSeconds` is whole seconds), "under a second" when only
 * the whole seconds are known, else as `formatSeconds` says it. Null while it has not finished.
 */
export function buildDuration(build: TimedBuild): string | null {
  const started = build.startedAt ? Date.parse(build.startedAt) : Number.NaN;
  const finished = build.finishedAt ? Date.parse(build.finishedAt) : Number.NaN;
  const preciseSeconds = (finished - started) / 1000;
  if (Number.isFinite(preciseSeconds) && preciseSeconds >= 0 && preciseSeconds < 1) {
    return preciseSeconds < 0.1 ? 'under 0.1 s' : `${preciseSeconds.toFixed(1)} s`;
  }
  const seconds = build.buildDurationSeconds;
  if (seconds === null || seconds === undefined) {
    return Number.isFinite(preciseSeconds) && preciseSeconds >= 0
      ? formatSeconds(preciseSeconds)
      : null;
  }
  return seconds < 1 ? 'under a second' : formatSeconds(seconds);
}
