import { type Diagnostic, linter } from '@codemirror/lint';
import { parseQuery, QueryParseError, QueryTooComplexError } from '@replix/query';
import { editorTokens } from './query-tokens.ts';

/**
 * The parser's first error as the editor shows it: underlined from the parser's offset over
 * the token there (a point at the end of the query when something is missing), with the
 * parser's own message. An empty editor has nothing to report.
 */
export function queryDiagnostics(text: string): Diagnostic[] {
  if (text.trim() === '') return [];
  try {
    parseQuery(text);
    return [];
  } catch (error) {
    if (!(error instanceof QueryParseError || error instanceof QueryTooComplexError)) throw error;
    const from = error.position.offset;
    const token = editorTokens(text).find((candidate) => candidate.from === from);
    const to = token?.to ?? from;
    const what = error instanceof QueryParseError ? 'Syntax error' : 'Query too complex';
    return [{ from, to, severity: 'error', message: `${what}: ${error.detail}` }];
  }
}

/** Checks the query as it is typed, a moment after the last key. */
export const queryLinter = linter((view) => queryDiagnostics(view.state.doc.toString()), {
  delay: 300,
});
