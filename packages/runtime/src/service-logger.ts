import pino, { type DestinationStream, type Logger } from 'pino';

/** What a log record keeps of an error. */
export interface LoggedError {
  readonly type: string;
  readonly message: string;
  readonly code?: string;
}

/**
 * An error as log records carry it: its class, message and stable code, never its stack. Logs
 * are read by operators and shipped to other systems; a stack trace there says how the code is
 * laid out and helps nobody running the service (the message and code say what happened).
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

/** The one way a Replix process makes its logger: JSON lines tagged with the service's name. */
export function serviceLogger(
  service: string,
  level: string,
  destination: DestinationStream = pino.destination(2),
): Logger {
  return pino({ level, base: { service }, serializers: { err: errorForLog } }, destination);
}
