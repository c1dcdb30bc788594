import type { SourceSchema } from '@replix/engine';
import pg from 'pg';
import type { SnapshotReader, SourceConnector } from '../connector.ts';
import { sourceErrorFrom } from '../errors.ts';
import {
  type PostgresConnectorOptions,
  postgresConnectionConfig,
  postgresTarget,
} from './postgres-connection-options.ts';
import { introspectPostgres } from './postgres-introspector.ts';
import { openPostgresSnapshot } from './postgres-snapshot.ts';

/** One schema of a PostgreSQL database as a Replix source. */
export class PostgresConnector implements SourceConnector {
  readonly engine = 'postgres';
  readonly #options: PostgresConnectorOptions;
  readonly #readers = new Set<SnapshotReader>();
  #pool: pg.Pool | undefined;

  constructor(options: PostgresConnectorOptions) {
    this.#options = options;
  }

  /** The schema whose tables this connector reads. */
  get schema(): string {
    return this.#options.schema ?? 'public';
  }

  /** A small pool for metadata queries, made on first use; snapshots never borrow from it. */
  #metadataPool(): pg.Pool {
    if (!this.#pool) {
      this.#pool = new pg.Pool({ ...postgresConnectionConfig(this.#options), max: 2 });
      // An idle pooled client whose connection drops emits 'error' on the pool; unheard, it
      // would crash the process. The pool discards that client, and the next query reconnects.
      this.#pool.on('error', () => {});
    }
    return this.#pool;
  }

  async introspect(): Promise<SourceSchema> {
    try {
      return await introspectPostgres(this.#metadataPool(), this.schema);
    } catch (error) {
      throw sourceErrorFrom(error, postgresTarget(this.#options), 'introspecting the schema');
    }
  }

  async openSnapshot(): Promise<SnapshotReader> {
    let reader: SnapshotReader | undefined;
    reader = await openPostgresSnapshot(this.#options, () => {
      if (reader) this.#readers.delete(reader);
    });
    this.#readers.add(reader);
    return reader;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    const readers = [...this.#readers];
    await Promise.allSettled([...readers.map((reader) => reader.close()), pool?.end()]);
  }
}
