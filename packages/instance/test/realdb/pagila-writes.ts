import type { RealSource } from './real-source.ts';
import { deleteCustomerAndFilm } from './restricted-deletes.ts';
import { MARKER_CATEGORY } from './sakila-writes.ts';

/**
 * Writes of every kind to Pagila, each committed on its own, ending with the marker: inserts,
 * updates (numeric, text, arrays), deletes, primary-key changes with their `ON UPDATE CASCADE`
 * children, and payments that move between partitions of the partitioned `payment`.
 */
export async function writeToPagila(source: RealSource): Promise<void> {
  const [unstocked] = await source.rows(
    'SELECT MIN(film_id)::text AS id FROM film WHERE film_id NOT IN (SELECT film_id FROM inventory)',
  );
  const unstockedFilm = unstocked?.id;
  if (typeof unstockedFilm !== 'string') throw new Error('Pagila has no film without inventory');
  const statements = [
    "INSERT INTO actor (first_name, last_name) VALUES ('ADA', 'LOVELACE')",
    `INSERT INTO film (title, description, release_year, language_id, rental_duration, rental_rate, length, replacement_cost, rating, special_features)
       VALUES ('REPLIX RETURNS', 'A sequel', 2024, 2, 4, 3.49, 101, 17.25, 'PG-13', ARRAY['Trailers', 'Behind "the" Scenes', NULL, 'NULL'])`,
    "UPDATE film SET description = description || ' (edited)', rental_rate = 1.99 WHERE film_id = 10",
    'UPDATE payment SET amount = amount + 0.01 WHERE payment_id BETWEEN 16050 AND 16070',
    'UPDATE address SET address2 = NULL WHERE address_id = 7',
    'DELETE FROM film_actor WHERE actor_id = 2 AND film_id = 3',
    // Rows that move between partitions (January to July, and July to February).
    "UPDATE payment SET payment_date = '2022-07-15 10:00:00.123456+00' WHERE payment_id = (SELECT MIN(payment_id) FROM payment_p2022_01)",
    "UPDATE payment SET payment_date = '2022-02-03 04:05:06.654321+00', amount = 7.77 WHERE payment_id = (SELECT MIN(payment_id) FROM payment_p2022_07)",
    // Primary-key changes that cascade (ON UPDATE CASCADE) into served children.
    'UPDATE actor SET actor_id = 1000 WHERE actor_id = 3',
    'UPDATE film SET film_id = 5000 WHERE film_id = 1',
    'UPDATE language SET language_id = 100 WHERE language_id = 1',
    'UPDATE store SET store_id = 10000 WHERE store_id = 2',
    ...deleteCustomerAndFilm(10, unstockedFilm),
    "INSERT INTO rental (rental_date, inventory_id, customer_id, staff_id) VALUES ('2022-08-30 12:00:00.5+00', 10, 1, 1)",
    "INSERT INTO payment (customer_id, staff_id, rental_id, amount, payment_date) VALUES (1, 1, currval('rental_rental_id_seq'), 4.99, '2022-07-30 12:00:01.000001+00')",
    `INSERT INTO category (name) VALUES ('${MARKER_CATEGORY}')`,
  ];
  for (const statement of statements) await source.exec(statement);
}
