import { describe, expect, it } from 'vitest';
import { DeviceLoginEnded, type PollOutcome, pollForToken } from '../src/device-polling.ts';

/** A plan whose clock moves only by the waits asked for, answering the given outcomes in turn. */
function scripted(
  outcomes: PollOutcome[],
  options: { interval?: number; expiresIn?: number } = {},
) {
  let clock = 0;
  const waits: number[] = [];
  let polls = 0;
  const plan = {
    intervalSeconds: options.interval ?? 5,
    expiresInSeconds: options.expiresIn ?? 600,
    now: () => clock,
    sleep: async (ms: number) => {
      waits.push(ms);
      clock += ms;
    },
    poll: async () => {
      polls += 1;
      const next = outcomes.shift();
      if (!next) throw new Error('polled once too often');
      return next;
    },
  };
  return { plan, waits, polls: () => polls };
}

describe('pollForToken (RFC 8628, section 3.5)', () => {
  it('waits the interval before each poll and answers the token once the user is done', async () => {
    const { plan, waits } = scripted(
      [{ kind: 'pending' }, { kind: 'pending' }, { kind: 'token', accessToken: 'at' }],
      { interval: 3 },
    );
    expect(await pollForToken(plan)).toBe('at');
    expect(waits).toEqual([3000, 3000, 3000]);
  });

  it('waits 5 s longer for every slow_down, for the rest of the polls', async () => {
    const { plan, waits } = scripted([
      { kind: 'slow-down' },
      { kind: 'pending' },
      { kind: 'slow-down' },
      { kind: 'token', accessToken: 'at' },
    ]);
    await pollForToken(plan);
    expect(waits).toEqual([5000, 10_000, 10_000, 15_000]);
  });

  it('stops at the code’s expiry without polling past it', async () => {
    const { plan, polls } = scripted([{ kind: 'pending' }, { kind: 'pending' }], {
      interval: 5,
      expiresIn: 12,
    });
    const error = await pollForToken(plan).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeviceLoginEnded);
    expect((error as DeviceLoginEnded).reason).toBe('expired');
    expect((error as Error).message).toBe(
      'the code expired before the sign-in was finished; run `replix login` again.',
    );
    expect(polls()).toBe(2);
  });

  it('ends on the issuer’s access_denied and expired_token', async () => {
    for (const kind of ['denied', 'expired'] as const) {
      const { plan } = scripted([{ kind: 'pending' }, { kind }]);
      const error = await pollForToken(plan).catch((e: unknown) => e);
      expect((error as DeviceLoginEnded).reason).toBe(kind);
    }
  });

  it('gives up at once when the wait is cut short (Ctrl-C)', async () => {
    const { plan, polls } = scripted([{ kind: 'pending' }]);
    const cancelled = new Error('cancelled');
    await expect(pollForToken({ ...plan, sleep: () => Promise.reject(cancelled) })).rejects.toBe(
      cancelled,
    );
    expect(polls()).toBe(0);
  });
});
