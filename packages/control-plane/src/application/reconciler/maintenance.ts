import { currentReplicaUrls } from '../../adapters/drivers/replica-urls.ts';
import { recordAudit } from '../../adapters/events/audit-log.ts';
import { claimRunning, releaseLease } from '../../adapters/store/goal-store.ts';
import {
  liveInstanceById,
  maintainedInstances,
  recordKeysVersion,
  recordStarted,
} from '../../adapters/store/instance-store.ts';
import { recordReplicationSource } from '../../adapters/store/replication-sources.ts';
import type { RoleContext } from '../../roles/role.ts';
import { instanceLaunchFor, keyIdsOf } from './instance-launch-for.ts';

/** Restart delays: 1 s, 2 s, 4 s … doubling up to a minute. */
const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 60_000;
/** An instance that stays up this long after a restart starts its backoff over. */
const STABLE_AFTER_MS = 60_000;

interface Backoff {
  /** Restarts tried since the instance was last stable. */
  attempts: number;
  /** When the next restart may be tried. */
  notBefore: number;
  lastAttemptAt: number;
}

export function restartDelayMs(attempts: number): number {
  return Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** attempts);
}

/**
 * The reconciler's pass over live instances on every tick, outside goals: brings each
 * instance's accepted key ids up to date with its database's API keys (a deleted key stops
 * working within a tick plus the instance's re-read), and restarts the instances of `running`
 * (or `failed`, still serving) databases whose process died, with exponential backoff.
 */
export class Maintenance {
  readonly #context: RoleContext;
  readonly #owner: string;
  readonly #backoff = new Map<string, Backoff>();
  readonly #restarting = new Set<Promise<void>>();
  readonly #restartingIds = new Set<string>();

  constructor(context: RoleContext, owner: string) {
    this.#context = context;
    this.#owner = owner;
  }

  async pass(): Promise<void> {
    const { db } = this.#context;
    const live = await maintainedInstances(db);
    for (const row of live) {
      if (row.instanceKeysVersion !== row.databaseKeysVersion) {
        await this.#syncKeys(
          row.instanceId,
          row.databaseId,
          row.controlKeyId,
          row.instanceKeysVersion,
        );
      }
      // A failed rebuild leaves the previous instance up: it is kept running too.
      const serving = row.status === 'running' || row.status === 'failed';
      if (!serving || row.goal !== null || row.privateUrl === null || row.standby) continue;
      if (this.#restartingIds.has(row.instanceId)) continue;
      const now = Date.now();
      if (await this.#context.driver.isAlive(row.instanceId)) {
        const backoff = this.#backoff.get(row.instanceId);
        if (backoff && now - backoff.lastAttemptAt > STABLE_AFTER_MS)
          this.#backoff.delete(row.instanceId);
        continue;
      }
      let backoff = this.#backoff.get(row.instanceId);
      if (!backoff) {
        backoff = { attempts: 0, notBefore: now + restartDelayMs(0), lastAttemptAt: 0 };
        this.#backoff.set(row.instanceId, backoff);
        // Said with what happens next: after a graceful stop of the control plane (which stops
        // its instances) this is every start's normal path, not a fault.
        this.#context.log.warn(
          { instanceId: row.instanceId, databaseId: row.databaseId },
          'the instance process is not running (stopped with the last control plane, or it exited): starting it again',
        );
      }
      if (now < backoff.notBefore) continue;
      backoff.attempts += 1;
      backoff.lastAttemptAt = now;
      backoff.notBefore = now + restartDelayMs(backoff.attempts);
      this.#restartingIds.add(row.instanceId);
      const restart = this.#restart(row.instanceId, row.databaseId)
        .catch((error: unknown) =>
          this.#context.log.warn(
            { err: error, instanceId: row.instanceId },
            'instance restart failed',
          ),
        )
        .finally(() => {
          this.#restartingIds.delete(row.instanceId);
          this.#restarting.delete(restart);
        });
      this.#restarting.add(restart);
    }
  }

  async #syncKeys(
    instanceId: string,
    databaseId: string,
    controlKeyId: string,
    fromVersion: number,
  ): Promise<void> {
    const { keys, keysVersion } = await keyIdsOf(this.#context, databaseId, controlKeyId);
    await this.#context.driver.updateKeys(instanceId, keys);
    await recordKeysVersion(this.#context.db, instanceId, fromVersion, keysVersion);
  }

  /**
   * Starts the dead replicas of the instance again under a short lease (same id, same private
   * ports when free; the replicas still alive keep running) and points the database's endpoint
   * at all of them again.
   */
  async #restart(instanceId: string, databaseId: string): Promise<void> {
    const { db, driver, log } = this.#context;
    const database = await claimRunning(db, this.#owner, databaseId);
    if (!database) return;
    try {
      const instance = await liveInstanceById(db, instanceId);
      if (instance?.standby || !instance?.build_id || (await driver.isAlive(instanceId))) return;
      const { launch, keysVersion, source } = await instanceLaunchFor(
        this.#context,
        database,
        instance,
        instance.build_id,
      );
      await recordReplicationSource(db, database, source, launch.replicas);
      // The driver starts only the replicas that died; the others keep serving meanwhile.
      const dead = (await driver.replicas(instanceId))
        .filter((replica) => !replica.alive)
        .map((replica) => replica.ordinal);
      const handle = await driver.start(launch);
      const replicaUrls = await currentReplicaUrls(driver, instanceId);
      await db.transaction().execute(async (tx) => {
        const { privateUrl, port, pid, containerRef } = handle;
        const addresses = { privateUrl, port, pid, containerRef, replicaUrls, keysVersion };
        const restarts = await recordStarted(tx, instanceId, addresses, { restart: true });
        await recordAudit(tx, {
          accountId: database.account_id,
          databaseId: database.id,
          entityType: 'instance',
          entityId: instanceId,
          eventType: 'instance.restarted',
          payload: {
            restarts,
            endpointUrl: instance.endpoint_url,
            ...(launch.replicas > 1 ? { replicas: dead } : {}),
          },
        });
      });
      // Same endpoint; the private port may have changed.
      if (database.endpoint_port !== null) {
        await driver.openEndpoint(databaseId, database.endpoint_port);
        await driver.route(databaseId, instanceId);
      }
      log.info({ instanceId, replicas: dead }, 'instance restarted');
    } finally {
      await releaseLease(db, this.#owner, databaseId);
    }
  }

  /** Waits for restarts under way (the role is closing). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#restarting]);
  }
}
