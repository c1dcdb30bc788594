import type { QueryAnswer } from '@replix/engine';
import { redactedShape } from '@replix/query';
import type { Span } from '@replix/runtime/tracing';

/**
 * The query's shape on its request's span: every value written `?` (`redactedShape`), so a
 * trace says what was asked of which table without what a caller wrote.
 */
export function traceQueryShape(span: Span | undefined, text: string): void {
  if (!span) return;
  const shape = redactedShape(text);
  if (shape !== null) span.setAttribute('replix.query.shape', shape);
}

/** What the engine answered: rows, bytes and the engine's time (`meta.timing_ms`). */
export function traceQueryAnswer(
  span: Span | undefined,
  answer: Pick<QueryAnswer, 'rows' | 'bytes' | 'timingMs'>,
): void {
  span?.setAttributes({
    'replix.query.rows': answer.rows,
    'replix.query.response_bytes': answer.bytes,
    'replix.query.engine_ms': answer.timingMs,
  });
}
