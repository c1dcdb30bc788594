import { inject } from 'vitest';
import './global-setup.ts';
import { type DatabaseAdmin, mariaDbAdmin, postgresAdmin } from './test-database.ts';

/** The run's MariaDB server (integration tests only). */
export function testMariaDb(): DatabaseAdmin {
  return mariaDbAdmin(inject('mariadbUrl'));
}

/** The run's PostgreSQL server (integration tests only). */
export function testPostgres(): DatabaseAdmin {
  return postgresAdmin(inject('postgresUrl'));
}
