import { describe, expect, it } from 'vitest';
import {
  formatAxisTime,
  formatDate,
  formatDateTime,
  formatRelative,
  formatTimeOfDay,
} from '../src/components/date-time.ts';
import { buildDuration } from '../src/components/durations.ts';

describe('the dashboard’s one date and time format', () => {
  // Built from local parts: the format is local time, whatever the machine's zone.
  const moment = new Date(2026, 10, 5, 4, 3, 7, 250);

  it('writes local date and time ISO-like, zero-padded, whatever the input type', () => {
    expect(formatDateTime(moment)).toBe('2026-11-05 04:03:07');
    expect(formatDateTime(moment.toISOString())).toBe('2026-11-05 04:03:07');
    expect(formatDateTime(moment.getTime())).toBe('2026-11-05 04:03:07');
    expect(formatDate(moment)).toBe('2026-11-05');
    expect(formatTimeOfDay(moment)).toBe('04:03:07');
  });

  it('labels a chart axis by hours and minutes, and by the date at midnight', () => {
    expect(formatAxisTime(new Date(2026, 10, 25, 14, 30))).toBe('14:30');
    expect(formatAxisTime(new Date(2026, 10, 26, 0, 0))).toBe('2026-11-26');
  });

  it('writes a dash for a value that is not a time', () => {
    expect(formatDateTime('not a date')).toBe('–');
    expect(formatRelative('not a date')).toBe('');
  });

  it('says relative times in words, as an addition', () => {
    const now = moment.getTime();
    expect(formatRelative(now - 5_000, now)).toBe('5 seconds ago');
    expect(formatRelative(now - 3 * 60_000, now)).toBe('3 minutes ago');
    expect(formatRelative(now + 2 * 3_600_000, now)).toBe('in 2 hours');
    expect(formatRelative(now - 86_400_000, now)).toBe('yesterday');
  });
});

describe('build durations', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();

  it('says a build under a second took tenths of a second, not 0 s', () => {
    const build = { startedAt: at(0), finishedAt: at(420), buildDurationSeconds: 0 };
    expect(buildDuration(build)).toBe('0.4 s');
    expect(buildDuration({ ...build, finishedAt: at(30) })).toBe('under 0.1 s');
    expect(buildDuration({ startedAt: null, finishedAt: null, buildDurationSeconds: 0 })).toBe(
      'under a second',
    );
  });

  it('says longer builds in seconds and minutes, and nothing for an unfinished one', () => {
    expect(
      buildDuration({ startedAt: at(0), finishedAt: at(83_000), buildDurationSeconds: 83 }),
    ).toBe('1 min 23 s');
    expect(buildDuration({ startedAt: at(0), finishedAt: null, buildDurationSeconds: null })).toBe(
      null,
    );
  });
});
