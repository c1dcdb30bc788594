import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino, { type DestinationStream, type Logger } from 'pino';
import { currentRequestId } from './request-log-context.ts';
import { activeTraceLogFields } from './tracing/tracing.ts';

export { runWithRequestId, wellFormedRequestId } from './request-log-context.ts';

/** What a log record keeps of an error. */
export interface LoggedError {
  readonly type: string;
  readonly message: string;
  readonly code?: string;
}

/** An unexpected error's record: its first stack frames too, paths relative to the installation. */
export interface LoggedFailure extends LoggedError {
  readonly frames: readonly string[];
}

/**
 * An error as log records carry it by default: its class, message and stable code, never its
 * stack. Expected errors (every 4xx, a source that refuses, a build that fails) are explained by
 * their message and code; their frames would only say how the code is laid out.
 */
export function errorForLog(error: unknown): LoggedError | unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/** Enough frames to find the failing line and its caller's caller, not a wall of them. */
export const LOGGED_FRAMES = 8;

/** The installation's root: the folder `packages/runtime/src/` sits three levels below. */
const INSTALLATION_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** An absolute path or `file://` address (its query dropped) in a frame; `node:internal/…` have none. */
const FRAME_PATH = /(?<=[\s(])(?:file:\/\/)?(\/[^\s():?]+)(?:\?[^\s():]*)?/g;

/**
 * A path of a stack frame with nothing of the machine's layout: relative to the installation,
 * from its `node_modules/` folder for a dependency elsewhere, else its file name alone.
 */
function relativeFramePath(path: string): string {
  const decoded = path.includes('%') ? safeDecode(path) : path;
  if (decoded.startsWith(INSTALLATION_ROOT)) return decoded.slice(INSTALLATION_ROOT.length);
  const modules = decoded.lastIndexOf('/node_modules/');
  if (modules >= 0) return decoded.slice(modules + 1);
  return basename(decoded);
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * An unexpected error, one answered 500, as its log record carries it: what `errorForLog`
 * keeps (the message as it is), plus its first `LOGGED_FRAMES` stack frames with every path
 * made relative to the installation. Operators need the frames to fix a 500, the one failure
 * its message does not explain; relative paths say where in Replix it failed and nothing about
 * the host (no absolute folders, user or host names, no `file://` addresses of its layout).
 * The response never carries any of it.
 */
export function unexpectedErrorForLog(error: unknown): LoggedFailure | unknown {
  if (!(error instanceof Error)) return error;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, LOGGED_FRAMES)
    .map((line) =>
      line.trim().replace(FRAME_PATH, (_whole, path: string) => relativeFramePath(path)),
    );
  return { ...(errorForLog(error) as LoggedError), frames };
}

const REQUEST_ID_BINDING = '"reqId":';

/**
 * The fields every line gets from where it is written: the id of the request being served
 * (unless the logger is already the request's own, bound to it), and with tracing on, the
 * active span's `trace_id` and `span_id` (a background role's pass runs in the span of the goal
 * or build it works on, so its lines carry that trace). Called only for lines written; a new
 * object each time, as pino merges the line's fields into it.
 */
function contextFields(_line: object, _level: number, logger: Logger): object {
  const trace = activeTraceLogFields();
  const requestId = currentRequestId();
  if (requestId === undefined) return trace ?? {};
  const bindings = (logger as unknown as Record<symbol, string | undefined>)[
    pino.symbols.chindingsSym
  ];
  if (bindings?.includes(REQUEST_ID_BINDING)) return trace ?? {};
  return trace ? { reqId: requestId, ...trace } : { reqId: requestId };
}

/**
 * The one way a Replix process makes its logger: JSON lines tagged with the service's name, the
 * request and trace they belong to (`contextFields`), errors as `errorForLog` keeps them.
 */
export function serviceLogger(
  service: string,
  level: string,
  destination: DestinationStream = pino.destination(2),
): Logger {
  return pino(
    { level, base: { service }, serializers: { err: errorForLog }, mixin: contextFields },
    destination,
  );
}
