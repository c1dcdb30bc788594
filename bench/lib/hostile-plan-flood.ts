/**
 * bench:hostile's "distinct-shape flood" phase (issue 26): 2,000 valid queries whose shapes all
 * differ (IN lists of 6 to 1,000 values, up to 12 KB each; `distinct-shapes.ts`), 4 at a time,
 * each a plan cache miss. The instance's RSS and the cheap query's latency are the caller's to
 * watch; this returns what the flood got back.
 */

import {
  DISTINCT_SHAPE_COUNT,
  type DistinctShapeTally,
  sendDistinctShapes,
} from '../../packages/instance/test/distinct-shapes.ts';
import type { ServeChild } from '../../packages/instance/test/hostile-fixture.ts';

export const PLAN_FLOOD_PHASE = 'distinct-shape flood';

/**
 * Sends the 2,000 distinct-shape queries to `child`, stopping after `seconds` (or when it dies),
 * and returns the answers counted by status (0: no answer) with the wrong 200s.
 */
export function distinctShapeFlood(
  child: ServeChild,
  seconds: number,
): Promise<DistinctShapeTally> {
  return sendDistinctShapes(child, {
    count: DISTINCT_SHAPE_COUNT,
    deadline: performance.now() + seconds * 1000,
  });
}
