import { type Client, createClient, createConfig } from './generated/client/index.ts';

export type { Client } from './generated/client/index.ts';
export * from './generated/sdk.gen.ts';
export type * from './generated/types.gen.ts';

export interface ReplixClientOptions {
  /** The control plane's address, e.g. `http://127.0.0.1:4000` (no `/v1`: paths carry it). */
  readonly baseUrl: string;
  /**
   * A bearer token: a built-in or OIDC JWT, or a management key `rmk_…`; or a function read
   * on every call, for a session whose token changes (the dashboard).
   */
  readonly token?: string | (() => string | undefined) | undefined;
}

/**
 * A client for the control-plane API. Pass it to the generated SDK functions:
 * `getV1Databases({ client })`; wrap their results in `unwrap()` to get the data or a throw.
 */
export function createReplixClient(options: ReplixClientOptions): Client {
  return createClient(
    createConfig({ baseUrl: options.baseUrl.replace(/\/+$/, ''), auth: options.token }),
  );
}

/** A failed call: the API's flat `{error, message}`, or `unreachable` when no answer came. */
export class ReplixApiError extends Error {
  /** The stable error string (`not_found`, `action_not_allowed`, …) or `unreachable`. */
  readonly error: string;
  /** The HTTP status; undefined when the control plane could not be reached. */
  readonly status: number | undefined;
  /** The envelope's other fields, e.g. `test` of `connection_test_failed`. */
  readonly details: Readonly<Record<string, unknown>>;
  constructor(
    error: string,
    message: string,
    status: number | undefined,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ReplixApiError';
    this.error = error;
    this.status = status;
    this.details = details;
  }
}

type CallResult = ({ data: unknown; error: undefined } | { data: undefined; error: unknown }) & {
  request?: Request;
  response?: Response;
};
/** The data type of a generated call's success branch. */
type Success<R> = R extends { error: undefined; data: infer D } ? D : never;

/** The data of a successful call; throws ReplixApiError with the API's error otherwise. */
export async function unwrap<R extends CallResult>(call: Promise<R>): Promise<Success<R>> {
  const result = await call;
  if (result.error === undefined) return result.data as Success<R>;
  const status = result.response?.status;
  if (status === undefined) {
    const where = result.request ? ` at ${new URL(result.request.url).origin}` : '';
    throw new ReplixApiError(
      'unreachable',
      `could not reach the control plane${where} (is it running? REPLIX_API_URL sets its address).`,
      status,
    );
  }
  const body = result.error as { error?: unknown; message?: unknown } | string;
  if (typeof body === 'object' && body !== null && typeof body.error === 'string') {
    const { error, message, ...details } = body;
    throw new ReplixApiError(error, String(message ?? ''), status, details);
  }
  throw new ReplixApiError(`http_${status}`, `the control plane answered ${status}.`, status);
}
