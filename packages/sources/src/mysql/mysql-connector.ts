import type { SourceSchema } from '@replix/engine';
import mysql from 'mysql2';
import type { Pool } from 'mysql2/promise';
import type { SnapshotReader, SourceConnector } from '../connector.ts';
import { sourceErrorFrom } from '../errors.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
} from './mysql-connection-options.ts';
import { introspectMySql } from './mysql-introspector.ts';
import { openMySqlSnapshot } from './mysql-snapshot.ts';

/** A MySQL or MariaDB database as a Replix source. */
export class MySqlConnector implements SourceConnector {
  readonly engine = 'mysql';
  readonly #options: MySqlConnectorOptions;
  readonly #readers = new Set<SnapshotReader>();
  #pool: Pool | undefined;

  constructor(options: MySqlConnectorOptions) {
    this.#options = options;
  }

  /** A small pool for metadata queries, made on first use; snapshots never borrow from it. */
  #metadataPool(): Pool {
    this.#pool ??= mysql
      .createPool({ ...mySqlConnectionOptions(this.#options), connectionLimit: 2 })
      .promise();
    return this.#pool;
  }

  async introspect(): Promise<SourceSchema> {
    try {
      return await introspectMySql(this.#metadataPool());
    } catch (error) {
      throw sourceErrorFrom(error, mySqlTarget(this.#options), 'introspecting the schema');
    }
  }

  async openSnapshot(): Promise<SnapshotReader> {
    let reader: SnapshotReader | undefined;
    reader = await openMySqlSnapshot(this.#options, () => {
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
