import type ZongJiModule from '@vlasky/zongji';
import type { ColumnSchema, TableMapEvent } from '@vlasky/zongji';
import type { ConnectionOptions } from 'mysql2';

/** Gives the columns of a table-map event's table, or null to have its rows skipped. */
export type ColumnSchemaSource = (event: TableMapEvent) => ColumnSchema[] | null;

/**
 * zongji, with the column metadata of each table supplied by the change stream instead of
 * looked up in information_schema at every new table map.
 *
 * zongji's lookup reads the table as it is now, not as it was when the event was written, and
 * on a dropped table it reports an error and stalls the stream for good. The change stream
 * reads the followed tables once when it starts and checks every table map against that
 * (`BinlogAssembler.columnSchemasFor`); a table that no longer fits is reported as a schema
 * change and its rows are skipped, without decoding them.
 */
function binlogClientClass(ZongJi: typeof ZongJiModule) {
  return class MySqlBinlogClient extends ZongJi {
    readonly #columnSchemas: ColumnSchemaSource;

    constructor(options: ConnectionOptions, columnSchemas: ColumnSchemaSource) {
      super(options);
      this.#columnSchemas = columnSchemas;
    }

    /**
     * Replaces zongji's own (undocumented) lookup. zongji calls it with the binlog connection
     * paused and resumes it in `next`, after setting up the table's decoding.
     */
    _fetchTableInfo(event: TableMapEvent, next: () => void): void {
      let schemas: ColumnSchema[] | null;
      try {
        schemas = this.#columnSchemas(event);
      } catch (error) {
        this.emit('error', error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (schemas === null) {
        // No entry: zongji skips the table's row events unread.
        delete this.tableMap[event.tableId];
        this.connection?.resume();
        return;
      }
      this.tableMap[event.tableId] = {
        columnSchemas: schemas,
        parentSchema: event.schemaName,
        tableName: event.tableName,
      };
      next();
    }
  };
}

/** A zongji client with the column schemas of `columnSchemas`. */
export type MySqlBinlogClient = InstanceType<ReturnType<typeof binlogClientClass>>;

let clientClass: ReturnType<typeof binlogClientClass> | undefined;

/**
 * Loads zongji (and the mysql driver it is built on), once. The connector's replication check
 * calls it, so an instance that follows the binlog has loaded it before it serves: loading it
 * with the first change stream, just after the ready line, held the main thread for the first
 * queries' moment.
 */
export async function loadBinlogClient(): Promise<ReturnType<typeof binlogClientClass>> {
  clientClass ??= binlogClientClass((await import('@vlasky/zongji')).default);
  return clientClass;
}

/**
 * A new binlog client; zongji (and the mysql driver it is built on) is loaded by the first, so a
 * process that follows no MySQL source never loads it.
 */
export async function newBinlogClient(
  options: ConnectionOptions,
  columnSchemas: ColumnSchemaSource,
): Promise<MySqlBinlogClient> {
  const Client = await loadBinlogClient();
  return new Client(options, columnSchemas);
}
