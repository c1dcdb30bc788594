import { sourceDialect } from '@replix/sources';

/**
 * A database's `sourceSchema` as the source sees it. Where the database is the schema (MySQL):
 * the database. Elsewhere (PostgreSQL, SQL Server): `<database>` or `<database>/<schema>`; the
 * schema defaults to the connector's (`public`, `dbo`). Undefined names the server's own
 * database (the dialect's `serverDatabase`).
 */
export function splitSourceSchema(
  backend: string,
  sourceSchema: string | undefined,
): { database: string; schema: string | undefined } {
  const dialect = sourceDialect(backend);
  if (sourceSchema === undefined || sourceSchema === '') {
    return { database: dialect.serverDatabase, schema: undefined };
  }
  if (dialect.databaseIsSchema) return { database: sourceSchema, schema: undefined };
  const slash = sourceSchema.indexOf('/');
  if (slash < 0) return { database: sourceSchema, schema: undefined };
  const schema = sourceSchema.slice(slash + 1);
  return { database: sourceSchema.slice(0, slash), schema: schema === '' ? undefined : schema };
}
