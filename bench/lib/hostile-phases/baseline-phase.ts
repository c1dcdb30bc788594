import type { HostilePhase } from '../hostile-phase.ts';

/** No load: the cheap query alone, the figures the other phases are read against. */
export function baselinePhase(): HostilePhase {
  return {
    name: 'baseline: the cheap query alone',
    async run(_child, seconds) {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      return { outcomes: {} };
    },
  };
}
