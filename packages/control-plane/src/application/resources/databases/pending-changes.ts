import { buildConfigHash } from '../../../adapters/store/build-store.ts';
import type { DatabaseRow } from '../../../adapters/store/database-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { DeployedInstanceConfig } from '../../../adapters/store/schema.ts';
import { deployedConfigOf } from '../../../domain/database-settings.ts';
import { databaseConfigHash } from '../../builder/config-hash.ts';

/** The action that puts a pending change into the running instance. */
export type AppliedBy = 'reconfigure' | 'rebuild';

/**
 * A setting that differs from what the instance runs: the database field's name, or `schema`
 * when the source schema or the schema config differ from what the current build compiled.
 */
export interface PendingChange {
  readonly setting: string;
  readonly appliedBy: AppliedBy;
}

/**
 * The settings a deploy of the database would use now. Unlike the deployed config, the stored
 * size name is kept even when it is unknown, so such a name shows as a pending change.
 */
function wantedSettingsOf(row: DatabaseRow): DeployedInstanceConfig {
  return { ...deployedConfigOf(row), instanceSize: row.instance_size };
}

/** The runtime settings a reconfigure applies, by the API's names. */
const RUNTIME_SETTINGS = [
  'instanceSize',
  'replicas',
  'syncMode',
  'syncInterval',
  'logLevel',
  'safetyNet',
] as const;

/**
 * What differs between the database and its running instance, each with the action that
 * applies it: runtime settings against the deployed config (reconfigure), the source schema
 * and schema config against the current build's config hash (rebuild). Nothing before the
 * first deploy.
 */
export function pendingChanges(
  row: DatabaseRow,
  currentBuildConfigHash: string | null | undefined,
): PendingChange[] {
  const deployed = row.deployed_config;
  if (deployed === null) return [];
  const wanted = wantedSettingsOf(row);
  const changes: PendingChange[] = RUNTIME_SETTINGS.filter((setting) =>
    setting === 'replicas'
      ? (wanted.replicas ?? 1) !== (deployed.replicas ?? 1)
      : wanted[setting] !== deployed[setting],
  ).map((setting) => ({ setting, appliedBy: 'reconfigure' }));
  if (currentBuildConfigHash != null && currentBuildConfigHash !== databaseConfigHash(row)) {
    changes.push({ setting: 'schema', appliedBy: 'rebuild' });
  }
  return changes;
}

/** pendingChanges() of a stored database, reading its current build's config hash. */
export async function pendingChangesOf(db: StoreDb, row: DatabaseRow): Promise<PendingChange[]> {
  const build = row.current_build_id ? await buildConfigHash(db, row.current_build_id) : undefined;
  return pendingChanges(row, build?.config_hash);
}
