import type { SourceColumn } from '@replix/engine';
import type { ColumnSchema, RowData, TableMapEntry, TableMapEvent } from '@vlasky/zongji';
import { SourceError } from '../errors.ts';
import type { ValueConverter } from '../row-converter.ts';
import {
  BINLOG_TYPE,
  type BinlogColumnMetadata,
  binlogTypeMismatch,
  rawBinlogColumn,
} from './mysql-binlog-types.ts';
import { binlogValueConverter } from './mysql-binlog-values.ts';

/** A column's type as the table map gives it; STRING hides ENUM and SET in the metadata. */
function realTypeOf(event: TableMapEvent, index: number): number {
  const metadata = event.columnsMetadata[index] as BinlogColumnMetadata;
  const hidden = metadata?.type;
  return typeof hidden === 'number' ? hidden : event.columnTypes[index]!;
}

/**
 * Turns the row images of one table-map's row events into rows of the requested columns, in
 * request order, with canonical values. Built for each table-map event, which describes the
 * table's columns as binlogged from there on.
 */
export class BinlogRowDecoder {
  readonly #names: readonly string[];
  readonly #converters: readonly (ValueConverter | null)[];
  /**
   * What an `undefined` from zongji stands for: '' for an ENUM holding the "invalid value"
   * index 0 (zongji finds no name for it), null otherwise.
   */
  readonly #undefinedAs: readonly ('' | null)[];
  /** Positions of the requested columns in the table's column list. */
  readonly indexes: readonly number[];

  private constructor(
    names: readonly string[],
    converters: readonly (ValueConverter | null)[],
    undefinedAs: readonly ('' | null)[],
    indexes: readonly number[],
  ) {
    this.#names = names;
    this.#converters = converters;
    this.#undefinedAs = undefinedAs;
    this.indexes = indexes;
  }

  /**
   * The decoder for `columns` of the table `event` maps, whose column list (names, text types)
   * is `schemas`; or why the binlog's columns no longer fit the requested ones.
   */
  static build(
    columns: readonly SourceColumn[],
    event: TableMapEvent,
    schemas: readonly ColumnSchema[],
  ): BinlogRowDecoder | string {
    if (schemas.length !== event.columnCount) {
      return `the binlog has ${event.columnCount} columns, the table had ${schemas.length}`;
    }
    const names: string[] = [];
    const converters: (ValueConverter | null)[] = [];
    const undefinedAs: ('' | null)[] = [];
    const indexes: number[] = [];
    for (const column of columns) {
      const index = schemas.findIndex((schema) => schema.COLUMN_NAME === column.name);
      if (index < 0) return `column "${column.name}" is gone`;
      const realType = realTypeOf(event, index);
      const metadata = event.columnsMetadata[index] as BinlogColumnMetadata;
      const mismatch = binlogTypeMismatch(column, realType, metadata);
      if (mismatch !== null) return mismatch;
      names.push(column.name);
      converters.push(binlogValueConverter(column, realType, metadata));
      undefinedAs.push(realType === BINLOG_TYPE.ENUM ? '' : null);
      indexes.push(index);
    }
    return new BinlogRowDecoder(names, converters, undefinedAs, indexes);
  }

  /**
   * Makes zongji hand over raw bytes for the columns this connector decodes itself (see
   * `rawBinlogColumn`). Called after zongji has set up `entry` for `event`, before any row.
   */
  static rawColumns(event: TableMapEvent, entry: TableMapEntry): void {
    if (!entry.columns) return;
    entry.columns = entry.columns.map((column, index) => {
      const columnType = entry.columnSchemas[index]?.COLUMN_TYPE ?? '';
      const metadata = event.columnsMetadata[index] as BinlogColumnMetadata;
      const raw = rawBinlogColumn(realTypeOf(event, index), metadata, columnType);
      return raw === null ? column : { ...column, ...raw };
    });
  }

  /**
   * Whether a row image with this columns-present bitmap holds every requested column. With
   * binlog_row_image=FULL it always does; MINIMAL or NOBLOB leave columns out, which would
   * read as NULL.
   */
  covers(bitmap: Uint8Array | undefined): boolean {
    if (bitmap === undefined) return true;
    return this.indexes.every((index) => ((bitmap[index >> 3] ?? 0) & (1 << (index & 7))) !== 0);
  }

  /** One row image as the requested columns' canonical values. */
  row(image: RowData): unknown[] {
    const names = this.#names;
    const converters = this.#converters;
    const row = new Array<unknown>(names.length);
    for (let i = 0; i < names.length; i++) {
      const value = image[names[i]!];
      const convert = converters[i];
      if (value === null || value === undefined || !convert) {
        row[i] = value === undefined ? this.#undefinedAs[i] : value;
        continue;
      }
      try {
        row[i] = convert(value);
      } catch (error) {
        if (error instanceof SourceError) throw error;
        throw new SourceError(
          'source_value_invalid',
          `Unexpected binlog value for column "${names[i]}".`,
        );
      }
    }
    return row;
  }
}
