import type { Pool } from 'mysql2/promise';
import { sourceErrorFrom } from '../errors.ts';
import {
  optional,
  probeConnectorOptions,
  type ServerProbe,
  type ServerProbeReport,
  timed,
} from '../server-probe.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
  mySqlTlsNegotiation,
} from './mysql-connection-options.ts';
import { loadMysql2 } from './mysql-driver.ts';
import { readMySqlReplicationFacts } from './mysql-replication-facts.ts';
import { mySqlReplicationReadiness } from './mysql-replication-readiness.ts';

type Mysql2 = Awaited<ReturnType<typeof loadMysql2>>;

/** The server's own schemas: never a source, so never offered. */
export const MYSQL_SYSTEM_SCHEMAS = ['mysql', 'information_schema', 'performance_schema', 'sys'];

type Row = Record<string, unknown>;

function pool(mysql: Mysql2, options: MySqlConnectorOptions, useTls: boolean): Pool {
  const created = mysql.createPool({
    ...mySqlConnectionOptions(options, useTls),
    // No database: the probe lists them.
    database: options.database === '' ? undefined : options.database,
    connectionLimit: 1,
  });
  // An idle connection that drops emits 'error' on the pool; the next query reconnects.
  created.on('connection', (connection) => connection.on('error', () => {}));
  return created.promise();
}

async function report(connection: Pool): Promise<ServerProbeReport> {
  // The first query opens the connection; the latency is the second one's round trip.
  await connection.query('SELECT 1');
  const latencyMs = await timed(() => connection.query('SELECT 1'));
  const [rows] = (await connection.query('SHOW DATABASES')) as [Row[], unknown];
  const availableSchemas = rows
    .map((row) => String(Object.values(row)[0]))
    .filter((name) => !MYSQL_SYSTEM_SCHEMAS.includes(name.toLowerCase()))
    .sort();
  const estimatedSizeBytes = await optional(async () => {
    const [sizeRows] = (await connection.query(
      `SELECT COALESCE(SUM(data_length + index_length), 0) AS bytes
       FROM information_schema.TABLES WHERE table_schema NOT IN (?)`,
      [MYSQL_SYSTEM_SCHEMAS],
    )) as [Row[], unknown];
    const bytes = Number(sizeRows[0]?.bytes);
    return Number.isFinite(bytes) ? bytes : undefined;
  });
  const facts = await readMySqlReplicationFacts(connection);
  const readiness = mySqlReplicationReadiness(facts);
  return {
    latencyMs,
    estimatedSizeBytes,
    availableSchemas,
    changeLog: {
      logBin: facts.logBin,
      format: facts.format,
      serverId: facts.serverId,
      ready: readiness.ready,
      issues: readiness.issues,
    },
  };
}

/** MySQL and MariaDB: `SHOW DATABASES`, information_schema sizes, the binlog settings. */
export const mySqlServerProbe: ServerProbe = {
  backend: 'mysql',
  async probe(target) {
    const options = probeConnectorOptions(target, '');
    const sourceTarget = mySqlTarget(options);
    try {
      // The same TLS handling as the connector's connections, `prefer` fallback included.
      const mysql = await loadMysql2();
      return await mySqlTlsNegotiation(options).connect(async (useTls) => {
        const connection = pool(mysql, options, useTls);
        try {
          return await report(connection);
        } finally {
          await connection.end().catch(() => {});
        }
      });
    } catch (error) {
      throw sourceErrorFrom(error, sourceTarget, 'checking the server');
    }
  },
};
