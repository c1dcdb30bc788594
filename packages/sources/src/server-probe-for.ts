import type { SourceBackend } from './connector.ts';
import { msSqlServerProbe } from './mssql/mssql-server-probe.ts';
import { mySqlServerProbe } from './mysql/mysql-server-probe.ts';
import { postgresServerProbe } from './postgres/postgres-server-probe.ts';
import type { ServerProbe } from './server-probe.ts';

const PROBES: Record<SourceBackend, ServerProbe> = {
  mysql: mySqlServerProbe,
  postgres: postgresServerProbe,
  mssql: msSqlServerProbe,
};

/** The server probe of a backend (the connection test's checks). */
export function serverProbeFor(backend: SourceBackend): ServerProbe {
  return PROBES[backend];
}
