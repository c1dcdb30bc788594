import type pg from 'pg';
import { sourceErrorFrom } from '../errors.ts';
import {
  optional,
  probeConnectorOptions,
  type ServerProbe,
  type ServerProbeReport,
  timed,
} from '../server-probe.ts';
import {
  postgresConnectionConfig,
  postgresTarget,
  postgresTlsNegotiation,
} from './postgres-connection-options.ts';
import { loadPg } from './postgres-driver.ts';
import {
  postgresReplicationFacts,
  postgresReplicationIssues,
} from './postgres-replication-readiness.ts';

/** Databases the user may connect to; templates are never a source. */
const DATABASES_SQL = `
SELECT datname FROM pg_catalog.pg_database
WHERE NOT datistemplate AND datallowconn AND has_database_privilege(datname, 'CONNECT')
ORDER BY datname`;

const SIZE_SQL =
  'SELECT COALESCE(SUM(pg_catalog.pg_database_size(name)), 0)::text AS bytes FROM unnest($1::text[]) AS name';

async function report(pool: pg.Pool): Promise<ServerProbeReport> {
  // The first query opens the connection; the latency is the second one's round trip.
  await pool.query('SELECT 1');
  const latencyMs = await timed(() => pool.query('SELECT 1'));
  const { rows } = await pool.query<{ datname: string }>(DATABASES_SQL);
  const availableSchemas = rows.map((row) => row.datname).sort();
  const estimatedSizeBytes = await optional(async () => {
    const result = await pool.query<{ bytes: string }>(SIZE_SQL, [availableSchemas]);
    const bytes = Number(result.rows[0]?.bytes);
    return Number.isFinite(bytes) ? bytes : undefined;
  });
  // No slot of ours exists yet: a free one is needed.
  const facts = await postgresReplicationFacts(pool, '');
  const issues = postgresReplicationIssues(facts);
  return {
    latencyMs,
    estimatedSizeBytes,
    availableSchemas,
    changeLog: {
      logBin: facts.walLevel === 'logical',
      format: facts.walLevel,
      serverId: null,
      ready: issues.length === 0,
      issues,
    },
  };
}

/**
 * PostgreSQL: logs in to `database` (default `postgres`), lists the databases the user may
 * connect to, sums their `pg_database_size`, and checks logical replication.
 */
export const postgresServerProbe: ServerProbe = {
  backend: 'postgres',
  async probe(target) {
    const options = probeConnectorOptions(target, 'postgres');
    try {
      // The same TLS handling as the connector's connections, `prefer` fallback included.
      const { Pool } = await loadPg();
      return await postgresTlsNegotiation(options).connect(async (useTls) => {
        const pool = new Pool({ ...postgresConnectionConfig(options, useTls), max: 1 });
        pool.on('error', () => {});
        try {
          return await report(pool);
        } finally {
          await pool.end().catch(() => {});
        }
      });
    } catch (error) {
      throw sourceErrorFrom(error, postgresTarget(options), 'checking the server');
    }
  },
};
