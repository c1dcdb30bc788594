import type { Selectable } from 'kysely';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';

/**
 * The connection's source password, opened; '' for a user without one (a MariaDB user with
 * no password, PostgreSQL `trust`). Passwords are opened only where a source is reached.
 */
export function sourcePassword(
  connection: Pick<Selectable<ConnectionTable>, 'password_enc'>,
  secrets: SecretBox,
): string {
  return connection.password_enc === null ? '' : secrets.open(connection.password_enc);
}
