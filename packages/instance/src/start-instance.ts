import { renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { compileSchema } from '@replix/engine';
import { deriveApiKey } from '@replix/instance-protocol';
import { ConfigError, HTTP_LIMITS, type HttpLimits, RELEASE } from '@replix/runtime';
import { serviceLogger } from '@replix/runtime/logger';
import { startTracing } from '@replix/runtime/tracing';
import { connectorFromUrl } from '@replix/sources';
import type { Logger } from 'pino';
import { ApiKeyVerifier } from './http/api-keys.ts';
import { RateLimiter } from './http/rate-limiter.ts';
import { buildInstanceServer } from './http/server.ts';
import type { InstanceConfig } from './instance-config.ts';
import { ChangeFeed } from './replication/change-feed.ts';
import { ChangeFollower } from './replication/change-follower.ts';
import type { RowFetcher } from './replication/change-mapper.ts';
import { IncrementalPoller } from './replication/incremental-poller.ts';
import { LeaderFollower } from './replication/leader-follower.ts';
import { SyncScheduler } from './replication/sync-scheduler.ts';
import { ViewRefresher, withViewReport } from './replication/view-refresher.ts';
import { checkpointFingerprint } from './snapshot/checkpoint-fingerprint.ts';
import { Checkpointer } from './snapshot/checkpointer.ts';
import { SnapshotController } from './snapshot/snapshot-controller.ts';
import { sourceColumnsOf } from './snapshot/snapshot-loader.ts';
import { type NewQueryWorker, QueryThreads } from './threads/query-threads.ts';

export interface RunningInstance {
  readonly url: string;
  /** The query key made at start when none was configured. */
  readonly apiKey: string | undefined;
  /** The admin key made at start when none was configured. */
  readonly adminKey: string | undefined;
  readonly controller: SnapshotController;
  readonly keys: ApiKeyVerifier;
  readonly scheduler: SyncScheduler;
  /** The query threads beside the main one (`REPLIX_THREADS` > 1), or null. */
  readonly threads: QueryThreads | null;
  close(): Promise<void>;
}

/** Writes the port whole or not at all: a supervisor polling the file never reads half of it. */
function writePortFile(path: string, port: number): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, String(port), { mode: 0o600 });
  renameSync(temporary, path);
}

export function createLogger(level: string): Logger {
  return serviceLogger('replix-instance', level);
}

export interface StartInstanceOptions {
  /**
   * Called when the instance cannot go on (the change stream was lost and
   * `cdc_reconnect_policy` is `shutdown`); the caller should close it and exit non-zero.
   */
  readonly onFatal?: (reason: string) => void;
  /** Names the source-side replication state (PostgreSQL slot and publication). */
  readonly replicationId?: string;
  /** Start with replication paused (the control plane's `replication_paused`). */
  readonly replicationPaused?: boolean;
  /** The HTTP server's header size and timeouts, when not `HTTP_LIMITS` (tests shorten them). */
  readonly httpLimits?: HttpLimits;
  /** Makes the query threads' workers, when not `newQueryWorker` (tests end one as a crash would). */
  readonly newQueryWorker?: NewQueryWorker;
  /**
   * The source's own URL when `config.sourceUrl` reaches it through a tunnel: a checkpoint is
   * of a source, whatever local port leads there today.
   */
  readonly sourceAddress?: string;
  /**
   * A follower replica: follows this leader replica's change feed instead of the source,
   * starting from the leader's checkpoints (`REPLIX_FOLLOW_URL`, docs/replication.md).
   */
  readonly followUrl?: string | undefined;
  /** A leader replica: keeps the change feed its followers read (`REPLIX_CHANGE_FEED`). */
  readonly changeFeed?: boolean | undefined;
}

/**
 * Starts an instance: introspects the source, compiles the schema, listens at once (answering
 * 503 with loading progress), loads the snapshot, starts following the source's changes, and
 * resolves when it serves queries.
 */
export async function startInstance(
  config: InstanceConfig,
  log = createLogger(config.logLevel),
  options: StartInstanceOptions = {},
): Promise<RunningInstance> {
  // Before the server is built, which traces requests only when tracing is on by then.
  const tracing = config.tracing ? await startTracing(config.tracing) : undefined;
  const connector = connectorFromUrl(config.sourceUrl, { replicationId: options.replicationId });
  try {
    const source = await connector.introspect();
    const schema = compileSchema(source, config.schemaConfig);
    const following = options.followUrl !== undefined;
    const followerKey = config.adminKeyIds[0];
    if (following && (!config.checkpoints || !followerKey)) {
      throw new ConfigError(
        "A follower replica needs its leader's checkpoints (REPLIX_CHECKPOINT_DIR or a bucket) and an admin key id.",
      );
    }
    if (config.schemaConfig.sync.mode === 'cdc' && !following) {
      const readiness = await connector.checkReplication();
      if (!readiness.ready) {
        throw new ConfigError(
          `Change data capture cannot run on this source: ${readiness.issues.join(' ')} Fix the source, or set "sync": {"mode": "poll"} in the schema config.`,
        );
      }
    }
    const controller = new SnapshotController(connector, schema, {
      memoryCapMb: config.schemaConfig.memory_cap_mb,
      syncMode: config.schemaConfig.sync.mode,
      log,
    });
    const sync = config.schemaConfig.sync;
    // A checkpoint holds rows and the position to follow on from: without a change stream or
    // a change column to catch up by, every poll re-reads the source anyway.
    const keepsCheckpoints = config.checkpoints && (sync.mode === 'cdc' || sync.change_column);
    // Loaded only when used: the S3 client is a large module.
    const remote =
      keepsCheckpoints && config.checkpoints?.s3
        ? new (await import('./snapshot/s3-checkpoints.ts')).S3Checkpoints(config.checkpoints.s3)
        : undefined;
    const checkpoints =
      config.checkpoints && keepsCheckpoints
        ? new Checkpointer({
            dir: config.checkpoints.dir,
            schedule: config.checkpoints.schedule,
            fingerprint: checkpointFingerprint(
              options.sourceAddress ?? config.sourceUrl,
              source,
              schema,
            ),
            controller,
            log,
            parsePosition: (text) => connector.positionFromString(text),
            // A follower reads its leader's checkpoints and writes none.
            acknowledge: following ? undefined : (position) => connector.acknowledge(position),
            remote,
          })
        : null;
    if (checkpoints) controller.reportCheckpoints(() => checkpoints.report());
    const intervalMs = Math.max(10, sync.interval * 1000);
    const fetchRows: RowFetcher = (table, keys, options) =>
      connector.readRows({
        table: table.sourceName,
        columns: sourceColumnsOf(table),
        keyColumns: table.primaryKey.map((c) => table.columns[c]?.sourceName ?? ''),
        keys,
        where: table.where,
        flagWhere: options?.flagWhere,
      });
    const follower =
      sync.mode === 'cdc' && !following
        ? new ChangeFollower({
            connector,
            schema,
            controller,
            fetchRows,
            reconnectPolicy: config.schemaConfig.cdc_reconnect_policy,
            intervalMs,
            log,
            onFatal: options.onFatal ?? (() => {}),
            acknowledgeApplied: checkpoints === null,
          })
        : null;
    const poller =
      sync.mode === 'poll' && sync.change_column && !following
        ? new IncrementalPoller({
            controller,
            schema,
            column: sync.change_column,
            fetchAll: fetchRows,
            rowsSince: (table, column, after) =>
              connector.readRows({
                table: table.sourceName,
                columns: sourceColumnsOf(table),
                keyColumns: [],
                keys: null,
                where: table.where,
                after: after === null ? undefined : { column, value: after },
              }),
          })
        : null;
    const views = schema.tables.filter((table) => table.kind !== 'table');
    // A follower hears of view refreshes from its leader, as of every other change.
    const refresher =
      views.length > 0 && !following
        ? new ViewRefresher({
            controller,
            views,
            readView: (view) => fetchRows(view, null),
            paused: () => scheduler.paused,
            log,
          })
        : null;
    controller.onSnapshot((position) => {
      follower?.follow(position);
      poller?.reset();
      refresher?.snapshotLoaded();
    });
    const scheduler = new SyncScheduler({
      controller,
      follower,
      poller,
      intervalMs,
      safetyNetMs: sync.safety_net * 1000,
      log,
    });
    const leader =
      following && checkpoints
        ? new LeaderFollower({
            leaderUrl: options.followUrl as string,
            adminKey: deriveApiKey(config.keySecret, followerKey as string),
            controller,
            loadCheckpoint: (name) => checkpoints.named(name, schema),
            log,
          })
        : null;
    if (leader) controller.reloadBy(() => leader.startOver());
    const feed =
      options.changeFeed && checkpoints && !following ? leaderFeed(controller, checkpoints) : null;
    controller.reportReplication(() => {
      if (leader) return leader.report();
      const report = withViewReport(scheduler.report(), refresher);
      return feed ? { ...report, detail: { ...report.detail, feed: feed.report() } } : report;
    });
    const keys = new ApiKeyVerifier(config.keySecret, config.keyIds, config.adminKeyIds);
    // Its listener comes before the query threads': a key has its slot before any thread hears of it.
    const rateLimiter = config.rateLimit ? new RateLimiter(config.rateLimit) : undefined;
    if (rateLimiter) {
      rateLimiter.assign([...config.keyIds, ...config.adminKeyIds]);
      keys.onChange((allowed) => rateLimiter.assign([...allowed.keyIds, ...allowed.adminKeyIds]));
    }
    const version = `${RELEASE}-${config.buildHash}`;
    const maxBodyBytes = config.schemaConfig.query.max_body_bytes;
    const drainLimit = (options.httpLimits ?? HTTP_LIMITS).drain_timeout_ms;
    // One thread serves through the controller itself; more, through the published view.
    const threads =
      (config.threads ?? 1) > 1
        ? new QueryThreads({
            threads: config.threads ?? 1,
            controller,
            keys,
            sync: scheduler,
            log,
            rateLimiter,
            newWorker: options.newQueryWorker,
            settings: {
              source,
              schemaConfig: config.schemaConfig,
              keySecret: config.keySecret,
              keyIds: config.keyIds,
              adminKeyIds: config.adminKeyIds,
              version,
              maxBodyBytes,
              logLevel: config.logLevel,
              httpLimits: options.httpLimits,
              host: config.host,
              tracing: config.tracing,
            },
          })
        : null;
    const app = await buildInstanceServer({
      controller: threads?.state ?? controller,
      keys,
      version,
      maxBodyBytes,
      sync: scheduler,
      log,
      httpLimits: options.httpLimits,
      rateLimiter,
      ...(threads ? { threadMetrics: threads.metrics } : {}),
      ...(feed ? { changeFeed: feed } : {}),
    });
    // Query threads listen on the same port (`reusePort`): the kernel spreads connections.
    await app.listen({
      host: config.host,
      port: config.port,
      ...(threads ? { reusePort: true } : {}),
    });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    try {
      await threads?.start(port);
      if (config.portFile) writePortFile(config.portFile, port);
      await controller.start(
        leader
          ? () => leader.startingPoint()
          : checkpoints
            ? () => checkpoints.startingPoint(schema)
            : undefined,
      );
      await threads?.published();
    } catch (error) {
      await threads?.close(drainLimit);
      await app.close();
      throw error;
    }
    if (leader) {
      leader.start();
    } else {
      if (options.replicationPaused) scheduler.pause();
      scheduler.start();
      refresher?.start();
      checkpoints?.start();
    }
    const generated = (ids: readonly string[]) =>
      config.generatedKey && ids[0] ? deriveApiKey(config.keySecret, ids[0]) : undefined;
    return {
      url: `http://${host}:${port}`,
      apiKey: generated(config.keyIds),
      adminKey: generated(config.adminKeyIds),
      controller,
      keys,
      scheduler,
      threads,
      async close() {
        scheduler.stop();
        refresher?.stop();
        leader?.stop();
        // Fastify stops accepting, closes idle keep-alive connections and waits for the
        // requests in flight; past the bound the rest are cut.
        const cut = setTimeout(() => app.server.closeAllConnections(), drainLimit);
        try {
          await Promise.all([app.close(), threads?.close(drainLimit)]);
        } finally {
          clearTimeout(cut);
        }
        // A planned stop: what is served now is where the next start begins.
        if (!leader) await checkpoints?.close();
        remote?.close();
        await connector.close();
        await tracing?.shutdown().catch(() => {});
      },
    };
  } catch (error) {
    await connector.close().catch(() => {});
    await tracing?.shutdown().catch(() => {});
    throw error;
  }
}

/**
 * A leader's change feed: every generation the controller makes from changes, started over at
 * every full snapshot (from the checkpoint started from, if any), told of each checkpoint
 * written; an overflow asks for a checkpoint at once.
 */
function leaderFeed(controller: SnapshotController, checkpoints: Checkpointer): ChangeFeed {
  const feed = new ChangeFeed(controller.bootId, () => void checkpoints.write());
  controller.onApplied(({ previous, next, swapCount, changes }) =>
    feed.publish({
      kind: 'generation',
      previous: previous.id,
      generation: next.id,
      swapCount,
      changes: [...changes],
    }),
  );
  controller.onSnapshot(() => {
    const served = controller.current();
    if (!served) return;
    const from = controller.origin === 'checkpoint' ? checkpoints.loadedName : null;
    feed.restart(served.generation.id, from);
  });
  checkpoints.onWritten((generation, name) => feed.checkpointed(generation, name));
  return feed;
}
