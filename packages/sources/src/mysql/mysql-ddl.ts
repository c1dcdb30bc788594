/**
 * Recognises the DDL statements a row-based binlog carries as text (query events) that touch a
 * table's rows or shape: TRUNCATE, ALTER / DROP / RENAME / CREATE TABLE, CREATE / DROP INDEX,
 * DROP DATABASE. Only the statement's head is read, far enough to name the tables it affects.
 */

export interface TableName {
  /** The table's database: the one named in the statement, else the statement's default one. */
  readonly schema: string;
  readonly table: string;
}

export type MySqlDdl =
  | {
      readonly kind: 'truncate' | 'alter' | 'drop' | 'rename' | 'create' | 'index';
      readonly tables: readonly TableName[];
    }
  | { readonly kind: 'dropDatabase'; readonly schema: string };

interface Token {
  /** `word`: a bare word (keyword or identifier); `name`: a quoted identifier. */
  readonly kind: 'word' | 'name' | 'string' | 'symbol';
  readonly text: string;
}

const WORD_CHAR = /[\p{L}\p{N}_$]/u;

/** Reads the text between `quote`s from `start` (just after the opening one); doubled = escaped. */
function quoted(sql: string, start: number, quote: string): { text: string; end: number } {
  let text = '';
  let i = start;
  while (i < sql.length) {
    const char = sql[i]!;
    if (char === quote) {
      if (sql[i + 1] === quote) {
        text += quote;
        i += 2;
        continue;
      }
      return { text, end: i + 1 };
    }
    if (char === '\\' && quote === "'") {
      text += sql[i + 1] ?? '';
      i += 2;
      continue;
    }
    text += char;
    i++;
  }
  return { text, end: i };
}

/**
 * Splits a statement into tokens, dropping comments. A MySQL executable comment
 * (`/*!50100 … *\/`, MariaDB's `/*M!… *\/`) is code to the server, so its content is kept.
 */
export function tokenizeMySql(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === '#' || (sql.startsWith('--', i) && /^\s?$/.test(sql[i + 2] ?? ''))) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith('/*!', i) || sql.startsWith('/*M!', i)) {
      i += sql[i + 2] === 'M' ? 4 : 3;
      while (i < sql.length && /\d/.test(sql[i]!)) i++;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (sql.startsWith('*/', i)) {
      i += 2; // the end of an executable comment
    } else if (char === '`' || char === '"') {
      const { text, end } = quoted(sql, i + 1, char);
      tokens.push({ kind: 'name', text });
      i = end;
    } else if (char === "'") {
      const { text, end } = quoted(sql, i + 1, char);
      tokens.push({ kind: 'string', text });
      i = end;
    } else if (WORD_CHAR.test(char)) {
      let end = i + 1;
      while (end < sql.length && WORD_CHAR.test(sql[end]!)) end++;
      tokens.push({ kind: 'word', text: sql.slice(i, end) });
      i = end;
    } else {
      tokens.push({ kind: 'symbol', text: char });
      i++;
    }
  }
  return tokens;
}

/** A cursor over the tokens of one statement. */
class Reader {
  readonly #tokens: Token[];
  readonly #defaultSchema: string;
  #at = 0;

  constructor(tokens: Token[], defaultSchema: string) {
    this.#tokens = tokens;
    this.#defaultSchema = defaultSchema;
  }

  get done(): boolean {
    return this.#at >= this.#tokens.length;
  }

  /** Consumes the keywords if they come next, in order; otherwise consumes nothing. */
  keywords(...words: string[]): boolean {
    const matches = words.every((word, k) => {
      const token = this.#tokens[this.#at + k];
      return token?.kind === 'word' && token.text.toUpperCase() === word;
    });
    if (matches) this.#at += words.length;
    return matches;
  }

  symbol(text: string): boolean {
    const token = this.#tokens[this.#at];
    if (token?.kind !== 'symbol' || token.text !== text) return false;
    this.#at++;
    return true;
  }

  identifier(): string | null {
    const token = this.#tokens[this.#at];
    if (token?.kind !== 'word' && token?.kind !== 'name') return null;
    this.#at++;
    return token.text;
  }

  /** `name` or `schema.name`. */
  tableName(): TableName | null {
    const first = this.identifier();
    if (first === null) return null;
    if (!this.symbol('.')) return { schema: this.#defaultSchema, table: first };
    const table = this.identifier();
    return table === null ? null : { schema: first, table };
  }

  /** `name {, name}`. */
  tableNames(): TableName[] {
    const names: TableName[] = [];
    do {
      const name = this.tableName();
      if (name === null) break;
      names.push(name);
    } while (this.symbol(','));
    return names;
  }

  skip(): void {
    this.#at++;
  }
}

function alterTable(reader: Reader): MySqlDdl | null {
  reader.keywords('IF', 'EXISTS');
  const table = reader.tableName();
  if (table === null) return null;
  const tables = [table];
  // `ALTER TABLE a RENAME TO b` moves the table away from its name, and gives `b` new content.
  let depth = 0;
  while (!reader.done) {
    if (reader.symbol('(')) depth++;
    else if (reader.symbol(')')) depth--;
    else if (depth === 0 && reader.keywords('RENAME')) {
      if (reader.keywords('COLUMN') || reader.keywords('INDEX') || reader.keywords('KEY')) continue;
      if (!reader.keywords('TO')) reader.keywords('AS');
      const target = reader.tableName();
      if (target) tables.push(target);
    } else reader.skip();
  }
  return { kind: 'alter', tables };
}

function renameTable(reader: Reader): MySqlDdl {
  const tables: TableName[] = [];
  do {
    const from = reader.tableName();
    if (from === null) break;
    if (reader.keywords('WAIT')) reader.skip();
    reader.keywords('NOWAIT');
    if (!reader.keywords('TO')) break;
    const to = reader.tableName();
    tables.push(from);
    if (to) tables.push(to);
  } while (reader.symbol(','));
  return { kind: 'rename', tables };
}

function createStatement(reader: Reader): MySqlDdl | null {
  reader.keywords('OR', 'REPLACE');
  if (reader.keywords('TEMPORARY')) return null; // session-private, never a followed table
  if (reader.keywords('TABLE')) {
    reader.keywords('IF', 'NOT', 'EXISTS');
    const table = reader.tableName();
    return table === null ? null : { kind: 'create', tables: [table] };
  }
  if (!reader.keywords('ONLINE')) reader.keywords('OFFLINE');
  if (!reader.keywords('UNIQUE') && !reader.keywords('FULLTEXT')) reader.keywords('SPATIAL');
  if (!reader.keywords('INDEX')) return null;
  reader.keywords('IF', 'NOT', 'EXISTS');
  reader.identifier();
  while (!reader.done && !reader.keywords('ON')) reader.skip();
  const table = reader.tableName();
  return table === null ? null : { kind: 'index', tables: [table] };
}

function dropStatement(reader: Reader): MySqlDdl | null {
  if (reader.keywords('DATABASE') || reader.keywords('SCHEMA')) {
    reader.keywords('IF', 'EXISTS');
    const schema = reader.identifier();
    return schema === null ? null : { kind: 'dropDatabase', schema };
  }
  if (reader.keywords('TEMPORARY')) return null;
  if (reader.keywords('TABLE')) {
    reader.keywords('IF', 'EXISTS');
    return { kind: 'drop', tables: reader.tableNames() };
  }
  if (!reader.keywords('ONLINE')) reader.keywords('OFFLINE');
  if (!reader.keywords('INDEX')) return null;
  reader.keywords('IF', 'EXISTS');
  reader.identifier();
  if (!reader.keywords('ON')) return null;
  const table = reader.tableName();
  return table === null ? null : { kind: 'index', tables: [table] };
}

/**
 * The tables a DDL statement changes, or null for any other statement (BEGIN, COMMIT,
 * SAVEPOINT, …). `defaultSchema` is the database the statement ran in (the query event's).
 */
export function parseMySqlDdl(sql: string, defaultSchema: string): MySqlDdl | null {
  const reader = new Reader(tokenizeMySql(sql), defaultSchema);
  if (reader.keywords('TRUNCATE')) {
    reader.keywords('TABLE');
    const table = reader.tableName();
    return table === null ? null : { kind: 'truncate', tables: [table] };
  }
  if (reader.keywords('ALTER')) {
    reader.keywords('ONLINE');
    reader.keywords('IGNORE');
    return reader.keywords('TABLE') ? alterTable(reader) : null;
  }
  if (reader.keywords('RENAME', 'TABLE')) return renameTable(reader);
  if (reader.keywords('CREATE')) return createStatement(reader);
  if (reader.keywords('DROP')) return dropStatement(reader);
  return null;
}
