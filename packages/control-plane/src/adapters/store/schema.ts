import type { ColumnType, Generated } from 'kysely';
import type { Goal } from '../../domain/goal.ts';

/** A timestamp the database fills in when an insert leaves it out. */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A column with a database default. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
/** A jsonb column: read parsed, written as JSON text (pg would turn arrays into PG arrays). */
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface AccountTable {
  id: string;
  email: string;
  plan: string;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface UserTable {
  id: string;
  account_id: string;
  email: string;
  subject: string;
  created_at: DefaultTimestamp;
  last_seen_at: DefaultTimestamp;
  /** owner | admin | member (migration 006-teams). */
  role: Defaulted<string>;
  /** The confirmed TOTP secret, sealed; null while 2FA is off. */
  totp_secret_enc: string | null;
  /** A secret enrolled but not yet confirmed, sealed. */
  totp_pending_enc: string | null;
  totp_enabled_at: NullableTimestamp;
  /** The last TOTP time step accepted, so a code cannot be used twice. */
  totp_last_step: ColumnType<string | null, number | null, number | null>;
}

/** An invitation to join an account with a role (migration 006-teams). */
export interface TeamInvitationTable {
  id: string;
  account_id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by: string;
  created_at: DefaultTimestamp;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  accepted_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

/** One-time 2FA recovery codes, hashed (migration 006-teams). */
export interface RecoveryCodeTable {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: DefaultTimestamp;
  used_at: NullableTimestamp;
}

/** One-time login links already used (migration 007-login-links). */
export interface LoginLinkRedemptionTable {
  link_id: string;
  redeemed_at: DefaultTimestamp;
}

/** Wrong second-factor codes, counted for rate limiting (migration 006-teams). */
export interface SecondFactorFailureTable {
  id: string;
  user_id: string;
  created_at: DefaultTimestamp;
}

export interface ManagementKeyTable {
  id: string;
  account_id: string;
  user_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: DefaultTimestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface SshTunnelSettings {
  host: string;
  port: number;
  user: string;
}

export interface ConnectionTable {
  id: string;
  account_id: string;
  name: string;
  backend: string;
  host: string;
  port: number;
  username: string;
  /** Sealed; null when the source user has no password. */
  password_enc: string | null;
  default_region: string;
  tls_mode: string;
  ssh: NullableJson<SshTunnelSettings>;
  ssh_private_key_enc: string | null;
  /** The last connection test's result (`StoredConnectionTest`); null before any test. */
  last_test: NullableJson<StoredConnectionTest>;
  last_tested_at: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  deleted_at: NullableTimestamp;
}

/** What a connection keeps of its last test: the outcome and the change-log readiness. */
export interface StoredConnectionTest {
  ok: boolean;
  error?: string;
  failedCheck?: string;
  latencyMs?: number;
  binlog?: {
    logBin: boolean;
    format: string | null;
    serverId: number | null;
    ready: boolean;
    issues: string[];
  };
}

/** The runtime settings an instance was started with. */
export interface DeployedInstanceConfig {
  instanceSize: string;
  taskCpu: number;
  taskMemoryMb: number;
  syncMode: string;
  syncInterval: number;
  logLevel: string;
  safetyNet: number;
  /** Read replicas the instance runs; absent (1) in configs recorded before replicas. */
  replicas?: number;
}

export interface DatabaseTable {
  id: string;
  account_id: string;
  connection_id: string;
  name: string;
  source_schema: string;
  schema_config: Json<Record<string, unknown>>;
  region: string;
  instance_size: string;
  /** Read replicas each instance runs, 1 … the plan's maxReplicas (migration 014). */
  replicas: Defaulted<number>;
  sync_mode: string;
  sync_interval: number;
  /** Why Replix chose the sync mode (the source cannot do CDC); null once the user chose. */
  sync_mode_reason: string | null;
  log_level: string;
  safety_net: number;
  status: string;
  goal: NullableJson<Goal>;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  replication_paused: Defaulted<boolean>;
  key_secret_enc: string;
  keys_version: Defaulted<number>;
  deployed_config: NullableJson<DeployedInstanceConfig>;
  current_build_id: string | null;
  last_error: string | null;
  /** The database's endpoint for life, given at its first deploy (migration 010). */
  endpoint_port: number | null;
  endpoint_url: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  deleted_at: NullableTimestamp;
}

export interface BuildTable {
  id: string;
  database_id: string;
  account_id: string;
  region: string;
  status: string;
  builder_job_id: string | null;
  image_uri: string | null;
  artifact_hash: string | null;
  error: string | null;
  compute_type: string | null;
  attempts: Defaulted<number>;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  duration_seconds: number | null;
  cost_estimate_cents: number | null;
  created_at: DefaultTimestamp;
  /** databaseConfigHash() of what the build compiled (migration 002-builds). */
  config_hash: string | null;
}

export interface LogLineTable {
  id: Generated<string>;
  /** A build id or a deployment id. */
  stream_id: string;
  ts: ColumnType<string, number, number>;
  message: string;
}

export interface DeploymentTable {
  id: string;
  database_id: string;
  build_id: string | null;
  action: string;
  status: string;
  started_at: DefaultTimestamp;
  finished_at: NullableTimestamp;
}

/** One replica's last health reading, as the health monitor records it. */
export interface ReplicaHealth {
  ordinal: number;
  healthStatus: string | null;
  snapshotAgeMs: number | null;
  swapCount: number | null;
}

export interface InstanceTable {
  id: string;
  database_id: string;
  build_id: string | null;
  driver: string;
  container_ref: string | null;
  /** The database's public endpoint (the same for all its instances). */
  endpoint_url: string | null;
  /** Where the control plane and the endpoint reach this instance (migration 010). */
  private_url: string | null;
  /** The private port. */
  port: number | null;
  pid: number | null;
  control_key_id: string;
  keys_version: Defaulted<number>;
  health_status: string | null;
  snapshot_age_ms: number | null;
  swap_count: number | null;
  row_counts: NullableJson<Record<string, number>>;
  /** Each replica's private address by ordinal, null while it has none (migration 014). */
  replica_urls: NullableJson<Array<string | null>>;
  /** Each replica's last health reading (migration 014), written by the health monitor. */
  replica_health: NullableJson<ReplicaHealth[]>;
  last_health_check: NullableTimestamp;
  restarts: Defaulted<number>;
  /** Started by a deploy beside the serving instance; serving once it is ready (migration 010). */
  standby: Defaulted<boolean>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  removed_at: NullableTimestamp;
}

/** One reading of an instance's metrics (migration 010), kept for the retention. */
export interface InstanceMetricsSampleTable {
  id: Generated<string>;
  database_id: string;
  instance_id: string;
  sampled_at: DefaultTimestamp;
  queries_ok: number;
  queries_err: number;
  snapshot_bytes: number;
  snapshot_age_seconds: number;
  swap_count: number;
  table_rows: Json<Record<string, number>>;
  query_duration_sum: number;
  query_duration_count: number;
}

export interface ApiKeyTable {
  id: string;
  database_id: string;
  account_id: string;
  key_id: string;
  name: string;
  /** What the key may do on the instance (migration 008). */
  scope: Defaulted<ApiKeyScope>;
  created_at: DefaultTimestamp;
}

/** `query`: queries and `/schema`; `admin`: also reload, replication, metrics, health detail. */
export type ApiKeyScope = 'query' | 'admin';

export interface AuditEventTable {
  id: string;
  /** Insertion order: the tie-breaker for events of the same instant. */
  seq: Generated<number>;
  account_id: string;
  database_id: string | null;
  entity_type: string;
  entity_id: string;
  event_type: string;
  payload: NullableJson<Record<string, unknown>>;
  created_at: DefaultTimestamp;
  /** Who made the change (migration 011); null on events recorded before actors were kept. */
  actor_type: ColumnType<AuditActorType | null, AuditActorType | null | undefined, never>;
  /** The user's or the management key's id; null for the system. */
  actor_id: ColumnType<string | null, string | null | undefined, never>;
  /** The user's email or the key's name when the change was made. */
  actor_name: ColumnType<string | null, string | null | undefined, never>;
}

export type AuditActorType = 'user' | 'management_key' | 'system';

export interface NotificationTable {
  id: string;
  /** Insertion order: the tie-breaker for notifications of the same instant. */
  seq: Generated<number>;
  account_id: string;
  database_id: string | null;
  event_type: string;
  message: string;
  detail: string | null;
  severity: string;
  sticky: Defaulted<boolean>;
  seen_at: NullableTimestamp;
  skipped: Defaulted<boolean>;
  created_at: DefaultTimestamp;
}

export interface ServiceHeartbeatTable {
  process_id: string;
  name: string;
  revision: number;
  region: string;
  started_at: DefaultTimestamp;
  last_seen_at: DefaultTimestamp;
}

/** A webhook subscription of a database (migration 004-webhooks). */
export interface WebhookSubscriptionTable {
  id: string;
  account_id: string;
  database_id: string;
  url: string;
  /** The subscribed event types, a JSON array. */
  event_types: Json<string[]>;
  description: string | null;
  /** The signing secret, sealed with the SecretBox. */
  secret_enc: string;
  created_at: DefaultTimestamp;
}

/** One event to deliver to one subscription: a durable job with its retry state. */
export interface WebhookDeliveryTable {
  id: string;
  seq: Generated<number>;
  subscription_id: string;
  account_id: string;
  database_id: string;
  /** `evt_<uuid>`: the same on every attempt, and for every subscription of one event. */
  event_id: string;
  event_type: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  body: string;
  /** pending | retrying | delivered | failed (webhooks/delivery-status.ts). */
  status: string;
  attempt_count: Defaulted<number>;
  max_attempts: number;
  next_attempt_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: NullableTimestamp;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  created_at: DefaultTimestamp;
}

/**
 * A source a database's instances followed (its replication state lives there), with the
 * connection settings they were launched with, secrets sealed; and the job of dropping that
 * state (reconciler/drop-replication-state.ts).
 */
export interface ReplicationSourceTable {
  id: string;
  database_id: string;
  account_id: string;
  /** Which server and database: one row per place the state is kept (`sourceKey`). */
  source_key: string;
  backend: string;
  host: string;
  port: number;
  username: string;
  /** Sealed; null when the source user has no password. */
  password_enc: string | null;
  tls_mode: string;
  ssh: NullableJson<SshTunnelSettings>;
  ssh_private_key_enc: string | null;
  source_schema: string;
  /** The database's replication id; replica k's state is under `replicaReplicationId`. */
  replication_id: string;
  /** The most replicas launched on this source: ordinals below it may have state there. */
  replicas_launched: number;
  /** The state of ordinals from here up to `replicas_launched` waits to be dropped; null: none. */
  drop_from: number | null;
  drop_attempts: Defaulted<number>;
  drop_error: string | null;
  /** Every attempt failed: left for an operator (audited and notified). */
  drop_failed_at: NullableTimestamp;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** One HTTP attempt of a delivery, for the history. */
export interface WebhookAttemptTable {
  id: string;
  seq: Generated<number>;
  delivery_id: string;
  attempt: number;
  attempted_at: ColumnType<Date, Date | string, Date | string>;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
}

/** An account's subscription and overage settings (migration 005-billing). */
export interface BillingAccountTable {
  account_id: string;
  /** `local` or `stripe`: the provider that holds the subscription. */
  provider: string;
  customer_id: string | null;
  subscription_id: string | null;
  /** `none`, `active` or `canceled`. */
  subscription_status: Defaulted<string>;
  subscription_plan: string | null;
  /** Successful renewal payments (not the first payment); overage needs one. */
  renewal_payments: Defaulted<number>;
  last_renewal_at: NullableTimestamp;
  overage_enabled: Defaulted<boolean>;
  spending_cap_cents: number | null;
  updated_at: DefaultTimestamp;
}

/** A local checkout or billing-portal page; only the SHA-256 of its URL token is kept (005-billing). */
export interface BillingSessionTable {
  id: string;
  token_hash: string;
  account_id: string;
  /** `checkout` or `portal`. */
  kind: string;
  plan: string | null;
  /** `open`, `completed` or `cancelled`. */
  status: Defaulted<string>;
  created_at: DefaultTimestamp;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  completed_at: NullableTimestamp;
}

/** Payment-provider webhook events already applied, so a redelivery changes nothing (005-billing). */
export interface BillingEventTable {
  provider: string;
  event_id: string;
  event_type: string;
  received_at: DefaultTimestamp;
}

/** Which terms-of-service versions each user accepted, and when (005-billing). */
export interface TosAcceptanceTable {
  user_id: string;
  account_id: string;
  version: string;
  accepted_at: DefaultTimestamp;
}

/** The control plane's store, as Kysely sees it. */
export interface Store {
  accounts: AccountTable;
  users: UserTable;
  management_keys: ManagementKeyTable;
  connections: ConnectionTable;
  databases: DatabaseTable;
  builds: BuildTable;
  log_lines: LogLineTable;
  deployments: DeploymentTable;
  instances: InstanceTable;
  instance_metrics_samples: InstanceMetricsSampleTable;
  api_keys: ApiKeyTable;
  audit_events: AuditEventTable;
  notifications: NotificationTable;
  service_heartbeats: ServiceHeartbeatTable;
  billing_accounts: BillingAccountTable;
  billing_sessions: BillingSessionTable;
  billing_events: BillingEventTable;
  tos_acceptances: TosAcceptanceTable;
  webhook_subscriptions: WebhookSubscriptionTable;
  webhook_deliveries: WebhookDeliveryTable;
  replication_sources: ReplicationSourceTable;
  webhook_attempts: WebhookAttemptTable;
  team_invitations: TeamInvitationTable;
  recovery_codes: RecoveryCodeTable;
  second_factor_failures: SecondFactorFailureTable;
  login_link_redemptions: LoginLinkRedemptionTable;
}
