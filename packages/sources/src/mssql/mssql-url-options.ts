import { SourceConfigError } from '../errors.ts';
import type { MsSqlConnectorOptions } from './mssql-connection-options.ts';

/** What every source URL names, already decoded by `parseSourceUrl`. */
interface UrlBasics {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string | undefined;
  readonly database: string;
}

function invalid(reason: string): SourceConfigError {
  return new SourceConfigError('invalid_source_url', `The source URL ${reason}.`);
}

/** `true` / `false` (any case) or absent; anything else is a mistake worth reporting. */
function flag(params: URLSearchParams, name: string): boolean | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw invalid(`has "${name}" set to neither true nor false`);
}

/**
 * The SQL Server part of `mssql://user:pass@host:1433/db?schema=dbo&encrypt=true&
 * trustServerCertificate=false` (`sqlserver://` too): the schema defaults to `dbo`, encryption
 * to on and certificate trust to off, as the driver's own defaults.
 */
export function msSqlUrlOptions(params: URLSearchParams, basics: UrlBasics): MsSqlConnectorOptions {
  const schema = params.get('schema') ?? 'dbo';
  if (schema === '') throw invalid('names an empty schema');
  return {
    ...basics,
    schema,
    encrypt: flag(params, 'encrypt') ?? true,
    trustServerCertificate: flag(params, 'trustServerCertificate') ?? false,
  };
}
