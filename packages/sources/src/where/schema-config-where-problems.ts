import type { SchemaConfig } from '@replix/engine';
import type { SourceBackend } from '../connector.ts';
import { validateWherePredicate } from './validate-where-predicate.ts';

/** One `where` of a schema config that is refused, by its key path (`tables[2].where`). */
export interface WhereConfigIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Checks every `where` of a schema config (root and per table) for the source's dialect; the
 * control plane runs it when a config is saved, an instance when it starts.
 */
export function schemaConfigWhereProblems(
  backend: SourceBackend,
  config: Pick<SchemaConfig, 'where' | 'tables'>,
): WhereConfigIssue[] {
  const wheres: [string, string | undefined][] = [
    ['where', config.where],
    ...(config.tables ?? []).map((table, index): [string, string | undefined] => [
      `tables[${index}].where`,
      table.where,
    ]),
  ];
  return wheres.flatMap(([path, text]) => {
    const problem = text === undefined ? null : validateWherePredicate(backend, text);
    return problem
      ? [{ path, message: `${problem.message} (at position ${problem.position})` }]
      : [];
  });
}
