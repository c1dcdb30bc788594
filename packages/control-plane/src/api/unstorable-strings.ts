import { Buffer } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';

/** Why PostgreSQL would refuse a string, in words for the caller; null when it can store it. */
function unstorableReason(text: string): string | null {
  // A NUL cannot be stored in `text` or `jsonb`; a lone UTF-16 surrogate is refused by `jsonb`
  // and silently replaced in `text`.
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'contains a lone UTF-16 surrogate';
  return null;
}

interface Pending {
  readonly value: unknown;
  readonly path: string;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/**
 * The first string (value or object key) under `root` that PostgreSQL cannot store, with its
 * path (`body.schemaConfig.tables[0].name`). Walks with an explicit stack: a deeply nested body
 * must not overflow the call stack.
 */
export function findUnstorableString(
  root: unknown,
  rootPath: string,
): { path: string; reason: string } | null {
  const stack: Pending[] = [{ value: root, path: rootPath }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as Pending;
    if (typeof value === 'string') {
      const reason = unstorableReason(value);
      if (reason) return { path, reason };
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index], path: childPath(path, index) });
      }
    } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, child] = entries[index] as [string, unknown];
        const keyReason = unstorableReason(key);
        if (keyReason) return { path, reason: `has a key that ${keyReason}` };
        stack.push({ value: child, path: childPath(path, key) });
      }
    }
  }
  return null;
}

/**
 * A `preValidation` hook: refuses, as 400 `validation_failed` naming the field, any request
 * whose path params, query string or body hold a string PostgreSQL cannot store. One check for
 * every route, so no handler reaches the store with such a string.
 */
export async function refuseUnstorableStrings(request: FastifyRequest): Promise<void> {
  for (const [part, value] of [
    ['params', request.params],
    ['query', request.query],
    ['body', request.body],
  ] as const) {
    const found = findUnstorableString(value, part);
    if (found) {
      throw new ApiError(
        'validation_failed',
        `${found.path} ${found.reason}, which cannot be stored; remove it.`,
      );
    }
  }
}
