import { Value } from 'typebox/value';
import { SchemaConfigError } from '../errors.ts';
import { type SchemaConfig, SchemaConfigSchema } from './schema-config-schema.ts';

/** One problem of a schema config: the key path it is at (`tables[0].name`) and what is wrong. */
interface Issue {
  readonly path: string;
  readonly message: string;
}

/** What TypeBox reports of a value that fails its schema (the fields read here). */
interface SchemaError {
  readonly keyword: string;
  readonly schemaPath: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/** The segments of a JSON Pointer (`/tables/0/name`), unescaped. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '#') return [];
  return pointer
    .replace(/^#/, '')
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function resolve(root: unknown, segments: readonly string[]): unknown {
  let node = root;
  for (const segment of segments) node = (node as Json | undefined)?.[segment];
  return node;
}

/** A key path as users write it: `tables[0].columns.include`. */
function formatPath(segments: readonly string[]): string {
  return segments
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : `${index === 0 ? '' : '.'}${part}`))
    .join('');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** What a schema expects, in a word: `number`, `number or null`. */
function expectedType(schema: Json | undefined): string {
  const branches = schema?.anyOf as Json[] | undefined;
  if (branches) return branches.map(expectedType).join(' or ');
  return String(schema?.type ?? 'a value');
}

/** The message of one failed keyword; `schema` is the schema the keyword is on. */
function keywordMessage(error: SchemaError, schema: Json | undefined, value: unknown): string {
  const own = schema?.['x-error-message'];
  if (typeof own === 'string') return own;
  const ownForKeyword = (own as Json | undefined)?.[error.keyword];
  if (typeof ownForKeyword === 'string') return ownForKeyword;
  const limit = error.params.limit;
  switch (error.keyword) {
    case 'type':
    case 'anyOf':
      return `Invalid input: expected ${expectedType(schema)}, received ${typeName(value)}`;
    case 'minLength':
      return `Too small: expected string to have >=${limit} characters`;
    case 'maxLength':
      return `Too big: expected string to have <=${limit} characters`;
    case 'minItems':
      return `Too small: expected array to have >=${limit} items`;
    case 'maxItems':
      return `Too big: expected array to have <=${limit} items`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `Too small: expected number to be ${error.params.comparison}${limit}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `Too big: expected number to be ${error.params.comparison}${limit}`;
    case 'enum':
      return `Invalid option: expected one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join('|')}`;
    case 'pattern':
      return `Invalid string: must match pattern /${schema?.pattern}/`;
    default:
      return 'Invalid input';
  }
}

/**
 * The branch of a union that a value's type picks (`memory_cap_mb: 0` is a number, so its
 * problem is the number's bound, not that it is not null), or undefined when none has its type.
 */
function branchFor(union: Json | undefined, value: unknown): number | undefined {
  const branches = (union?.anyOf as Json[] | undefined) ?? [];
  const type = typeName(value);
  const index = branches.findIndex(
    (branch) => branch.type === type || (branch.type === 'integer' && type === 'number'),
  );
  return index < 0 ? undefined : index;
}

/**
 * The issues of one TypeBox error, or none when another error says it better: an object's
 * summaries of its unknown keys and bad key names (each key has an error of its own), and a
 * union's branches other than the one the value's type picks (without one, the union's own
 * error names every type it takes).
 */
function issuesOf(error: SchemaError, value: unknown): Issue[] {
  if (error.keyword === 'additionalProperties' || error.keyword === 'propertyNames') return [];
  const schemaSegments = pointerSegments(error.schemaPath);
  const at = pointerSegments(error.instancePath);
  const union = schemaSegments.lastIndexOf('anyOf');
  if (union >= 0) {
    const unionSchema = resolve(SchemaConfigSchema, schemaSegments.slice(0, union)) as Json;
    if (branchFor(unionSchema, resolve(value, at)) !== Number(schemaSegments[union + 1])) return [];
  }
  const schema = resolve(SchemaConfigSchema, schemaSegments) as Json | undefined;
  if (error.keyword === 'anyOf') {
    if (branchFor(schema, resolve(value, at)) !== undefined) return [];
  }
  // An unknown key: the `false` an object's `additionalProperties` is, at the key's own path.
  if (error.keyword === 'boolean') return [{ path: formatPath(at), message: 'unknown key' }];
  if (error.keyword === 'required') {
    const properties = schema?.properties as Json | undefined;
    return (error.params.requiredProperties as string[]).map((key) => ({
      path: formatPath([...at, key]),
      message: `Invalid input: expected ${expectedType(properties?.[key] as Json)}, received undefined`,
    }));
  }
  return [{ path: formatPath(at), message: keywordMessage(error, schema, resolve(value, at)) }];
}

/** The rules across keys, which a schema of each key cannot say. */
function crossKeyIssues(config: Json): Issue[] {
  const issues: Issue[] = [];
  if (config.where !== undefined && config.where_columns === undefined) {
    issues.push({
      path: 'where_columns',
      message: 'a root "where" needs "where_columns": it applies to the tables that have them',
    });
  }
  const names = new Set<unknown>();
  const tables = Array.isArray(config.tables) ? (config.tables as Json[]) : [];
  tables.forEach((table, index) => {
    const name = table?.name;
    if (typeof name !== 'string') return;
    if (names.has(name)) {
      issues.push({ path: `tables[${index}].name`, message: `table "${name}" is listed twice` });
    }
    names.add(name);
  });
  return issues;
}

/**
 * Validates a schema config (parsed JSON) and fills in defaults. Throws `SchemaConfigError`
 * listing every problem with its key path.
 */
export function parseSchemaConfig(input: unknown): SchemaConfig {
  const value = Value.Default(SchemaConfigSchema, Value.Clone(input ?? {}));
  const errors = [...Value.Errors(SchemaConfigSchema, value)] as SchemaError[];
  const issues = errors.flatMap((error) => issuesOf(error, value));
  if (issues.length === 0 && value !== null && typeof value === 'object') {
    issues.push(...crossKeyIssues(value as Json));
  }
  if (issues.length > 0) throw new SchemaConfigError(issues);
  return value as SchemaConfig;
}

/** The config used when none is given: every table, every default. */
export function defaultSchemaConfig(): SchemaConfig {
  return parseSchemaConfig({});
}
