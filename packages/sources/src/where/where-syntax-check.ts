// One grammar per dialect, not the package's main entry: that holds every dialect it knows
// (2.5 MB of source, some 10 MB of heap in every instance), where Replix needs four (1 MB).
import mariadbGrammar from 'node-sql-parser/build/mariadb.js';
import mysqlGrammar from 'node-sql-parser/build/mysql.js';
import postgresqlGrammar from 'node-sql-parser/build/postgresql.js';
import transactsqlGrammar from 'node-sql-parser/build/transactsql.js';
import type { WhereDialect, WhereProblem } from './where-dialect.ts';
import { WHERE_FUNCTIONS } from './where-functions.ts';

/** The statement the predicate is parsed in: the connectors wrap it the same way. */
const PREFIX = 'SELECT 1 FROM t WHERE (';
const SUFFIX = '\n)';

type Node = Record<string, unknown>;
interface Location {
  readonly start: { readonly offset: number };
}

/** The parser of each grammar a `WhereDialect` names in `parserDatabases`. */
const PARSERS: Readonly<Record<string, InstanceType<typeof mysqlGrammar.Parser>>> = {
  mysql: new mysqlGrammar.Parser(),
  mariadb: new mariadbGrammar.Parser(),
  postgresql: new postgresqlGrammar.Parser(),
  transactsql: new transactsqlGrammar.Parser(),
};

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null;
}

/** A 1-based position in the predicate from an offset in the wrapped statement. */
function positionOf(offset: number, text: string): number {
  return Math.min(Math.max(offset - PREFIX.length, 0), text.length) + 1;
}

function functionName(node: Node): string {
  const name = node.name;
  if (typeof name === 'string') return name;
  const parts = isNode(name) && Array.isArray(name.name) ? name.name : [];
  return parts.map((part: unknown) => (isNode(part) ? String(part.value) : '')).join('.');
}

const SUBQUERY = 'subqueries are not allowed: a where predicate reads only its own row';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What is wrong with one expression node itself (not its children), or null; `near` finds the
 * node in the text when the dialect's grammar gives it no location.
 */
function nodeProblem(node: Node): { message: string; near: RegExp } | null {
  if ('ast' in node || node.type === 'select') return { message: SUBQUERY, near: /\bselect\b/i };
  const name = functionName(node);
  const nearName = new RegExp(`\\b${escapeRegExp(name)}\\b`, 'i');
  if (node.type === 'aggr_func') {
    return { message: `the aggregate ${name} is not allowed`, near: nearName };
  }
  if (node.type === 'function') {
    if (name.toLowerCase() === 'exists') return { message: SUBQUERY, near: nearName };
    if (!WHERE_FUNCTIONS.has(name.toLowerCase())) {
      return {
        message: `the function ${name} is not allowed in a where predicate (docs/schema-config.md lists those that are)`,
        near: nearName,
      };
    }
    if (isNode(node.over))
      return { message: 'window functions are not allowed', near: /\bover\b/i };
  }
  if (node.type === 'var') {
    return { message: 'variables are not allowed in a where predicate', near: /@/ };
  }
  if (node.type === 'column_ref' && (node.table || node.schema || node.db)) {
    return {
      message: 'name columns without a table or schema: a where predicate reads only its own row',
      near: /[\w"`\]]\s*\./,
    };
  }
  if (node.type === 'column_ref' && node.column === '*') {
    return { message: '"*" is not a value', near: /\*/ };
  }
  return null;
}

/** The offset of `near` in the statement at or after `from`, else `from`. */
function offsetNear(statement: string, from: number, near: RegExp): number {
  const found = near.exec(statement.slice(from));
  return found ? from + found.index : from;
}

/** The first problem in an expression tree, positioned at its node. */
function findProblem(root: Node, text: string): WhereProblem | null {
  const statement = `${PREFIX}${text}${SUFFIX}`;
  const stack: { node: unknown; at: number }[] = [{ node: root, at: PREFIX.length }];
  while (stack.length > 0) {
    const { node, at: parentAt } = stack.pop() as { node: unknown; at: number };
    if (!isNode(node)) continue;
    // A subquery's wrapper has no location of its own; its statement may have.
    const location = (node.loc ?? (isNode(node.ast) ? node.ast.loc : undefined)) as
      | Location
      | undefined;
    const at = location?.start.offset ?? parentAt;
    const problem = Array.isArray(node) ? null : nodeProblem(node);
    if (problem) {
      const offset = location ? at : offsetNear(statement, at, problem.near);
      return { message: problem.message, position: positionOf(offset, text) };
    }
    for (const [key, child] of Object.entries(node).reverse()) {
      if (key !== 'loc') stack.push({ node: child, at });
    }
  }
  return null;
}

/** Whether the statement is still just `SELECT 1 FROM t WHERE (…)`: nothing got appended. */
function isPlainSelect(statement: Node): boolean {
  const limit = statement.limit;
  const limited = isNode(limit) && Array.isArray(limit.value) && limit.value.length > 0;
  return (
    statement.type === 'select' &&
    !statement._next &&
    !statement.set_op &&
    !statement.with &&
    !statement.groupby &&
    !statement.having &&
    !statement.orderby &&
    !limited &&
    isNode(statement.where)
  );
}

/**
 * Parses the predicate with the dialect's SQL grammar and checks it is exactly one boolean
 * expression over the row: no subquery, set operation, variable, aggregate, or function outside
 * `WHERE_FUNCTIONS`.
 */
export function checkWhereSyntax(text: string, dialect: WhereDialect): WhereProblem | null {
  let firstError: WhereProblem | null = null;
  for (const database of dialect.parserDatabases) {
    const parser = PARSERS[database];
    if (!parser) throw new Error(`No SQL grammar is loaded for ${database}.`);
    let parsed: unknown;
    try {
      parsed = parser.astify(`${PREFIX}${text}${SUFFIX}`, {
        database,
        parseOptions: { includeLocations: true },
      });
    } catch (error) {
      const location = isNode(error) ? (error.location as Location | undefined) : undefined;
      firstError ??= {
        message: 'this is not a valid SQL expression here',
        position: positionOf(location?.start.offset ?? PREFIX.length, text),
      };
      continue;
    }
    const statements = Array.isArray(parsed) ? parsed : [parsed];
    const statement = statements[0];
    if (statements.length !== 1 || !isNode(statement) || !isPlainSelect(statement)) {
      return { message: 'a where predicate must be exactly one boolean expression', position: 1 };
    }
    return findProblem(statement.where as Node, text);
  }
  return firstError;
}
