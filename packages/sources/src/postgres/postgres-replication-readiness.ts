import type { Pool } from 'pg';
import type { ReplicationReadiness } from '../replication.ts';

/** What decides whether a PostgreSQL source can run change data capture. */
export interface PostgresReplicationFacts {
  /** `server_version_num`, e.g. 150004. */
  readonly serverVersionNum: number;
  readonly walLevel: string;
  readonly maxReplicationSlots: number;
  readonly freeReplicationSlots: number;
  /** This connector's slot exists already: re-creating it needs no free slot. */
  readonly slotExists: boolean;
  readonly maxWalSenders: number;
  /** The REPLICATION attribute, superuser, or (Amazon RDS) membership in `rds_replication`. */
  readonly replicationPrivilege: boolean;
  /** CREATE on the database (owners and superusers have it): needed for CREATE PUBLICATION. */
  readonly canCreatePublication: boolean;
}

const FACTS_SQL = `
SELECT current_setting('server_version_num')::int AS server_version_num,
  current_setting('wal_level') AS wal_level,
  current_setting('max_replication_slots')::int AS max_replication_slots,
  (SELECT count(*) FROM pg_catalog.pg_replication_slots)::int AS used_replication_slots,
  EXISTS (SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_name = $1) AS slot_exists,
  current_setting('max_wal_senders')::int AS max_wal_senders,
  r.rolsuper OR r.rolreplication OR EXISTS (
    SELECT 1 FROM pg_catalog.pg_roles m
    WHERE m.rolname = 'rds_replication' AND pg_catalog.pg_has_role(r.oid, m.oid, 'member')
  ) AS replication_privilege,
  pg_catalog.has_database_privilege(current_database(), 'CREATE') AS can_create
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`;

/** Reads the facts as the connector's user sees them; `slotName` is its slot's name. */
export async function postgresReplicationFacts(
  pool: Pool,
  slotName: string,
): Promise<PostgresReplicationFacts> {
  const { rows } = await pool.query<Record<string, unknown>>(FACTS_SQL, [slotName]);
  const row = rows[0] ?? {};
  const maxReplicationSlots = Number(row.max_replication_slots);
  return {
    serverVersionNum: Number(row.server_version_num),
    walLevel: String(row.wal_level),
    maxReplicationSlots,
    freeReplicationSlots: Math.max(0, maxReplicationSlots - Number(row.used_replication_slots)),
    slotExists: row.slot_exists === true,
    maxWalSenders: Number(row.max_wal_senders),
    replicationPrivilege: row.replication_privilege === true,
    canCreatePublication: row.can_create === true,
  };
}

function versionName(num: number): string {
  // 90624 is 9.6.24; from 10 on, 150004 is 15.4.
  const major = Math.floor(num / 10_000);
  return num >= 100_000 ? String(major) : `${major}.${Math.floor(num / 100) % 100}`;
}

/** One sentence per problem, each saying what to change. */
export function postgresReplicationIssues(facts: PostgresReplicationFacts): string[] {
  const issues: string[] = [];
  if (facts.serverVersionNum < 100_000) {
    issues.push(
      `Upgrade to PostgreSQL 10 or later (it is ${versionName(facts.serverVersionNum)}): change data capture needs logical replication with pgoutput.`,
    );
  }
  if (facts.walLevel !== 'logical') {
    issues.push(`Set wal_level=logical (it is ${facts.walLevel}) and restart the server.`);
  }
  if (facts.maxReplicationSlots < 1) {
    issues.push(
      `Set max_replication_slots to at least 1 (it is ${facts.maxReplicationSlots}) and restart the server.`,
    );
  } else if (facts.freeReplicationSlots < 1 && !facts.slotExists) {
    issues.push(
      `All ${facts.maxReplicationSlots} replication slots are in use: drop an unused one, or raise max_replication_slots and restart the server.`,
    );
  }
  if (facts.maxWalSenders < 1) {
    issues.push(
      `Set max_wal_senders to at least 1 (it is ${facts.maxWalSenders}) and restart the server.`,
    );
  }
  if (!facts.replicationPrivilege) {
    issues.push(
      'Give the user the REPLICATION attribute (or make it a superuser), so that it can stream changes.',
    );
  }
  if (!facts.canCreatePublication) {
    issues.push(
      'Grant the user CREATE on the database, so that it can create the publication of the followed tables.',
    );
  }
  return issues;
}

/** The facts and the verdict, in the connector-neutral form. */
export function postgresReplicationReadiness(
  facts: PostgresReplicationFacts,
): ReplicationReadiness {
  const issues = postgresReplicationIssues(facts);
  return { ready: issues.length === 0, issues, facts: { ...facts } };
}
