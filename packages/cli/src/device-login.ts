import * as oauth from 'oauth4webapi';
import { type PollOutcome, pollForToken } from './device-polling.ts';

/** Where the CLI signs in: the control plane's `GET /v1/auth/config`. */
export interface DeviceLoginSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: string;
}

export interface DeviceLoginIo {
  /** Tells the user where to go and which code to type. */
  readonly say: (text: string) => void;
  /** Aborted when the user gives up (Ctrl-C). */
  readonly signal: AbortSignal;
}

/** Plain HTTP only to this machine (a local issuer); anywhere else oauth4webapi's https rule holds. */
function requestOptions(issuer: URL, signal: AbortSignal) {
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(issuer.hostname);
  return { signal, [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && loopback };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const OUTCOMES: Readonly<Record<string, PollOutcome>> = {
  authorization_pending: { kind: 'pending' },
  slow_down: { kind: 'slow-down' },
  access_denied: { kind: 'denied' },
  expired_token: { kind: 'expired' },
};

/**
 * The device authorization grant (RFC 8628) as a public client: asks the issuer for a user
 * code, tells the user where to type it, and polls until they sign in there. Answers the
 * access token.
 */
export async function deviceLogin(
  settings: DeviceLoginSettings,
  io: DeviceLoginIo,
): Promise<string> {
  const issuer = new URL(settings.issuer);
  const options = requestOptions(issuer, io.signal);
  const server = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oidc' }),
  );
  const client: oauth.Client = { client_id: settings.clientId };
  const auth = oauth.None();
  const started = await oauth.processDeviceAuthorizationResponse(
    server,
    client,
    await oauth.deviceAuthorizationRequest(
      server,
      client,
      auth,
      { scope: settings.scopes },
      options,
    ),
  );
  io.say(
    `To sign in, open ${started.verification_uri} and enter the code ${started.user_code}\n` +
      (started.verification_uri_complete
        ? `(or open ${started.verification_uri_complete}, which carries the code).\n`
        : '') +
      'Waiting for the sign-in to finish (Ctrl-C cancels)…\n',
  );
  return pollForToken({
    intervalSeconds: started.interval ?? 5,
    expiresInSeconds: started.expires_in,
    now: Date.now,
    sleep: (ms) => sleep(ms, io.signal),
    poll: async () => {
      try {
        const tokens = await oauth.processDeviceCodeResponse(
          server,
          client,
          await oauth.deviceCodeGrantRequest(server, client, auth, started.device_code, options),
        );
        return { kind: 'token', accessToken: tokens.access_token };
      } catch (error) {
        const outcome = error instanceof oauth.ResponseBodyError && OUTCOMES[error.error];
        if (outcome) return outcome;
        throw error;
      }
    },
  });
}
