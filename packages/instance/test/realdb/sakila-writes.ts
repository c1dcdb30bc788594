import type { RealSource } from './real-source.ts';
import { deleteCustomerAndFilm } from './restricted-deletes.ts';

/** The marker the last write inserts: once it is served, every write before it must be too. */
export const MARKER_CATEGORY = 'replix-marker';

async function firstId(source: RealSource, sql: string): Promise<string> {
  const [row] = await source.rows(sql);
  const id = row ? Object.values(row)[0] : undefined;
  if (typeof id !== 'string') throw new Error(`no row for ${sql}`);
  return id;
}

/**
 * Writes of every kind to Sakila, each committed on its own, ending with the marker: inserts
 * (with triggers that fill `film_text` and dates), updates (DECIMAL, text, GEOMETRY), deletes,
 * primary-key changes, and every foreign-key action of the schema: `ON UPDATE CASCADE` from
 * `language`, `film`, `actor`, `customer` and `store`, and `ON DELETE SET NULL` from `rental`.
 */
export async function writeToSakila(source: RealSource): Promise<void> {
  const unstockedFilm = await firstId(
    source,
    'SELECT CAST(MIN(film_id) AS CHAR) FROM film WHERE film_id NOT IN (SELECT film_id FROM inventory)',
  );
  const statements = [
    "INSERT INTO actor (first_name, last_name) VALUES ('ADA', 'LOVELACE')",
    `INSERT INTO film (title, description, release_year, language_id, rental_duration, rental_rate, length, replacement_cost, rating, special_features)
       VALUES ('REPLIX RETURNS', 'A sequel', 2024, 2, 4, 3.49, 101, 17.25, 'PG-13', 'Trailers,Commentaries')`,
    "UPDATE film SET description = CONCAT(description, ' (edited)'), rental_rate = 1.99 WHERE film_id = 10",
    'UPDATE payment SET amount = amount + 0.01 WHERE payment_id BETWEEN 1 AND 20',
    "UPDATE address SET location = ST_GeomFromText('POINT(1.5 -2.25)'), address2 = NULL WHERE address_id = 7",
    'DELETE FROM film_actor WHERE actor_id = 2 AND film_id = 3',
    // Primary-key changes that cascade (ON UPDATE CASCADE) into served children.
    'UPDATE actor SET actor_id = 1000 WHERE actor_id = 3',
    'UPDATE film SET film_id = 5000 WHERE film_id = 1',
    'UPDATE language SET language_id = 100 WHERE language_id = 1',
    'UPDATE customer SET customer_id = 1000 WHERE customer_id = 5',
    'UPDATE store SET store_id = 10 WHERE store_id = 2',
    // ON DELETE SET NULL: the payments of a deleted rental lose their rental_id.
    'DELETE FROM rental WHERE rental_id = 2',
    ...deleteCustomerAndFilm(10, unstockedFilm),
    // A rental and its payment; triggers set their dates.
    'INSERT INTO rental (rental_date, inventory_id, customer_id, staff_id) VALUES (NOW(), 10, 1, 1)',
    'INSERT INTO payment (customer_id, staff_id, rental_id, amount) VALUES (1, 1, LAST_INSERT_ID(), 4.99)',
    `INSERT INTO category (name) VALUES ('${MARKER_CATEGORY}')`,
  ];
  for (const statement of statements) await source.exec(statement);
}
