/** A field-level reason in a Status's `details.causes`. */
export interface StatusCause {
  readonly type: string;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly kind?: string;
  readonly group?: string;
  readonly causes?: readonly StatusCause[];
}

/** A failed request, answered as the API server's `Status` object with its HTTP code. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails;

  constructor(code: number, reason: string, message: string, details: StatusDetails = {}) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      details: this.details,
      code: this.code,
    };
  }
}

/** `deployments.apps "x" not found`, as the API server words it. */
export function notFound(plural: string, group: string, name: string): ApiError {
  const resource = group === '' ? plural : `${plural}.${group}`;
  return new ApiError(404, 'NotFound', `${resource} "${name}" not found`, {
    name,
    group,
    kind: plural,
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}
