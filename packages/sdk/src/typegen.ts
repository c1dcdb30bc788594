/**
 * TypeScript types for every table of an instance, from its `/openapi.json` (what
 * `replix types` writes): one interface per table with its columns, and its relations as
 * optional properties (present when selected); one per table with the keys its aggregates
 * may have in a grouped query's rows (`<Table>Aggregates`: `count`, `min_<column>`, …); plus
 * `Tables`, each table's name to its row.
 * Numbers are typed as the client gives them (`ReplixClientOptions.numbers`): by default
 * BIGINT columns `bigint` and DECIMAL columns `string`.
 */

import type { NumberMode } from './client.ts';

interface JsonSchema {
  type?: string | string[];
  /** A column's only values (a MySQL ENUM's). */
  enum?: unknown[];
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  $ref?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  'x-primary-key'?: string[];
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const REF = '#/components/schemas/';
/** Names the generated file declares itself. */
const RESERVED = new Set(['Tables', 'TableName', 'ReplixArray']);
/** What every table's aggregates type is named after its row type. */
const AGGREGATES_SUFFIX = 'Aggregates';

/** A JSDoc comment; `*\/` inside a description would end it early. */
function doc(text: string | undefined, indent: string): string {
  if (!text) return '';
  return `${indent}/** ${text.replaceAll('*/', '*\\/').replace(/\s*\n\s*/g, ' ')} */\n`;
}

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** Each model's type: its table's name in PascalCase, unique, never one the file declares. */
function typeNames(tables: ReadonlyMap<string, string>): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set(RESERVED);
  for (const [model, table] of tables) {
    const words = table.split(/[^A-Za-z0-9]+/).filter(Boolean);
    let base = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('') || 'Table';
    if (/^[0-9]/.test(base)) base = `T${base}`;
    let name = base;
    // A row type's aggregates type is named after it: neither may be another's name.
    for (let n = 2; used.has(name) || used.has(name + AGGREGATES_SUFFIX); n++) {
      name = `${base}${n}`;
    }
    names.set(model, name);
    used.add(name);
    used.add(name + AGGREGATES_SUFFIX);
  }
  return names;
}

/**
 * The exact types `/openapi.json` describes as JSON numbers, told apart by the notes the
 * instance writes in their descriptions (`packages/instance/src/http/openapi.ts`).
 */
function exactNumberType(description: string | undefined): 'bigint' | 'string' | undefined {
  if (!description) return undefined;
  if (
    /\bA 64-bit integer written with every digit kept\b|\bAn array of bigint elements\b/.test(
      description,
    )
  ) {
    return 'bigint';
  }
  if (
    /\bAn exact decimal written with every digit kept\b|\bAn array of decimal elements\b/.test(
      description,
    )
  ) {
    return 'string';
  }
  return undefined;
}

function scalarType(type: string, exact?: 'bigint' | 'string'): string {
  switch (type) {
    case 'number':
    case 'integer':
      return exact ?? 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    default:
      return 'unknown';
  }
}

function typeOf(
  schema: JsonSchema,
  names: ReadonlyMap<string, string>,
  exact: 'bigint' | 'string' | undefined,
): string {
  if (schema.$ref?.startsWith(REF)) return names.get(schema.$ref.slice(REF.length)) ?? 'unknown';
  if (schema.oneOf) return schema.oneOf.map((item) => typeOf(item, names, exact)).join(' | ');
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum
      .map((value) => (value === null ? 'null' : JSON.stringify(String(value))))
      .join(' | ');
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'unknown'];
  return types
    .map((type) => {
      if (type !== 'array') return scalarType(type, exact);
      const items = schema.items ?? {};
      if (items.$ref) return `${typeOf(items, names, undefined)}[]`;
      // A PostgreSQL array: elements, null, or nested arrays of them.
      const element = (Array.isArray(items.type) ? items.type : [items.type ?? 'unknown']).filter(
        (type) => type !== 'array' && type !== 'null',
      );
      const elements = element.map((type) => scalarType(type, exact));
      return `ReplixArray<${elements.join(' | ') || 'unknown'}>`;
    })
    .join(' | ');
}

/**
 * The keys a table's aggregates give a grouped row (docs/instance-api.md, Aggregates), typed as
 * the client reads them: counts numbers; MIN and MAX their column's type or null; SUM of
 * integers an exact integer (bigint), of DECIMAL its digits (string); AVG of DECIMAL its digits,
 * of other numbers a number. Array columns and relations take no aggregate.
 */
function aggregateProperties(
  properties: Record<string, JsonSchema>,
  names: ReadonlyMap<string, string>,
  exactNumbers: boolean,
): string {
  let out = '  count?: number;\n';
  for (const [field, property] of Object.entries(properties)) {
    const types = Array.isArray(property.type) ? property.type : [property.type];
    if (property.$ref || property.oneOf || property.items || types.includes('array')) continue;
    const exact = exactNumbers ? exactNumberType(property.description) : undefined;
    const value = typeOf(
      { ...property, type: types.filter((type) => type !== 'null') as string[] },
      names,
      exact,
    );
    const key = (prefix: string) => propertyKey(`${prefix}_${field}`);
    out += `  ${key('count_distinct')}?: number;\n`;
    out += `  ${key('min')}?: ${value} | null;\n`;
    out += `  ${key('max')}?: ${value} | null;\n`;
    if (!types.includes('number') && !types.includes('integer')) continue;
    const integer = types.includes('integer') || exact === 'bigint';
    const sum = !exactNumbers
      ? 'number'
      : exact === 'string'
        ? 'string'
        : integer
          ? 'bigint'
          : 'number';
    const average = exactNumbers && exact === 'string' ? 'string' : 'number';
    out += `  ${key('sum')}?: ${sum} | null;\n`;
    out += `  ${key('avg')}?: ${average} | null;\n`;
  }
  return out;
}

/** The table a model describes: its description names it; the model key otherwise. */
function tableName(model: string, schema: JsonSchema): string {
  return /^A row of table `(.+?)` \(source table /.exec(schema.description ?? '')?.[1] ?? model;
}

export interface GenerateTypesOptions {
  /** Where the document came from, for the header comment. */
  readonly source?: string;
  /**
   * The client's `numbers` option the types are for: `'exact'` (the default) types BIGINT
   * columns `bigint` and DECIMAL columns `string`; `'plain'` types every number `number`.
   */
  readonly numbers?: NumberMode;
}

/** The TypeScript module text for an instance's OpenAPI document. */
export function generateTypes(openapi: unknown, options: GenerateTypesOptions = {}): string {
  const document = openapi as {
    info?: { version?: string };
    components?: { schemas?: Record<string, JsonSchema> };
  };
  const schemas = document?.components?.schemas;
  if (!schemas || typeof schemas !== 'object') {
    throw new TypeError('generateTypes: the document has no components.schemas.');
  }
  // Tables are the models carrying their primary key; the envelopes do not.
  const models = Object.keys(schemas).filter((name) =>
    Array.isArray(schemas[name]?.['x-primary-key']),
  );
  const tables = new Map(models.map((model) => [model, tableName(model, schemas[model]!)]));
  const names = typeNames(tables);
  const exactNumbers = options.numbers !== 'plain';
  const from = options.source ? ` from ${options.source}` : '';
  const version = document.info?.version ? ` (engine ${document.info.version})` : '';
  let out = `// Generated by \`replix types\`${from}${version}. Do not edit: run it again.\n`;
  out += exactNumbers
    ? '// Numbers as ReplixClient gives them by default: BIGINT as bigint, DECIMAL as string.\n'
    : "// Numbers as ReplixClient gives them with `numbers: 'plain'`: every one a number.\n";
  let body = '';
  const entries: string[] = [];
  for (const model of models) {
    const schema = schemas[model]!;
    const required = new Set(schema.required ?? []);
    body += `\n${doc(schema.description, '')}export interface ${names.get(model)} {\n`;
    for (const [field, property] of Object.entries(schema.properties ?? {})) {
      const optional = required.has(field) ? '' : '?';
      const exact = exactNumbers ? exactNumberType(property.description) : undefined;
      body += `${doc(property.description, '  ')}  ${propertyKey(field)}${optional}: ${typeOf(property, names, exact)};\n`;
    }
    body += '}\n';
    body += `\n/** The aggregate keys of a grouped query's rows over \`${tables.get(model)}\` (present when selected). */\n`;
    body += `export interface ${names.get(model)}${AGGREGATES_SUFFIX} {\n`;
    body += aggregateProperties(schema.properties ?? {}, names, exactNumbers);
    body += '}\n';
    entries.push(`  ${propertyKey(tables.get(model)!)}: ${names.get(model)};\n`);
  }
  // Only a source with array columns (PostgreSQL) needs the array type.
  if (body.includes('ReplixArray<')) {
    out +=
      '\n/** A PostgreSQL array column: elements, nulls, or nested arrays for more dimensions. */\n';
    out += 'export type ReplixArray<T> = Array<T | null | ReplixArray<T>>;\n';
  }
  out += body;
  out += '\n/** Every table by its name in queries, to its row type. */\n';
  out += `export interface Tables {\n${entries.join('')}}\n`;
  out += '\nexport type TableName = keyof Tables;\n';
  return out;
}
