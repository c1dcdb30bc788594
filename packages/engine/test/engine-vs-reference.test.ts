/**
 * Property tests: random data for a two-table schema with foreign keys, random queries over it,
 * and the engine's answers compared to the brute-force reference in test/reference/.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { ColumnType, SourceSchema } from '../src/source-schema.ts';
import type { RowChange } from '../src/storage/apply-changes.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { buildGeneration, column, runQuery, shopRows, shopSource, table } from './fixtures.ts';
import { ReferenceDb, type ReferenceRelation, referenceRelations } from './reference/reference.ts';
import { bytesToHex, referenceIso } from './reference/values.ts';

// ---------------------------------------------------------------------------------------------
// The schema: people 1-n notes, through one foreign key or two (whose reverse names collide).

type TableName = 'people' | 'notes';

const PEOPLE_COLUMNS = [
  column('id', 'int', false),
  column('name', 'string'),
  column('score', 'float'),
  column('balance', 'decimal', true, 2),
  column('born', 'date'),
  column('active', 'boolean'),
];
const NOTES_COLUMNS = [
  column('id', 'string', false),
  column('person_id', 'int'),
  column('reviewer_id', 'int'),
  column('body', 'string'),
  column('qty', 'int'),
  column('amount', 'decimal', true, 2),
  column('big', 'bigint'),
  column('at', 'timestamp'),
  column('t', 'time'),
  column('data', 'json'),
  column('raw', 'binary'),
];

function sourceSchema(twoKeys: boolean): SourceSchema {
  const fk = (name: string, col: string) => ({
    name,
    columns: [col],
    referencedTable: 'people',
    referencedColumns: ['id'],
  });
  return {
    tables: [
      table('notes', NOTES_COLUMNS, {
        foreignKeys: twoKeys
          ? [fk('fk_person', 'person_id'), fk('fk_reviewer', 'reviewer_id')]
          : [fk('fk_person', 'person_id')],
      }),
      table('people', PEOPLE_COLUMNS),
    ],
  };
}

const COLUMNS: Record<TableName, readonly { name: string; type: ColumnType }[]> = {
  people: PEOPLE_COLUMNS,
  notes: NOTES_COLUMNS,
};
/** Columns SUM and AVG are generated for. */
const SUMMABLE = new Set<ColumnType>(['int', 'bigint', 'float', 'decimal', 'time']);

// ---------------------------------------------------------------------------------------------
// Data.

/** Characters that exercise code point order, case folding, astral planes and LIKE escapes. */
const CHARS = [
  'a',
  'A',
  'b',
  'B',
  'z',
  'é',
  'É',
  'e\u0301',
  'ß',
  'σ',
  'ς',
  'Σ',
  'ά',
  'Ά',
  'ж',
  'Ж',
  '😀',
  '𝔸',
  '\uFB01',
  '%',
  '_',
  '\\',
  '-',
  '.',
  "'",
  ' ',
  '\n',
  '\u0000',
  '\u0001',
];

const textArb = fc.array(fc.constantFrom(...CHARS), { maxLength: 4 }).map((c) => c.join(''));

function textValue(pool: readonly string[]): fc.Arbitrary<string | null> {
  const pick = fc.constantFrom(...pool);
  return fc.oneof(
    pick,
    pick.map((s) => s.toUpperCase()),
    pick.map((s) => s.toLowerCase()),
    textArb,
    fc.constant(null),
  );
}

function nullable<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.option(arb, { freq: 5, nil: null });
}

function decimalText(cents: number): string {
  const negative = cents < 0;
  const digits = String(Math.abs(cents)).padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

const DAY = 86_400_000;
const dateArb = fc
  .integer({ min: -25_567, max: 47_482 })
  .map((days) => new Date(days * DAY).toISOString().slice(0, 10));
const intArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -5, max: 5 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(2_147_483_647, -2_147_483_648, 3_000_000_000, -3_000_000_000),
  },
);
const floatArb = fc.oneof(
  fc.constantFrom(0, -0, 1.5, -2.25, 0.1, 1e-7, 1e21, -123456.789),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
);
const decimalArb = fc
  .oneof(
    fc.integer({ min: -1000, max: 1000 }),
    fc.integer({ min: -100_000_000_000, max: 100_000_000_000 }),
  )
  .map(decimalText);
const bigintArb = fc
  .oneof(
    fc.bigInt({ min: -100n, max: 100n }),
    fc.constantFrom(2n ** 53n, 2n ** 53n + 1n, 2n ** 53n + 2n, -(2n ** 53n) - 1n, 2n ** 63n - 1n),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    // Round values past 2^53 whose nearest double prints the same digits but is another integer.
    fc.bigInt({ min: 2n ** 53n, max: 2n ** 60n }).map((v) => v - (v % 10n)),
  )
  .map(String);
// Epoch microseconds, 1900…2100: whole milliseconds and values with a microsecond part.
const timestampArb = fc.oneof(
  fc.integer({ min: -2_208_988_800_000, max: 4_102_444_800_000 }).map((ms) => ms * 1000),
  fc
    .tuple(fc.integer({ min: -2_208_988_800_000, max: 4_102_444_800_000 }), fc.nat(999))
    .map(([ms, micros]) => ms * 1000 + micros),
);
const timeArb = fc.oneof(
  fc.integer({ min: 0, max: 86_399 }),
  fc.constantFrom(0.5, 3600.25, 0.000001, 86_399.999999),
  fc.integer({ min: 0, max: 86_399_999_999 }).map((micros) => micros / 1_000_000),
);
const jsonArb = fc.constantFrom('{"a":1}', '[1,2]', '"x"', 'null', '{"b":"é"}');
const binaryArb = fc.uint8Array({ maxLength: 3 });

interface Dataset {
  readonly twoKeys: boolean;
  readonly chunkRows: number;
  readonly nestedDefaultLimit: number;
  readonly rows: Record<TableName, unknown[][]>;
}

/** Rows of either table for a given key, with text from `texts` and references to `personIds`. */
function rowArbitraries(texts: readonly string[], personIds: readonly number[]) {
  const text = textValue(texts);
  const personRef = fc.oneof(
    { weight: 4, arbitrary: personIds.length ? fc.constantFrom(...personIds) : fc.constant(1) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(999) },
  );
  return {
    person: (id: number) =>
      fc.tuple(
        fc.constant(id),
        text,
        nullable(floatArb),
        nullable(decimalArb),
        nullable(dateArb),
        nullable(fc.boolean()),
      ),
    note: (id: string) =>
      fc.tuple(
        fc.constant(id),
        personRef,
        personRef,
        text,
        nullable(intArb),
        nullable(decimalArb),
        nullable(bigintArb),
        nullable(timestampArb),
        nullable(timeArb),
        nullable(jsonArb),
        nullable(binaryArb),
      ),
  };
}

const personIdArb = fc.integer({ min: -20, max: 60 });
const noteIdArb = fc
  .array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: 3 })
  .map((c) => c.join(''));

const datasetArb: fc.Arbitrary<Dataset> = fc
  .record({
    twoKeys: fc.boolean(),
    chunkRows: fc.constantFrom(3, 7, 65_536),
    nestedDefaultLimit: fc.constantFrom(1000, 2, 0),
    texts: fc.array(textArb, { minLength: 1, maxLength: 5 }),
    personIds: fc.uniqueArray(personIdArb, { maxLength: 10 }),
    noteIds: fc.uniqueArray(noteIdArb, { maxLength: 14 }),
  })
  .chain(({ twoKeys, chunkRows, nestedDefaultLimit, texts, personIds, noteIds }) => {
    const rowArbs = rowArbitraries(texts, personIds);
    const people = fc.tuple(...personIds.map(rowArbs.person));
    const notes = fc.tuple(...noteIds.map(rowArbs.note));
    return fc.record({
      twoKeys: fc.constant(twoKeys),
      chunkRows: fc.constant(chunkRows),
      nestedDefaultLimit: fc.constant(nestedDefaultLimit),
      rows: fc.record({
        people: people.map((rows) => rows.map((row) => [...row])),
        notes: notes.map((rows) => rows.map((row) => [...row])),
      }),
    });
  });

// ---------------------------------------------------------------------------------------------
// Queries, generated as text from the data (so that literals hit rows).

function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

class QueryGen {
  readonly #data: Dataset;
  readonly #relations: Map<string, ReferenceRelation[]>;

  constructor(data: Dataset) {
    this.#data = data;
    this.#relations = referenceRelations(sourceSchema(data.twoKeys));
  }

  relations(table: TableName): ReferenceRelation[] {
    return this.#relations.get(table) ?? [];
  }

  #values(table: TableName, name: string): unknown[] {
    const index = COLUMNS[table].findIndex((c) => c.name === name);
    return this.#data.rows[table].map((row) => row[index]).filter((v) => v !== null);
  }

  /** A literal for a column of `type`: mostly a value from the data, sometimes a fresh one. */
  literal(
    table: TableName,
    name: string,
    type: ColumnType,
    allowNull = true,
  ): fc.Arbitrary<string> {
    const existing = this.#values(table, name);
    let fresh: fc.Arbitrary<unknown>;
    let render: (value: unknown) => fc.Arbitrary<string>;
    switch (type) {
      case 'int':
        fresh = fc.oneof(intArb, fc.constantFrom(1.5, -0.5));
        render = (v) => fc.constant(String(v));
        break;
      case 'bigint':
        fresh = bigintArb;
        render = (v) => fc.constant(String(v));
        break;
      case 'decimal':
        fresh = fc.oneof(decimalArb, fc.constantFrom('1', '-3', '0.005', '12.5'));
        render = (v) => fc.constant(String(v));
        break;
      case 'float':
        fresh = floatArb;
        render = (v) => fc.constant(String(v));
        break;
      case 'time':
        fresh = timeArb;
        render = (v) => fc.constant(String(v));
        break;
      case 'timestamp':
        fresh = timestampArb;
        render = (v) => fc.constant(quote(referenceIso(v as number)));
        break;
      case 'date':
        fresh = dateArb;
        render = (v) => fc.constant(quote(v as string));
        break;
      case 'boolean':
        fresh = fc.boolean();
        render = (v) => fc.constant(String(v));
        break;
      case 'string':
        fresh = textArb;
        render = (v) =>
          fc.constantFrom(
            quote(v as string),
            quote((v as string).toUpperCase()),
            quote((v as string).toLowerCase()),
          );
        break;
      case 'json':
        fresh = jsonArb;
        render = (v) => fc.constant(quote(v as string));
        break;
      case 'binary':
        fresh = binaryArb;
        render = (v) =>
          fc.constantFrom(
            quote(bytesToHex(v as Uint8Array)),
            quote(bytesToHex(v as Uint8Array).toUpperCase()),
          );
        break;
      case 'array':
        // Arrays take no literal (only IS NULL); the generated schema has none.
        throw new Error('no literals for array columns');
    }
    const value = existing.length
      ? fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...existing) },
          { weight: 1, arbitrary: fresh },
        )
      : fresh;
    const literal = value.chain(render);
    return allowNull
      ? fc.oneof({ weight: 12, arbitrary: literal }, { weight: 1, arbitrary: fc.constant('NULL') })
      : literal;
  }

  likePattern(table: TableName, name: string): fc.Arbitrary<string> {
    const existing = this.#values(table, name) as string[];
    const special = (c: string) => (c === '%' || c === '_' || c === '\\' ? `\\${c}` : c);
    const fromValue = existing.length
      ? fc
          .tuple(
            fc.constantFrom(...existing),
            fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 8, maxLength: 8 }),
            fc.boolean(),
            fc.boolean(),
          )
          .map(([value, ops, lead, trail]) => {
            const chars = Array.from(value).map((c, i) => {
              switch (ops[i % 8]) {
                case 1:
                  return '_';
                case 2:
                  return '%';
                case 3:
                  return special(c.toUpperCase() === c ? c.toLowerCase() : c.toUpperCase());
                default:
                  return special(c);
              }
            });
            return `${lead ? '%' : ''}${chars.join('')}${trail ? '%' : ''}`;
          })
      : textArb;
    const random = fc
      .array(fc.oneof(fc.constantFrom(...CHARS), fc.constantFrom('%', '_', '\\%', '\\_', '\\\\')), {
        maxLength: 5,
      })
      .map((parts) => parts.join(''));
    return fc.oneof({ weight: 3, arbitrary: fromValue }, { weight: 1, arbitrary: random });
  }

  /** A predicate on a column of `table`, its path prefixed with `prefix`. */
  leaf(table: TableName, prefix: string): fc.Arbitrary<string> {
    return fc
      .constantFrom(...COLUMNS[table])
      .chain(({ name, type }) => this.columnLeaf(table, name, type, `${prefix}${name}`));
  }

  /** A predicate on column `name` of `table`, written on `path` (a HAVING key for MIN and MAX). */
  columnLeaf(table: TableName, name: string, type: ColumnType, path: string): fc.Arbitrary<string> {
    {
      const lit = () => this.literal(table, name, type);
      const ops =
        type === 'boolean' ? (['=', '!='] as const) : (['=', '!=', '<', '<=', '>', '>='] as const);
      const options: fc.Arbitrary<string>[] = [
        fc.tuple(fc.constantFrom(...ops), lit()).map(([op, v]) => `${path} ${op} ${v}`),
        fc
          .array(lit(), { minLength: 1, maxLength: 3 })
          .map((vs) => `${path} IN (${vs.join(', ')})`),
        fc.constantFrom(`${path} IS NULL`, `${path} IS NOT NULL`),
      ];
      if (type !== 'boolean') {
        options.push(fc.tuple(lit(), lit()).map(([a, b]) => `${path} BETWEEN ${a} AND ${b}`));
      }
      if (type === 'string' || type === 'json') {
        const like = fc
          .tuple(fc.constantFrom('LIKE', 'ILIKE'), this.likePattern(table, name))
          .map(([op, pattern]) => `${path} ${op} ${quote(pattern)}`);
        options.push(like, like);
      }
      return fc.oneof(...options);
    }
  }

  /** A HAVING test of a number aggregate (`count`, `count_distinct_x`, an integer sum). */
  numberLeaf(key: string): fc.Arbitrary<string> {
    const number = fc.integer({ min: -2, max: 6 });
    return fc.oneof(
      fc
        .tuple(fc.constantFrom('=', '!=', '<', '<=', '>', '>='), number)
        .map(([op, n]) => `${key} ${op} ${n}`),
      fc.array(number, { minLength: 1, maxLength: 3 }).map((ns) => `${key} IN (${ns.join(', ')})`),
      fc.tuple(number, number).map(([a, b]) => `${key} BETWEEN ${a} AND ${b}`),
      fc.constantFrom(`${key} IS NULL`, `${key} IS NOT NULL`),
    );
  }

  /** ` HAVING …` over the selected keys and aggregates (AVG not: the reference leaves it out). */
  having(table: TableName, keys: readonly string[], aggregates: readonly string[]) {
    const types = new Map(COLUMNS[table].map((c) => [c.name, c.type]));
    const leaves: fc.Arbitrary<string>[] = keys.map((key) =>
      this.columnLeaf(table, key, types.get(key) as ColumnType, key),
    );
    for (const aggregate of aggregates) {
      const [, fn, distinct, field] = /^(\w+)\((DISTINCT )?(.+)\)$/.exec(
        aggregate,
      ) as RegExpExecArray;
      const type = types.get(field as string);
      if (fn === 'MIN' || fn === 'MAX') {
        leaves.push(
          this.columnLeaf(
            table,
            field as string,
            type as ColumnType,
            `${fn.toLowerCase()}_${field}`,
          ),
        );
      } else if (fn === 'COUNT') {
        const key = distinct ? `count_distinct_${field}` : 'count';
        leaves.push(this.numberLeaf(key), this.numberLeaf(`COUNT(${distinct ?? ''}${field})`));
      } else if (fn === 'SUM' && (type === 'int' || type === 'bigint')) {
        leaves.push(this.numberLeaf(`sum_${field}`));
      }
    }
    if (leaves.length === 0) return fc.constant('');
    return fc.option(
      fc
        .tuple(
          fc.array(fc.oneof(...leaves), { minLength: 1, maxLength: 2 }),
          fc.constantFrom(' AND ', ' OR '),
        )
        .map(([parts, op]) => ` HAVING ${parts.join(op)}`),
      { freq: 2, nil: '' },
    );
  }

  /** A leaf on the table itself or, through one or two relations, on a related table. */
  anyLeaf(table: TableName): fc.Arbitrary<string> {
    const viaRelation = fc.constantFrom(...this.relations(table)).chain((relation) => {
      const target = relation.target as TableName;
      return fc.oneof(
        { weight: 3, arbitrary: this.leaf(target, `${relation.name}.`) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(...this.relations(target))
            .chain((next) => this.leaf(next.target as TableName, `${relation.name}.${next.name}.`)),
        },
      );
    });
    return fc.oneof(
      { weight: 3, arbitrary: this.leaf(table, '') },
      { weight: 1, arbitrary: viaRelation },
    );
  }

  condition(table: TableName, depth: number): fc.Arbitrary<string> {
    if (depth === 0) return this.anyLeaf(table);
    const operands = fc.array(this.condition(table, depth - 1), { minLength: 2, maxLength: 3 });
    return fc.oneof(
      { weight: 3, arbitrary: this.anyLeaf(table) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.constantFrom(' AND ', ' OR '), operands)
          .map(([op, parts]) => `(${parts.join(op)})`),
      },
    );
  }

  filter(table: TableName): fc.Arbitrary<string> {
    return fc
      .option(this.condition(table, 2), { freq: 3, nil: null })
      .map((f) => (f ? ` (${f})` : ''));
  }

  /** ORDER BY over own columns and to-one paths. */
  orderBy(table: TableName): fc.Arbitrary<string> {
    const fields: string[] = COLUMNS[table].map((c) => c.name);
    for (const relation of this.relations(table)) {
      if (relation.kind !== 'forward') continue;
      for (const c of COLUMNS[relation.target as TableName])
        fields.push(`${relation.name}.${c.name}`);
    }
    return this.#sortList(fields);
  }

  #sortList(fields: readonly string[]): fc.Arbitrary<string> {
    const item = fc
      .tuple(fc.constantFrom(...fields), fc.constantFrom('', ' ASC', ' DESC'))
      .map(([f, d]) => `${f}${d}`);
    return fc
      .array(item, { maxLength: 3 })
      .map((items) => (items.length ? ` ORDER BY ${items.join(', ')}` : ''));
  }

  limitOffset(): fc.Arbitrary<string> {
    return fc
      .tuple(
        fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 8 })),
        fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, fc.integer({ min: 0, max: 4 })),
      )
      .map(
        ([limit, offset]) =>
          `${limit === null ? '' : ` LIMIT ${limit}`}${offset === null ? '' : ` OFFSET ${offset}`}`,
      );
  }

  /** `{ ... }` with group keys and aggregates, then clauses that may sort on either. */
  aggregateBody(table: TableName): fc.Arbitrary<string> {
    const columns = COLUMNS[table];
    const summable = columns.filter((c) => SUMMABLE.has(c.type)).map((c) => c.name);
    const aggregates = fc
      .tuple(
        fc.constantFrom(
          null,
          'COUNT(*)',
          ...columns.map((c) => `COUNT(${c.name})`),
          ...columns.map((c) => `COUNT(DISTINCT ${c.name})`),
        ),
        fc.subarray(summable.map((c) => `SUM(${c})`)),
        fc.subarray(summable.map((c) => `AVG(${c})`)),
        fc.subarray(
          columns.map((c) => `MIN(${c.name})`),
          { maxLength: 2 },
        ),
        fc.subarray(
          columns.map((c) => `MAX(${c.name})`),
          { maxLength: 2 },
        ),
      )
      .map(([count, sums, avgs, mins, maxes]) => [
        ...(count ? [count] : []),
        ...sums,
        ...avgs,
        ...mins,
        ...maxes,
      ])
      .filter((list) => list.length > 0);
    return fc
      .tuple(
        fc.subarray(
          columns.map((c) => c.name),
          { maxLength: 2 },
        ),
        aggregates,
      )
      .chain(([keys, aggs]) => {
        const outputKeys = [
          ...keys,
          ...aggs.map((a) => {
            const [, fn, distinct, field] = /^(\w+)\((DISTINCT )?(.+)\)$/.exec(
              a,
            ) as RegExpExecArray;
            if (fn === 'COUNT') return distinct ? `count_distinct_${field}` : 'count';
            return `${fn?.toLowerCase()}_${field}`;
          }),
        ];
        return fc
          .tuple(
            fc.shuffledSubarray([...keys, ...aggs], { minLength: keys.length + aggs.length }),
            this.having(table, keys, aggs),
            this.#sortList(outputKeys),
            this.limitOffset(),
          )
          .map(
            ([items, having, sort, window]) => `{ ${items.join(' ')} }${having}${sort}${window}`,
          );
      });
  }

  /** A selection (`{ ... }`) and its clauses, `depth` levels of embedded relations deep. */
  body(table: TableName, depth: number): fc.Arbitrary<string> {
    const columns = COLUMNS[table].map((c) => c.name);
    const relationItems =
      depth > 0 ? fc.array(this.relationItem(table, depth - 1), { maxLength: 2 }) : fc.constant([]);
    const plain = fc
      .tuple(
        fc.subarray(columns),
        fc.constantFrom(null, null, '*', '...'),
        relationItems,
        fc.boolean(),
        this.orderBy(table),
        this.limitOffset(),
      )
      .map(([fields, wildcard, relations, commas, sort, window]) => {
        let items = [...fields, ...relations];
        if (wildcard) items = fields.length % 2 ? [...items, wildcard] : [wildcard, ...items];
        if (items.length === 0) items = ['id'];
        // A comma after a nested ORDER BY would continue its sort list.
        const separator = commas && relations.length === 0 ? ', ' : ' ';
        return `{ ${items.join(separator)} }${sort}${window}`;
      });
    return fc.oneof(
      { weight: 3, arbitrary: plain },
      { weight: 1, arbitrary: this.aggregateBody(table) },
    );
  }

  relationItem(table: TableName, depth: number): fc.Arbitrary<string> {
    return fc.constantFrom(...this.relations(table)).chain((relation) => {
      const target = relation.target as TableName;
      if (relation.kind === 'forward') {
        // To-one: a filter but no clauses.
        const columns = COLUMNS[target].map((c) => c.name);
        const nested = fc
          .tuple(this.filter(target), fc.subarray(columns, { minLength: 1 }))
          .map(([filter, fields]) => `${relation.name}${filter} { ${fields.join(' ')} }`);
        return fc.oneof(fc.constant(relation.name), nested);
      }
      const nested = fc
        .tuple(this.filter(target), this.body(target, depth))
        .map(([filter, body]) => `${relation.name}${filter} ${body}`);
      return fc.oneof(
        { weight: 1, arbitrary: fc.constant(relation.name) },
        { weight: 3, arbitrary: nested },
      );
    });
  }

  query(): fc.Arbitrary<string> {
    return fc
      .constantFrom<TableName>('people', 'notes')
      .chain((table) =>
        fc
          .tuple(this.filter(table), this.body(table, 2))
          .map(([filter, body]) => `${table}${filter} ${body}`),
      );
  }
}

// ---------------------------------------------------------------------------------------------

function setup(data: Dataset): {
  schema: CompiledSchema;
  generation: Generation;
  reference: ReferenceDb;
} {
  const source = sourceSchema(data.twoKeys);
  const schema = compileSchema(
    source,
    parseSchemaConfig({ query: { nested_default_limit: data.nestedDefaultLimit } }),
  );
  const generation = buildGeneration(schema, data.rows, data.chunkRows);
  const reference = new ReferenceDb(source, data.rows, {
    nestedDefaultLimit: data.nestedDefaultLimit,
  });
  return { schema, generation, reference };
}

/** -0 becomes 0, as JSON.stringify writes it; everything else as it is. */
function asServed(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(asServed);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asServed(item)]));
  }
  return value;
}

function expectSameAnswer(
  schema: CompiledSchema,
  generation: Generation,
  reference: ReferenceDb,
  text: string,
) {
  const expected = reference.run(text);
  const actual = runQuery(schema, generation, text);
  // Compared as the client receives them: JSON has no -0, so an average that rounds to -0 on
  // one side and +0 on the other (a sum of tiny negatives, found by the property) is the same answer.
  expect(asServed(actual.data), text).toEqual(asServed(expected.data));
  expect(actual.meta.pagination.total_matched, text).toBe(expected.totalMatched);
  expect(actual.meta.pagination.count, text).toBe(expected.data.length);
  expect(actual.meta.pagination.has_more, text).toBe(expected.hasMore);
}

const scenarioArb = datasetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    queries: fc.array(new QueryGen(data).query(), { minLength: 1, maxLength: 6 }),
  }),
);

/** FC_RUNS=10000 for a longer hunt; the default keeps the file to a couple of seconds. */
const RUNS = Number(process.env.FC_RUNS ?? 500);

describe('engine vs reference', () => {
  it('answers random queries over random data like the reference', () => {
    fc.assert(
      fc.property(scenarioArb, ({ data, queries }) => {
        const { schema, generation, reference } = setup(data);
        for (const text of queries) expectSameAnswer(schema, generation, reference, text);
      }),
      { numRuns: RUNS },
    );
  }, 60_000);
});

describe('the reference itself', () => {
  // Hand-worked answers over the shop fixture, so the reference is checked on its own.
  const reference = new ReferenceDb(shopSource, shopRows);
  const data = (text: string) => reference.run(text).data;

  it('filters with SQL NULL semantics and code point order', () => {
    expect(data("customers (name != 'Ada') { id }")).toEqual([{ id: 2 }, { id: 3 }]);
    expect(data("customers (name > 'B') { id }")).toEqual([{ id: 2 }, { id: 3 }]);
    expect(data("customers (name > 'Z') { id }")).toEqual([{ id: 3 }]);
    expect(data('customers (name IS NULL) { id }')).toEqual([{ id: 4 }]);
    expect(data("customers (name ILIKE 'σωκρ%') { id }")).toEqual([{ id: 3 }]);
    expect(data('orders (total BETWEEN 7.25 AND 12.5) { id }')).toEqual([{ id: 10 }, { id: 11 }]);
  });

  it('sorts NULLs last ascending and first descending, ties by primary key', () => {
    expect(data('orders { id } ORDER BY total')).toEqual(
      [14, 11, 10, 12, 13].map((id) => ({ id })),
    );
    expect(data('orders { id } ORDER BY total DESC')).toEqual(
      [13, 12, 10, 11, 14].map((id) => ({ id })),
    );
    expect(data('orders { id } ORDER BY status DESC LIMIT 2 OFFSET 1')).toEqual([
      { id: 10 },
      { id: 12 },
    ]);
    expect(data('orders { id } ORDER BY customer.name DESC')).toEqual(
      [14, 13, 12, 10, 11].map((id) => ({ id })),
    );
  });

  it('follows relations both ways', () => {
    expect(data("customers (orders.status = 'paid') { id }")).toEqual([{ id: 1 }, { id: 2 }]);
    expect(data('orders (customer.id = 1) { id customer { name } }')).toEqual([
      { id: 10, customer: { name: 'Ada' } },
      { id: 11, customer: { name: 'Ada' } },
    ]);
    expect(data('customers (id = 1) { orders { id } ORDER BY id DESC LIMIT 1 }')).toEqual([
      { orders: [{ id: 11 }] },
    ]);
  });

  it('aggregates with grouping, over no rows too', () => {
    expect(data('orders { status COUNT(*) SUM(total) AVG(total) } ORDER BY status')).toEqual([
      { status: 'open', count: 1, sum_total: 7.25, avg_total: 7.25 },
      { status: 'paid', count: 3, sum_total: 113.5, avg_total: 37.833333 },
      { status: 'void', count: 1, sum_total: null, avg_total: null },
    ]);
    expect(data("orders (status = 'x') { COUNT(*) SUM(total) }")).toEqual([
      { count: 0, sum_total: null },
    ]);
    expect(data("orders (status = 'x') { status COUNT(*) }")).toEqual([]);
    expect(reference.run('orders { status COUNT(total) } LIMIT 1').totalMatched).toBe(3);
  });
});

describe('engine vs reference: chosen data', () => {
  /** Group keys that a naive composite key would confuse, and sums past 2^53. */
  const data: Dataset = {
    twoKeys: false,
    chunkRows: 2,
    nestedDefaultLimit: 1000,
    rows: {
      people: [
        [1, '\u0000null', 1.5, '1.00', null, true],
        [2, null, 1.5, '2.00', null, true],
        [3, 'x\u0001string:y', null, null, null, false],
        [4, 'x', null, null, null, false],
      ],
      notes: [
        ['a', 1, null, 'x\u0001string:y', 1, '0.10', '9007199254740993', null, null, 'z', null],
        ['b', 2, null, 'x', 1, '0.20', '9007199254740993', null, null, 'y\u0001string:z', null],
        ['c', 3, null, null, 2, null, '-9223372036854775808', null, null, null, null],
        ['d', 4, null, '\u0000null', 2, null, '1', null, null, null, null],
      ],
    },
  };
  const { schema, generation, reference } = setup(data);

  it.each([
    'people { name COUNT(*) }',
    'people { name active COUNT(*) SUM(balance) } ORDER BY name DESC',
    'notes { body data COUNT(*) }',
    'notes { qty SUM(big) AVG(big) COUNT(big) } ORDER BY sum_big',
    'notes { SUM(big) }',
    'people { id notes { body SUM(big) } }',
    'people (notes.big = 9007199254740993) { id }',
  ])('%s', (text) => {
    expectSameAnswer(schema, generation, reference, text);
  });
});

describe('engine vs reference: default limits', () => {
  const people = Array.from({ length: 1200 }, (_, i) => [i + 1, `p${i}`, null, null, null, null]);
  const notes = Array.from({ length: 1100 }, (_, i) => [
    `n${String(i).padStart(4, '0')}`,
    1,
    null,
    null,
    i % 7,
    null,
    null,
    null,
    null,
    null,
    null,
  ]);
  const data: Dataset = {
    twoKeys: false,
    chunkRows: 65_536,
    nestedDefaultLimit: 1000,
    rows: { people, notes },
  };
  const { schema, generation, reference } = setup(data);

  it.each([
    'people { id }',
    'people { id } ORDER BY id DESC OFFSET 150',
    'people (id <= 2) { id notes { id } }',
    'people (id = 1) { id notes { id } ORDER BY id DESC OFFSET 50 }',
    'people (id = 1) { notes { id } LIMIT 1050 }',
    'notes { qty COUNT(*) }',
  ])('%s', (text) => {
    expectSameAnswer(schema, generation, reference, text);
  });

  it('cuts at 1000 rows', () => {
    const result = runQuery(schema, generation, 'people (id = 1) { id notes { id } }');
    expect(result.data[0].notes).toHaveLength(1000);
    expect(runQuery(schema, generation, 'people { id }').meta.pagination).toEqual({
      count: 1000,
      total_matched: 1200,
      has_more: true,
      limit: 1000,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// nextGeneration: random batches of changes applied to the engine and to plain lists of rows.

type ChangeOp =
  | { readonly kind: 'insert'; readonly table: TableName; readonly row: unknown[] }
  | {
      readonly kind: 'update';
      readonly table: TableName;
      readonly pick: number;
      /** The new row; its key replaces the old one unless `keepKey`. */
      readonly row: unknown[];
      readonly keepKey: boolean;
    }
  | { readonly kind: 'delete'; readonly table: TableName; readonly pick: number }
  | { readonly kind: 'truncate'; readonly table: TableName };

interface ChangeScenario {
  readonly chunkRows: number;
  readonly rows: Record<TableName, unknown[][]>;
  readonly batches: readonly (readonly ChangeOp[])[];
}

const changeScenarioArb: fc.Arbitrary<ChangeScenario> = fc
  .record({
    chunkRows: fc.constantFrom(2, 5, 65_536),
    texts: fc.array(textArb, { minLength: 1, maxLength: 4 }),
    personIds: fc.uniqueArray(personIdArb, { maxLength: 8 }),
    noteIds: fc.uniqueArray(noteIdArb, { maxLength: 12 }),
  })
  .chain(({ chunkRows, texts, personIds, noteIds }) => {
    const rowArbs = rowArbitraries(texts, personIds);
    const newRow = (table: TableName): fc.Arbitrary<unknown[]> =>
      (table === 'people' ? personIdArb.chain(rowArbs.person) : noteIdArb.chain(rowArbs.note)).map(
        (row) => [...row],
      );
    const op: fc.Arbitrary<ChangeOp> = fc
      .constantFrom<TableName>('people', 'notes', 'notes')
      .chain((table) =>
        fc.oneof(
          {
            weight: 4,
            arbitrary: newRow(table).map((row) => ({ kind: 'insert', table, row }) as const),
          },
          {
            weight: 4,
            arbitrary: fc
              .record({ pick: fc.nat(), row: newRow(table), keepKey: fc.boolean() })
              .map((u) => ({ kind: 'update', table, ...u }) as const),
          },
          {
            weight: 4,
            arbitrary: fc.nat().map((pick) => ({ kind: 'delete', table, pick }) as const),
          },
          { weight: 1, arbitrary: fc.constant({ kind: 'truncate', table } as const) },
        ),
      );
    return fc.record({
      chunkRows: fc.constant(chunkRows),
      rows: fc.record({
        people: fc.tuple(...personIds.map(rowArbs.person)).map((rows) => rows.map((r) => [...r])),
        notes: fc.tuple(...noteIds.map(rowArbs.note)).map((rows) => rows.map((r) => [...r])),
      }),
      batches: fc.array(fc.array(op, { maxLength: 10 }), { minLength: 1, maxLength: 3 }),
    });
  });

/**
 * Applies `ops` to `model` (rows in storage order): a deleted row goes, a new row version goes
 * to the end and replaces any row with its key. Returns the engine's changes by table.
 */
function applyToModel(
  model: Record<TableName, unknown[][]>,
  ops: readonly ChangeOp[],
): Map<string, RowChange[]> {
  const changes = new Map<string, RowChange[]>();
  const emit = (table: TableName, change: RowChange) => {
    changes.set(table, [...(changes.get(table) ?? []), change]);
  };
  for (const op of ops) {
    const rows = model[op.table];
    const remove = (key: unknown) => {
      const at = rows.findIndex((row) => row[0] === key);
      if (at >= 0) rows.splice(at, 1);
    };
    const existing = rows.length ? rows['pick' in op ? op.pick % rows.length : 0] : undefined;
    switch (op.kind) {
      case 'insert':
        remove(op.row[0]);
        rows.push(op.row);
        emit(op.table, { op: 'insert', row: op.row });
        break;
      case 'update': {
        if (!existing) break;
        const after = op.keepKey ? [existing[0], ...op.row.slice(1)] : op.row;
        if (after[0] === existing[0]) {
          // An update that keeps the key rewrites the row where it is stored.
          rows[rows.indexOf(existing)] = after;
        } else {
          remove(existing[0]);
          remove(after[0]);
          rows.push(after);
        }
        emit(op.table, { op: 'update', before: existing, after });
        break;
      }
      case 'delete':
        if (!existing) break;
        remove(existing[0]);
        emit(op.table, { op: 'delete', row: existing });
        break;
      case 'truncate':
        rows.length = 0;
        emit(op.table, { op: 'truncate' });
        break;
    }
  }
  return changes;
}

/** Every live row, in storage order and through both indexes, as the reference has them. */
function expectSameRows(
  schema: CompiledSchema,
  generation: Generation,
  model: Record<TableName, unknown[][]>,
  keys: { people: Set<number>; notes: Set<string> },
) {
  const reference = new ReferenceDb(sourceSchema(false), model);
  // IN needs at least one value; NULL matches nothing.
  const list = (values: Iterable<unknown>, render: (v: never) => string) =>
    ['NULL', ...[...values].map((v) => render(v as never))].join(', ');
  const queries = [
    'people { * }',
    'notes { * }',
    'notes { id person { id name } } ORDER BY id DESC',
    'people { id notes { id qty } } ORDER BY id',
    `notes (id IN (${list(keys.notes, quote)})) { id }`,
    `people (id IN (${list(keys.people, String)})) { id score }`,
    `notes (person_id IN (${list(keys.people, String)})) { id person_id }`,
    'people { COUNT(*) SUM(balance) }',
  ];
  for (const id of [...keys.notes].slice(0, 4)) queries.push(`notes (id = ${quote(id)}) { * }`);
  for (const id of [...keys.people].slice(0, 4)) {
    queries.push(`people (id = ${id}) { * }`, `notes (person_id = ${id}) { id }`);
  }
  for (const text of queries) expectSameAnswer(schema, generation, reference, text);
}

describe('nextGeneration vs reference', () => {
  it('applies random batches like a plain list, sharing untouched chunks', () => {
    fc.assert(
      fc.property(changeScenarioArb, ({ chunkRows, rows, batches }) => {
        const schema = compileSchema(sourceSchema(false), parseSchemaConfig({}));
        const model = { people: [...rows.people], notes: [...rows.notes] };
        const keys = {
          people: new Set(rows.people.map((r) => r[0] as number)),
          notes: new Set(rows.notes.map((r) => r[0] as string)),
        };
        let generation = buildGeneration(schema, model, chunkRows);
        expectSameRows(schema, generation, model, keys);
        batches.forEach((ops, batch) => {
          for (const op of ops) {
            if (op.kind === 'insert' || op.kind === 'update') {
              if (op.table === 'people') keys.people.add(op.row[0] as number);
              else keys.notes.add(op.row[0] as string);
            }
          }
          const changes = applyToModel(model, ops);
          const next = nextGeneration(generation, changes, generation.id + 1);
          expectSameRows(schema, next, model, keys);
          if (batch === 0) expectSharing(generation, next, rows, model, changes, chunkRows);
          generation = next;
        });
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, 60_000);
});

/**
 * After the first batch over a freshly built generation (chunk c holds initial rows
 * c*chunkRows..): an unchanged table is the same snapshot, and a chunk none of whose rows was
 * deleted or replaced is the same object, unless it is the tail that new rows were merged into.
 */
function expectSharing(
  previous: Generation,
  next: Generation,
  initial: Record<TableName, unknown[][]>,
  model: Record<TableName, unknown[][]>,
  changes: ReadonlyMap<string, readonly RowChange[]>,
  chunkRows: number,
) {
  for (const name of ['people', 'notes'] as const) {
    const before = previous.table(name);
    const after = next.table(name);
    const tableChanges = changes.get(name) ?? [];
    if (tableChanges.length === 0) {
      expect(after).toBe(before);
      continue;
    }
    if (tableChanges.some((change) => change.op === 'truncate')) continue;
    const live = new Set(model[name]);
    const appended = model[name].some((row) => !initial[name].includes(row));
    before.data.chunks.forEach((chunk, c) => {
      const rows = initial[name].slice(c * chunkRows, (c + 1) * chunkRows);
      const touched = rows.some((row) => !live.has(row));
      const mergedTail = appended && c === before.data.chunks.length - 1;
      if (!touched && !mergedTail) expect(after.data.chunks[c]).toBe(chunk);
      if (touched) expect(after.data.chunks[c]).not.toBe(chunk);
    });
  }
}
