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
  '004-webhooks': {
    async up(db: Kysely<unknown>) {
      // Webhook subscriptions (secret sealed), one durable delivery job per event and
      // subscription (the exact body bytes, a stable event id, lease columns for the worker),
      // and one row per HTTP attempt for the delivery history.
      await runStatements(
        db,
        `CREATE TABLE webhook_subscriptions (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          database_id uuid NOT NULL REFERENCES databases(id),
          url text NOT NULL,
          event_types jsonb NOT NULL,
          description text,
          secret_enc text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX webhook_subscriptions_database ON webhook_subscriptions(database_id);
        CREATE TABLE webhook_deliveries (
          id uuid PRIMARY KEY,
          seq bigserial,
          subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
          account_id uuid NOT NULL,
          database_id uuid NOT NULL,
          event_id text NOT NULL,
          event_type text NOT NULL,
          body text NOT NULL,
          status text NOT NULL,
          attempt_count integer NOT NULL DEFAULT 0,
          max_attempts integer NOT NULL,
          next_attempt_at timestamptz,
          last_attempt_at timestamptz,
          last_status_code integer,
          last_error text,
          delivered_at timestamptz,
          lease_owner text,
          lease_until timestamptz,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries(subscription_id, created_at DESC);
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status IN ('pending', 'retrying');
        CREATE TABLE webhook_attempts (
          id uuid PRIMARY KEY,
          seq bigserial,
          delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
          attempt integer NOT NULL,
          attempted_at timestamptz NOT NULL,
          duration_ms integer NOT NULL,
          status_code integer,
          error text,
          succeeded boolean NOT NULL
        );
        CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, seq DESC)`,
      );
    },
  },
  '005-billing': {
    async up(db: Kysely<unknown>) {
      // Subscriptions and overage per account, checkout/portal sessions (only the hash of their
      // unguessable token), provider webhook events seen (each applied once), terms acceptances.
      await runStatements(
        db,
        `CREATE TABLE billing_accounts (
          account_id uuid PRIMARY KEY REFERENCES accounts(id),
          provider text NOT NULL,
          customer_id text,
          subscription_id text,
          subscription_status text NOT NULL DEFAULT 'none',
          subscription_plan text,
          renewal_payments integer NOT NULL DEFAULT 0,
          last_renewal_at timestamptz,
          overage_enabled boolean NOT NULL DEFAULT false,
          spending_cap_cents integer,
          updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX billing_accounts_customer ON billing_accounts(provider, customer_id);
        CREATE INDEX billing_accounts_subscription ON billing_accounts(provider, subscription_id);
        CREATE TABLE billing_sessions (
          id uuid PRIMARY KEY,
          token_hash text NOT NULL UNIQUE,
          account_id uuid NOT NULL REFERENCES accounts(id),
          kind text NOT NULL,
          plan text,
          status text NOT NULL DEFAULT 'open',
          created_at timestamptz NOT NULL DEFAULT now(),
          expires_at timestamptz NOT NULL,
          completed_at timestamptz
        );
        CREATE TABLE billing_events (
          provider text NOT NULL,
          event_id text NOT NULL,
          event_type text NOT NULL,
          received_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (provider, event_id)
        );
        CREATE TABLE tos_acceptances (
          user_id uuid NOT NULL REFERENCES users(id),
          account_id uuid NOT NULL REFERENCES accounts(id),
          version text NOT NULL,
          accepted_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (user_id, version)
        )`,
      );
    },
  },
  '006-teams': {
    async up(db: Kysely<unknown>) {
      // Team roles (every existing user is their personal account's only user: its owner),
      // invitations, and the built-in identity's second factor (TOTP, recovery codes, a
      // failure log for rate limiting).
      await runStatements(
        db,
        `ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'owner';
        ALTER TABLE users ADD COLUMN totp_secret_enc text;
        ALTER TABLE users ADD COLUMN totp_pending_enc text;
        ALTER TABLE users ADD COLUMN totp_enabled_at timestamptz;
        ALTER TABLE users ADD COLUMN totp_last_step bigint;
        CREATE TABLE team_invitations (
          id uuid PRIMARY KEY,
          account_id uuid NOT NULL REFERENCES accounts(id),
          email text NOT NULL,
          role text NOT NULL,
          token_hash text NOT NULL UNIQUE,
          invited_by uuid NOT NULL REFERENCES users(id),
          created_at timestamptz NOT NULL DEFAULT now(),
          expires_at timestamptz NOT NULL,
          accepted_at timestamptz,
          revoked_at timestamptz
        );
        CREATE INDEX team_invitations_account ON team_invitations(account_id);
        CREATE TABLE recovery_codes (
          id uuid PRIMARY KEY,
          user_id uuid NOT NULL REFERENCES users(id),
          code_hash text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          used_at timestamptz
        );
        CREATE INDEX recovery_codes_user ON recovery_codes(user_id);
        CREATE TABLE second_factor_failures (
          id uuid PRIMARY KEY,
          user_id uuid NOT NULL REFERENCES users(id),
          created_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX second_factor_failures_user ON second_factor_failures(user_id, created_at)`,
      );
    },
  },
  '007-login-links': {
    async up(db: Kysely<unknown>) {
      // Redeemed one-time login links (the link itself is a signed, short-lived JWT).
      await runStatements(
        db,
        `CREATE TABLE login_link_redemptions (
          link_id uuid PRIMARY KEY,
          redeemed_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
    },
  },
  '008-api-key-scopes': {
    async up(db: Kysely<unknown>) {
      // A key's scope on its instance: 'query' (queries and /schema) or 'admin' (everything).
      // Keys made before scopes existed could do everything, but were made to query: they
      // become query keys.
      await runStatements(
        db,
        `ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'query'
          CHECK (scope IN ('query', 'admin'))`,
      );
    },
  },
  '009-connection-tests': {
    async up(db: Kysely<unknown>) {
      // A source user may have no password (MariaDB, PostgreSQL trust); a connection keeps
      // the result of its last test (on create, update or an explicit test).
      await runStatements(
        db,
        `ALTER TABLE connections ALTER COLUMN password_enc DROP NOT NULL;
        ALTER TABLE connections ADD COLUMN last_test jsonb;
        ALTER TABLE connections ADD COLUMN last_tested_at timestamptz`,
      );
    },
  },
  '010-instance-metrics-samples': {
    async up(db: Kysely<unknown>) {
      // Readings of each instance's metrics taken by the health monitor, so the dashboard's
      // charts show the last day whether or not a page was open. Pruned by the monitor.
      await runStatements(
        db,
        `CREATE TABLE instance_metrics_samples (
          id bigserial PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          instance_id uuid NOT NULL REFERENCES instances(id),
          sampled_at timestamptz NOT NULL DEFAULT now(),
          queries_ok double precision NOT NULL,
          queries_err double precision NOT NULL,
          snapshot_bytes double precision NOT NULL,
          snapshot_age_seconds double precision NOT NULL,
          swap_count double precision NOT NULL,
          table_rows jsonb NOT NULL,
          query_duration_sum double precision NOT NULL,
          query_duration_count double precision NOT NULL
        );
        CREATE INDEX instance_metrics_samples_database
          ON instance_metrics_samples(database_id, sampled_at);
        CREATE INDEX instance_metrics_samples_time ON instance_metrics_samples(sampled_at)`,
      );
    },
  },
  '011-audit-actors': {
    async up(db: Kysely<unknown>) {
      // Who made each change: a user (their email), a management key (its name) or the system
      // (background roles). Events recorded before this have none.
      await runStatements(
        db,
        `ALTER TABLE audit_events ADD COLUMN actor_type text
          CHECK (actor_type IN ('user', 'management_key', 'system'));
        ALTER TABLE audit_events ADD COLUMN actor_id text;
        ALTER TABLE audit_events ADD COLUMN actor_name text`,
      );
    },
  },
  '012-stable-endpoints': {
    async up(db: Kysely<unknown>) {
      // Each database keeps one endpoint for life (its port and URL, given at its first
      // deploy); instances listen on a private address the endpoint forwards to. A deploy
      // starts the new instance as the database's standby beside the serving one and swaps
      // them once it is ready: one serving and one standby instance at most.
      await runStatements(
        db,
        `ALTER TABLE databases ADD COLUMN endpoint_port integer;
        ALTER TABLE databases ADD COLUMN endpoint_url text;
        ALTER TABLE instances ADD COLUMN private_url text;
        ALTER TABLE instances ADD COLUMN standby boolean NOT NULL DEFAULT false;
        UPDATE instances SET private_url = endpoint_url;
        DROP INDEX instances_live;
        CREATE UNIQUE INDEX instances_live ON instances(database_id) WHERE removed_at IS NULL AND NOT standby;
        CREATE UNIQUE INDEX instances_standby ON instances(database_id) WHERE removed_at IS NULL AND standby`,
      );
    },
  },
  '013-database-sync-mode-reason': {
    async up(db: Kysely<unknown>) {
      // Why a new database on a source that cannot do CDC was set to poll.
      await runStatements(db, 'ALTER TABLE databases ADD COLUMN sync_mode_reason text');
    },
  },
  '014-read-replicas': {
    async up(db: Kysely<unknown>) {
      // Read replicas: how many the database runs (plan-limited), and per live instance the
      // private address of each replica (by ordinal) and each one's last health reading.
      await runStatements(
        db,
        `ALTER TABLE databases ADD COLUMN replicas integer NOT NULL DEFAULT 1 CHECK (replicas >= 1);
        ALTER TABLE instances ADD COLUMN replica_urls jsonb;
        ALTER TABLE instances ADD COLUMN replica_health jsonb`,
      );
    },
  },
  '015-replication-sources': {
    async up(db: Kysely<unknown>) {
      // Each source a database's instances followed, with the settings they were launched
      // with (the password and SSH key as sealed), so terminate and resize drop the source's
      // replication state where it is, however the connection has changed since. The drop is
      // a job on the row: the state of ordinals drop_from .. replicas_launched - 1 waits to be
      // dropped, retried until drop_failed_at (then an operator drops it by hand).
      await runStatements(
        db,
        `CREATE TABLE replication_sources (
          id uuid PRIMARY KEY,
          database_id uuid NOT NULL REFERENCES databases(id),
          account_id uuid NOT NULL REFERENCES accounts(id),
          source_key text NOT NULL,
          backend text NOT NULL,
          host text NOT NULL,
          port integer NOT NULL,
          username text NOT NULL,
          password_enc text,
          tls_mode text NOT NULL,
          ssh jsonb,
          ssh_private_key_enc text,
          source_schema text NOT NULL,
          replication_id text NOT NULL,
          replicas_launched integer NOT NULL CHECK (replicas_launched >= 0),
          drop_from integer CHECK (drop_from >= 0),
          drop_attempts integer NOT NULL DEFAULT 0,
          drop_error text,
          drop_failed_at timestamptz,
          lease_owner text,
          lease_until timestamptz,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE UNIQUE INDEX replication_sources_source ON replication_sources(database_id, source_key);
        CREATE INDEX replication_sources_drops ON replication_sources(lease_until)
          WHERE drop_from IS NOT NULL AND drop_failed_at IS NULL`,
      );
    },
  },
  '016-typed-goal-phases': {
    async up(db: Kysely<unknown>) {
      // Goals in flight take the phases of `domain/goal.ts`, so the reconciler reads no other:
      // a deploy recorded without a deployment starts its deployment again (a build goal from
      // its succeeded build); one before stable endpoints (`deploy:replace`, or a later phase
      // naming no instance) records its new instance again.
      await runStatements(
        db,
        `UPDATE databases
          SET goal = CASE WHEN goal->>'action' IN ('provision', 'rebuild')
            THEN jsonb_set(goal, '{phase}', '"deploy"') ELSE goal - 'phase' END
          WHERE goal->>'phase' LIKE 'deploy:%' AND goal->>'deploymentId' IS NULL;
        UPDATE databases
          SET goal = jsonb_set(goal - 'instanceId' - 'previousInstanceId', '{phase}', '"deploy:prepare"')
          WHERE goal->>'phase' = 'deploy:replace'
            OR (goal->>'phase' LIKE 'deploy:%' AND goal->>'instanceId' IS NULL)`,
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
