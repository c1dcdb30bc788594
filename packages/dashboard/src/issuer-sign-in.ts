import * as oauth from 'oauth4webapi';

/** The issuer and the dashboard's client there, from `GET /v1/auth/config`. */
export interface IssuerSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: string;
}

/** What the redirect round trip must remember: kept in sessionStorage, taken back once. */
interface PendingSignIn {
  readonly codeVerifier: string;
  readonly state: string;
  readonly nonce: string;
  /** The dashboard page to open once signed in. */
  readonly next: string;
  readonly silent: boolean;
}

export interface IssuerSession {
  readonly token: string;
  readonly expiresAt: string;
  readonly signOutUrl: string | undefined;
  readonly next: string;
}

const PENDING_KEY = 'replix.issuer-pending';
/** The dashboard page the issuer sends the user back to (registered as the redirect URI). */
export const CALLBACK_PATH = '/oidc/callback';
/** Where the issuer sends the user after signing out (registered as the post-logout URI). */
export const SIGNED_OUT_PATH = '/sign-in';

/** Plain HTTP only to an issuer on this machine; elsewhere oauth4webapi's https rule holds. */
function requestOptions(issuer: URL) {
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(issuer.hostname);
  return { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && loopback };
}

async function discover(settings: IssuerSettings): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(settings.issuer);
  const response = await oauth.discoveryRequest(issuer, {
    ...requestOptions(issuer),
    algorithm: 'oidc',
  });
  return oauth.processDiscoveryResponse(issuer, response);
}

const redirectUri = () => `${window.location.origin}${CALLBACK_PATH}`;

/**
 * Sends the browser to the issuer's authorization endpoint: the code flow with PKCE (S256),
 * state and nonce. `silent` asks for no prompt (`prompt=none`): a reload signs in again while
 * the issuer's session lasts, and comes back with `login_required` otherwise.
 */
export async function startIssuerSignIn(
  settings: IssuerSettings,
  options: { next: string; silent: boolean },
): Promise<void> {
  const server = await discover(settings);
  if (!server.authorization_endpoint) throw new Error('The issuer has no authorization endpoint.');
  const pending: PendingSignIn = {
    codeVerifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    next: options.next,
    silent: options.silent,
  };
  const url = new URL(server.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: settings.scopes,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
    ...(options.silent ? { prompt: 'none' } : {}),
  }).toString();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  window.location.assign(url.href);
}

/** The issuer answered the redirect with an error (`error` is OAuth's code, e.g. `login_required`). */
export class IssuerRefusal extends Error {
  readonly error: string;
  readonly silent: boolean;
  readonly next: string;
  constructor(error: string, description: string | undefined, pending: PendingSignIn) {
    super(description ? `${error}: ${description}` : error);
    this.error = error;
    this.silent = pending.silent;
    this.next = pending.next;
  }
}

function takePending(): PendingSignIn {
  const text = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (!text) throw new Error('No sign-in was started in this tab; start again.');
  return JSON.parse(text) as PendingSignIn;
}

/** The issuer's logout with the ID token as hint, back to the dashboard's sign-in page. */
function signOutUrlOf(
  server: oauth.AuthorizationServer,
  settings: IssuerSettings,
  idToken: string | undefined,
): string | undefined {
  if (!server.end_session_endpoint) return undefined;
  const url = new URL(server.end_session_endpoint);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('post_logout_redirect_uri', `${window.location.origin}${SIGNED_OUT_PATH}`);
  if (idToken) url.searchParams.set('id_token_hint', idToken);
  return url.href;
}

/**
 * On the callback page: checks the state, exchanges the code with the PKCE verifier (a public
 * client, no secret), checks the ID token's nonce, and answers the access token.
 */
export async function finishIssuerSignIn(
  settings: IssuerSettings,
  callback: URL,
): Promise<IssuerSession> {
  const pending = takePending();
  const server = await discover(settings);
  const client: oauth.Client = { client_id: settings.clientId };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(server, client, callback, pending.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new IssuerRefusal(error.error, error.error_description, pending);
    }
    throw error;
  }
  const options = requestOptions(new URL(settings.issuer));
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    params,
    redirectUri(),
    pending.codeVerifier,
    options,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: pending.nonce,
    requireIdToken: true,
  });
  const lifetime = tokens.expires_in ?? 3600;
  return {
    token: tokens.access_token,
    expiresAt: new Date(Date.now() + lifetime * 1000).toISOString(),
    signOutUrl: signOutUrlOf(server, settings, tokens.id_token),
    next: pending.next,
  };
}
