import type { Canonical } from './canonical-value.ts';
import type { Dialect } from './dialect.ts';
import type { CanonicalRow, RealSource } from './real-source.ts';

/** An application's query to the instance, and how SQL answers the same question. */
export interface AppQuery {
  readonly query: string;
  readonly expected: (source: RealSource) => Promise<Canonical[]>;
}

const sql =
  (text: string) =>
  (source: RealSource): Promise<Canonical[]> =>
    source.rows(text);

interface Shape {
  /** Parent columns needed only to find the related rows, not selected by the query. */
  readonly hidden?: readonly string[];
  /** How one related row appears in the answer (e.g. wrapped in its own relation). */
  readonly child?: (row: CanonicalRow) => Canonical;
}

function shown(row: CanonicalRow, hidden: readonly string[] = []): CanonicalRow {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !hidden.includes(column)));
}

/** Parents from `parentSql`, each with `key` holding the rows of `childSql(parent)`. */
function nested(
  parentSql: string,
  key: string,
  childSql: (parent: CanonicalRow) => string,
  shape: Shape = {},
) {
  return async (source: RealSource): Promise<Canonical[]> => {
    const out: Canonical[] = [];
    for (const parent of await source.rows(parentSql)) {
      const children = await source.rows(childSql(parent));
      out.push({ ...shown(parent, shape.hidden), [key]: children.map(shape.child ?? ((c) => c)) });
    }
    return out;
  };
}

/** Rows from `parentSql`, each with `key` holding the one row of `childSql(parent)`, or null. */
function embedded(
  parentSql: string,
  key: string,
  childSql: (parent: CanonicalRow) => string,
  shape: Shape = {},
) {
  return async (source: RealSource): Promise<Canonical[]> => {
    const out: Canonical[] = [];
    for (const parent of await source.rows(parentSql)) {
      const [child] = await source.rows(childSql(parent));
      out.push({ ...shown(parent, shape.hidden), [key]: child ?? null });
    }
    return out;
  };
}

/** Queries every Sakila-shaped schema answers (Sakila on MariaDB, Pagila on PostgreSQL). */
export function sakilaAppQueries(d: Dialect): AppQuery[] {
  const t = d.text;
  return [
    {
      query: 'actor (actor_id = 17) { actor_id first_name last_name }',
      expected: sql(
        `SELECT ${t('actor_id')} AS actor_id, first_name, last_name FROM actor WHERE actor_id = 17`,
      ),
    },
    {
      query: "actor (last_name = 'GUINESS') { actor_id first_name } ORDER BY actor_id",
      expected: sql(
        `SELECT ${t('actor_id')} AS actor_id, first_name FROM actor WHERE last_name = 'GUINESS' ORDER BY actor.actor_id`,
      ),
    },
    {
      query: "film (title ILIKE '%love%') { film_id title } ORDER BY title",
      expected: sql(
        `SELECT ${t('film_id')} AS film_id, title FROM film WHERE LOWER(title) LIKE '%love%' ORDER BY ${d.codePoint('title')}, film.film_id`,
      ),
    },
    {
      query: "film (description ILIKE '%ASTRONAUT%') { COUNT(*) }",
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count FROM film WHERE LOWER(description) LIKE '%astronaut%'`,
      ),
    },
    {
      query:
        "film (title LIKE 'A%' AND length > 120) { title length } ORDER BY length DESC LIMIT 10",
      expected: sql(
        `SELECT title, ${t('length')} AS length FROM film WHERE title LIKE 'A%' AND length > 120 ORDER BY film.length DESC, film.film_id LIMIT 10`,
      ),
    },
    {
      query: "film (rental_rate IN (0.99, 2.99) AND rating = 'PG') { COUNT(*) }",
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count FROM film WHERE rental_rate IN (0.99, 2.99) AND ${t('rating')} = 'PG'`,
      ),
    },
    {
      query: 'film { rating COUNT(*) } ORDER BY rating',
      expected: sql(
        `SELECT ${t('rating')} AS rating, ${t('COUNT(*)')} AS count FROM film GROUP BY rating ORDER BY ${d.codePoint('rating')}`,
      ),
    },
    {
      query:
        "film ((rating = 'G' OR rating = 'NC-17') AND length < 50) { film_id title rating } ORDER BY film_id",
      expected: sql(
        `SELECT ${t('film_id')} AS film_id, title, ${t('rating')} AS rating FROM film WHERE (${t('rating')} = 'G' OR ${t('rating')} = 'NC-17') AND length < 50 ORDER BY film.film_id`,
      ),
    },
    {
      query: 'film (length BETWEEN 60 AND 62) { film_id length } ORDER BY length, film_id',
      expected: sql(
        `SELECT ${t('film_id')} AS film_id, ${t('length')} AS length FROM film WHERE length BETWEEN 60 AND 62 ORDER BY film.length, film.film_id`,
      ),
    },
    {
      query: 'film { film_id title } ORDER BY title LIMIT 10 OFFSET 500',
      expected: sql(
        `SELECT ${t('film_id')} AS film_id, title FROM film ORDER BY ${d.codePoint('title')}, film.film_id LIMIT 10 OFFSET 500`,
      ),
    },
    {
      query: 'film (replacement_cost >= 29.99) { COUNT(*) SUM(replacement_cost) }',
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count, ${t('SUM(replacement_cost)')} AS sum_replacement_cost FROM film WHERE replacement_cost >= 29.99`,
      ),
    },
    {
      query: 'payment { COUNT(*) SUM(amount) }',
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count, ${t('SUM(amount)')} AS sum_amount FROM payment`,
      ),
    },
    {
      query: 'payment { staff_id COUNT(*) SUM(amount) } ORDER BY staff_id',
      expected: sql(
        `SELECT ${t('staff_id')} AS staff_id, ${t('COUNT(*)')} AS count, ${t('SUM(amount)')} AS sum_amount FROM payment GROUP BY staff_id ORDER BY payment.staff_id`,
      ),
    },
    {
      query: 'payment { customer_id SUM(amount) } ORDER BY sum_amount DESC, customer_id LIMIT 10',
      expected: sql(
        `SELECT ${t('customer_id')} AS customer_id, ${t('SUM(amount)')} AS sum_amount FROM payment GROUP BY customer_id ORDER BY SUM(payment.amount) DESC, payment.customer_id LIMIT 10`,
      ),
    },
    {
      query: 'payment { AVG(amount) }',
      expected: sql(
        `SELECT ${d.fraction('SUM(amount)', 'COUNT(amount)')} AS avg_amount FROM payment`,
      ),
    },
    {
      query: 'payment { staff_id AVG(amount) } ORDER BY staff_id',
      expected: sql(
        `SELECT ${t('staff_id')} AS staff_id, ${d.fraction('SUM(amount)', 'COUNT(amount)')} AS avg_amount FROM payment GROUP BY staff_id ORDER BY payment.staff_id`,
      ),
    },
    {
      query: 'film { rating AVG(rental_rate) } ORDER BY rating',
      expected: sql(
        `SELECT ${t('rating')} AS rating, ${d.fraction('SUM(rental_rate)', 'COUNT(rental_rate)')} AS avg_rental_rate FROM film GROUP BY rating ORDER BY ${d.codePoint('rating')}`,
      ),
    },
    {
      query: 'payment (amount >= 9.99) { COUNT(*) }',
      expected: sql(`SELECT ${t('COUNT(*)')} AS count FROM payment WHERE amount >= 9.99`),
    },
    {
      query:
        'payment { payment_id amount payment_date } ORDER BY payment_date DESC, payment_id LIMIT 10',
      expected: sql(
        `SELECT ${t('payment_id')} AS payment_id, ${t('amount')} AS amount, ${d.timestamp('payment_date')} AS payment_date FROM payment ORDER BY payment.payment_date DESC, payment.payment_id LIMIT 10`,
      ),
    },
    {
      query: "payment (customer.last_name = 'SMITH') { COUNT(*) SUM(amount) }",
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count, ${t('SUM(amount)')} AS sum_amount FROM payment p JOIN customer c ON c.customer_id = p.customer_id WHERE c.last_name = 'SMITH'`,
      ),
    },
    {
      query: 'customer (payment.amount > 11) { customer_id } ORDER BY customer_id',
      expected: sql(
        `SELECT ${t('customer_id')} AS customer_id FROM customer c WHERE EXISTS (SELECT 1 FROM payment p WHERE p.customer_id = c.customer_id AND p.amount > 11) ORDER BY c.customer_id`,
      ),
    },
    {
      query:
        "customer (address.city.country.country = 'Japan') { customer_id last_name } ORDER BY last_name",
      expected: sql(
        `SELECT ${t('cu.customer_id')} AS customer_id, cu.last_name FROM customer cu JOIN address a ON a.address_id = cu.address_id JOIN city ci ON ci.city_id = a.city_id JOIN country co ON co.country_id = ci.country_id WHERE co.country = 'Japan' ORDER BY ${d.codePoint('cu.last_name')}, cu.customer_id`,
      ),
    },
    {
      query:
        'city (country_id < 10) { city country { country } } ORDER BY country.country, city LIMIT 20',
      expected: embedded(
        `SELECT ci.city, ${t('ci.country_id')} AS country_id FROM city ci JOIN country co ON co.country_id = ci.country_id WHERE ci.country_id < 10 ORDER BY ${d.codePoint('co.country')}, ${d.codePoint('ci.city')}, ci.city_id LIMIT 20`,
        'country',
        (row) => `SELECT country FROM country WHERE country_id = ${row.country_id}`,
        { hidden: ['country_id'] },
      ),
    },
    {
      query:
        "address (district != 'California' AND city_id < 20) { address_id } ORDER BY address_id",
      expected: sql(
        `SELECT ${t('address_id')} AS address_id FROM address WHERE district <> 'California' AND city_id < 20 ORDER BY address.address_id`,
      ),
    },
    {
      query: 'address (address2 IS NULL) { COUNT(*) }',
      expected: sql(`SELECT ${t('COUNT(*)')} AS count FROM address WHERE address2 IS NULL`),
    },
    {
      query:
        'rental (return_date IS NULL) { rental_id customer_id } ORDER BY rental_id DESC LIMIT 5',
      expected: sql(
        `SELECT ${t('rental_id')} AS rental_id, ${t('customer_id')} AS customer_id FROM rental WHERE return_date IS NULL ORDER BY rental.rental_id DESC LIMIT 5`,
      ),
    },
    {
      query: `rental (rental_date >= '${d.busyDay}T00:00:00Z' AND rental_date < '${d.busyDay}T12:00:00Z') { COUNT(*) }`,
      expected: sql(
        `SELECT ${t('COUNT(*)')} AS count FROM rental WHERE ${d.timestamp('rental_date')} >= '${d.busyDay}T00:00:00.000000Z' AND ${d.timestamp('rental_date')} < '${d.busyDay}T12:00:00.000000Z'`,
      ),
    },
    {
      query: 'inventory { store_id COUNT(*) } ORDER BY store_id',
      expected: sql(
        `SELECT ${t('store_id')} AS store_id, ${t('COUNT(*)')} AS count FROM inventory GROUP BY store_id ORDER BY inventory.store_id`,
      ),
    },
    {
      query: "language (name = 'English') { language_id }",
      expected: sql(
        `SELECT ${t('language_id')} AS language_id FROM language WHERE name = 'English'`,
      ),
    },
    {
      query:
        'customer (customer_id <= 3) { customer_id first_name payment { payment_id amount } ORDER BY payment_id DESC LIMIT 3 } ORDER BY customer_id',
      expected: nested(
        `SELECT ${t('customer_id')} AS customer_id, first_name FROM customer WHERE customer_id <= 3 ORDER BY customer.customer_id`,
        'payment',
        (row) =>
          `SELECT ${t('payment_id')} AS payment_id, ${t('amount')} AS amount FROM payment WHERE customer_id = ${row.customer_id} ORDER BY payment.payment_id DESC LIMIT 3`,
      ),
    },
    {
      query:
        'customer (customer_id <= 5) { customer_id payment { COUNT(*) SUM(amount) } } ORDER BY customer_id',
      expected: nested(
        `SELECT ${t('customer_id')} AS customer_id FROM customer WHERE customer_id <= 5 ORDER BY customer.customer_id`,
        'payment',
        (row) =>
          `SELECT ${t('COUNT(*)')} AS count, ${t('SUM(amount)')} AS sum_amount FROM payment WHERE customer_id = ${row.customer_id}`,
      ),
    },
    {
      query:
        'payment (payment_id IN (1000, 2000, 3000)) { payment_id customer { first_name last_name } } ORDER BY payment_id',
      expected: embedded(
        `SELECT ${t('payment_id')} AS payment_id, ${t('customer_id')} AS customer_id FROM payment WHERE payment_id IN (1000, 2000, 3000) ORDER BY payment.payment_id`,
        'customer',
        (row) =>
          `SELECT first_name, last_name FROM customer WHERE customer_id = ${row.customer_id}`,
        { hidden: ['customer_id'] },
      ),
    },
    {
      query:
        'film (film_id IN (1, 2, 3)) { title film_actor { actor_id actor { last_name } } ORDER BY actor_id } ORDER BY film_id',
      expected: nested(
        `SELECT ${t('film_id')} AS film_id, title FROM film WHERE film_id IN (1, 2, 3) ORDER BY film.film_id`,
        'film_actor',
        (row) =>
          `SELECT ${t('fa.actor_id')} AS actor_id, a.last_name FROM film_actor fa JOIN actor a ON a.actor_id = fa.actor_id WHERE fa.film_id = ${row.film_id} ORDER BY fa.actor_id`,
        {
          hidden: ['film_id'],
          child: (row) => ({
            actor_id: row.actor_id ?? null,
            actor: { last_name: row.last_name ?? null },
          }),
        },
      ),
    },
    {
      query: 'actor (actor_id = 1) { first_name film_actor { film { title } } ORDER BY film_id }',
      expected: nested(
        `SELECT ${t('actor_id')} AS actor_id, first_name FROM actor WHERE actor_id = 1`,
        'film_actor',
        (row) =>
          `SELECT f.title FROM film_actor fa JOIN film f ON f.film_id = fa.film_id WHERE fa.actor_id = ${row.actor_id} ORDER BY fa.film_id`,
        { hidden: ['actor_id'], child: (row) => ({ film: { title: row.title ?? null } }) },
      ),
    },
    // Issue 32: MIN, MAX, COUNT(DISTINCT) and HAVING.
    {
      query:
        'payment { customer_id MAX(amount) MIN(rental_id) COUNT(DISTINCT staff_id) } HAVING COUNT(*) >= 40 AND max_amount > 9 ORDER BY customer_id',
      expected: sql(
        `SELECT ${t('customer_id')} AS customer_id, ${t('MAX(amount)')} AS max_amount, ${t('MIN(rental_id)')} AS min_rental_id, ${t('COUNT(DISTINCT staff_id)')} AS count_distinct_staff_id FROM payment GROUP BY customer_id HAVING COUNT(*) >= 40 AND MAX(amount) > 9 ORDER BY payment.customer_id`,
      ),
    },
    {
      query: "film { rating MIN(title) MAX(length) } HAVING min_title LIKE 'A%' ORDER BY rating",
      expected: sql(
        `SELECT ${t('rating')} AS rating, MIN(${d.codePoint('title')}) AS min_title, ${t('MAX(length)')} AS max_length FROM film GROUP BY rating HAVING MIN(${d.codePoint('title')}) LIKE 'A%' ORDER BY ${d.codePoint('rating')}`,
      ),
    },
    // Pagila's special_features is a text[] (Sakila's a SET): the array query.
    ...(d.engine === 'postgres'
      ? [
          {
            query:
              "film (special_features CONTAINS ('Trailers')) { film_id title } ORDER BY film_id",
            expected: sql(
              `SELECT ${t('film_id')} AS film_id, title FROM film WHERE special_features @> ARRAY['Trailers'] ORDER BY film.film_id`,
            ),
          },
          {
            query:
              "film (special_features OVERLAPS ('Commentaries', 'Deleted Scenes') AND CARDINALITY(special_features) >= 3) { COUNT(*) }",
            expected: sql(
              `SELECT ${t('COUNT(*)')} AS count FROM film WHERE special_features && ARRAY['Commentaries', 'Deleted Scenes'] AND cardinality(special_features) >= 3`,
            ),
          },
          {
            query: "film (special_features CONTAINED BY ('Trailers', 'Commentaries')) { COUNT(*) }",
            expected: sql(
              `SELECT ${t('COUNT(*)')} AS count FROM film WHERE special_features <@ ARRAY['Trailers', 'Commentaries']`,
            ),
          },
        ]
      : []),
    {
      query: 'category { name film_category { COUNT(*) } } ORDER BY name',
      expected: nested(
        `SELECT ${t('category_id')} AS category_id, name FROM category ORDER BY ${d.codePoint('name')}`,
        'film_category',
        (row) =>
          `SELECT ${t('COUNT(*)')} AS count FROM film_category WHERE category_id = ${row.category_id}`,
        { hidden: ['category_id'] },
      ),
    },
  ];
}
