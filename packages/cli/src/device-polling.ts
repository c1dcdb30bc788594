/** What one poll of the token endpoint told (RFC 8628, section 3.5). */
export type PollOutcome =
  | { readonly kind: 'token'; readonly accessToken: string }
  | { readonly kind: 'pending' }
  | { readonly kind: 'slow-down' }
  | { readonly kind: 'denied' }
  | { readonly kind: 'expired' };

export interface PollPlan {
  /** Seconds between polls, as the issuer said (`interval`, default 5). */
  readonly intervalSeconds: number;
  /** Seconds the device code lives (`expires_in`). */
  readonly expiresInSeconds: number;
  readonly poll: () => Promise<PollOutcome>;
  /** Waits that many milliseconds; rejects when the user gives up (Ctrl-C). */
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
}

/** How a device sign-in ended without a token. */
export class DeviceLoginEnded extends Error {
  readonly reason: 'denied' | 'expired';
  constructor(reason: 'denied' | 'expired') {
    super(
      reason === 'denied'
        ? 'sign-in was denied at the identity provider.'
        : 'the code expired before the sign-in was finished; run `replix login` again.',
    );
    this.reason = reason;
  }
}

/** RFC 8628's step for `slow_down`: every later poll waits this much longer. */
const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * Polls until the user finishes at the issuer: never sooner than the interval, 5 s slower for
 * each `slow_down`, and not past the code's expiry. Answers the access token.
 */
export async function pollForToken(plan: PollPlan): Promise<string> {
  const deadline = plan.now() + plan.expiresInSeconds * 1000;
  let interval = plan.intervalSeconds;
  for (;;) {
    await plan.sleep(interval * 1000);
    if (plan.now() >= deadline) throw new DeviceLoginEnded('expired');
    const outcome = await plan.poll();
    if (outcome.kind === 'token') return outcome.accessToken;
    if (outcome.kind === 'slow-down') interval += SLOW_DOWN_STEP_SECONDS;
    else if (outcome.kind !== 'pending') throw new DeviceLoginEnded(outcome.kind);
  }
}
