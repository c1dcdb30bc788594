/** The database a server-level connection logs in to, per backend. */
const SERVER_DATABASES: Record<string, string> = {
  mysql: 'information_schema',
  postgres: 'postgres',
  mssql: 'master',
};

/**
 * A database's `sourceSchema` as the source sees it. MySQL: the database (MySQL's schemas are
 * its databases). PostgreSQL and SQL Server: `<database>` or `<database>/<schema>`; the schema
 * defaults to the connector's (`public`, `dbo`). Undefined names the server's own database.
 */
export function splitSourceSchema(
  backend: string,
  sourceSchema: string | undefined,
): { database: string; schema: string | undefined } {
  if (sourceSchema === undefined || sourceSchema === '') {
    return { database: SERVER_DATABASES[backend] ?? '', schema: undefined };
  }
  if (backend === 'mysql') return { database: sourceSchema, schema: undefined };
  const slash = sourceSchema.indexOf('/');
  if (slash < 0) return { database: sourceSchema, schema: undefined };
  const schema = sourceSchema.slice(slash + 1);
  return { database: sourceSchema.slice(0, slash), schema: schema === '' ? undefined : schema };
}
