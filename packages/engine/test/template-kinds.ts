/**
 * Plan templates of every kind that makes one big, for measuring what a cached plan holds
 * (plan-cache-memory.test.ts, `bench/plan-cache.ts`): over a schema like the hostile fixture's
 * (`p` 1-n `c`) beside a wide pair (`a` with 200 columns and 10 foreign keys to `b`, `b` with 200
 * columns), each kind a family of distinct shapes up to the parse caps.
 */
import { parseQuery, queryShape } from '@replix/query';
import { makeTemplate, type PlanTemplate } from '../src/exec/plan-template.ts';
import { templateBytes } from '../src/exec/template-bytes.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceColumn, SourceSchema } from '../src/source-schema.ts';
import { column, table } from './fixtures.ts';

const WIDE_COLUMNS = 200;
const WIDE_KEYS = 10;

function wideColumns(prefix: string, extra: SourceColumn[] = []): SourceColumn[] {
  const types: SourceColumn['type'][] = ['int', 'string', 'decimal', 'timestamp', 'boolean'];
  const columns = [column('id', 'int', false), ...extra];
  while (columns.length < WIDE_COLUMNS)
    columns.push(column(`${prefix}${columns.length}`, types[columns.length % types.length]!));
  return columns;
}

const keys = Array.from({ length: WIDE_KEYS }, (_, i) => `b${i}`);
const source: SourceSchema = {
  tables: [
    table('p', [column('id', 'int', false), column('name', 'string'), column('n', 'int')]),
    table(
      'c',
      [
        column('id', 'int', false),
        column('p_id', 'int'),
        column('n', 'int'),
        column('v', 'string'),
      ],
      {
        foreignKeys: [
          { name: 'fk_p', columns: ['p_id'], referencedTable: 'p', referencedColumns: ['id'] },
        ],
      },
    ),
    table(
      'a',
      wideColumns(
        'x',
        keys.map((key) => column(key, 'int')),
      ),
      {
        foreignKeys: keys.map((key) => ({
          name: `fk_${key}`,
          columns: [key],
          referencedTable: 'b',
          referencedColumns: ['id'],
        })),
      },
    ),
    table('b', wideColumns('y')),
  ],
};

export const KINDS_SCHEMA: CompiledSchema = compileSchema(source, parseSchemaConfig({}));

const list = (count: number, make: (j: number) => string, separator = ', ') =>
  Array.from({ length: count }, (_, j) => make(j)).join(separator);
/** Layout that makes a shape of its own: `i` spaces. */
const spaces = (i: number) => ' '.repeat(1 + (i % 4000));

/**
 * Kinds of template, each `(i) => text` giving distinct shapes for distinct `i`: the IN lists of
 * issue 26's flood and the biggest plans the parse caps allow.
 */
export const TEMPLATE_KINDS: Readonly<Record<string, (i: number) => string>> = {
  'IN list, 1,000 numbers': (i) =>
    `c (id IN (${list(1000, (j) => `${i * 1000 + j}.00000`)}))${spaces(i)}{ id }`,
  'IN list, 6 to 1,000 numbers': (i) =>
    `c (id IN (${list(6 + ((i * 37) % 995), (j) => String(i * 1000 + j))})) { id }`,
  'IN list, 1,000 strings': (i) =>
    `c (v IN (${list(1000, (j) => `'v${i * 1000 + j}a'`)}))${spaces(i)}{ id }`,
  'IN list, 1,000 NULLs': (i) => `c (v IN (${list(1000, () => 'NULL')}))${spaces(i)}{ id }`,
  '256 conditions': (i) => `c (${list(256, (j) => `n = ${j}`, ' OR ')})${spaces(i)}{ id }`,
  '256 BETWEENs': (i) =>
    `c (${list(256, (j) => `n BETWEEN ${j} AND 1e9`, ' OR ')})${spaces(i)}{ id }`,
  '256 paths of 8 relations': (i) =>
    `c (${list(256, (j) => `p.c.p.c.p.c.p.c.n = ${j}`, ' OR ')})${spaces(i)}{ id }`,
  '256 LIKE patterns': (i) =>
    `c (${list(256, (j) => `v LIKE '%${j}%${'a_%'.repeat(20)}'`, ' OR ')})${spaces(i)}{ id }`,
  '2,000 selection items': (i) =>
    `c${spaces(i)}{ ${list(2000, (j) => (j % 2 ? 'id' : 'v'), ' ')} }`,
  '@lenient, a 60 KB name': (i) => `@lenient c${spaces(i)}{ id ${'z'.repeat(60_000)} }`,
  'a 60 KB string': (i) => `c (v = '${'ж'.repeat(30_000)}')${spaces(i)}{ id }`,
  '32 nested relations': (i) =>
    `${'p { c '.repeat(16).replaceAll('c ', 'c { ')}${spaces(i)}id${' }'.repeat(32)}`,
  'wide table, ...': (i) => `a${spaces(i)}{ ... }`,
  'wide table, nested ... to 32 levels': (i) =>
    `${`a { b_by_b0 { ${'a_by_b1 { b_by_b1 { '.repeat(15)}`}${spaces(i)}... ${'} '.repeat(32)}`,
};

export interface TemplateMemory {
  /** Heap bytes retained per template, after GC: what `count` templates kept alive ÷ count. */
  readonly measured: number;
  /** What `templateBytes` counts per template, on average. */
  readonly counted: number;
}

/**
 * Makes `count` templates of one kind as a plan cache miss does (shape, parse, template) and
 * keeps them with their shape keys, as the cache does; the texts themselves are dropped, so
 * what the templates keep of them counts. `gc` must be V8's (`--expose-gc`).
 */
export function measureTemplates(
  make: (i: number) => string,
  count: number,
  gc: () => void,
): TemplateMemory {
  const kept = new Map<string, PlanTemplate>();
  let counted = 0;
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) {
    const text = make(i);
    const shape = queryShape(text)!;
    const query = parseQuery(text);
    const template = makeTemplate(KINDS_SCHEMA, query, shape.literals, TEMPLATE_OPTIONS);
    counted += templateBytes({ text, shape, query, template });
    kept.set(shape.key, template);
  }
  gc();
  gc();
  const measured = (process.memoryUsage().heapUsed - before) / count;
  if (kept.size !== count) throw new Error(`${count} texts made ${kept.size} shapes`);
  return { measured, counted: counted / count };
}

const TEMPLATE_OPTIONS = { defaultLimit: 1000, nestedDefaultLimit: 1000 };
