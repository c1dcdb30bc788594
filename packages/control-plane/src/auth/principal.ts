import { randomUUID } from 'node:crypto';
import type { StoreDb } from '../store/open-store.ts';
import { ADMIN_GROUP } from './built-in-issuer.ts';
import { hashManagementKey, MANAGEMENT_KEY_PREFIX } from './management-keys.ts';
import type { Identity, TokenVerifier } from './token-verifier.ts';

/** Who is calling: every resource a call touches must belong to `accountId`. */
export interface Principal {
  readonly accountId: string;
  readonly userId: string;
  readonly email: string;
  /** Member of the identity provider's `service-admins` group. Management keys never are. */
  readonly admin: boolean;
  readonly via: 'token' | 'management_key';
}

/** The user behind a token, made (with an account of their own) on first sight. */
async function userFor(
  db: StoreDb,
  identity: Identity,
): Promise<{ userId: string; accountId: string }> {
  const now = new Date();
  const existing = await db
    .updateTable('users')
    .set({ last_seen_at: now, email: identity.email })
    .where('subject', '=', identity.subject)
    .returning(['id', 'account_id'])
    .executeTakeFirst();
  if (existing) return { userId: existing.id, accountId: existing.account_id };
  return db
    .transaction()
    .execute(async (tx) => {
      const accountId = randomUUID();
      const userId = randomUUID();
      await tx
        .insertInto('accounts')
        .values({
          id: accountId,
          email: identity.email,
          plan: 'free',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const inserted = await tx
        .insertInto('users')
        .values({
          id: userId,
          account_id: accountId,
          email: identity.email,
          subject: identity.subject,
          created_at: now,
          last_seen_at: now,
        })
        .onConflict((oc) => oc.column('subject').doNothing())
        .returning(['id', 'account_id'])
        .executeTakeFirst();
      if (inserted) return { userId, accountId };
      // A concurrent first request made the user: roll back our account and use theirs.
      throw new RetryFirstSight();
    })
    .catch(async (error) => {
      if (!(error instanceof RetryFirstSight)) throw error;
      const user = await db
        .selectFrom('users')
        .select(['id', 'account_id'])
        .where('subject', '=', identity.subject)
        .executeTakeFirstOrThrow();
      return { userId: user.id, accountId: user.account_id };
    });
}

class RetryFirstSight extends Error {}

/** Resolves a bearer credential (an OIDC/built-in JWT or an `rmk_` key) to a principal. */
export async function authenticate(
  db: StoreDb,
  verifyToken: TokenVerifier,
  credential: string,
): Promise<Principal | undefined> {
  if (credential.startsWith(MANAGEMENT_KEY_PREFIX)) {
    const key = await db
      .updateTable('management_keys')
      .set({ last_used_at: new Date() })
      .where('key_hash', '=', hashManagementKey(credential))
      .where('revoked_at', 'is', null)
      .returning(['account_id', 'user_id'])
      .executeTakeFirst();
    if (!key) return undefined;
    const user = await db
      .selectFrom('users')
      .select('email')
      .where('id', '=', key.user_id)
      .executeTakeFirst();
    if (!user) return undefined;
    return {
      accountId: key.account_id,
      userId: key.user_id,
      email: user.email,
      admin: false,
      via: 'management_key',
    };
  }
  const identity = await verifyToken(credential);
  if (!identity) return undefined;
  const { userId, accountId } = await userFor(db, identity);
  return {
    accountId,
    userId,
    email: identity.email,
    admin: identity.groups.includes(ADMIN_GROUP),
    via: 'token',
  };
}
