/**
 * How each field of a row carries its numbers, by the column's type in the instance's
 * `/schema`: one representation per column, whatever the size of a value, so a typed row has
 * one type per field (README, "Numbers").
 */

/** `bigint` for BIGINT, `string` (the exact digits) for DECIMAL/NUMERIC, `number` for the rest. */
export type NumberRepresentation = 'bigint' | 'string' | 'number';

/** A field of a row: a column or aggregate's representation, or a relation's target table. */
export type FieldNumbers = NumberRepresentation | { readonly relation: string };

interface SchemaColumn {
  readonly name: string;
  readonly type: string;
  readonly elementType?: string;
}

/** One table's fields. */
export class TableNumbers {
  readonly #columns: ReadonlyMap<string, string>;
  /** Columns and relations, and aggregate keys once looked up. */
  readonly #fields: Map<string, FieldNumbers | undefined>;

  constructor(columns: ReadonlyMap<string, string>, fields: Map<string, FieldNumbers>) {
    this.#columns = columns;
    this.#fields = fields;
  }

  /** A field of the table's rows; undefined for one the schema does not know. */
  field(key: string): FieldNumbers | undefined {
    const field = this.#fields.get(key);
    if (field !== undefined) return field;
    const aggregate = aggregateNumbers(key, this.#columns);
    // Unknown keys are not kept: an answer's keys must not grow the map without bound.
    if (aggregate !== undefined) this.#fields.set(key, aggregate);
    return aggregate;
  }
}

/** A column type's representation; an array's elements follow their element type. */
function columnNumbers(column: SchemaColumn): NumberRepresentation {
  const type = column.type === 'array' ? column.elementType : column.type;
  if (type === 'bigint') return 'bigint';
  if (type === 'decimal') return 'string';
  return 'number';
}

/**
 * What an aggregate key (`count`, `count_distinct_<column>`, `sum_<column>`, `avg_<column>`,
 * `min_<column>`, `max_<column>`: the engine's names) returns: counts a number, MIN and MAX a
 * value of their column, SUM of integers an exact integer of any size, SUM and AVG of DECIMAL
 * exact decimals, AVG of integers and anything of FLOAT, DOUBLE or TIME a double.
 */
function aggregateNumbers(
  key: string,
  columns: ReadonlyMap<string, string>,
): NumberRepresentation | undefined {
  if (key === 'count') return 'number';
  if (key.startsWith('count_distinct_') && columns.has(key.slice(15))) return 'number';
  if (key.startsWith('min_') || key.startsWith('max_')) {
    const type = columns.get(key.slice(4));
    if (type === undefined) return undefined;
    return type === 'bigint' ? 'bigint' : type === 'decimal' ? 'string' : 'number';
  }
  const sum = key.startsWith('sum_');
  if (!sum && !key.startsWith('avg_')) return undefined;
  const type = columns.get(key.slice(4));
  if (type === undefined) return undefined;
  if (type === 'decimal') return 'string';
  if (sum && (type === 'int' || type === 'bigint')) return 'bigint';
  return 'number';
}

/** The tables of a `/schema` document, for `exactRows`. */
export class SchemaNumbers {
  readonly #tables = new Map<string, TableNumbers>();

  /** Throws a TypeError when the document is not a `/schema` answer. */
  constructor(document: unknown) {
    const tables = (document as { tables?: unknown } | null)?.tables;
    if (!Array.isArray(tables)) throw new TypeError('not a /schema document');
    for (const table of tables) {
      const { name, columns, relations } = table as {
        name?: unknown;
        columns?: unknown;
        relations?: unknown;
      };
      if (typeof name !== 'string' || !Array.isArray(columns)) {
        throw new TypeError('not a /schema document');
      }
      const types = new Map<string, string>();
      const fields = new Map<string, FieldNumbers>();
      for (const column of columns as SchemaColumn[]) {
        if (typeof column?.name !== 'string') throw new TypeError('not a /schema document');
        types.set(column.name, column.type);
        fields.set(column.name, columnNumbers(column));
      }
      for (const relation of Array.isArray(relations) ? relations : []) {
        const { name: key, table: target } = relation as { name?: unknown; table?: unknown };
        if (typeof key === 'string' && typeof target === 'string') {
          fields.set(key, { relation: target });
        }
      }
      this.#tables.set(name, new TableNumbers(types, fields));
    }
  }

  /** A table's fields; undefined for a table the document does not know. */
  table(name: string): TableNumbers | undefined {
    return this.#tables.get(name);
  }
}
