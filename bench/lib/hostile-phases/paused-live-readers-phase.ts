import type { TestDatabase } from '@replix/testkit';
import { pausedLiveReaders } from '../../../packages/instance/test/live-attacks.ts';
import type { HostilePhase } from '../hostile-phase.ts';

/**
 * Issue 26's paused live readers: `readers` live queries of a ~14 MB result whose sockets are
 * never read, a change that owes each of them an event, then as many again (as an attacker
 * whose places were freed would).
 */
export function pausedLiveReadersPhase(source: TestDatabase, readers = 40): HostilePhase {
  return {
    name: `${readers} paused readers of a large live query`,
    async run(child, seconds) {
      const result = await pausedLiveReaders(child, source, seconds, readers);
      return {
        outcomes: {
          'streams opened': result.opened,
          '429/503 refused': result.refused,
          'refused without Retry-After': result.refusedWithoutRetryAfter,
          other: result.otherStatuses.length,
        },
        goals: [
          {
            measure: 'readers left once a change was owed them',
            value: `${result.subscriptionsAfterChange} (freed in ${result.freedWithinMs} ms)`,
            goal: '0',
            met: result.subscriptionsAfterChange === 0,
          },
          {
            measure: 'event bytes held once they were gone',
            value: result.eventBytesAfterChange,
            goal: '0',
            met: result.eventBytesAfterChange === 0,
          },
        ],
      };
    },
  };
}
