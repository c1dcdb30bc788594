import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { countLiveDatabases } from '../../adapters/store/database-store.ts';
import type { Store } from '../../adapters/store/schema.ts';
import { ApiError, notFound } from '../../domain/errors.ts';
import type { TeamRole } from '../identity/role-policy.ts';

type Tx = Kysely<Store>;

export interface Member {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly role: string;
}

/**
 * Locks the account row for the rest of the transaction. Every change to an account's members
 * takes it first, so two concurrent demotions cannot both see "another owner is left".
 */
export async function lockAccount(tx: Tx, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** A user of the account (locked), or 404 exactly like an unknown id. */
export async function memberOf(tx: Tx, accountId: string, userId: string): Promise<Member> {
  const row = await tx
    .selectFrom('users')
    .select(['id', 'account_id', 'email', 'role'])
    .where('id', '=', userId)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound('Member');
  return { userId: row.id, accountId: row.account_id, email: row.email, role: row.role };
}

export async function ownerCount(tx: Tx, accountId: string): Promise<number> {
  const row = await tx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Refuses to take the account's last owner away (demotion, removal, leaving). */
export async function assertNotLastOwner(tx: Tx, member: Member, what: string): Promise<void> {
  if (member.role === 'owner' && (await ownerCount(tx, member.accountId)) <= 1) {
    throw new ApiError(
      'conflict',
      `${what} would leave the account without an owner; make another member owner first.`,
    );
  }
}

/** Live databases and connections of an account: what an account must not lose its last user over. */
async function liveResources(tx: Tx, accountId: string): Promise<number> {
  const [databases, connections] = await Promise.all([
    countLiveDatabases(tx, accountId),
    tx
      .selectFrom('connections')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow(),
  ]);
  return databases + Number(connections.n);
}

/**
 * Checks that `member` may leave their current account to join another: an account with other
 * users must keep an owner; an account the member is alone in must hold no live databases or
 * connections (it is then left empty: its audit log stays, nobody can sign in to it).
 */
export async function assertMayLeave(tx: Tx, member: Member): Promise<void> {
  const others = await tx
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', member.accountId)
    .where('id', '!=', member.userId)
    .execute();
  if (others.length > 0) {
    await assertNotLastOwner(tx, member, 'Leaving your current account');
    return;
  }
  if ((await liveResources(tx, member.accountId)) > 0) {
    throw new ApiError(
      'conflict',
      'Your current account still has databases or connections; delete them (or invite the inviter into it instead) before joining another account.',
    );
  }
}

/**
 * Moves a user into `accountId` with `role`, revoking their management keys of the account they
 * leave (a key belongs to the account it was made in).
 */
export async function moveUser(
  tx: Tx,
  member: Member,
  accountId: string,
  role: TeamRole,
): Promise<void> {
  await tx
    .updateTable('users')
    .set({ account_id: accountId, role })
    .where('id', '=', member.userId)
    .execute();
  await tx
    .updateTable('management_keys')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', member.userId)
    .where('account_id', '=', member.accountId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A fresh personal account the user owns, for a user removed from a team. */
export async function newPersonalAccount(tx: Tx, email: string): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await tx
    .insertInto('accounts')
    .values({ id, email, plan: 'free', created_at: now, updated_at: now })
    .execute();
  return id;
}
