import type { Kysely } from 'kysely';
import type { DatabaseRow } from '../../../adapters/store/database-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { Store } from '../../../adapters/store/schema.ts';

/** The stored plan name of an account. */
export async function planNameOf(tx: Kysely<Store>, accountId: string): Promise<string> {
  const account = await tx
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return account.plan;
}

/** Locks a live connection row; false when it has been deleted. */
export async function lockLiveConnection(tx: Kysely<Store>, id: string): Promise<boolean> {
  const live = await tx
    .selectFrom('connections')
    .select('id')
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  return live !== undefined;
}

/** The backend of a connection (any state: a database keeps its connection). */
export async function backendOfConnection(db: StoreDb, connectionId: string): Promise<string> {
  const { backend } = await db
    .selectFrom('connections')
    .select('backend')
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return backend;
}

/** The connection of one of the account's databases. */
export function connectionOfDatabase(db: StoreDb, accountId: string, database: DatabaseRow) {
  return db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', database.connection_id)
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
}
