/** The schema config as text: parsing with a position, and small edits the browser makes. */

export type SchemaConfig = Record<string, unknown>;

export type ParsedConfig =
  | { ok: true; value: SchemaConfig }
  | { ok: false; message: string; offset: number | undefined };

class SyntaxStop {
  readonly offset: number;
  constructor(offset: number) {
    this.offset = offset;
  }
}

/**
 * The offset of the first syntax error in JSON text (JSON.parse does not always say where),
 * or -1 when there is none. A plain recursive descent over RFC 8259's grammar.
 */
export function jsonErrorOffset(text: string): number {
  let at = 0;
  const stop = (): never => {
    throw new SyntaxStop(at);
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at += 1;
  };
  const string = () => {
    at += 1;
    while (at < text.length) {
      const char = text[at]!;
      if (char === '"') {
        at += 1;
        return;
      }
      if (char === '\\') {
        const next = text[at + 1] ?? '';
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) stop();
          at += 6;
        } else if ('"\\/bfnrt'.includes(next) && next !== '') {
          at += 2;
        } else {
          stop();
        }
        continue;
      }
      if (char < ' ') stop();
      at += 1;
    }
    stop();
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{') {
      at += 1;
      space();
      if (text[at] === '}') {
        at += 1;
        return;
      }
      for (;;) {
        space();
        if (text[at] !== '"') stop();
        string();
        space();
        if (text[at] !== ':') stop();
        at += 1;
        value();
        space();
        if (text[at] === ',') at += 1;
        else if (text[at] === '}') {
          at += 1;
          return;
        } else stop();
      }
    }
    if (char === '[') {
      at += 1;
      space();
      if (text[at] === ']') {
        at += 1;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[at] === ',') at += 1;
        else if (text[at] === ']') {
          at += 1;
          return;
        } else stop();
      }
    }
    if (char === '"') {
      string();
      return;
    }
    const literal = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      text.slice(at),
    );
    if (!literal) stop();
    at += literal![0].length;
  };
  try {
    value();
    space();
    if (at < text.length) stop();
    return -1;
  } catch (error) {
    if (error instanceof SyntaxStop) return error.offset;
    throw error;
  }
}

/** Line and column (both from 1) of an offset in text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

function describeOffset(text: string, offset: number): string {
  const { line, column } = lineAndColumn(text, offset);
  const found =
    offset >= text.length
      ? 'the text ends too early'
      : `unexpected ${JSON.stringify(text[offset])}`;
  return `Invalid JSON at line ${line}, column ${column}: ${found}.`;
}

/** The config in the editor, or why it cannot be sent (with where, for a syntax error). */
export function parseConfigText(text: string): ParsedConfig {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const offset = jsonErrorOffset(text);
    if (offset >= 0) return { ok: false, message: describeOffset(text, offset), offset };
    return { ok: false, message: `Invalid JSON: ${(error as Error).message}`, offset: undefined };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'The schema config must be a JSON object: { … }.', offset: 0 };
  }
  return { ok: true, value: value as SchemaConfig };
}

export function formatConfig(value: SchemaConfig): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The table names listed in the config's `tables`, or undefined when it lists none. */
export function listedTables(config: SchemaConfig): Set<string> | undefined {
  if (!Array.isArray(config.tables)) return undefined;
  const names = new Set<string>();
  for (const entry of config.tables) {
    if (entry && typeof entry === 'object' && 'name' in entry && typeof entry.name === 'string') {
      names.add(entry.name);
    }
  }
  return names;
}

/** The config with `{ "name": table }` appended to `tables` (made when missing). */
export function withTable(config: SchemaConfig, table: string): SchemaConfig {
  const tables = Array.isArray(config.tables) ? config.tables : [];
  return { ...config, tables: [...tables, { name: table }] };
}

/**
 * The separate problems of a 400 invalid_schema_config message ("The schema config is
 * invalid: tables[0].colums: unknown key; query.x: …."), one per key path.
 */
export function configProblems(message: string): string[] {
  const prefix = /^The schema config is invalid:\s*/;
  if (!prefix.test(message)) return [message];
  return message
    .replace(prefix, '')
    .replace(/\.$/, '')
    .split(/;\s+(?=[\w[\](). -]*:)/)
    .map((problem) => problem.trim())
    .filter(Boolean);
}
