import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

// Every kind of foreign-key action InnoDB applies below the binary log, on MariaDB.
const DDL = `
  CREATE TABLE marker (id INT PRIMARY KEY);
  CREATE TABLE country (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  CREATE TABLE city (id INT PRIMARY KEY, country_id INT NOT NULL, name VARCHAR(20) NOT NULL,
    FOREIGN KEY (country_id) REFERENCES country (id) ON DELETE CASCADE ON UPDATE CASCADE);
  CREATE TABLE address (id INT PRIMARY KEY, city_id INT NOT NULL, line VARCHAR(20) NOT NULL,
    FOREIGN KEY (city_id) REFERENCES city (id) ON DELETE CASCADE ON UPDATE CASCADE);
  CREATE TABLE store (id INT PRIMARY KEY, address_id INT NULL,
    FOREIGN KEY (address_id) REFERENCES address (id) ON DELETE SET NULL ON UPDATE CASCADE);
  CREATE TABLE film (code VARCHAR(10) PRIMARY KEY, title VARCHAR(20) NOT NULL);
  CREATE TABLE edition (film_code VARCHAR(10) NOT NULL, num INT NOT NULL, PRIMARY KEY (film_code, num),
    FOREIGN KEY (film_code) REFERENCES film (code) ON DELETE CASCADE ON UPDATE CASCADE);
  CREATE TABLE copy (id INT PRIMARY KEY, film_code VARCHAR(10) NULL, num INT NULL,
    FOREIGN KEY (film_code, num) REFERENCES edition (film_code, num) ON DELETE SET NULL ON UPDATE CASCADE);
  CREATE TABLE category (id INT PRIMARY KEY, parent_id INT NULL, name VARCHAR(20) NOT NULL,
    FOREIGN KEY (parent_id) REFERENCES category (id) ON DELETE CASCADE);
  CREATE TABLE owner (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  CREATE TABLE pet (id INT PRIMARY KEY, owner_id INT NOT NULL,
    FOREIGN KEY (owner_id) REFERENCES owner (id) ON DELETE CASCADE);
  CREATE TABLE toy (id INT PRIMARY KEY, pet_id INT NOT NULL, name VARCHAR(20) NOT NULL,
    FOREIGN KEY (pet_id) REFERENCES pet (id) ON DELETE CASCADE);
  CREATE TABLE shelf (id INT PRIMARY KEY);
  CREATE TABLE book (id INT PRIMARY KEY, shelf_id INT NULL, status VARCHAR(10) NOT NULL,
    FOREIGN KEY (shelf_id) REFERENCES shelf (id) ON DELETE CASCADE ON UPDATE CASCADE);
  CREATE TABLE book_note (id INT PRIMARY KEY, book_id INT NOT NULL, text VARCHAR(20) NOT NULL,
    FOREIGN KEY (book_id) REFERENCES book (id) ON DELETE CASCADE);
`;

const SEED = `
  INSERT INTO country VALUES (1, 'a'), (2, 'b'), (3, 'c');
  INSERT INTO city VALUES (10, 1, 'a1'), (11, 1, 'a2'), (20, 2, 'b1'), (30, 3, 'c1');
  INSERT INTO address VALUES (100, 10, 'x'), (101, 10, 'y'), (110, 11, 'z'), (200, 20, 'w'), (300, 30, 'v');
  INSERT INTO store VALUES (1, 100), (2, 110), (3, 200), (4, NULL), (5, 300);
  INSERT INTO film VALUES ('A', 'alpha'), ('B', 'beta');
  INSERT INTO edition VALUES ('A', 1), ('A', 2), ('B', 1);
  INSERT INTO copy VALUES (1, 'A', 1), (2, 'A', 2), (3, 'B', 1), (4, 'A', 1);
  INSERT INTO category VALUES (1, NULL, 'root'), (2, 1, 'x'), (3, 2, 'xx'), (4, 3, 'xxx'),
    (5, 1, 'y'), (6, NULL, 'other'), (7, 6, 'o1');
  INSERT INTO owner VALUES (1, 'ann'), (2, 'bob');
  INSERT INTO pet VALUES (1, 1), (2, 1), (3, 2);
  INSERT INTO toy VALUES (1, 1, 'ball'), (2, 2, 'rope'), (3, 3, 'bone'), (4, 3, 'duck');
  INSERT INTO shelf VALUES (1), (2), (3);
  INSERT INTO book VALUES (1, 1, 'open'), (2, 1, 'closed'), (3, 2, 'open'), (4, 3, 'open');
  INSERT INTO book_note VALUES (1, 1, 'n1'), (2, 2, 'n2'), (3, 3, 'n3'), (4, 4, 'n4');
`;

/** Served tables with their primary keys, and the source query each must equal. */
const SERVED: Record<string, { order: string; where?: string }> = {
  country: { order: 'id' },
  city: { order: 'id' },
  address: { order: 'id' },
  store: { order: 'id' },
  film: { order: 'code' },
  edition: { order: 'film_code, num' },
  copy: { order: 'id' },
  category: { order: 'id' },
  owner: { order: 'id' },
  toy: { order: 'id' },
  shelf: { order: 'id' },
  book: { order: 'id', where: "status = 'open'" },
  book_note: { order: 'id' },
};

const CONFIG = {
  tables: [
    { name: 'marker' },
    ...Object.entries(SERVED).map(([name, { where }]) =>
      where ? { name, where, where_columns: ['status'] } : { name },
    ),
  ],
  sync: { mode: 'cdc', interval: 0.1 },
};

describe('foreign-key actions on MariaDB', () => {
  let db: TestDatabase;
  let served: TestInstance;
  let marker = 0;

  beforeAll(async () => {
    db = await testMariaDb().createDatabase(DDL);
    await db.exec(SEED);
    served = await startTestInstance(db.url, CONFIG, { replicationId: db.name });
  });
  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  /** Every served table, all rows, as the source has them and as the instance serves them. */
  async function expectExact(): Promise<void> {
    for (const [table, { order, where }] of Object.entries(SERVED)) {
      const source = await db.query(
        `SELECT * FROM ${table} ${where ? `WHERE ${where}` : ''} ORDER BY ${order}`,
      );
      const body = await served.json(`${table} { * } ORDER BY ${order} LIMIT 100000`);
      expect(body.data, table).toEqual(source);
    }
  }

  /**
   * Commits `sql`, then a marker row in a later transaction; once the marker is served, the
   * tick that applied `sql` is behind us and the served tables must equal the source at once:
   * nothing later would correct them.
   */
  async function writeAndTick(sql: string): Promise<void> {
    await db.exec(sql);
    marker += 1;
    await db.exec(`INSERT INTO marker VALUES (${marker})`);
    await eventually(async () => {
      const body = await served.json(`marker { id } ORDER BY id DESC LIMIT 1`);
      expect(body.data).toEqual([{ id: marker }]);
    }, 10_000);
    await expectExact();
  }

  it('serves the seeded tables exactly', async () => {
    await expectExact();
  });

  it('cascades a delete three levels down and sets a fourth level to NULL', async () => {
    await writeAndTick('DELETE FROM country WHERE id = 1');
    expect((await served.json('city { id } ORDER BY id')).data).toEqual([{ id: 20 }, { id: 30 }]);
    expect((await served.json('store { id address_id } ORDER BY id')).data).toEqual([
      { id: 1, address_id: null },
      { id: 2, address_id: null },
      { id: 3, address_id: 200 },
      { id: 4, address_id: null },
      { id: 5, address_id: 300 },
    ]);
  });

  it('cascades a key update through city and address into store', async () => {
    await writeAndTick(
      'UPDATE city SET id = 21 WHERE id = 20; UPDATE address SET id = 201 WHERE id = 200',
    );
    expect((await served.json('store { id address_id } ORDER BY id')).data[2]).toEqual({
      id: 3,
      address_id: 201,
    });
  });

  it('cascades a key update two levels through a composite key', async () => {
    await writeAndTick("UPDATE film SET code = 'Z' WHERE code = 'A'");
    expect((await served.json('copy { id film_code num } ORDER BY id')).data).toEqual([
      { id: 1, film_code: 'Z', num: 1 },
      { id: 2, film_code: 'Z', num: 2 },
      { id: 3, film_code: 'B', num: 1 },
      { id: 4, film_code: 'Z', num: 1 },
    ]);
  });

  it('sets a composite key to NULL when its parent goes', async () => {
    await writeAndTick("DELETE FROM edition WHERE film_code = 'Z' AND num = 1");
  });

  it('deletes a whole subtree of a self-referencing table', async () => {
    await writeAndTick('DELETE FROM category WHERE id = 1');
    expect((await served.json('category { id } ORDER BY id')).data).toEqual([{ id: 6 }, { id: 7 }]);
  });

  it('applies actions on rows written earlier in the same transaction', async () => {
    await writeAndTick(`
      START TRANSACTION;
      INSERT INTO country VALUES (4, 'd');
      INSERT INTO city VALUES (40, 4, 'd1');
      INSERT INTO address VALUES (400, 40, 'u');
      INSERT INTO store VALUES (6, 400);
      UPDATE country SET id = 5 WHERE id = 4;
      DELETE FROM address WHERE id = 400;
      COMMIT;`);
  });

  it('re-reads a child reached through an unserved table', async () => {
    await writeAndTick('DELETE FROM owner WHERE id = 2');
    expect((await served.json('toy { id } ORDER BY id')).data).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('derives a delete of an unserved parent from its own change images', async () => {
    await writeAndTick('DELETE FROM pet WHERE id = 1');
    expect((await served.json('toy { id } ORDER BY id')).data).toEqual([{ id: 2 }]);
  });

  it('re-reads a child with a where, and the children of its unserved rows', async () => {
    await writeAndTick('DELETE FROM shelf WHERE id = 1');
    await writeAndTick('UPDATE shelf SET id = 5 WHERE id = 2');
    await writeAndTick("UPDATE book SET status = 'open', shelf_id = 5 WHERE id = 4");
  });
});
