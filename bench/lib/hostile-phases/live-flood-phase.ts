import type { TestDatabase } from '@replix/testkit';
import { liveQueryFlood } from '../../../packages/instance/test/live-attacks.ts';
import type { HostilePhase } from '../hostile-phase.ts';
import { percentile } from '../percentile.ts';

/** `replix serve`'s sync interval (the schema config's default `sync.interval`). */
const SYNC_INTERVAL_MS = 1000;
/** docs/instance-api.md's guarantee: another key's update within the sync interval + 500 ms. */
const GOAL_DELAY_P95_MS = SYNC_INTERVAL_MS + 500;

/**
 * Issue 26's live-query flood: one key's `floods` distinct expensive live queries beside
 * another key's cheap live query while the source changes; the other key's update delay.
 */
export function liveFloodPhase(source: TestDatabase, floods = 60): HostilePhase {
  return {
    name: `one key's ${floods} expensive live queries beside another key's cheap one`,
    async run(child, seconds) {
      const result = await liveQueryFlood(child, source, seconds, floods);
      const p50 = percentile(result.delaysMs, 50);
      const p95 = percentile(result.delaysMs, 95);
      return {
        outcomes: {
          'flood streams opened': result.floodOpened,
          "other key's updates": result.updates,
          'flood query alone, ms': Math.round(result.floodQueryMs),
        },
        goals: [
          {
            measure: "other key's update delay p50 / p95, ms",
            value: `${Math.round(p50)} / ${Math.round(p95)}`,
            goal: `p95 ≤ ${GOAL_DELAY_P95_MS}`,
            met: p95 <= GOAL_DELAY_P95_MS,
          },
          {
            measure: "other key's updates lost",
            value: `${result.lost}${result.finalArrived ? '' : ', last never arrived'}`,
            goal: '0, last arrived',
            met: result.lost === 0 && result.finalArrived,
          },
        ],
      };
    },
  };
}
