import {
  DISTINCT_SHAPE_COUNT,
  sendDistinctShapes,
} from '../../../packages/instance/test/distinct-shapes.ts';
import type { HostilePhase } from '../hostile-phase.ts';

/**
 * Issue 26's distinct-shape flood: 2,000 valid queries whose shapes all differ (IN lists of 6 to
 * 1,000 values, up to 12 KB each), 4 at a time, each a plan cache miss: the cache must stay
 * within its budget, so the peak RSS is this phase's measure.
 */
export function shapeFloodPhase(): HostilePhase {
  return {
    name: `${DISTINCT_SHAPE_COUNT.toLocaleString('en-US')} queries of distinct shapes`,
    async run(child, seconds) {
      const tally = await sendDistinctShapes(child, {
        count: DISTINCT_SHAPE_COUNT,
        deadline: performance.now() + seconds * 1000,
      });
      const outcomes: Record<string, number> = { sent: tally.sent };
      for (const [status, count] of Object.entries(tally.byStatus))
        outcomes[status === '0' ? 'no answer' : status] = count;
      return {
        outcomes,
        goals: [
          {
            measure: 'wrong answers',
            value: tally.wrongRows,
            goal: '0',
            met: tally.wrongRows === 0,
          },
        ],
      };
    },
  };
}
