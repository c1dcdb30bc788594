/**
 * Issue 26's live-query phases for `npm run bench:hostile`, over the hostile fixture served by
 * `replix serve` as an `xs` instance (the attacks themselves are
 * packages/instance/test/live-attacks.ts, which the integration tests run too). Each phase
 * takes the serve child, the source database and its length in seconds, and returns what it
 * measured; the bench measures peak RSS around it.
 */
import type { TestDatabase } from '@replix/testkit';
import type { ServeChild } from '../../packages/instance/test/hostile-fixture.ts';
import {
  type LiveFloodResult,
  liveQueryFlood,
  type PausedReadersResult,
  pausedLiveReaders,
} from '../../packages/instance/test/live-attacks.ts';
import { percentile } from './percentile.ts';

/** "paused live readers": 40 streams of a ~14 MB result that are never read, in two waves. */
export async function pausedLiveReadersPhase(
  child: ServeChild,
  source: TestDatabase,
  seconds: number,
): Promise<PausedReadersResult> {
  return pausedLiveReaders(child, source, seconds, 40);
}

/** What the flood phase reports: the other key's live-update delay and its lost updates. */
export interface LiveFloodPhaseResult extends LiveFloodResult {
  readonly delayP50Ms: number;
  readonly delayP95Ms: number;
}

/**
 * "live-query flood": one key's 60 expensive live queries beside another key's cheap live
 * query while the source changes every 1.5 s (a 1 s sync interval: the goal is the delay ≤
 * 1.5 s at p95, no update lost).
 */
export async function liveQueryFloodPhase(
  child: ServeChild,
  source: TestDatabase,
  seconds: number,
): Promise<LiveFloodPhaseResult> {
  const result = await liveQueryFlood(child, source, seconds, 60);
  return {
    ...result,
    delayP50Ms: percentile(result.delaysMs, 50),
    delayP95Ms: percentile(result.delaysMs, 95),
  };
}
