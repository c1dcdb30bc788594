/**
 * A customer and a film deleted with their children first, as an application must where the
 * foreign keys RESTRICT: the same statements on Sakila and Pagila.
 */
export function deleteCustomerAndFilm(customerId: number, filmId: string): string[] {
  return [
    `DELETE FROM payment WHERE customer_id = ${customerId}`,
    `DELETE FROM rental WHERE customer_id = ${customerId}`,
    `DELETE FROM customer WHERE customer_id = ${customerId}`,
    `DELETE FROM film_actor WHERE film_id = ${filmId}`,
    `DELETE FROM film_category WHERE film_id = ${filmId}`,
    `DELETE FROM film WHERE film_id = ${filmId}`,
  ];
}
