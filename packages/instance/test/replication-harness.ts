import { randomBytes } from 'node:crypto';
import type { DatabaseAdmin, TestDatabase } from '@replix/testkit';
import { json, type TestInstance } from './instance-helpers.ts';

export type Engine = 'mariadb' | 'postgres';

/** The tables every replication test uses, written so both engines accept them. */
export function replicationDdl(engine: Engine): string {
  const bool = engine === 'mariadb' ? 'BOOLEAN' : 'boolean';
  return `
    CREATE TABLE items (id INT PRIMARY KEY, grp INT NOT NULL, name VARCHAR(40) NULL, price DECIMAL(10,2) NOT NULL, active ${bool} NOT NULL);
    CREATE TABLE live_items (id INT PRIMARY KEY, name VARCHAR(40) NULL, active ${bool} NOT NULL);
  `;
}

/** Schema config for those tables: `live_items` serves only active rows. */
export function replicationConfig(
  engine: Engine,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    tables: [
      { name: 'items' },
      {
        name: 'live_items',
        where: engine === 'mariadb' ? 'active = 1' : 'active = true',
        where_columns: ['active'],
      },
    ],
    sync: { mode: 'cdc', interval: 0.1 },
    ...extra,
  };
}

type Row = { id: number; [column: string]: unknown };

/** A table's rows from the source, normalised to what the instance serves. */
export async function sourceRows(db: TestDatabase, table: string, where = ''): Promise<Row[]> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT * FROM ${table} ${where} ORDER BY id`,
  );
  return rows.map((row) => {
    const normal: Row = { id: Number(row.id) };
    for (const [key, value] of Object.entries(row)) {
      if (key === 'id') continue;
      if (key === 'price') normal[key] = Number(value);
      else if (key === 'active') normal[key] = value === true || value === 1;
      else normal[key] = value;
    }
    return normal;
  });
}

/** A table's rows as the instance serves them. */
export async function instanceRows(served: TestInstance, table: string): Promise<Row[]> {
  const body = await json(served.query(`${table} { * } ORDER BY id LIMIT 1000000`));
  if (!body.data) throw new Error(`query failed: ${JSON.stringify(body)}`);
  return body.data;
}

/** Waits until `check` passes (it throws until then), or fails with its last error. */
export async function eventually(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A seeded random writer: transactions of inserts, updates (keys too), NULL flips and deletes. */
export class RandomWriter {
  readonly #db: TestDatabase;
  readonly #engine: Engine;
  #seed: number;
  #nextId = 1;
  readonly #ids = { items: new Set<number>(), live_items: new Set<number>() };
  transactions = 0;

  constructor(db: TestDatabase, engine: Engine, seed = 42) {
    this.#db = db;
    this.#engine = engine;
    this.#seed = seed;
  }

  #random(): number {
    // mulberry32
    this.#seed = (this.#seed + 0x6d2b79f5) | 0;
    let t = this.#seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  #pick(set: Set<number>): number | undefined {
    if (set.size === 0) return undefined;
    const at = Math.floor(this.#random() * set.size);
    let i = 0;
    for (const id of set) if (i++ === at) return id;
    return undefined;
  }

  #bool(value: boolean): string {
    return this.#engine === 'mariadb' ? (value ? '1' : '0') : String(value);
  }

  #name(): string {
    return this.#random() < 0.2 ? 'NULL' : `'n${randomBytes(3).toString('hex')}'`;
  }

  /** The statements of one random transaction, with the writer's model of the ids updated. */
  #statements(): string[] {
    const statements: string[] = [];
    const count = 1 + Math.floor(this.#random() * 4);
    for (let i = 0; i < count; i++) {
      const table = this.#random() < 0.6 ? 'items' : 'live_items';
      const ids = this.#ids[table];
      const roll = this.#random();
      const id = this.#pick(ids);
      if (roll < 0.4 || id === undefined) {
        const next = this.#nextId++;
        ids.add(next);
        statements.push(
          table === 'items'
            ? `INSERT INTO items VALUES (${next}, ${next % 7}, ${this.#name()}, ${(this.#random() * 1000).toFixed(2)}, ${this.#bool(this.#random() < 0.5)})`
            : `INSERT INTO live_items VALUES (${next}, ${this.#name()}, ${this.#bool(this.#random() < 0.5)})`,
        );
      } else if (roll < 0.55) {
        const next = this.#nextId++;
        ids.delete(id);
        ids.add(next);
        statements.push(`UPDATE ${table} SET id = ${next} WHERE id = ${id}`);
      } else if (roll < 0.85) {
        statements.push(
          table === 'items'
            ? `UPDATE items SET name = ${this.#name()}, price = ${(this.#random() * 1000).toFixed(2)} WHERE id = ${id}`
            : `UPDATE live_items SET active = ${this.#bool(this.#random() < 0.5)}, name = ${this.#name()} WHERE id = ${id}`,
        );
      } else {
        ids.delete(id);
        statements.push(`DELETE FROM ${table} WHERE id = ${id}`);
      }
    }
    return statements;
  }

  async transaction(): Promise<void> {
    const statements = this.#statements();
    const begin = this.#engine === 'mariadb' ? 'START TRANSACTION' : 'BEGIN';
    await this.#db.exec(`${begin}; ${statements.join('; ')}; COMMIT`);
    this.transactions += 1;
  }

  /** Writes for `ms` milliseconds. */
  async runFor(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until) await this.transaction();
  }
}

export async function createReplicationDatabase(
  admin: DatabaseAdmin,
  engine: Engine,
): Promise<TestDatabase> {
  return admin.createDatabase(replicationDdl(engine));
}
