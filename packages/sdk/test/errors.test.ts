import { describe, expect, it } from 'vitest';
import { INSTANCE_ERRORS } from '../../instance/src/errors.ts';
import { ERROR_CLASSES, ReplixError, type ReplixErrorCode } from '../src/index.ts';

describe('the error classes', () => {
  it('name a class for every code of the instance catalogue, and no code it lacks', () => {
    const own: ReplixErrorCode[] = ['starting', 'connection_failed', 'invalid_response'];
    const codes = Object.keys(INSTANCE_ERRORS);
    expect(Object.keys(ERROR_CLASSES).sort()).toEqual(
      [...codes, ...own.filter((code) => code in ERROR_CLASSES)].sort(),
    );
    // The type union lists the same codes: a missing one fails to compile here.
    const typed: readonly ReplixErrorCode[] = codes as (keyof typeof INSTANCE_ERRORS)[];
    expect(typed.length).toBe(codes.length);
  });

  it('keeps code, status and message, and the class a code family has', () => {
    for (const [code, { status }] of Object.entries(INSTANCE_ERRORS)) {
      const ErrorClass = ERROR_CLASSES[code]!;
      const error = new ErrorClass(code, status, 'why');
      expect(error).toBeInstanceOf(ReplixError);
      expect(error).toMatchObject({ code, status, message: 'why' });
    }
    expect(ERROR_CLASSES.too_many_requests).toBe(ERROR_CLASSES.service_unavailable);
  });
});
