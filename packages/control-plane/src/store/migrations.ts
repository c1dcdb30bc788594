import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';

/**
 * The store's migrations, in order. Each one is plain PostgreSQL that runs unchanged on a
 * PostgreSQL server and on PGlite. Never edit a migration that has shipped: add the next one.
 */
const MIGRATIONS: Record<string, Migration> = {
  '001-initial': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        CREATE TABLE accounts (
          id uuid PRIMARY KEY,
          email text NOT NULL,
          plan text NOT NULL DEFAULT 'free',
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE users (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          email text NOT NULL,
          subject text NOT NULL UNIQUE,
          created_at timestamptz NOT NULL DEFAULT now(),
          last_seen_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX users_account ON users(account_id);
        CREATE TABLE management_keys (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          user_id uuid NOT NULL REFERENCES users(id),
          name text NOT NULL,
          prefix text NOT NULL,
          key_hash text NOT NULL UNIQUE,
          created_at timestamptz NOT NULL DEFAULT now(),
          last_used_at timestamptz,
          revoked_at timestamptz
        );
        CREATE TABLE connections (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          name text NOT NULL,
          backend text NOT NULL,
          host text NOT NULL,
          port integer NOT NULL,
          username text NOT NULL,
          password_enc text NOT NULL,
          default_region text NOT NULL,
          tls_mode text NOT NULL,
          ssh jsonb,
          ssh_private_key_enc text,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          deleted_at timestamptz
        );
        CREATE INDEX connections_account ON connections(account_id) WHERE deleted_at IS NULL;
        CREATE TABLE databases (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          connection_id uuid NOT NULL REFERENCES connections(id),
          name text NOT NULL,
          source_schema text NOT NULL,
          schema_config jsonb NOT NULL,
          region text NOT NULL,
          instance_size text NOT NULL,
          sync_mode text NOT NULL,
          sync_interval integer NOT NULL,
          log_level text NOT NULL,
          safety_net integer NOT NULL,
          status text NOT NULL,
          goal jsonb,
          lease_owner text,
          lease_until timestamptz,
          replication_paused boolean NOT NULL DEFAULT false,
          key_secret_enc text NOT NULL,
          keys_version integer NOT NULL DEFAULT 1,
          deployed_config jsonb,
          current_build_id uuid,
          last_error text,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          deleted_at timestamptz
        );
        CREATE INDEX databases_account ON databases(account_id) WHERE deleted_at IS NULL;
        CREATE INDEX databases_goal ON databases(lease_until) WHERE goal IS NOT NULL;
        CREATE TABLE builds (
          id uuid PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          account_id uuid NOT NULL REFERENCES accounts(id),
          region text NOT NULL,
          status text NOT NULL,
          builder_job_id text,
          image_uri text,
          artifact_hash text,
          error text,
          compute_type text,
          attempts integer NOT NULL DEFAULT 0,
          lease_owner text,
          lease_until timestamptz,
          started_at timestamptz,
          finished_at timestamptz,
          duration_seconds integer,
          cost_estimate_cents integer,
          created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX builds_database ON builds(database_id, created_at DESC);
        CREATE INDEX builds_queue ON builds(status, created_at) WHERE status IN ('queued', 'in_progress');
        CREATE TABLE log_lines (
          id bigserial PRIMARY KEY,
          stream_id uuid NOT NULL,
          ts bigint NOT NULL,
          message text NOT NULL
        );
        CREATE INDEX log_lines_stream ON log_lines(stream_id, id);
        CREATE TABLE deployments (
          id uuid PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          build_id uuid,
          action text NOT NULL,
          status text NOT NULL,
          started_at timestamptz NOT NULL DEFAULT now(),
          finished_at timestamptz
        );
        CREATE INDEX deployments_database ON deployments(database_id, started_at DESC);
        CREATE TABLE instances (
          id uuid PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          build_id uuid,
          driver text NOT NULL,
          container_ref text,
          endpoint_url text,
          port integer,
          pid integer,
          control_key_id text NOT NULL,
          keys_version integer NOT NULL DEFAULT 0,
          health_status text,
          snapshot_age_ms bigint,
          swap_count integer,
          row_counts jsonb,
          last_health_check timestamptz,
          restarts integer NOT NULL DEFAULT 0,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          removed_at timestamptz
        );
        CREATE UNIQUE INDEX instances_live ON instances(database_id) WHERE removed_at IS NULL;
        CREATE TABLE api_keys (
          id uuid PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          account_id uuid NOT NULL REFERENCES accounts(id),
          key_id text NOT NULL UNIQUE,
          name text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX api_keys_database ON api_keys(database_id);
        CREATE TABLE audit_events (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          database_id uuid,
          entity_type text NOT NULL,
          entity_id uuid NOT NULL,
          event_type text NOT NULL,
          payload jsonb,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX audit_events_account ON audit_events(account_id, created_at DESC);
        CREATE INDEX audit_events_database ON audit_events(database_id, created_at DESC);
        CREATE TABLE notifications (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          database_id uuid,
          event_type text NOT NULL,
          message text NOT NULL,
          detail text,
          severity text NOT NULL,
          sticky boolean NOT NULL DEFAULT false,
          seen_at timestamptz,
          skipped boolean NOT NULL DEFAULT false,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX notifications_database ON notifications(database_id, created_at DESC);
        CREATE TABLE service_heartbeats (
          process_id text PRIMARY KEY,
          name text NOT NULL,
          revision integer NOT NULL,
          region text NOT NULL,
          started_at timestamptz NOT NULL DEFAULT now(),
          last_seen_at timestamptz NOT NULL DEFAULT now()
        );
      `,
      );
    },
  },
  '002-builds': {
    async up(db: Kysely<unknown>) {
      // What each build compiled, so the API can tell the database has changed since.
      await runStatements(db, 'ALTER TABLE builds ADD COLUMN config_hash text');
    },
  },
  '003-event-order': {
    async up(db: Kysely<unknown>) {
      // Insertion order, to order events made within the same clock tick.
      await runStatements(
        db,
        `ALTER TABLE notifications ADD COLUMN seq bigserial;
        ALTER TABLE audit_events ADD COLUMN seq bigserial`,
      );
    },
  },
};

/** Runs `;`-separated DDL one statement at a time (PGlite's extended protocol takes one). */
async function runStatements(db: Kysely<unknown>, text: string): Promise<void> {
  for (const statement of text.split(/;\s*\n/)) {
    if (statement.trim()) await sql.raw(statement).execute(db);
  }
}

const provider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

/** Brings the store's schema up to date; safe to call from several processes at once. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error');
    throw new Error(
      `Store migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message}`,
    );
  }
}
