import { HTTP_LIMITS } from '@replix/runtime';
import { runNonReaders } from '../../../packages/instance/test/non-reader.ts';
import type { HostilePhase } from '../hostile-phase.ts';

/** 160 `pay` rows, each with its `s` row's 36 KB picture: about 12 MB of JSON. */
const BIG_QUERY = 'pay { id s { * } } LIMIT 160';

/**
 * Issue 26's clients that never read: `clients` clients each ask for a multi-MB answer and
 * leave it unread past the send timeout (then read what is left: short when the instance cut
 * the connection), asking again at once, or after a refusal's `Retry-After`.
 */
export function nonReadersPhase(clients: number): HostilePhase {
  return {
    name: `${clients} clients that never read a ~12 MB answer`,
    async run(child, seconds) {
      const outcomes = await runNonReaders({
        url: child.url,
        key: child.apiKey,
        text: BIG_QUERY,
        clients,
        forMs: seconds * 1000,
        unreadMs: HTTP_LIMITS.send_timeout_ms + 3000,
      });
      const held = await heldBytesAfter(child.url, child.adminKey);
      return {
        outcomes: {
          'answered, then left unread': outcomes.stalled,
          'cut by the instance': outcomes.cut,
          'arrived whole after all': outcomes.whole,
          '429 too_many_requests': outcomes.refused,
          other: outcomes.other.length,
        },
        goals: [
          {
            measure: 'unread answers cut by the instance',
            value: `${outcomes.cut} of ${outcomes.stalled}`,
            goal: 'all',
            met: outcomes.cut === outcomes.stalled,
          },
          {
            measure: 'bytes held for clients once they are gone',
            value: held,
            goal: '0',
            met: held === 0,
          },
        ],
      };
    },
  };
}

/** `memory.client_held_bytes` of `/health/detail`, once it is 0 or after 10 s. */
async function heldBytesAfter(url: string, adminKey: string | undefined): Promise<number> {
  const until = performance.now() + 10_000;
  for (;;) {
    const response = await fetch(`${url}/health/detail`, {
      headers: { Authorization: `Bearer ${adminKey}` },
    });
    const detail = (await response.json()) as { memory?: { client_held_bytes?: number } };
    const held = detail.memory?.client_held_bytes ?? Number.NaN;
    if (held === 0 || performance.now() > until) return held;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
