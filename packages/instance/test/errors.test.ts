import { EngineError } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { errorResponse, InstanceError } from '../src/errors.ts';

describe('errorResponse', () => {
  it('maps engine and instance errors to their status and code', () => {
    expect(errorResponse(new EngineError('unknown_table', 'Unknown table "x".'))).toEqual({
      status: 404,
      body: { error: { code: 'unknown_table', message: 'Unknown table "x".' } },
    });
    expect(errorResponse(new InstanceError('reload_busy', 'busy')).status).toBe(409);
  });

  it('answers anything else with a uniform 500 that carries nothing internal', () => {
    const internal = new Error('connect ECONNREFUSED db.internal:3306 SELECT * FROM secrets');
    const { status, body } = errorResponse(internal);
    expect(status).toBe(500);
    expect(body.error.code).toBe('internal_error');
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|db\.internal|SELECT|at /);
  });
});
