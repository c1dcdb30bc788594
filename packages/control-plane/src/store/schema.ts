import type { ColumnType, Generated } from 'kysely';

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
  password_enc: string;
  default_region: string;
  tls_mode: string;
  ssh: NullableJson<SshTunnelSettings>;
  ssh_private_key_enc: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  deleted_at: NullableTimestamp;
}

/** A queued or in-progress action on a database, carried out by the reconciler. */
export interface Goal {
  action: string;
  /** The status before the action was accepted; cancel-goal restores it. */
  fromStatus: string;
  /** Steps written by the reconciler as it goes, so a restarted one resumes. */
  phase?: string;
  buildId?: string;
  deploymentId?: string;
  instanceSize?: string;
  requestedAt: string;
  claimedAt?: string;
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
  sync_mode: string;
  sync_interval: number;
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

export interface InstanceTable {
  id: string;
  database_id: string;
  build_id: string | null;
  driver: string;
  container_ref: string | null;
  endpoint_url: string | null;
  port: number | null;
  pid: number | null;
  control_key_id: string;
  keys_version: Defaulted<number>;
  health_status: string | null;
  snapshot_age_ms: number | null;
  swap_count: number | null;
  row_counts: NullableJson<Record<string, number>>;
  last_health_check: NullableTimestamp;
  restarts: Defaulted<number>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  removed_at: NullableTimestamp;
}

export interface ApiKeyTable {
  id: string;
  database_id: string;
  account_id: string;
  key_id: string;
  name: string;
  created_at: DefaultTimestamp;
}

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
}

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
  api_keys: ApiKeyTable;
  audit_events: AuditEventTable;
  notifications: NotificationTable;
  service_heartbeats: ServiceHeartbeatTable;
}
