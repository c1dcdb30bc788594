import { availableParallelism } from 'node:os';
import {
  type CompiledSchema,
  type CompiledTable,
  type Generation,
  GenerationAssembler,
} from '@replix/engine';
import type { TableData } from '@replix/engine/storage';
import type { ReplicationPosition, SnapshotReader, SourceConnector } from '@replix/sources';
import { shareCompileCache } from '../compile-cache.ts';
import { LoadWorkerHandle } from './load/load-worker-handle.ts';
import { readTableData } from './load/read-table-data.ts';

export { sourceColumnsOf } from './load/read-table-data.ts';

export interface LoadProgress {
  readonly tablesDone: number;
  readonly tablesTotal: number;
  readonly rowsLoaded: number;
}

export interface LoadedSnapshot {
  readonly generation: Generation;
  /** Where change data capture resumes to follow this snapshot (null without `withPosition`). */
  readonly position: ReplicationPosition | null;
}

/**
 * At most this many threads read a snapshot, each on its own session of the source: the source
 * is the user's production database, and a few sessions already keep the wire busy.
 */
export const MAX_LOAD_THREADS = 4;

/** One load thread per core, up to `MAX_LOAD_THREADS`: what an instance with its cores to itself can use. */
export function loadThreadsForCores(cores = availableParallelism()): number {
  return Math.max(1, Math.min(MAX_LOAD_THREADS, Math.floor(cores)));
}

export interface LoadOptions {
  readonly withPosition?: boolean;
  readonly signal?: AbortSignal;
  /**
   * Threads reading tables at once, this one included, each table on one (capped by
   * `MAX_LOAD_THREADS` and the number of tables). 1, the default, reads every table here, one
   * after the other, on one session: on cores shared with other work, workers that start cold
   * cost more than they give (see bench/load.ts); `loadThreadsForCores` for dedicated cores.
   */
  readonly threads?: number;
}

/** Reads one table of the snapshot into its chunks, here or in a load worker. */
type TableReading = (table: CompiledTable, onRows: (rows: number) => void) => Promise<TableData>;

/**
 * Reads every table of `schema` from one consistent snapshot of the source into a new
 * generation, and reports progress as rows arrive. With `withPosition` it also captures the
 * change-history position the snapshot corresponds to.
 *
 * Tables are read in parallel: this thread and up to `threads - 1` load workers each take the
 * next table, every worker on its own session joined to the same snapshot (`SnapshotReader.share`),
 * decoding rows and building chunks off this thread; this thread builds each table's indexes as
 * it arrives. When the source cannot share its snapshot, this thread reads everything alone.
 */
export async function loadSnapshot(
  connector: SourceConnector,
  schema: CompiledSchema,
  id: number,
  onProgress: (progress: LoadProgress) => void,
  options: LoadOptions = {},
): Promise<LoadedSnapshot> {
  const threads = Math.min(
    Math.max(1, Math.floor(options.threads ?? 1)),
    MAX_LOAD_THREADS,
    schema.tables.length,
  );
  // Workers start before the snapshot opens: a MySQL share locks the tables until they join.
  // A source that cannot share its snapshot (SQL Server) would leave them waiting: none then.
  const workers = connector.snapshotShareable
    ? await startWorkers(connector.backend, threads - 1)
    : [];
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let reader: SnapshotReader | undefined;
  try {
    reader = await connector.openSnapshot({
      withPosition: options.withPosition ?? false,
      // A view has no change stream to follow (PostgreSQL cannot publish one): base tables only.
      tables: schema.tables.filter((table) => table.kind === 'table').map((t) => t.sourceName),
      joiners: workers.length,
      reads: schema.tables.map((table) => table.sourceName),
    });
    const here = reader;
    const joined = await joinWorkers(reader, workers);
    const readings: TableReading[] = [
      (table, onRows) => readTableData(here, table, onRows, signal),
      ...joined.map(
        (worker): TableReading =>
          (table, onRows) =>
            abortable(worker.read(table, onRows), signal),
      ),
    ];
    const assembler = new GenerationAssembler(schema);
    const queue = [...schema.tables];
    const progress = { tablesDone: 0, tablesTotal: schema.tables.length, rowsLoaded: 0 };
    const onRows = (rows: number) => {
      progress.rowsLoaded += rows;
      onProgress({ ...progress });
    };
    const run = async (read: TableReading) => {
      for (let table = queue.shift(); table; table = queue.shift()) {
        assembler.add(table.name, await read(table, onRows));
        progress.tablesDone += 1;
        onProgress({ ...progress });
      }
    };
    await Promise.all(readings.map(run)).catch((error: unknown) => {
      stop.abort(error);
      throw error;
    });
    return { generation: assembler.finish(id), position: reader.position };
  } finally {
    await Promise.all([reader?.close(), ...workers.map((worker) => worker.close())]);
  }
}

/** `count` load workers; fewer (none) when this runtime cannot start them. */
async function startWorkers(backend: string, count: number): Promise<LoadWorkerHandle[]> {
  if (count <= 0) return [];
  shareCompileCache();
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => LoadWorkerHandle.start(backend)),
  );
  return started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}

/**
 * Joins the workers to the reader's snapshot, then lets the source release what it held for
 * them; the workers that joined. None when the snapshot is not shared.
 */
async function joinWorkers(
  reader: SnapshotReader,
  workers: readonly LoadWorkerHandle[],
): Promise<LoadWorkerHandle[]> {
  const share = reader.share;
  if (share === null) {
    await reader.joined();
    return [];
  }
  const joins = await Promise.allSettled(workers.map((worker) => worker.join(share)));
  await reader.joined();
  return workers.filter((_, i) => joins[i]?.status === 'fulfilled');
}

/** `work`, or the signal's reason as soon as it aborts. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
