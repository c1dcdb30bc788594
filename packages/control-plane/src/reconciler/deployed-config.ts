import { INSTANCE_SIZES, type InstanceSize } from '../domain/plans.ts';
import type { DeployedInstanceConfig } from '../store/schema.ts';
import type { DatabaseRow } from './leases.ts';

/** The runtime settings an instance of the database gets now (recorded as deployed_config). */
export function deployedConfigOf(database: DatabaseRow): DeployedInstanceConfig {
  const size = (
    database.instance_size in INSTANCE_SIZES ? database.instance_size : 'xs'
  ) as InstanceSize;
  return {
    instanceSize: size,
    taskCpu: INSTANCE_SIZES[size].taskCpu,
    taskMemoryMb: INSTANCE_SIZES[size].taskMemoryMb,
    syncMode: database.sync_mode,
    syncInterval: database.sync_interval,
    logLevel: database.log_level,
    safetyNet: database.safety_net,
  };
}
