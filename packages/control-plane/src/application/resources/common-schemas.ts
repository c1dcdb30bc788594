import { Type } from 'typebox';

/** The flat control-plane error envelope (spec §7). */
export const ErrorResponse = Type.Object(
  { error: Type.String(), message: Type.String() },
  {
    $id: 'ErrorResponse',
    description: 'Every control-plane error: a stable error string and a human message.',
  },
);

export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
export const IdParams = Type.Object({ id: Uuid });

/** The error responses every authenticated operation can give, plus any listed. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorResponse> {
  const responses: Record<number, typeof ErrorResponse> = {
    400: ErrorResponse,
    401: ErrorResponse,
  };
  for (const status of statuses) responses[status] = ErrorResponse;
  return responses;
}

/** ISO text of a store timestamp. */
export function iso(value: Date): string;
export function iso(value: Date | null): string | null;
export function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

/** A page of log lines (spec §2 LogsResponse): repeat with `nextToken` until `done` (spec §4.1 rule 3). */
export const LogsResponse = Type.Object(
  {
    lines: Type.Array(
      Type.Object({
        message: Type.String(),
        timestamp: Type.Number({ description: 'Milliseconds since the epoch.' }),
      }),
    ),
    nextToken: Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass it back as `nextToken` to read on from here; null when there is nothing to read on from.',
    }),
    done: Type.Boolean({
      description: 'True when the stream has ended and every line has been returned.',
    }),
  },
  { $id: 'LogsResponse' },
);
