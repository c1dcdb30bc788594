import type { Kysely } from 'kysely';
import { type Member, otherUsersOf, ownerCount } from '../../adapters/store/account-store.ts';
import { countLiveConnections } from '../../adapters/store/connection-store.ts';
import { countLiveDatabases } from '../../adapters/store/database-store.ts';
import type { Store } from '../../adapters/store/schema.ts';
import { ApiError } from '../../domain/errors.ts';

type Tx = Kysely<Store>;

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
    countLiveConnections(tx, accountId),
  ]);
  return databases + connections;
}

/**
 * Checks that `member` may leave their current account to join another: an account with other
 * users must keep an owner; an account the member is alone in must hold no live databases or
 * connections (it is then left empty: its audit log stays, nobody can sign in to it).
 */
export async function assertMayLeave(tx: Tx, member: Member): Promise<void> {
  const others = await otherUsersOf(tx, member.accountId, member.userId);
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
