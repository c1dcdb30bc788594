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
